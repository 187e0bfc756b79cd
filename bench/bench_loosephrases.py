"""Loosely said date phrases ("the other day", "a fortnight ago", 先日) on eight weeks of notes.

    python bench/bench_loosephrases.py [--mode lexical|hybrid] [--model PATH.gguf] [--json OUT]

The set is ``bench/loosephrases_data.py`` (written without looking at how gitmem reads these
phrases): each question's answer lies where a person means the phrase, and a same-topic line
that matches the question as well or better (the distractor) lies where a person does not.
Nothing is asserted about gitmem's reading of the phrase: when ``timeparse.find_query_window``
finds no date phrase, the question is asked as it is, and the report says so.

Builds the notes as a real git repository (one commit per day, 21:00 UTC), indexes it with
gitmem's library and no user configuration (lexical, or hybrid with the model given, one
llama.cpp thread), asks each question through ``recall.answer`` (k = 8, ``now`` = ``NOW``) and
reports per question and in total (English, other languages, all): the answer at rank 1, in
the top 5, and above its distractor (a distractor not shown counts as below), with the phrase
and window gitmem read (``RecallResponse.time_window``, else ``find_query_window``'s; none: "-").
A question PASSes when its answer is in the top 5 and above its distractor. A result shows a
line when its lines hold it (a chunk may hold several lines of the same note).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench.bench_fiveweeks import indexed  # noqa: E402
from bench.bench_reldates import asked, run_set, top3  # noqa: E402
from bench.loosephrases_data import CASES, MEANT, NOW, Case, check, notes  # noqa: E402
from gitmem.domain import RecallMode  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.parse.timeparse import find_query_window  # noqa: E402

GROUPS = ("en", "other", "all")


def parsed(question: str) -> dict[str, Any] | None:
    """The date phrase ``find_query_window`` finds in ``question``, with its days; or None."""
    found = find_query_window(question, NOW)
    if found is None:
        return None
    window, phrase = found
    since = None if window.start is None else window.start.date().isoformat()
    until = None if window.end is None else \
        (window.end - timedelta(microseconds=1)).date().isoformat()
    return {"phrase": phrase, "since": since, "until": until}


def ask_one(session: Session, mode: RecallMode, case: Case,
            texts: dict[str, str]) -> dict[str, Any]:
    body, (r_ans, r_dis) = asked(session, mode, case.question, texts,
                                 [case.answer, case.distractor])
    first, last = MEANT[case.phrase]
    return {
        "id": case.id, "lang": case.lang, "phrase": case.phrase, "question": case.question,
        "meant_days_back": [first, last],
        "answer": {"days_back": case.answer.days_back, "date": case.answer.day.isoformat(),
                   "text": case.answer.text},
        "distractor": {"days_back": case.distractor.days_back,
                       "date": case.distractor.day.isoformat(), "text": case.distractor.text},
        "time_window": body.get("time_window"), "parsed": parsed(case.question),
        "answer_rank": r_ans, "distractor_rank": r_dis,
        "top1": r_ans == 1, "top5": r_ans is not None and r_ans <= 5,
        "above_distractor": r_ans is not None and (r_dis is None or r_ans < r_dis),
        "top": top3(body),
    }


def ask(repo: Path, mode: RecallMode, model: Path | None,
        texts: dict[str, str]) -> list[dict[str, Any]]:
    ws, cfg = indexed(repo, model)
    return [ask_one(Session(ws, cfg), mode, case, texts) for case in CASES]


def read_as(row: Mapping[str, Any]) -> str:
    """The phrase and days gitmem read in the question ("-": none)."""
    tw = row["time_window"] or row["parsed"]
    if not tw:
        return "-"
    how = f", {tw['applied_as']}" if tw.get("applied_as") else ""
    return f"{tw.get('phrase')!r} {tw.get('since')} .. {tw.get('until')}{how}"


def table(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for group in GROUPS:
        mine = [r for r in rows
                if group == "all" or (r["lang"] == "en") == (group == "en")]
        out[group] = {"n": len(mine), "top1": sum(r["top1"] for r in mine),
                      "top5": sum(r["top5"] for r in mine),
                      "above_distractor": sum(r["above_distractor"] for r in mine),
                      "window_read": sum(bool(r["time_window"] or r["parsed"]) for r in mine)}
    return out


def report(rows: Sequence[Mapping[str, Any]], mode: str) -> str:
    lines = [f"## loose date phrases, {mode}", "",
             "| id | phrase | answer (days back) | distractor (days back) | at 1 | top 5 | "
             "above distractor | gitmem read |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['id']} | {r['phrase']} | {r['answer_rank'] or '-'} "
            f"({r['answer']['days_back']}) | {r['distractor_rank'] or '-'} "
            f"({r['distractor']['days_back']}) | {'y' if r['top1'] else '.'} | "
            f"{'y' if r['top5'] else '.'} | {'y' if r['above_distractor'] else '.'} | "
            f"{read_as(r)} |")
    lines += ["", "| group | n | answer at 1 | answer in top 5 | answer above distractor | "
              "phrase read as a window |", "|---|---|---|---|---|---|"]
    for group, s in table(rows).items():
        n = s["n"]
        lines.append(f"| {group} | {n} | {s['top1']}/{n} | {s['top5']}/{n} | "
                     f"{s['above_distractor']}/{n} | {s['window_read']}/{n} |")
    failed = [r for r in rows if not (r["top5"] and r["above_distractor"])]
    if failed:
        lines += ["", "Top 3 where the answer is not in the top 5 above its distractor:"]
        for r in failed:
            lines.append(f"- {r['id']} {r['question']}")
            lines += [f"      {t}" for t in r["top"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    wrong = check()
    if wrong:
        raise SystemExit("the set is not as described:\n" + "\n".join(wrong))
    return run_set(__doc__, argv, notes(), "gitmem-loose-", ask, report, table, meant=MEANT)


if __name__ == "__main__":
    raise SystemExit(main())
