"""LongMemEval-S retrieval: ``python -m bench.lme eval`` (issue 41).

    python -m bench.lme eval [--data ../shared/bench/lme-dev.json.gz] [--methods lexical,hybrid]
        [--sample N] [--seed 0] [--types T,…] [--interleave] [--part K/N] [--skip REPORT …]
        [--k 30] [--budgets 1000,2000] [--embed-model GGUF] [--threads 2] [--embed-cache FILE]
        [--keep DIR] [--out bench/results/lme.json]
    python -m bench.lme table REPORT … [--out MERGED.json] [--data …]

One corpus per question, as peers report it: the question's ~48 haystack sessions, each a dated
note ``memory/YYYY-MM-DD.md`` (``-session-N`` for a later session that day) committed at its
date and time, a heading naming the session, then one list item per turn (``- user: …``,
``- assistant: …``), the turn's further lines indented under it (blank lines dropped). The
question is asked with gitmem's recall in-process (``--k`` results, ``now`` = the question's
date) and the results are read in rank order:

- ``recall_any@k`` / ``recall_all@k``: at least one / every answer session among the first ``k``
  distinct sessions the results cite; ``recall_all@k_marked`` the same over the questions whose
  every answer session holds a turn marked as evidence (``every_session_marked``);
- evidence-turn recall at a token budget: the share of the answer turns (``has_answer``) read
  when results are read line by line, 4 characters a token, until the budget is spent (as
  ``bench.locomo`` reads);
- seconds per question: building the repository, indexing (with embeddings for ``hybrid`` and
  ``semantic``), asking.

Abstention questions (``_abs``) have no answer session and are left out, as peers do.
``--sample N`` takes N questions spread over the question types (a seeded shuffle within each
type, types in proportion); without it every question is asked. ``--part K/N`` keeps every
N-th question from the K-th, so N processes share a run; ``--interleave`` asks the types in turn,
so a run cut short has measured each type; ``--skip`` leaves out the questions earlier reports
hold (a run cut short goes on where it stopped). The report is written after every question, and
``python -m bench.lme table A.json B.json …`` reads the parts (or a run cut short and its rest)
as one run. Methods: ``lexical``, ``hybrid``, ``semantic`` (the last two with ``--embed-model``,
default gitmem's default model).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gitmem.domain import RecallMode
from gitmem.index.run import index_and_embed
from gitmem.index.session import Session
from gitmem.recall.answer import RecallRequest, answer
from gitmem.workspace import open_workspace
from testing.fastimport import FastImportStream, import_history
from testing.gitenv import Identity

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "bench" / "lme-dev.json.gz"
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "lme.json"
IDENTITY = Identity("LongMemEval bench", "lme-bench@gitmem.invalid")
CHARS_PER_TOKEN = 4
TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
         "multi-session", "temporal-reasoning", "knowledge-update")
_DATE = re.compile(r"(\d{4})/(\d{2})/(\d{2}) \(\w+\) (\d{2}):(\d{2})")


def parse_date(text: str) -> datetime:
    """``2023/05/30 (Tue) 23:40`` as UTC."""
    m = _DATE.fullmatch(text.strip())
    if m is None:
        raise SystemExit(f"unreadable LongMemEval date {text!r}")
    y, mo, d, h, mi = (int(g) for g in m.groups())
    return datetime(y, mo, d, h, mi, tzinfo=UTC)


@dataclass
class Built:
    """One question's corpus as a repository: where each session and each answer turn is."""

    root: Path
    session_of: dict[str, str]  # note path -> session id
    answer_lines: set[tuple[str, int]]  # (path, line) of every has_answer turn's first line
    lines: dict[str, list[str]]  # note path -> its lines


