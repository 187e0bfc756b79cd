"""``bank/opinions.md``: merged per opinion section, by its id.

A section only one side changed is that side's (an edit beats a removal). A section both sides
changed keeps the text that sorts last, gains the other side's evidence lines it lacks (no
evidence is lost) and its ``- same as:`` line when it has none (a person's merge is kept), and
a stale line after its id (:mod:`gitmem.parse.stale`) naming the confidence at the common
ancestor and the evidence added since: the next ``gitmem reflect`` recomputes the confidence
from them by docs/opinions-file.md's rule. Not here: the rule needs each entry's record time
and stated confidence, which live in the notes (the index), not in this file, and git merges
the notes in the same run, possibly after this file.

Sections keep the ancestor's order; new ones follow, ordered by id. The text before the first
section merges as a note.
"""

from __future__ import annotations

import re

from gitmem.merge.lines import merge_lines
from gitmem.parse.opinions import folded_ids
from gitmem.parse.stale import is_stale_line, read_stale, stale_opinion_line

_SECTION = re.compile(r"^##\s+(?P<statement>.+?)\s*#*\s*$")
_ID = re.compile(r"<!--\s*opinion:\s*(?P<id>o-[0-9a-f]{4,})\s*-->")
_EVIDENCE = re.compile(r"^\s+[-*+]\s*(?:for|against)\b(?:\s+(?P<id>f-[0-9a-f]+))?", re.I)
_SAME_AS = re.compile(r"^\s*[-*+]\s*same as\s*:", re.I)  # a person's merge: kept from either side
_CONFIDENCE = re.compile(r"^\s*[-*+]\s*confidence\s*:\s*(?P<c>\d+(?:\.\d+)?)\s*$", re.I)

Section = list[str]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _sections(text: str) -> tuple[list[str], dict[str, Section]]:
    """(the lines before the first section, {opinion id: its lines}) in file order."""
    lines = _lines(text if text.endswith("\n") or not text else text + "\n")
    preamble: list[str] = []
    sections: list[Section] = []
    for ln in lines:
        if _SECTION.match(ln):
            sections.append([ln])
        elif sections:
            sections[-1].append(ln)
        else:
            preamble.append(ln)
    named: dict[str, Section] = {}
    for section in sections:
        key = _section_id(section)
        while key in named:
            key += "+"
        named[key] = section
    return preamble, named


def _section_id(section: Section) -> str:
    found = next((m.group("id") for ln in section if (m := _ID.search(ln))), None)
    if found is not None:
        return found
    from gitmem.parse.opinions import opinion_id_for  # (only for a section without its id)

    heading = _SECTION.match(section[0])
    assert heading is not None  # sections start at their heading
    return opinion_id_for(heading.group("statement"))


def merge_opinions(o: str, a: str, b: str) -> tuple[str, int, int]:
    """(merged text, conflicts, sections flagged stale)."""
    (po, so), (pa, sa), (pb, sb) = (_sections(t) for t in (o, a, b))
    preamble, conflicts = merge_lines("".join(po), "".join(pa), "".join(pb))
    out, stale = [preamble], 0
    order = [k for k in so if k in sa or k in sb]
    order += sorted(k for k in {**sa, **sb} if k not in so)
    for key in order:
        base, ours, theirs = so.get(key), sa.get(key), sb.get(key)
        if ours == theirs or theirs == base:
            chosen = ours
        elif ours == base:
            chosen = theirs
        elif ours is None or theirs is None:  # one side removed it, the other changed it
            chosen = ours or theirs
        else:
            chosen, stale = _stale_section(base, ours, theirs), stale + 1
        if chosen is not None:
            out.append(_spaced("".join(chosen)))
    return "".join(out), conflicts, stale


def _spaced(section: str) -> str:
    """A section ends with one blank line, wherever it now sits."""
    return section.rstrip("\n") + "\n\n"


def _evidence_ids(section: Section) -> list[str]:
    """The fact ids the section cites: its evidence lines' and its folded line's."""
    out: list[str] = []
    for ln in section:
        m = _EVIDENCE.match(ln)
        out += [m.group("id")] if m and m.group("id") else folded_ids(ln)
    return out


def _starting_point(base: Section | None) -> tuple[float | None, set[str]]:
    """The ancestor's confidence and the evidence it had applied. An ancestor that was itself
    flagged stale stands for its own starting point (so merges of merges chain)."""
    if base is None:
        return None, set()
    mark = next((s for n, ln in enumerate(base) if (s := read_stale(ln, n))), None)
    ids = set(_evidence_ids(base))
    if mark is not None:
        return mark.base, (set() if mark.new is None else ids - set(mark.new))
    confidence = next((float(m.group("c")) for ln in base if (m := _CONFIDENCE.match(ln))), None)
    return confidence, (ids if confidence is not None else set())


def _fold_in(out: Section, theirs: str, have: set[str]) -> None:
    """Fold into ``out`` the ids the other side's folded line holds and ``out`` cites nowhere:
    into its own folded line (count and comment extended), else as that line (after the
    evidence field). The oldest and newest citations stay as the line that is kept says."""
    head, _, comment = theirs.partition("<!--")
    tokens = [t for t in comment.removesuffix("\n").removesuffix("-->").split()[1:]
              if t.removeprefix("against:") not in have]
    at = next((i for i, ln in enumerate(out) if folded_ids(ln)), None)
    if at is not None:
        head, _, comment = out[at].partition("<!--")
        tokens = [*comment.rstrip().removesuffix("-->").split()[1:], *tokens]
    else:
        at = next((i + 1 for i, ln in enumerate(out)
                   if ln.lstrip("- ").lower().startswith("evidence")), len(out))
        out.insert(at, "")
    indent, _, span = head.partition("- ")
    span = span.split("earlier:", 1)[1].strip()
    out[at] = f"{indent}- {len(tokens)} earlier: {span} <!-- folded: {' '.join(tokens)} -->\n"


def _stale_section(base: Section | None, ours: Section, theirs: Section) -> Section:
    keep, other = sorted((ours, theirs), key="".join, reverse=True)
    have = set(_evidence_ids(keep)) | {ln.strip() for ln in keep}
    extra = []
    folded: list[str] = []  # the other side's fold line, if it folds ids never cited here
    for ln in other:
        m = _EVIDENCE.match(ln)
        if m and (m.group("id") or ln.strip()) not in have:
            extra.append(ln)
        elif [i for i in folded_ids(ln) if i not in have]:
            folded = [ln]
    out = [ln for ln in keep if not is_stale_line(ln)]
    hand = [ln for ln in other if _SAME_AS.match(ln)]
    if hand and not any(_SAME_AS.match(ln) for ln in out):  # one side merged it by hand
        at = next((i + 1 for i, ln in enumerate(out) if _CONFIDENCE.match(ln)), len(out))
        out.insert(at, hand[0])
    if folded:
        _fold_in(out, folded[0], have)
    last = max((i for i, ln in enumerate(out) if _EVIDENCE.match(ln)), default=None)
    if last is None:
        last = next((i for i, ln in enumerate(out)
                     if ln.lstrip("- ").lower().startswith("evidence")), len(out) - 1)
    out[last + 1:last + 1] = extra
    start, known = _starting_point(base)
    new = [i for i in dict.fromkeys(_evidence_ids(out)) if i not in known]
    id_at = next((i for i, ln in enumerate(out) if _ID.search(ln)), 0)
    out.insert(id_at + 1, stale_opinion_line(start, new) + "\n")
    return out
