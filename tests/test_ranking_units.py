"""Passage units (recall.ranking): BM25 among the candidates, and how ranked units become results
(merged when adjacent, dropped when already cited, facts kept whole)."""

from __future__ import annotations

from typing import Any

from gitmem.index.items import PASSAGE_TOKENS, embedding_passages
from gitmem.parse.chunking import passage_lines
from gitmem.recall.ranking import bm25_pool, pick_units


def _row(path: str, start: int, lines: list[str], *, type_: str = "chunk", item: int = 1,
         valid_to: int | None = None, commit: str | None = "c1") -> dict[str, Any]:
    return {"id": item, "path": path, "type": type_, "start_line": start,
            "end_line": start + len(lines) - 1, "content": "\n".join(lines),
            "valid_to": valid_to, "commit_id": commit}


def test_bm25_prefers_rare_words_and_short_passages() -> None:
    docs = [["peter", "moved", "the", "gateway"], ["peter", "likes", "tea"],
            ["the", "gateway", "host", "is", "in", "the", "castle", "now", "and", "then"],
            ["nothing", "here"]]
    scores = bm25_pool(["gateway", "peter"], docs)
    assert scores[3] == 0.0
    assert scores[0] > scores[2] > 0  # both words beat one word in a longer passage
    assert scores[0] > scores[1] > 0
    assert bm25_pool(["x"], []) == []


def test_passages_are_the_embedded_ones() -> None:
    lines = [f"- [1:56 pm] Caroline: line {n} " + "word " * 20 for n in range(12)]
    content = "\n".join([*lines[:5], "", *lines[5:]])
    parts = passage_lines(content, PASSAGE_TOKENS)
    texts = embedding_passages("chunk", "", content, "")
    assert len(parts) == len(texts) > 1
    for offsets, text in zip(parts, texts, strict=True):
        assert text == "\n".join(content.split("\n")[o] for o in offsets)


def test_adjacent_passages_merge_and_cited_lines_are_not_repeated() -> None:
    lines = [f"line {n}" for n in range(10, 30)]
    chunk = _row("memory/a.md", 10, lines)
    other = _row("memory/b.md", 1, ["b1", "b2", "b3"], item=2)
    units = [(0.9, chunk, 12, 14), (0.8, other, 1, 2), (0.7, chunk, 15, 16),
             (0.6, chunk, 13, 14), (0.5, chunk, 25, 27)]
    picked = pick_units(units, k=5, diversity=True)
    assert [(p.row["path"], p.start, p.end) for p in picked] == [
        ("memory/a.md", 12, 16), ("memory/b.md", 1, 2), ("memory/a.md", 25, 27)]
    assert picked[0].lines == {n: f"line {n}" for n in range(12, 17)}
    assert picked[0].score == 0.9


def test_only_the_best_units_extend_a_result_and_k_counts_results() -> None:
    chunk = _row("memory/a.md", 1, [f"l{n}" for n in range(1, 21)])
    units = [(0.9, chunk, 1, 3), (0.8, chunk, 7, 9), (0.7, chunk, 4, 6), (0.6, chunk, 15, 16),
             (0.5, chunk, 10, 11), (0.4, chunk, 17, 17)]
    # 4-6 touches both 1-3 and 7-9: it joins the first; results never move forward
    picked = pick_units(units, k=3, diversity=True)
    assert [(p.start, p.end) for p in picked] == [(1, 6), (7, 11), (15, 17)]
    # past the merge window a touching unit is a result of its own, and k results end the list
    picked = pick_units(units, k=3, diversity=True, merge_window=3)
    assert [(p.start, p.end) for p in picked] == [(1, 6), (7, 9), (15, 16)]
    assert [(p.start, p.end) for p in pick_units(units, k=1, diversity=True)] == [(1, 6)]


def test_facts_stay_whole_and_inside_a_cited_range_they_are_dropped() -> None:
    chunk = _row("memory/a.md", 1, [f"l{n}" for n in range(1, 11)])
    fact = _row("memory/a.md", 11, ["- W @Peter: fact"], type_="fact", item=3)
    inner = _row("memory/a.md", 3, ["l3"], type_="fact", item=4)
    units = [(0.9, fact, 11, 11), (0.8, chunk, 9, 10), (0.7, chunk, 1, 4), (0.6, inner, 3, 3)]
    picked = pick_units(units, k=5, diversity=True)
    assert [(p.row["type"], p.start, p.end) for p in picked] == [
        ("fact", 11, 11), ("chunk", 9, 10), ("chunk", 1, 4)]


def test_versions_of_a_file_do_not_merge_and_copies_are_dropped() -> None:
    now = _row("memory/a.md", 1, ["alpha beta", "gamma delta"], item=1)
    old = _row("memory/a.md", 3, ["epsilon", "zeta"], item=2, valid_to=5, commit="c0")
    copy = _row("memory/c.md", 1, ["alpha beta", "gamma delta"], item=3)
    units = [(0.9, now, 1, 2), (0.8, old, 3, 4), (0.7, copy, 1, 2)]
    assert [(p.row["id"], p.start) for p in pick_units(units, 5, diversity=True)] == [
        (1, 1), (2, 3)]
    assert len(pick_units(units, 5, diversity=False)) == 3
