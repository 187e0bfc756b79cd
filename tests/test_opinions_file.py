"""bank/opinions.md written back by reflect: managed fields change, every other byte stays."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.domain import Evidence
from gitmem.parse.opinions import parse_opinions
from gitmem.reflect.opinionfile import (
    NewOpinion,
    OpinionEdit,
    OpinionsFile,
    read_opinions,
    write_opinions,
)
from gitmem.reflect.textfile import split_text

# -- generated files ---------------------------------------------------------------------------

_WORD = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp")),
                min_size=1, max_size=12).filter(lambda w: w.strip() == w and "#" not in w)
_STATEMENT = st.lists(_WORD, min_size=1, max_size=6).map(" ".join).filter(
    lambda s: s.strip() and not s.startswith(("-", "<", "+", "*")))
_FACT = st.integers(0, 2**48 - 1).map(lambda n: f"f-{n:012x}")
_C = st.integers(0, 100).map(lambda n: n / 100)
_DAY = st.dates().map(lambda d: d.isoformat())
_FREE_LINE = st.one_of(
    st.just(""),
    st.just("<!-- a comment a person left -->"),
    _STATEMENT.map(lambda s: f"Note: {s}"),
    _STATEMENT.map(lambda s: f"  - aside: {s}"),
    _STATEMENT.map(lambda s: f"### {s}"),
)


@dataclass(frozen=True)
class _Section:
    lines: tuple[str, ...]
    well_formed: bool


@st.composite
def _section(draw: st.DrawFn) -> _Section:
    statement = draw(_STATEMENT)
    spacing = draw(st.sampled_from(["- {k}: {v}", "-  {k}:  {v}", "- {K}: {v}", "-{k}:{v}"]))

    def field(key: str, value: str) -> str:
        return spacing.format(k=key, K=key.capitalize(), v=value)

    parts: list[list[str]] = []
    if draw(st.booleans()):
        parts.append([f"<!-- opinion: o-{draw(st.integers(0, 2**32 - 1)):08x} -->"])
    well_formed = True
    shape = draw(st.sampled_from(["ok", "ok", "ok", "no-confidence", "bad-confidence",
                                  "twice", "bad-evidence"]))
    if shape != "no-confidence":
        value = "1.5" if shape == "bad-confidence" else f"{draw(_C):.2f}"
        parts.append([field("confidence", value)])
    if draw(st.booleans()):
        parts.append([field("updated", draw(_DAY))])
    if draw(st.booleans()) or shape == "bad-evidence":
        indent = draw(st.sampled_from(["  ", "    ", "\t"]))
        items = [f"{indent}- {draw(st.sampled_from(['for', 'against']))} {draw(_FACT)} "
                 f"memory/2025-11-{draw(st.integers(10, 28))}.md#L{draw(st.integers(1, 99))}"
                 + (f" (c={draw(_C):.2f})" if draw(st.booleans()) else "")
                 for _ in range(draw(st.integers(0, 3)))]
        if shape == "bad-evidence":
            items.append(f"{indent}- for something unreadable")
        parts.append([field("evidence", ""), *items])
    if shape == "twice":
        parts.append([field("confidence", "0.50")])
    well_formed = shape == "ok"
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), [draw(_FREE_LINE)])
    lines = [f"##{draw(st.sampled_from([' ', '  ']))}{statement}"]
    for part in parts:
        lines += part
    return _Section(tuple(lines), well_formed)


@st.composite
def _file(draw: st.DrawFn) -> tuple[bytes, list[_Section]]:
    preamble = draw(st.lists(_FREE_LINE, max_size=3))
    sections = draw(st.lists(_section(), max_size=5))
    lines = ["# Opinions", *preamble]
    for s in sections:
        lines += [*s.lines, *draw(st.lists(st.just(""), max_size=2))]
    eol = draw(st.sampled_from(["\n", "\r\n", "mixed"]))
    out = []
    for n, line in enumerate(lines):
        ending = ("\r\n" if n % 2 else "\n") if eol == "mixed" else eol
        out.append(line + ending)
    text = "".join(out)
    if draw(st.booleans()):
        text = text.rstrip("\r\n")
    bom = "\ufeff" if draw(st.booleans()) else ""
    return (bom + text).encode("utf-8"), sections


def _parse(data: bytes) -> OpinionsFile:
    return read_opinions(data)


def _section_text(doc: OpinionsFile, opinion_id: str) -> list[tuple[str, str]]:
    s = doc.section(opinion_id)
    assert s is not None
    return list(zip(doc.text.lines[s.heading:s.stop], doc.text.endings[s.heading:s.stop],
                    strict=True))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_file(), st.data())
def test_write_changes_only_managed_fields(sample: tuple[bytes, list[_Section]],
                                           data: st.DataObject) -> None:
    raw, _ = sample
    doc = _parse(raw)
    assert write_opinions(doc) == raw  # nothing to do: byte for byte
    editable = [s for s in doc.sections if not s.malformed]
    ids = [s.opinion.opinion_id for s in doc.sections]
    chosen = data.draw(st.lists(st.sampled_from(editable), unique_by=lambda s: s.heading)
                       if editable else st.just([]))
    chosen = [s for s in chosen if ids.count(s.opinion.opinion_id) == 1]
    edits = [OpinionEdit(s.opinion.opinion_id, data.draw(_C), data.draw(_DAY),
                         tuple(Evidence(data.draw(st.sampled_from(["for", "against"])),
                                        data.draw(_FACT), "memory/2026-01-02.md#L7",
                                        data.draw(st.none() | _C))
                               for _ in range(data.draw(st.integers(0, 2)))))
             for s in chosen]
    statements = data.draw(st.lists(_STATEMENT, max_size=2, unique=True))
    new: list[NewOpinion] = []
    for statement in statements:
        oid = doc.new_id(statement, {n.opinion_id for n in new})
        new.append(NewOpinion(oid, statement, data.draw(_C), data.draw(_DAY),
                              (Evidence("for", data.draw(_FACT), "memory/2026-01-03.md#L2",
                                        None),)))
    out = write_opinions(doc, edits, new)
    again = _parse(out)
    # parse(write(parse(x))): every opinion is still there, edited ones say what was written.
    edited = {e.opinion_id: e for e in edits}
    before = {s.opinion.opinion_id: s.opinion for s in doc.sections}
    after = {s.opinion.opinion_id: s.opinion for s in again.sections}
    assert set(after) == set(before) | {n.opinion_id for n in new}
    for oid, old in before.items():
        got = after[oid]
        assert got.statement == old.statement
        if oid in edited:
            e = edited[oid]
            assert (got.confidence, got.updated) == (e.confidence, e.updated)
            assert got.evidence == old.evidence + e.add_evidence
        elif ids.count(oid) == 1:
            mine, theirs = _section_text(again, oid), _section_text(doc, oid)
            if theirs and not theirs[-1][1]:  # the file's last line, no newline: may gain one
                mine = [*mine[:-1], (mine[-1][0], "")]
            assert mine == theirs  # byte for byte
            assert (got.confidence, got.updated, got.evidence) == (
                old.confidence, old.updated, old.evidence)
    for n in new:
        got = after[n.opinion_id]
        assert (got.statement, got.confidence, got.updated, got.evidence) == (
            n.statement, n.confidence, n.updated, n.evidence)
    # Every line a person wrote is still there, in order, with its own ending, except the
    # values of the fields reflect manages.
    managed = {i for s in doc.sections if s.opinion.opinion_id in edited
               for i in (s.confidence_line, s.updated_line) if i is not None}
    kept = [(t, e) for i, (t, e) in enumerate(zip(doc.text.lines, doc.text.endings, strict=True))
            if i not in managed]
    it = iter(zip(again.text.lines, again.text.endings, strict=True))
    for n, (line, ending) in enumerate(kept):
        # The old last line may gain a newline when something is appended after it.
        may_gain = n == len(kept) - 1 and not ending
        assert any(t == line and (e == ending or may_gain) for t, e in it), line
    assert out.startswith(b"\xef\xbb\xbf") == raw.startswith(b"\xef\xbb\xbf")
    assert write_opinions(again) == out


@given(_file())
@settings(max_examples=200, deadline=None)
def test_malformed_sections_are_warned_about_with_their_line(
        sample: tuple[bytes, list[_Section]]) -> None:
    raw, sections = sample
    doc = _parse(raw)
    assert len(doc.sections) == len(sections)
    for got, made in zip(doc.sections, sections, strict=True):
        if not made.well_formed:
            assert got.malformed
        for w in got.problems:
            assert w.location.startswith("bank/opinions.md#L")
            assert got.heading + 1 <= w.line <= max(got.stop, got.heading + 1)
    opinions, warns = parse_opinions(list(split_text(raw).lines))
    assert [o.opinion_id for o in opinions] == [s.opinion.opinion_id for s in doc.sections]
    assert {w.line for s in doc.sections for w in s.problems} <= {w.line for w in warns}


SAMPLE = """# Opinions

