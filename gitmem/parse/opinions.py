"""bank/opinions.md (docs/opinions-file.md): one level-2 section per opinion, machine-readable
lines.

```
## @Peter prefers concise WhatsApp replies (under 1500 chars)
<!-- opinion: o-3fa9c2e1 -->
- confidence: 0.82
- updated: 2025-12-02
- evidence:
  - for f-3fa9c2e11aa0 memory/2025-11-27.md#L12 (c=0.95)
```

People edit this file by hand, so a section is read leniently (other lines are kept as text) and
checked strictly: a section whose gitmem fields cannot be read without guessing (no confidence, a
field twice, an evidence line that does not parse, an id another section already uses) is
*malformed*: it is still indexed, it gets a located warning, and ``gitmem reflect`` leaves it
exactly as it is.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, replace
from datetime import date

from gitmem.domain import Evidence, FoldedEvidence, Opinion, Stance, Warn
from gitmem.parse.retain import find_entities
from gitmem.parse.stale import StaleMark, read_stale
from gitmem.workspace import OPINIONS_PATH as OPINIONS_PATH  # its home: the layout

# A heading only: every line of a memory file is indexed, and an explanation here would come
# back as a recall result (issue 9).
OPINIONS_TEMPLATE = "# Opinions\n"
_HEADING = re.compile(r"^##\s+(?P<statement>.+?)\s*#*\s*$")
_ID = re.compile(r"<!--\s*opinion:\s*(?P<id>o-[0-9a-f]{4,})\s*-->")
_ID_LIKE = re.compile(r"<!--\s*opinion\s*:", re.I)
_FIELD = re.compile(r"^-\s*(?P<key>confidence|updated|evidence)\s*:\s*(?P<value>.*)$", re.I)
_EVIDENCE = re.compile(
    r"^(?P<indent>\s+)[-*+]\s*(?P<stance>for|against)\s+(?P<fact>f-[0-9a-f]+)\s+(?P<source>\S+)"
    r"(?:\s+\(c=(?P<c>[0-9.]+)\))?(?:\s+—\s+(?P<words>.*?))?\s*$",
    re.I,
)
# A person's merge: this opinion is the same as another ("- same as: o-3fa9c2e1"), at any
# indentation; reflect hands its evidence, and the entries that match it, to the other one.
_SAME_AS = re.compile(r"^\s*[-*+]\s*same as\s*:\s*(?P<ref>.*?)\s*$", re.I)
_OPINION_REF = re.compile(r"^o-[0-9a-f]{4,}$")
_EVIDENCE_LIKE = re.compile(r"^\s+[-*+]\s*(?:for|against)\b", re.I)
# Older evidence folded into one line:
#   - 14 earlier: memory/2025-11-03.md#L5 … memory/2025-12-01.md#L7 <!-- folded: f-… against:f-… -->
_FOLDED = re.compile(
    r"^(?P<indent>\s+)[-*+]\s*(?P<n>\d+)\s+earlier:\s+(?P<first>\S+)(?:\s+…\s+(?P<last>\S+))?"
    r"\s*<!--\s*folded:(?P<ids>[^>]*)-->\s*$")
_FOLDED_LIKE = re.compile(r"<!--\s*folded\s*:", re.I)
_FOLDED_ID = re.compile(r"^(?:(?P<against>against):)?(?P<id>f-[0-9a-f]+)$")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def opinion_id_for(statement: str) -> str:
    """The id given to an opinion section that has none: stable for its statement."""
    norm = re.sub(r"\s+", " ", statement).strip().casefold()
    return "o-" + hashlib.sha256(norm.encode("utf-8")).hexdigest()[:8]


def evidence_line(ev: Evidence, indent: str = "  ") -> str:
    """How one evidence entry is written (the grammar the parser reads), with the entry's own
    words after a dash when known."""
    c = "" if ev.confidence is None else f" (c={ev.confidence:.2f})"
    words = f" — {ev.words}" if ev.words else ""
    return f"{indent}- {ev.stance} {ev.fact_id} {ev.source}{c}{words}"


def folded_ids(line: str) -> list[str]:
    """The fact ids a folded-evidence line lists (none: not such a line)."""
    m = _FOLDED.match(line.rstrip("\r\n"))
    if m is None:
        return []
    return [f.group("id") for t in m.group("ids").split() if (f := _FOLDED_ID.match(t))]


def folded_line(folded: FoldedEvidence, indent: str = "  ") -> str:
    """How folded evidence is written: the count, the oldest and newest cited, and (in a
    comment, out of a reader's way) every fact id."""
    n = len(folded.fact_ids)
    span = folded.first if n == 1 else f"{folded.first} … {folded.last}"
    ids = " ".join(f"against:{f}" if f in folded.against else f for f in folded.fact_ids)
    return f"{indent}- {n} earlier: {span} <!-- folded: {ids} -->"


@dataclass(frozen=True)
class OpinionSection:
    """Where an opinion's parts sit in the file (0-based line indexes) and what it says.

    ``problems`` non-empty means malformed: the writer must leave the section untouched."""

    opinion: Opinion
    heading: int
    stop: int  # exclusive; trailing blank lines belong to the gap, not the section
    id_line: int | None
    confidence_line: int | None
    updated_line: int | None
    evidence_line: int | None
    evidence_lines: tuple[int, ...]
    problems: tuple[Warn, ...]
    stale: StaleMark | None = None  # the merge driver's line: reflect recomputes the opinion
    folded_line: int | None = None  # the line older evidence is folded into
    same_as: str | None = None  # a person merged it into this opinion id ("- same as: o-…")
    same_as_line: int | None = None

    @property
    def malformed(self) -> bool:
        return bool(self.problems)


def stale_evidence(section: OpinionSection) -> tuple[str, ...]:
    """The evidence a stale section is recomputed with: what its line names (an old line that
    names none: all the section's evidence)."""
    if section.stale is None:
        return ()
    found = (section.stale.new if section.stale.new is not None
             else (e.fact_id for e in section.opinion.cited))
    return tuple(dict.fromkeys(found))


def scan_opinions(lines: list[str], path: str = OPINIONS_PATH
                  ) -> tuple[list[OpinionSection], list[Warn]]:
    """Every level-2 section of the page, with its layout. Never raises. The warnings are the
    sections' problems plus notes (an opinion without an id marker gets a derived id)."""
    starts = [i for i, ln in enumerate(lines) if _HEADING.match(ln)]
    sections: list[OpinionSection] = []
    warns: list[Warn] = []
    first_use: dict[str, int] = {}
    for n, start in enumerate(starts):
        stop = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while stop > start + 1 and not lines[stop - 1].strip():
            stop -= 1
        section, notes = _section(lines, start, stop, path)
        oid = section.opinion.opinion_id
        if oid in first_use:
            dup = Warn(path, start + 1, "opinion-malformed",
                       f"opinion id {oid} is also used by the opinion at line "
                       f"{first_use[oid]}; this section is left untouched")
            section = _with_problem(section, dup)
        else:
            first_use[oid] = start + 1
        sections.append(section)
        warns.extend(sorted([*section.problems, *notes], key=lambda w: w.line))
    return sections, warns


def parse_opinions(lines: list[str], path: str = OPINIONS_PATH) -> tuple[list[Opinion], list[Warn]]:
    """Every level-2 section of the page is an opinion. Never raises."""
    sections, warns = scan_opinions(lines, path)
    return [s.opinion for s in sections], warns


def _with_problem(section: OpinionSection, problem: Warn) -> OpinionSection:
    return replace(section, problems=(*section.problems, problem))


class _Fields:
    """The field lines of one section as they are found (first of each; repeats are problems)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.at: dict[str, int] = {}
        self.problems: list[Warn] = []
        self.oid: str | None = None
        self.confidence: float | None = None
        self.updated: str | None = None
        self.evidence: list[Evidence] = []
        self.evidence_at: list[int] = []
        self.stale: StaleMark | None = None
        self.folded: FoldedEvidence | None = None
        self.same_as: str | None = None

    def problem(self, line: int, code: str, message: str) -> None:
        self.problems.append(Warn(self.path, line + 1, code, message + "; this opinion is left "
                                  "untouched until it is fixed"))

    def seen(self, key: str, i: int) -> bool:
        if key in self.at:
            self.problem(i, "opinion-malformed", f"'{key}' appears twice in this opinion "
                         f"(first at line {self.at[key] + 1})")
            return True
        self.at[key] = i
        return False

    def read(self, line: str, i: int) -> None:
        if (mid := _ID.search(line)) is not None:
            if not self.seen("id", i):
                self.oid = mid.group("id")
        elif (mark := read_stale(line, i)) is not None:
            if not self.seen("stale", i):
                self.stale = mark
        elif _ID_LIKE.search(line):
            self.problem(i, "opinion-malformed",
                         "opinion marker is not '<!-- opinion: o-<hex> -->'")
        elif (ms := _SAME_AS.match(line)) is not None:
            if not self.seen("same as", i):
                ref = ms.group("ref")
                if _OPINION_REF.match(ref):
                    self.same_as = ref
                else:
                    self.problem(i, "opinion-malformed", f"'same as: {ref}' names no opinion id "
                                 "(o-<hex>, from the '<!-- opinion: … -->' line of the other "
                                 "opinion)")
        elif (mf := _FIELD.match(line)) is not None:
            self._field(mf.group("key").lower(), mf.group("value").strip(), i)
        elif (me := _EVIDENCE.match(line)) is not None:
            self._evidence(me, i)
        elif (mf := _FOLDED.match(line)) is not None:
            if not self.seen("folded", i):
                self._folded(mf, i)
        elif _FOLDED_LIKE.search(line):
            self.problem(i, "opinion-malformed", "folded evidence does not read '- <n> earlier: "
                         "<oldest> … <newest> <!-- folded: f-<hex> … -->'")
        elif _EVIDENCE_LIKE.match(line):
            self.problem(i, "opinion-malformed", "evidence line does not read "
                         "'- for|against f-<hex> <path>#L<line> (c=0.00) — words'")

    def _field(self, key: str, value: str, i: int) -> None:
        if self.seen(key, i):
            return
        if key == "confidence":
            self.confidence = self._number(value, i)
        elif key == "updated":
            if value and not _is_day(value):
                self.problem(i, "opinion-malformed", f"updated '{value}' is not a date "
                             "(YYYY-MM-DD)")
            self.updated = value or None

    def _evidence(self, me: re.Match[str], i: int) -> None:
        c = me.group("c")
        stance: Stance = "for" if me.group("stance").lower() == "for" else "against"
        self.evidence.append(Evidence(stance, me.group("fact"),
                                      me.group("source"), self._number(c, i) if c else None,
                                      me.group("words") or ""))
        self.evidence_at.append(i)

    def _folded(self, mf: re.Match[str], i: int) -> None:
        found = [_FOLDED_ID.match(t) for t in mf.group("ids").split()]
        ids = [m.group("id") for m in found if m is not None]
        if None in found or len(ids) != int(mf.group("n")) or len(set(ids)) != len(ids):
            self.problem(i, "opinion-malformed", f"the folded evidence says {mf.group('n')} "
                         f"earlier entries but its comment lists {len(ids)} fact ids")
            return
        against = tuple(m.group("id") for m in found if m is not None and m.group("against"))
        self.folded = FoldedEvidence(tuple(ids), against, mf.group("first"),
                                     mf.group("last") or mf.group("first"))

    def _number(self, value: str, i: int) -> float | None:
        try:
            c = float(value)
        except ValueError:
            c = -1.0
        if not 0.0 <= c <= 1.0:
            self.problem(i, "opinion-confidence",
                         f"confidence '{value}' is not a number in [0, 1]")
            return None
        return c


def _is_day(value: str) -> bool:
    if not _DAY.match(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _section(lines: list[str], start: int, stop: int, path: str
             ) -> tuple[OpinionSection, list[Warn]]:
    m = _HEADING.match(lines[start])
    assert m is not None
    statement = m.group("statement")
    found = _Fields(path)
    for i in range(start + 1, stop):
        found.read(lines[i], i)
    if "confidence" not in found.at:
        found.problem(start, "opinion-malformed", "opinion has no '- confidence: 0.00' line")
    notes: list[Warn] = []
    oid = found.oid
    if oid is None:
        oid = opinion_id_for(statement)
        notes.append(Warn(path, start + 1, "opinion-id",
                          f"opinion has no '<!-- opinion: o-… -->' marker; using {oid}"))
    opinion = Opinion(oid, statement, tuple(find_entities(statement)), found.confidence,
                      found.updated, tuple(found.evidence), start + 1, stop,
                      merged=found.stale is not None, folded=found.folded,
                      same_as=found.same_as)
    section = OpinionSection(
        opinion=opinion,
        heading=start,
        stop=stop,
        id_line=found.at.get("id"),
        confidence_line=found.at.get("confidence"),
        updated_line=found.at.get("updated"),
        evidence_line=found.at.get("evidence"),
        evidence_lines=tuple(found.evidence_at),
        problems=tuple(found.problems),
        stale=found.stale,
        folded_line=found.at.get("folded"),
        same_as=found.same_as,
        same_as_line=found.at.get("same as"),
    )
    return section, notes


def evidence_indent(lines: list[str], section: OpinionSection) -> str:
    """The indentation the section's evidence lines use (two spaces when it has none)."""
    for i in section.evidence_lines:
        m = _EVIDENCE.match(lines[i])
        if m is not None:
            return m.group("indent")
    return "  "


def heading_line(statement: str) -> str:
    return f"## {statement}"