def render(question: dict[str, Any]) -> tuple[list[tuple[datetime, str, str, str]],
                                              set[tuple[str, int]]]:
    """(when, session id, path, text) per session in time order; the answer turns' lines."""
    sessions = sorted(zip(question["haystack_dates"], question["haystack_session_ids"],
                          question["haystack_sessions"], strict=True),
                      key=lambda s: parse_date(s[0]))
    out: list[tuple[datetime, str, str, str]] = []
    answers: set[tuple[str, int]] = set()
    taken: set[str] = set()
    for n, (date, sid, turns) in enumerate(sessions, 1):
        when = parse_date(date)
        day = when.date().isoformat()
        path = f"memory/{day}.md" if day not in taken else f"memory/{day}-session-{n}.md"
        taken.add(day)
        lines = [f"# Session {n}: {date}", ""]
        for turn in turns:
            body = [ln.strip() for ln in str(turn["content"]).split("\n") if ln.strip()] or [""]
            lines.append(f"- {turn['role']}: {body[0]}")
            if turn.get("has_answer"):
                answers.add((path, len(lines)))
            lines.extend(f"  {ln}" for ln in body[1:])
        out.append((when, sid, path, "\n".join(lines) + "\n"))
    return out, answers


def build(question: dict[str, Any], root: Path) -> Built:
    sessions, answers = render(question)
    stream = FastImportStream(IDENTITY)
    for when, sid, path, text in sessions:
        stream.commit(when, f"session {sid}\n", [(path, text)])
    import_history(root, stream)
    exclude = root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as fh:
        fh.write(".memory/\n")
    return Built(root, {p: sid for _, sid, p, _ in sessions}, answers,
                 {p: t.split("\n") for _, _, p, t in sessions})


def every_session_marked(question: dict[str, Any]) -> bool:
    """Whether each answer session holds a turn marked ``has_answer``: 16 of the dev half's 235
    questions name an answer session that holds none (the rest of an event told elsewhere), and
    finding such a session is luck, not recall; ``recall_all@k`` is also given without them."""
    marked = {sid for sid, turns in zip(question["haystack_session_ids"],
                                        question["haystack_sessions"], strict=True)
              if any(turn.get("has_answer") for turn in turns)}
    return set(question["answer_session_ids"]) <= marked


def sessions_ranked(spans: Sequence[tuple[str, int, int]], built: Built) -> list[str]:
    """Distinct session ids in the order the results first cite them."""
    seen: dict[str, None] = {}
    for path, _, _ in spans:
        sid = built.session_of.get(path)
        if sid is not None:
            seen.setdefault(sid)
    return list(seen)


def evidence_recall(spans: Sequence[tuple[str, int, int]], built: Built, budget: int) -> float:
    """The share of answer turns whose first line is read within ``budget`` tokens."""
    if not built.answer_lines:
        return 0.0
    spent, found = 0.0, set[tuple[str, int]]()
    for path, start, end in spans:
        lines = built.lines.get(path, [])
        for number in range(start, end + 1):
            spent += (len(lines[number - 1]) + 1 if 0 < number <= len(lines) else 1) \
                / CHARS_PER_TOKEN
            if spent > budget:
                return len(found) / len(built.answer_lines)
            if (path, number) in built.answer_lines:
                found.add((path, number))
    return len(found) / len(built.answer_lines)


def sample(questions: list[dict[str, Any]], n: int | None, seed: int) -> list[dict[str, Any]]:
    """``n`` questions spread over the types in proportion (seeded), or all of them."""
    if n is None or n >= len(questions):
        return questions
    by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for q in questions:
        by_type[q["question_type"]].append(q)
    rng = random.Random(seed)
    for qs in by_type.values():
        rng.shuffle(qs)
    share = {t: max(1, round(n * len(qs) / len(questions))) for t, qs in by_type.items()}
    while sum(share.values()) > n:  # rounding up gave too many: trim the largest
        share[max(share, key=share.__getitem__)] -= 1
    chosen = [q for t, qs in by_type.items() for q in qs[: share[t]]]
    return sorted(chosen, key=questions.index)