Hand-written intro.

## @Peter likes tea
<!-- opinion: o-1234abcd -->
- confidence: 0.60
- updated: 2025-11-01
- evidence:
  - for f-000000000001 memory/2025-11-01.md#L3 (c=0.60)

## @Peter likes coffee
- updated: 2025-11-01

## @Peter likes water
<!-- opinion: o-1234abcd -->
- confidence: 0.4

## @Peter likes juice
- confidence: 0.5
- confidence: 0.6

## @Peter likes milk
- confidence: 0.5
- evidence:
  - for f-zz memory/x.md#L1
"""


@pytest.mark.parametrize(("line", "says"), [
    (12, "no '- confidence: 0.00' line"),
    (15, "also used by the opinion at line 5"),
    (21, "'confidence' appears twice"),
    (26, "evidence line does not read"),
])
def test_each_malformed_section_is_located(line: int, says: str) -> None:
    doc = read_opinions(SAMPLE.encode())
    found = [w for w in doc.warnings if w.line == line and says in w.message]
    assert found, [str(w) for w in doc.warnings]
    assert str(found[0]).startswith(f"bank/opinions.md#L{line}: ")
    assert [s.malformed for s in doc.sections] == [False, True, True, True, True]


def test_a_section_without_id_gets_its_marker_when_first_edited() -> None:
    raw = b"# Opinions\n\n## @Peter likes tea\n- confidence: 0.5\n"
    doc = read_opinions(raw)
    oid = doc.sections[0].opinion.opinion_id
    out = write_opinions(doc, [OpinionEdit(oid, 0.55, "2025-12-01", ())]).decode()
    assert out == (f"# Opinions\n\n## @Peter likes tea\n<!-- opinion: {oid} -->\n"
                   "- confidence: 0.55\n- updated: 2025-12-01\n")
    assert read_opinions(out.encode()).sections[0].opinion.opinion_id == oid


def test_editing_a_malformed_section_is_refused() -> None:
    doc = read_opinions(SAMPLE.encode())
    with pytest.raises(ValueError, match="malformed"):
        write_opinions(doc, [OpinionEdit(doc.sections[3].opinion.opinion_id, 0.1, "2025-12-01",
                                         ())])


def test_a_new_file_starts_from_the_template() -> None:
    doc = read_opinions(None)
    new = NewOpinion(doc.new_id("@Peter likes tea"), "@Peter likes tea", 0.5, "2025-12-01", ())
    out = write_opinions(doc, new=[new]).decode()
    assert out.startswith("# Opinions\n\n")
    assert out.endswith(f"## @Peter likes tea\n<!-- opinion: {new.opinion_id} -->\n"
                        "- confidence: 0.50\n- updated: 2025-12-01\n- evidence:\n")
