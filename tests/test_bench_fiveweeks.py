"""The five-week workspace, the held-out chat log and their runner (bench/bench_fiveweeks.py):
the checks name real lines, and the runner judges answers right, so the check set cannot rot."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bench import bench_fiveweeks as bf
from testing import chatlog_heldout, fiveweeks
from testing.fiveweeks import Check
from testing.repo import git


def test_every_check_names_one_line_of_the_workspace(tmp_path: Path) -> None:
    repo = fiveweeks.build(tmp_path)
    days = git(repo, "log", "--format=%cd", "--date=format:%Y-%m-%d").split()
    assert sorted(days) == sorted([*fiveweeks.DAYS, "2026-09-06"])
    fragments = {t for c in fiveweeks.CHECKS for t in (
        c.top, *c.below, *c.unmarked, *c.current, *c.not_current,
        *(x for pair in (*c.marked, *c.was) for x in pair)) if t}
    for fragment in fragments:
        path, line = fiveweeks.locate(fragment)
        assert fragment in (repo / path).read_text(encoding="utf-8").split("\n")[line - 1]
    with pytest.raises(ValueError, match="on 0 lines"):
        fiveweeks.locate("not in the notes")
    assert len(fiveweeks.CHECKS) >= 25
    assert len({c.name for c in fiveweeks.CHECKS}) == len(fiveweeks.CHECKS)
    scripts = {"ja": r"[\u3040-\u30ff\u4e00-\u9fff]", "ru": r"[а-яё]", "da": r"[æøå]"}
    text = "\n".join(fiveweeks.DAYS.values())
    assert all(re.search(p, text, re.IGNORECASE) for p in scripts.values())


def test_every_chat_question_names_two_turns(tmp_path: Path) -> None:
    repo = chatlog_heldout.build(tmp_path)
    assert len(chatlog_heldout.QUESTIONS) >= 12
    for _, older, newer in chatlog_heldout.QUESTIONS:
        (p_old, l_old), (p_new, l_new) = map(chatlog_heldout.locate, (older, newer))
        assert p_old < p_new  # the newer turn is a later session
        for path, line, fragment in ((p_old, l_old, older), (p_new, l_new, newer)):
            turn = (repo / path).read_text(encoding="utf-8").split("\n")[line - 1]
            assert turn.startswith("- ") and fragment in turn


def _r(path: str, line: int, by: str | None = None, end: int | None = None) -> dict[str, Any]:
    return {"path": path, "start_line": line, "end_line": end or line,
            "source": f"{path}#L{line}", "superseded_by": by}


A, B, C = ("memory/a.md", 3), ("memory/b.md", 5), ("memory/c.md", 7)
WHERE = {"old": A, "new": B, "other": C}


def test_recall_checks_on_hand_built_answers() -> None:
    check = Check("x", "q", top="new", below=("old",), marked=(("old", "new"),),
                  unmarked=("other",))
    pairs = [(A, B)]

    def judge(*results: dict[str, Any]) -> list[str]:
        return bf.check_recall(check, list(results), WHERE.__getitem__, pairs)

    assert judge(_r(*B), _r(*A, by="memory/b.md#L5"), _r(*C)) == []
    # the older above the newer, and unmarked
    assert judge(_r(*A), _r(*B)) == [
        "'old' at 1, above 'new'",
        "'old' shown (memory/a.md#L3) without 'replaced by' 'new' (superseded_by None)"]
    # the newer fourth: not in the first 3; the older not shown: nothing to mark
    assert judge(_r(*C), _r(*C), _r(*C), _r(*B)) == ["'new' at 4, not in the first 3"]
    # a statement that is still true, marked: wrong, unless the mark is an update's inside
    # the same text result
    assert judge(_r(*B), _r(*C, by="memory/b.md#L5")) == [
        "'other' shown (memory/c.md#L7) replaced by memory/b.md#L5"]
    chunk = {**_r("memory/c.md", 1, by="memory/b.md#L5", end=9)}
    both = {"old": ("memory/c.md", 3), "new": B, "other": C}
    assert bf.check_recall(check, [_r(*B), chunk], both.__getitem__,
                           [(("memory/c.md", 3), B)]) == []


def test_entity_checks_on_hand_built_views() -> None:
    check = Check("e", "entity X", current=("new", "other"), was=(("old", "new"),),
                  not_current=("old",))
    assert check.entity == "X"

    def fact(where: tuple[str, int], *history: tuple[str, int]) -> dict[str, Any]:
        return {"source": f"{where[0]}#L{where[1]}",
                "history": [{"source": f"{p}#L{n}"} for p, n in history]}

    right = {"facts": {"world": [fact(B, A), fact(C)]}}
    assert bf.check_entity(check, right, WHERE.__getitem__) == []
    wrong = {"facts": {"world": [fact(A), fact(C, B)], "experience": []}}
    assert bf.check_entity(check, wrong, WHERE.__getitem__) == [
        "'new' is not a current fact", "'old' is listed as current",
        "'old' is not shown replaced by 'new'"]
    # replaced by a statement that is not one of the entity's facts shown (a note line)
    apart = {"facts": {"world": [fact(C)]},
             "replaced": [{"source": "memory/a.md#L3", "replaced_by": "memory/b.md#L5"}]}
    assert bf.check_entity(Check("e", "entity X", was=(("old", "new"),), not_current=("old",)),
                           apart, WHERE.__getitem__) == []


def test_the_runner_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "five.json"
    assert bf.main(["--json", str(out)]) == 0
    report = json.loads(out.read_text(encoding="utf-8"))
    checks, chat = report["checks"], report["chat"]
    assert len(checks) == len(fiveweeks.CHECKS) and len(chat) == len(chatlog_heldout.QUESTIONS)
    assert report["passed"] == sum(c["pass"] for c in checks)
    assert all(c["pass"] == (c["wrong"] == []) for c in checks)
    # a check that holds on main since before issue 38: Elena's duty is found, unmarked
    assert next(c for c in checks if c["check"]["name"] == "elena-duty")["pass"]
    text = capsys.readouterr().out
    assert f"five weeks, lexical: {report['passed']}/{len(checks)} checks pass" in text
    assert f"newer turn first for {report['chat_newer_first']}/{len(chat)}" in text
    with pytest.raises(SystemExit, match="hybrid needs --model"):
        bf.main(["--mode", "hybrid"])
