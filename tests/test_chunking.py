from __future__ import annotations

import itertools

from gitmem.domain import MemoryFile
from gitmem.parse.chunking import ChunkParams, chunk_lines, passage_lines, unit_text
from gitmem.parse.markdown import parse_file
from gitmem.parse.textfold import count_tokens


def _parse(text: str):  # type: ignore[no-untyped-def]
    mf = MemoryFile("memory/2025-11-27.md", "0" * 40, "daily", None)
    return parse_file(mf, text.encode())


def test_headings_start_chunks_and_carry_titles() -> None:
    parsed = _parse("# Day\nintro\n\n## Work\nfixed it\n\n## Retain\n- W @A: fact\n")
    starts = [(c.start_line, c.heading) for c in parsed.chunks]
    assert starts == [(1, "Day"), (4, "Day > Work"), (7, "Day > Retain")]


def test_size_overlap_and_line_alignment() -> None:
    lines = [f"line {i} " + "word " * 30 for i in range(60)]  # ~40 tokens a line
    parsed = _parse("\n".join(lines))
    chunks = parsed.chunks
    assert len(chunks) > 5
    for c in chunks:
        assert c.tokens <= ChunkParams().tokens
        body = c.text.split("\n")
        assert body == lines[c.start_line - 1 : c.end_line]
    for a, b in itertools.pairwise(chunks):
        overlap = a.end_line - b.start_line + 1
        assert 1 <= overlap <= 2  # 80 tokens of ~40-token lines
    assert chunks[-1].end_line == 60


def test_every_line_is_covered() -> None:
    text = "\n".join(["# T"] + [f"- item {i} with some words" for i in range(300)])
    covered: set[int] = set()
    for c in _parse(text).chunks:
        covered.update(range(c.start_line, c.end_line + 1))
    assert covered == set(range(1, 302))


def test_long_line_is_its_own_chunk() -> None:
    long = "x" * 4000
    chunks = chunk_lines(["a", long, "b"], [])
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 1), (2, 2), (3, 3)]


def test_cjk_counted_per_character() -> None:
    line = "誕生日" * 50  # 150 tokens
    assert count_tokens(line) == 150
    chunks = chunk_lines([line] * 6, [])
    assert next(len(range(c.start_line, c.end_line + 1)) for c in chunks) == 2


def test_a_parse_without_chunks_has_the_same_facts_opinions_and_warnings() -> None:
    """``chunks=False`` (review) leaves out the search chunks and nothing else."""
    from dataclasses import replace
    from pathlib import Path

    from gitmem.workspace import classify

    root = Path(__file__).resolve().parent.parent / "fixtures" / "workspace"
    files = sorted(p for p in root.rglob("*.md") if classify(str(p.relative_to(root))))
    assert len(files) > 20
    with_chunks = 0
    for path in files:
        rel = str(path.relative_to(root))
        found = classify(rel)
        assert found is not None
        mf = MemoryFile(rel, "", found[0], found[1])
        data = path.read_bytes() + b"\n- [ ] a\n\n<!-- gitmem:begin x -->\nmade\n<!-- gitmem:end -->\n"
        full, lean = parse_file(mf, data), parse_file(mf, data, chunks=False)
        with_chunks += bool(full.chunks)
        assert lean.chunks == ()
        assert replace(full, chunks=()) == lean, rel
    assert with_chunks == len(files)


def test_units_are_list_items_table_rows_and_paragraphs() -> None:
    text = "\n".join([
        "## Log",                                    # 0: cited with the next unit
        "- アリスは来月から東京本社に移る。",           # 1
        "- Mødet med banken er flyttet til torsdag.",  # 2
        "  Husk papirerne.",                          # 3: the item's continuation line
        "1. first step",                              # 4
        "",
        "A paragraph written",                        # 6
        "over two lines.",                            # 7
        "",
        "| a | b |",                                  # 9
        "| 1 | 2 |",                                  # 10
        "---",                                        # 11: a rule belongs to no unit
        "After the rule.",                            # 12
    ])
    units = passage_lines(text, 96)
    assert units == [[0, 1], [2, 3], [4], [6, 7], [9], [10], [12]]
    assert passage_lines("## Only a heading", 96) == [[]]
    # the heading is cited with its first unit, not embedded with it
    assert unit_text(text.split("\n"), units[0]) == "- アリスは来月から東京本社に移る。"


def test_a_long_unit_is_cut_at_lines_and_too_many_are_packed() -> None:
    paragraph = "\n".join("x" * 160 for _ in range(5))  # no blank line: one paragraph
    assert count_tokens("x" * 160) == 40
    assert passage_lines(paragraph, 96) == [[0, 1], [2, 3], [4]]
    items = "\n".join(f"- item {n}" for n in range(10))
    assert passage_lines(items, 96, limit=4) == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert len(passage_lines(items, 96)) == 10