def evaluate(args: argparse.Namespace,
             save: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
    """Ask every chosen question; ``save`` gets the report so far after each one (a run cut
    short keeps what it measured)."""
    with gzip.open(args.data, "rt", encoding="utf-8") as fh:
        data = json.load(fh)
    questions = sample([q for q in data if not q["question_id"].endswith("_abs")
                        and (not args.types or q["question_type"] in args.types.split(","))],
                       args.sample, args.seed)
    done = {row["question_id"] for report in args.skip or []
            for row in json.loads(report.read_text(encoding="utf-8"))["per_question"]}
    questions = [q for q in questions if q["question_id"] not in done]
    if args.part is not None:
        index, parts = args.part
        questions = questions[index::parts]
    if args.interleave:  # types in turn: any first N questions are spread over the types
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for q in questions:
            by_type[q["question_type"]].append(q)
        turns = [qs[i] for i in range(max(map(len, by_type.values()), default=0))
                 for qs in by_type.values() if i < len(qs)]
        questions = turns
    methods: list[str] = args.methods
    model = ""
    if any(m != "lexical" for m in methods):
        from gitmem.embed.download import default_model

        model = str((Path(args.embed_model) if args.embed_model else default_model()).resolve())
    ks = (5, 10)
    per_question: list[dict[str, Any]] = []

    def report() -> dict[str, Any]:
        return {"questions": len(questions), "asked": len(per_question),
                "sample": args.sample, "seed": args.seed, "part": args.part,
                "k": args.k, "model": model or None, "budgets": args.budgets,
                "results": results(per_question, methods, args.budgets),
                "per_question": per_question}

    tmp = Path(tempfile.mkdtemp(prefix="gitmem-lme-", dir=args.keep))
    try:
        for number, q in enumerate(questions, 1):
            started = time.monotonic()
            built = build(q, tmp / q["question_id"])
            build_s = time.monotonic() - started
            now = parse_date(q["question_date"])
            row: dict[str, Any] = {"question_id": q["question_id"], "type": q["question_type"],
                                   "marked": every_session_marked(q)}
            for method in methods:
                ws, cfg = open_workspace(built.root)
                if args.embed_cache is not None and method != "lexical":
                    shared = args.embed_cache.resolve()
                    shared.parent.mkdir(parents=True, exist_ok=True)
                    ws.memory_dir.mkdir(parents=True, exist_ok=True)
                    link = ws.memory_dir / "embeddings.sqlite"
                    if not link.exists():
                        link.symlink_to(shared)
                if method == "lexical":
                    cfg = replace(cfg, embed_provider="none")
                else:
                    cfg = replace(cfg, embed_provider="local", embed_model=model,
                                  embed_threads=args.threads)
                t0 = time.monotonic()
                outcome = index_and_embed(ws, cfg, force=True, embed=method != "lexical")
                if outcome.embed_error:
                    raise SystemExit(f"embedding failed: {outcome.embed_error}")
                t1 = time.monotonic()
                mode: RecallMode = method  # type: ignore[assignment]
                resp = answer(Session(ws, cfg),
                              RecallRequest(query=q["question"], k=args.k, mode=mode), now=now)
                if resp.mode != mode:
                    raise SystemExit(f"{mode} answered as {resp.mode}: {resp.warnings}")
                t2 = time.monotonic()
                spans = [(r.path, r.start_line, r.end_line) for r in resp.results]
                ranked = sessions_ranked(spans, built)
                wanted = set(q["answer_session_ids"])
                result: dict[str, Any] = {"index_s": round(t1 - t0, 2),
                                          "recall_s": round(t2 - t1, 3),
                                          "build_s": round(build_s, 2)}
                for k in ks:
                    result[f"any@{k}"] = bool(set(ranked[:k]) & wanted)
                    result[f"all@{k}"] = wanted <= set(ranked[:k])
                for budget in args.budgets:
                    result[f"turns@{budget}"] = round(evidence_recall(spans, built, budget), 4)
                row[method] = result
            per_question.append(row)
            if save is not None:
                save(report())
            shutil.rmtree(built.root, ignore_errors=True)
            said = " ".join(f"{m} {'+' if row[m]['any@5'] else '-'} {row[m]['index_s']}s"
                            for m in methods)
            print(f"[{number}/{len(questions)}] {q['question_id']} {q['question_type']}: {said}",
                  file=sys.stderr, flush=True)
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return report()


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def results(per_question: Sequence[dict[str, Any]], methods: Sequence[str],
            budgets: Sequence[int]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per method, per type (and ``all``): the means of the per-question figures."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for method in methods:
        by_type: dict[str, list[dict[str, Any]]] = defaultdict(list)
        marked: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in per_question:
            if method in row:
                for kind in ("all", row["type"]):
                    by_type[kind].append(row[method])
                    if row["marked"]:
                        marked[kind].append(row[method])
        out[method] = {
            kind: {"n": len(rows),
                   **{f"recall_{a}@{k}": _mean([float(r[f"{a}@{k}"]) for r in rows])
                      for a in ("any", "all") for k in (5, 10)},
                   "n_marked": len(marked[kind]),
                   **{f"recall_all@{k}_marked": _mean([float(r[f"all@{k}"])
                                                       for r in marked[kind]]) for k in (5, 10)},
                   **{f"evidence@{b}": _mean([r[f"turns@{b}"] for r in rows]) for b in budgets},
                   **{f"{w}_s": round(sum(r[f"{w}_s"] for r in rows) / len(rows), 2)
                      for w in ("build", "index", "recall")}}
            for kind, rows in by_type.items()}
    return out


def markdown(report: dict[str, Any]) -> str:
    budgets = report["budgets"]
    head = ("| method | type | n | any@5 | any@10 | all@5 | all@10 | all@5 marked (n) | "
            + " | ".join(f"turns@{b}" for b in budgets) + " | index s | recall s |")
    lines = [head, "|" + "---|" * (10 + len(budgets))]
    for method, by in report["results"].items():
        for kind in ("all", *TYPES):
            r = by.get(kind)
            if r is None:
                continue
            ev = " | ".join(f"{r[f'evidence@{b}']:.3f}" for b in budgets)
            lines.append(f"| {method} | {kind} | {r['n']} | {r['recall_any@5']:.3f} | "
                         f"{r['recall_any@10']:.3f} | {r['recall_all@5']:.3f} | "
                         f"{r['recall_all@10']:.3f} | {r['recall_all@5_marked']:.3f} "
                         f"({r['n_marked']}) | {ev} | {r['index_s']:.1f} | "
                         f"{r['recall_s']:.2f} |")
    return "\n".join(lines)


def merge(reports: Sequence[dict[str, Any]], data: Path = DEFAULT_DATA) -> dict[str, Any]:
    """The questions of several reports as one (a question asked twice by a method: the later
    report's figures; a question asked by other methods in other reports: all of them). A
    report written before rows said whether every answer session is marked is completed from
    ``data``."""
    rows: dict[str, dict[str, Any]] = {}
    for report in reports:
        for row in report["per_question"]:
            rows[row["question_id"]] = {**rows.get(row["question_id"], {}), **row}
    if any("marked" not in row for row in rows.values()):
        with gzip.open(data, "rt", encoding="utf-8") as fh:
            marked = {q["question_id"]: every_session_marked(q) for q in json.load(fh)}
        for qid, row in rows.items():
            if "marked" not in row:
                if qid not in marked:
                    raise SystemExit(f"question {qid} is not in {data}: name the data the "
                                     "reports were measured on with --data")
                row["marked"] = marked[qid]
    methods = list(dict.fromkeys(m for r in reports for m in r["results"]))
    budgets = reports[0]["budgets"]
    lacking = {qid for qid, row in rows.items() for m in methods if m in row
               and any(f"turns@{b}" not in row[m] for b in budgets)}
    if lacking:
        raise SystemExit(f"{len(lacking)} questions lack a figure (e.g. {min(lacking)}): a "
                         "report written before every figure was kept per question")
    return {"questions": len(rows), "asked": len(rows), "merged": len(reports),
            "models": sorted({str(r.get("model")) for r in reports}), "budgets": budgets,
            "results": results(list(rows.values()), methods, budgets),
            "per_question": list(rows.values())}


def _part(text: str) -> tuple[int, int]:
    index, _, parts = text.partition("/")
    try:
        k, n = int(index), int(parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--part {text!r}: write K/N, e.g. 0/2") from None
    if not 0 <= k < n:
        raise argparse.ArgumentTypeError(f"--part {text!r}: K must be 0 to N-1")
    return k, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.lme",
                                 description=(__doc__ or "").splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("eval", help="index each question's sessions and ask it")
    ev.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ev.add_argument("--methods", default="lexical",
                    type=lambda s: [m.strip() for m in s.split(",") if m.strip()])
    ev.add_argument("--sample", type=int, help="questions to ask, spread over the types")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--types", help="only these question types (comma-separated, e.g. "
                    "temporal-reasoning)")
    ev.add_argument("--part", type=_part, metavar="K/N", help="every N-th question from the "
                    "K-th (0-based): N processes share one run, each with its own part")
    ev.add_argument("--skip", type=Path, nargs="+", metavar="REPORT", help="leave out the "
                    "questions these reports already hold (then merge them with `table`)")
    ev.add_argument("--interleave", action="store_true", help="ask the types in turn, so a "
                    "run cut short has measured each type")
    ev.add_argument("--k", type=int, default=30, help="results asked for (sessions are "
                    "counted among them)")
    ev.add_argument("--budgets", default=[1000, 2000],
                    type=lambda s: [int(b) for b in s.split(",") if b.strip()])
    ev.add_argument("--embed-model", help="GGUF for hybrid/semantic (default: gitmem's "
                    "default model)")
    ev.add_argument("--threads", type=int, help="llama.cpp threads (default: the free "
                    "cores, gitmem's default)")
    ev.add_argument("--embed-cache", type=Path, help="one embedding cache (SQLite) for every "
                    "question and run: a rerun embeds nothing it embedded before")
    ev.add_argument("--keep", type=Path, help="build the repositories under this folder")
    ev.add_argument("--out", type=Path, default=DEFAULT_OUT)
    tb = sub.add_parser("table", help="one table of the questions of several runs (the parts "
                        "of one run, or a run cut short and its rest)")
    tb.add_argument("reports", type=Path, nargs="+")
    tb.add_argument("--out", type=Path, help="write the merged report here")
    tb.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the questions (read only "
                    "for reports that predate the marked figure)")
    args = ap.parse_args(argv)
    if args.command == "table":
        merged = merge([json.loads(path.read_text(encoding="utf-8")) for path in args.reports],
                       args.data)
        print(markdown(merged))
        if args.out is not None:
            args.out.write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
        return 0
    for method in args.methods:
        if method not in ("lexical", "hybrid", "semantic"):
            ap.error(f"unknown method {method!r}: lexical, hybrid, semantic")
    started = time.monotonic()

    def save(report: dict[str, Any]) -> None:  # whole or not at all: a run may be killed
        args.out.parent.mkdir(parents=True, exist_ok=True)
        part = args.out.with_name(args.out.name + ".part")
        part.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        os.replace(part, args.out)

    report = evaluate(args, save)
    report["seconds"] = round(time.monotonic() - started, 1)
    report["date"] = datetime.now(UTC).isoformat(timespec="seconds")
    print(markdown(report))
    save(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
