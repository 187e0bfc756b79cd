"""Relative date phrases ("two weeks ago", "last week") on eight weeks of daily notes.

    python bench/bench_reldates.py [--mode lexical|hybrid] [--model PATH.gguf] [--json OUT]

The set is ``bench/reldates_data.py`` (written before any rule was tuned on it): questions whose
date phrase counts back from ``NOW``, in three classes: ``near`` (the answer a few days outside
the phrase's strict window, weaker lines inside it), ``inside`` (the answer inside, a same-topic
line just outside) and ``far`` (the answer inside, the topic again five or more weeks away).
Each case's class is asserted against ``timeparse.find_query_window`` before anything is asked.

Builds the notes as a real git repository (one commit per day, 21:00 UTC), indexes it with
gitmem's library and no user configuration (lexical, or hybrid with the model given, one
llama.cpp thread), asks each question through ``recall.answer`` (k = 8, ``now`` = ``NOW``) and
reports per class: the answer at rank 1, in the top 5, and (inside, far) above its distractor
(a distractor not shown counts as below). A question PASSes when its answer is in the top 5
and, for inside and far, above its distractor. A result shows a line when its chunk's lines
hold it (a chunk may hold a few lines of the same note).
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench.bench_fiveweeks import indexed, mode_arguments, rank  # noqa: E402
from bench.bench_updates import K, no_user_settings  # noqa: E402
from bench.reldates_data import CASES, CLASSES, NOW, Case, Line, locate, notes  # noqa: E402
from gitmem.domain import RecallMode  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.parse.timeparse import find_query_window  # noqa: E402
from gitmem.recall.answer import RecallRequest, answer  # noqa: E402
from testing.repo import notes_history  # noqa: E402

NEAR_DAYS = 7  # near, inside: the line at most this many days outside the window
FAR_DAYS = 35  # far: the distractor at least this many days outside it


def build(root: Path, texts: Mapping[str, str]) -> Path:
    """The notes as a repository, one commit per day at 21:00 UTC."""
    days = {path.removeprefix("memory/").removesuffix(".md"): text
            for path, text in sorted(texts.items())}
    return notes_history(root, "ws", {}, "", days)


def strict_days(question: str) -> tuple[date, date, str]:
    """The first and last day of the question's window, and its phrase as found."""
    found = find_query_window(question, NOW)
    if found is None or found[0].start is None or found[0].end is None:
        raise SystemExit(f"no date phrase found in {question!r}")
    window, phrase = found
    assert window.start is not None and window.end is not None
    return window.start.date(), window.end.date() - timedelta(days=1), phrase


def outside_by(line: Line, first: date, last: date) -> int:
    """How many days ``line``'s note lies outside [first, last] (0: inside)."""
    return max((first - line.day).days, (line.day - last).days, 0)


def class_errors(case: Case) -> list[str]:
    """What makes the case not of its class, for its strict window (nothing: it is)."""
    first, last, _ = strict_days(case.question)
    off = outside_by(case.answer, first, last)
    wrong: list[str] = []
    if case.klass == "near":
        if not 0 < off <= NEAR_DAYS:
            wrong.append(f"answer {off} days outside the window")
        if not case.mates or any(outside_by(m, first, last) for m in case.mates):
            wrong.append("a near case needs its mates inside the window")
    else:
        if off:
            wrong.append(f"answer {off} days outside the window")
        d_off = 0 if case.distractor is None else outside_by(case.distractor, first, last)
        if case.klass == "inside" and not 0 < d_off <= NEAR_DAYS:
            wrong.append(f"distractor {d_off} days outside the window")
        if case.klass == "far" and d_off < FAR_DAYS:
            wrong.append(f"distractor {d_off} days outside the window")
    return [f"{case.id}: {w} [{first} .. {last}]" for w in wrong]


def asked(session: Session, mode: RecallMode, question: str, texts: Mapping[str, str],
          lines: Sequence[Line | None]) -> tuple[dict[str, Any], list[int | None]]:
    """The answer to ``question`` (its JSON), and the rank of each of ``lines`` in it (None:
    not shown, or no line)."""
    resp = answer(session, RecallRequest(query=question, k=K, mode=mode), now=NOW)
    if resp.mode != mode:
        raise SystemExit(f"{mode} answered as {resp.mode}: {resp.warnings}")
    body = resp.to_json()
    return body, [None if line is None else rank(body["results"], locate(dict(texts), line))
                  for line in lines]


