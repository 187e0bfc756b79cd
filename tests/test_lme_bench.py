"""The LongMemEval benchmark (bench/lme.py) on a tiny LongMemEval-shaped file: real
repositories, real indexes, lexical recall; a run split in parts reads as the whole run."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from bench.lme import main, render

SESSIONS = {
    "s-garden": [
        {"role": "user", "content": "My tomatoes split after the heavy rain.", "has_answer": True},
        {"role": "assistant", "content": "Water them evenly.\nMulch helps too."},
    ],
    "s-bike": [
        {"role": "user", "content": "I replaced the chain on my gravel bike.", "has_answer": True},
        {"role": "assistant", "content": "Remember to lube the new chain."},
    ],
    "s-books": [
        {"role": "user", "content": "I am reading a novel about lighthouse keepers."},
        {"role": "assistant", "content": "That sounds calm."},
    ],
}
DATES = {"s-garden": "2023/05/20 (Sat) 09:10", "s-bike": "2023/05/20 (Sat) 18:30",
         "s-books": "2023/05/22 (Mon) 08:00"}


def question(qid: str, kind: str, text: str, answers: list[str]) -> dict[str, Any]:
    ids = list(SESSIONS)
    return {"question_id": qid, "question_type": kind, "question": text,
            "question_date": "2023/05/30 (Tue) 10:00", "answer": "-",
            "answer_session_ids": answers, "haystack_session_ids": ids,
            "haystack_dates": [DATES[i] for i in ids],
            "haystack_sessions": [SESSIONS[i] for i in ids]}


QUESTIONS = [
    question("q1", "single-session-user", "Why did my tomatoes split?", ["s-garden"]),
    question("q2", "multi-session", "What did I do for the tomatoes and the gravel bike chain?",
             ["s-garden", "s-bike"]),
    question("q3", "single-session-user", "What novel about lighthouse keepers?", ["s-books"]),
    question("q3_abs", "single-session-user", "What is my cat called?", []),
]


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "lme.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump(QUESTIONS, fh)
    return path


def run(data: Path, out: Path, *extra: str) -> dict[str, Any]:
    assert main(["eval", "--data", str(data), "--methods", "lexical", "--out", str(out),
                 *extra]) == 0
    report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    return report


def test_render_dates_sessions_and_marks_answer_turns() -> None:
    sessions, answers = render(QUESTIONS[0])
    paths = [path for _, _, path, _ in sessions]
    assert paths == ["memory/2023-05-20.md", "memory/2023-05-20-session-2.md",
                     "memory/2023-05-22.md"]
    assert answers == {("memory/2023-05-20.md", 3), ("memory/2023-05-20-session-2.md", 3)}
    assert "  Mulch helps too." in sessions[0][3]  # a turn's further lines, indented


def test_eval_finds_the_answer_sessions_and_leaves_out_abstention(data: Path,
                                                                  tmp_path: Path) -> None:
    report = run(data, tmp_path / "all.json")
    assert [row["question_id"] for row in report["per_question"]] == ["q1", "q2", "q3"]
    overall = report["results"]["lexical"]["all"]
    assert overall["n"] == 3
    assert overall["recall_any@5"] == 1.0
    assert overall["recall_all@5"] == 1.0
    assert report["results"]["lexical"]["multi-session"]["n"] == 1


def test_parts_merged_read_as_the_whole_run(data: Path, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    whole = run(data, tmp_path / "whole.json", "--interleave")
    first = run(data, tmp_path / "p0.json", "--interleave", "--part", "0/2")
    second = run(data, tmp_path / "p1.json", "--interleave", "--part", "1/2")
    # each part takes every other question, then asks the types in turn
    assert [row["question_id"] for row in first["per_question"]] == ["q1", "q3"]
    assert [row["question_id"] for row in whole["per_question"]] == ["q1", "q2", "q3"]
    assert len(first["per_question"]) + len(second["per_question"]) == 3
    capsys.readouterr()
    assert main(["table", str(tmp_path / "p0.json"), str(tmp_path / "p1.json"),
                 "--out", str(tmp_path / "merged.json")]) == 0
    table = capsys.readouterr().out
    assert "| lexical | all | 3 | 1.000 |" in table
    merged: dict[str, Any] = json.loads((tmp_path / "merged.json").read_text(encoding="utf-8"))
    def figures(report: dict[str, Any]) -> dict[str, Any]:
        return {kind: {key: value for key, value in row.items() if not key.endswith("_s")}
                for kind, row in report["results"]["lexical"].items()}

    assert figures(merged) == figures(whole)


def test_skip_asks_only_the_questions_a_report_lacks(data: Path, tmp_path: Path) -> None:
    first = run(data, tmp_path / "p0.json", "--interleave", "--part", "0/2")
    rest = run(data, tmp_path / "rest.json", "--skip", str(tmp_path / "p0.json"))
    assert [row["question_id"] for row in rest["per_question"]] == ["q2"]
    assert {row["question_id"] for row in first["per_question"]} == {"q1", "q3"}


def test_all_at_k_is_also_given_over_questions_whose_answer_sessions_hold_evidence(
        tmp_path: Path) -> None:
    # q2 names s-books as an answer session too, but no turn of it is marked as evidence
    unmarked = question("q2", "multi-session", "What did I do for the tomatoes and the novel?",
                        ["s-garden", "s-books"])
    unmarked["haystack_sessions"] = [SESSIONS[i] for i in SESSIONS]
    path = tmp_path / "lme.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        json.dump([QUESTIONS[0], unmarked], fh)
    report = run(path, tmp_path / "r.json")
    assert [row["marked"] for row in report["per_question"]] == [True, False]
    overall = report["results"]["lexical"]["all"]
    assert (overall["n"], overall["n_marked"]) == (2, 1)
    assert overall["recall_all@5_marked"] == 1.0
    # an older report without the flag is completed from the data when merged
    for row in report["per_question"]:
        del row["marked"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(report), encoding="utf-8")
    assert main(["table", str(old), "--data", str(path), "--out", str(tmp_path / "m.json")]) == 0
    merged = json.loads((tmp_path / "m.json").read_text(encoding="utf-8"))
    assert merged["results"]["lexical"]["all"]["n_marked"] == 1


def test_a_part_that_names_no_part_is_refused(data: Path, tmp_path: Path) -> None:
    with pytest.raises(SystemExit):
        run(data, tmp_path / "x.json", "--part", "2/2")


def test_reports_of_other_methods_on_the_same_questions_keep_both(data: Path,
                                                                  tmp_path: Path) -> None:
    from bench.lme import merge

    first = run(data, tmp_path / "a.json")
    # the same questions measured by another method (here: the same report renamed)
    other = json.loads(json.dumps(first).replace('"lexical"', '"semantic"'))
    merged = merge([first, other])
    assert merged["results"]["lexical"]["all"]["n"] == 3
    assert merged["results"]["semantic"]["all"]["n"] == 3
