"""Japanese, Chinese and Korean questions answered lexically (issue 17 item 6), on the
workspace of bench/bench_cjk.py: particles, polite endings and question words need not match."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bench.bench_cjk import PERSON_ONLY, QUESTIONS, build_workspace, evaluate, target_line
from gitmem.index.run import index_and_embed
from gitmem.index.store import open_store
from gitmem.workspace import Workspace, open_workspace
from testing.cli import gitmem


@pytest.fixture(scope="module")
def cjk_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = build_workspace(tmp_path_factory.mktemp("cjk") / "ws")
    ws, cfg = open_workspace(repo)
    index_and_embed(ws, replace(cfg, embed_provider="none"), force=True)
    return repo


def _ws(repo: Path) -> Workspace:
    return open_workspace(repo)[0]


def test_every_question_finds_its_target_line_in_the_top_5(cjk_repo: Path) -> None:
    result = evaluate(_ws(cjk_repo), 5, "lexical")
    assert result["overall"] == 1.0, result
    assert set(result["per_language"]) == {"ja", "zh", "ko"}
    assert len(QUESTIONS) >= 20
    assert not result["person_only_unanswered"], result  # 田中さんはどこ, 田中さんの住所, ...


def _recall(repo: Path, query: str) -> dict[str, object]:
    code, out, err = gitmem("-C", str(repo), "recall", query, "--mode", "lexical", "--json")
    assert code == 0, err
    data: dict[str, object] = json.loads(out)
    return data


def _sources(data: dict[str, object]) -> list[str]:
    results = data["results"]
    assert isinstance(results, list)
    return [str(r["source"]) for r in results]


def test_the_measured_japanese_questions_answer_on_the_command_line(cjk_repo: Path) -> None:
    """The three questions of the issue printed 'no results' on a workspace full of 田中さん."""
    question = next(q for q in QUESTIONS if q.text == "田中さんはどこに住んでいますか")
    target = f"{question.path}#L{target_line(question)}"
    assert target in _sources(_recall(cjk_repo, question.text))[:5]
    for text, _ in PERSON_ONLY[:2]:
        code, out, _err = gitmem("-C", str(cjk_repo), "recall", text, "--mode", "lexical")
        assert code == 0 and "no results" not in out and "田中" in out, out


def test_a_single_character_word_is_found_inside_a_longer_run(cjk_repo: Path) -> None:
    """谁养猫: no bigram of the question is in the notes (养了一只猫), its characters are."""
    line = next(q for q in QUESTIONS if q.text == "谁养猫？")
    assert f"{line.path}#L{target_line(line)}" in _sources(_recall(cjk_repo, "谁养猫？"))


def test_an_index_made_before_the_characters_is_rebuilt(cjk_repo: Path, tmp_path: Path) -> None:
    """Indexes of schema 5 have no table of Han characters: one that holds CJK text is rebuilt
    by recall (which says so), never answered from without the characters."""
    repo = build_workspace(tmp_path / "ws")
    assert gitmem("-C", str(repo), "index")[0] == 0
    store = open_store(_ws(repo).index_path)
    try:
        with store.conn:
            store.conn.execute("DROP TABLE items_han")
            store.conn.execute("DELETE FROM migrations WHERE version > 5")
            store.conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    finally:
        store.close()
    data = _recall(repo, "谁养猫？")
    warnings = data["warnings"]
    assert isinstance(warnings, list) and any("rebuilt" in w for w in warnings), warnings
    assert _sources(data) == _sources(_recall(cjk_repo, "谁养猫？"))
