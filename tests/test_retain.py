from __future__ import annotations

from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.domain import MemoryFile, ParsedFile
from gitmem.parse.markdown import parse_file
from gitmem.parse.retain import entity_key, find_entities

SPEC_EXAMPLES = """# 2025-11-27

## Retain
- W @Peter: Currently in Marrakech for Andy's birthday (2025-11-27 – 2025-12-01).
- B @warelay: Fixed the Baileys WS crash by wrapping the connection.update handler in try/catch (see memory/2025-11-27.md).
- O(c=0.95) @Peter: Prefers concise WhatsApp replies (under 1500 chars); long content goes to a file.
- W @Peter @The-Castle: Moved the gateway host to The Castle.
- W @ピーター: アンディの誕生日のため、マラケシュに滞在（2025年11月27日〜12月1日）。
- O(c=0.6) @Пётр: Предпочитает короткие ответы.
"""


def parse(
    text: str, path: str = "memory/2025-11-27.md", day: date | None = date(2025, 11, 27)
) -> ParsedFile:
    cls = "daily" if day else "core"
    return parse_file(MemoryFile(path, "0" * 40, cls, day), text.encode("utf-8"))


def test_spec_examples_all_parse() -> None:
    parsed = parse(SPEC_EXAMPLES)
    assert parsed.warnings == ()
    got = [(f.kind, f.subjects, f.confidence, f.start_line) for f in parsed.facts]
    assert got == [
        ("world", ("Peter",), None, 4),
        ("experience", ("warelay",), None, 5),
        ("opinion", ("Peter",), 0.95, 6),
        ("world", ("Peter", "The-Castle"), None, 7),
        ("world", ("ピーター",), None, 8),
        ("opinion", ("Пётр",), 0.6, 9),
    ]
    first = parsed.facts[0]
    assert first.text.startswith("Currently in Marrakech")
    assert (first.event_start, first.event_end) == (date(2025, 11, 27), date(2025, 12, 1))
    jp = parsed.facts[4]
    assert (jp.event_start, jp.event_end) == (date(2025, 11, 27), date(2025, 12, 1))
    # No stated period: the daily note's date.
    assert parsed.facts[3].event_start == parsed.facts[3].event_end == date(2025, 11, 27)


def test_entities_rules() -> None:
    assert find_entities("mail peter@example.com or @Peter.") == ["Peter"]
    assert find_entities("@The-Castle, @v1.2.3. and @_bad @ピーター") == [
        "The-Castle",
        "v1.2.3",
        "ピーター",
    ]
    assert entity_key("The-Castle") == entity_key("the_castle") == entity_key("The Castle")


def test_mentions_in_text_link_the_entry() -> None:
    parsed = parse("## Retain\n- W @Peter: Met @Andy at the riad; wrote andy@example.com.\n")
    fact = parsed.facts[0]
    assert fact.subjects == ("Peter",)
    assert fact.mentions == ("Andy",)


def test_continuation_and_nested_items_belong_to_entry() -> None:
    text = (
        "## Retain\n- B @warelay: Fixed the crash\n  by wrapping the handler.\n"
        "  - nested detail\n- W @Peter: next\n"
    )
    facts = parse(text).facts
    assert len(facts) == 2
    assert (facts[0].start_line, facts[0].end_line) == (2, 4)
    assert "by wrapping the handler." in facts[0].text
    assert "nested detail" in facts[0].text


def test_section_ends_at_same_or_higher_heading() -> None:
    text = (
        "## Retain\n- W @A: one\n### Details\n- W @B: two\n## Notes\n- W @C: not a fact\n"
        "### Retain\n- S @D: three\n"
    )
    assert [f.subjects[0] for f in parse(text).facts] == ["A", "B", "D"]


def test_confidence_warnings_and_malformed_items() -> None:
    text = (
        "## Retain\n- W(c=0.9) @A: world with c\n- O(c=1.7) @B: too sure\n- X: no kind\n- plain\n"
    )
    parsed = parse(text)
    # c on a W entry is ignored; an O entry whose c is no number in [0, 1] is no fact at all
    assert [(f.kind, f.confidence) for f in parsed.facts] == [("world", None)]
    codes = [(w.line, w.code) for w in parsed.warnings]
    assert codes == [
        (2, "retain-confidence"),
        (3, "retain-confidence"),
        (4, "retain-malformed"),
        (5, "retain-malformed"),
    ]
    # Malformed items are still text: they are in the chunks.
    assert any("no kind" in c.text and "too sure" in c.text for c in parsed.chunks)