def top3(body: Mapping[str, Any]) -> list[str]:
    """The first three results, a line each."""
    return [f"{r['source']} {r['snippet'][:70]}".replace("\n", " / ")
            for r in body["results"][:3]]


def run_set(doc: str | None, argv: list[str] | None, texts: dict[str, str], prefix: str,
            ask: Callable[[Path, RecallMode, Path | None, dict[str, str]], list[dict[str, Any]]],
            report: Callable[[list[dict[str, Any]], str], str],
            table: Callable[[list[dict[str, Any]]], Mapping[str, Any]],
            **extra: Any) -> int:
    """A set's run: the notes as a repository with no user settings, each question asked
    (``ask``), the report printed and, with ``--json OUT``, the rows written with ``extra``."""
    args, model = mode_arguments(doc, "question", argv)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        no_user_settings(Path(tmp))
        rows = ask(build(Path(tmp), texts), args.mode, model, texts)
    print(report(rows, args.mode))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        payload = {"mode": args.mode, "model": None if model is None else model.name,
                   "now": NOW.isoformat(), "k": K, **extra, "table": table(rows),
                   "questions": rows}
        args.json_out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n",
                                 encoding="utf-8")
    return 0


def ask(repo: Path, mode: RecallMode, model: Path | None,
        texts: Mapping[str, str]) -> list[dict[str, Any]]:
    ws, cfg = indexed(repo, model)
    out: list[dict[str, Any]] = []
    for case in CASES:
        body, (r_ans, r_dis) = asked(Session(ws, cfg), mode, case.question, texts,
                                     [case.answer, case.distractor])
        first, last, phrase = strict_days(case.question)
        above = None if case.distractor is None else \
            r_ans is not None and (r_dis is None or r_ans < r_dis)
        out.append({
            "id": case.id, "class": case.klass, "question": case.question,
            "phrase": phrase, "window": [first.isoformat(), last.isoformat()],
            "time_window": body.get("time_window"),
            "answer": {"date": case.answer.day.isoformat(), "text": case.answer.text},
            "answer_rank": r_ans, "distractor_rank": r_dis,
            "top1": r_ans == 1, "top5": r_ans is not None and r_ans <= 5,
            "above_distractor": above,
            "top": top3(body),
        })
    return out


def table(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for klass in (*CLASSES, "all"):
        mine = [r for r in rows if klass in ("all", r["class"])]
        above = [bool(r["above_distractor"]) for r in mine if r["above_distractor"] is not None]
        out[klass] = {"n": len(mine), "top1": sum(r["top1"] for r in mine),
                      "top5": sum(r["top5"] for r in mine),
                      "above_distractor": sum(above) if above else None,
                      "with_distractor": len(above)}
    return out


def report(rows: Sequence[Mapping[str, Any]], mode: str) -> str:
    lines = [f"## relative dates, {mode}"]
    for r in rows:
        ok = r["top5"] and r["above_distractor"] is not False
        dis = "" if r["distractor_rank"] is None and r["above_distractor"] is None else \
            f", distractor at {r['distractor_rank']}"
        lines.append(f"{'PASS' if ok else 'FAIL'} {r['id']} ({r['class']}) {r['question']} "
                     f"[{r['phrase']}: {r['window'][0]} .. {r['window'][1]}]: answer at "
                     f"{r['answer_rank']}{dis}")
        if not ok:
            lines += [f"      {t}" for t in r["top"]]
    lines += ["", "| class | n | answer at 1 | answer in top 5 | answer above distractor |",
              "|---|---|---|---|---|"]
    for klass, s in table(rows).items():
        above = "-" if s["above_distractor"] is None else \
            f"{s['above_distractor']}/{s['with_distractor']}"
        lines.append(f"| {klass} | {s['n']} | {s['top1']}/{s['n']} | {s['top5']}/{s['n']} | "
                     f"{above} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    wrong = [w for case in CASES for w in class_errors(case)]
    if wrong:
        raise SystemExit("cases not of their class:\n" + "\n".join(wrong))
    return run_set(__doc__, argv, notes(), "gitmem-reldates-", ask, report, table)


if __name__ == "__main__":
    raise SystemExit(main())