def test_fact_id_is_stable_across_moves_and_changes_with_text() -> None:
    a = parse("## Retain\n- W @Peter: Moved the gateway host.\n").facts[0]
    b = parse(
        "# Title\n\nprose\n\n## Retain\n- B @x: other\n- W   @peter:  Moved the gateway  host.\n"
    ).facts[1]
    c = parse("## Retain\n- W @Peter: Moved the gateway host!\n").facts[0]
    d = parse("## Retain\n- W @Peter: Moved the gateway host.\n", day=date(2025, 11, 28)).facts[0]
    assert a.fact_id == b.fact_id
    assert a.fact_id != c.fact_id
    assert a.fact_id != d.fact_id
    assert a.fact_id.startswith("f-") and len(a.fact_id) == 14


def test_front_matter_not_indexed_but_lines_kept() -> None:
    parsed = parse(
        "---\naliases: [Castle]\n---\n# The Castle\n## Retain\n- W @X: y\n",
        path="bank/entities/The-Castle.md",
        day=None,
    )
    assert parsed.front_matter == {"aliases": ["Castle"]}
    assert parsed.facts[0].start_line == 6
    assert all("aliases" not in c.text for c in parsed.chunks)


# -- properties: the parser never raises and never drops a line ------------------------------

_line = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        [
            "## Retain",
            "# Title",
            "### retain",
            "---",
            "```",
            "> quote",
            "",
            "  ",
            "- W @Peter: fact",
            "- O(c=0.5) @Пётр: мнение",
            "- O(c=x) @A: b",
            "  continuation",
            "    - nested",
            "- X: bad",
            "* S: star",
            "1. W @n: num",
            "- W @a@b: x",
            "\t- W: tab",
            "- O(c=0.9: unclosed",
        ]
    ),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_line, max_size=40))
def test_parse_never_raises_and_keeps_every_line(lines: list[str]) -> None:
    text = "\n".join(lines)
    parsed = parse(text)
    body_start = 1
    if parsed.front_matter or (
        lines
        and lines[0].strip() == "---"
        and not any(w.code == "front-matter" for w in parsed.warnings)
    ):
        fm_end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
        body_start = fm_end + 2
    covered: set[int] = set()
    for chunk in parsed.chunks:
        covered.update(range(chunk.start_line, chunk.end_line + 1))
    from gitmem.parse.chunking import _RULE
    from gitmem.parse.markdown import _MD, sections_from, split_lines

    all_lines = split_lines(parsed.text)
    # A chunk of nothing but headings and rules is dropped (issue 9): those lines may go.
    headings = {s.start_line for s in sections_from(_MD.parse(parsed.text), len(all_lines))}
    for n, line in enumerate(all_lines, 1):
        if n >= body_start and line.strip() and n not in headings and not _RULE.match(line):
            assert n in covered, f"line {n} {line!r} dropped"
    for fact in parsed.facts:
        assert 1 <= fact.start_line <= fact.end_line <= len(all_lines)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.text(min_size=1, max_size=30).filter(
            lambda s: "\n" not in s and "\r" not in s and s.strip() == s and s
        ),
        max_size=15,
    )
)
def test_every_retain_item_is_a_fact_or_a_warning(items: list[str]) -> None:
    text = "## Retain\n" + "".join(f"- {item}\n" for item in items)
    parsed = parse(text)
    malformed = {w.line for w in parsed.warnings if w.code == "retain-malformed"}
    fact_lines = {f.start_line for f in parsed.facts}
    assert not (malformed & fact_lines)
    assert len(malformed) + len(fact_lines) <= len(items)
    # every top-level bullet that markdown-it sees as an item is accounted for
    from gitmem.parse.markdown import _MD, retain_items, sections_from, split_lines

    lines = split_lines(text)
    tokens = _MD.parse(text)
    seen = retain_items(tokens, sections_from(tokens, len(lines)), lines)
    assert {e.start_line for e in seen} == malformed | fact_lines
