"""Writing bank/opinions.md back (docs/opinions-file.md) without disturbing what a person wrote.

gitmem manages a few fields of each opinion section: the id marker, ``confidence``, ``updated``
and the ``evidence`` list, to which it appends (folding the oldest entries into one line once
more than ``reflect.evidence_shown`` are listed). Everything else — headings' text, other
lines, comments, blank lines, order, line endings — is written back byte for byte. A section
that is malformed (see :mod:`gitmem.parse.opinions`) is never edited. New opinions are appended
at the end of the file, one section each.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from gitmem.domain import Evidence, FoldedEvidence, Opinion, Warn
from gitmem.parse.opinions import (
    OPINIONS_PATH,
    OPINIONS_TEMPLATE,
    OpinionSection,
    evidence_indent,
    evidence_line,
    folded_line,
    opinion_id_for,
    scan_opinions,
    stale_evidence,
)
from gitmem.parse.visible import visible
from gitmem.reflect.textfile import Editor, TextFile, split_text

_VALUE = re.compile(r"^(?P<prefix>-\s*\w+\s*:\s*)")


@dataclass(frozen=True)
class OpinionEdit:
    """What reflect changes in an existing opinion."""

    opinion_id: str
    confidence: float
    updated: str | None  # None: left as it is (it has none, and no evidence gave one)
    add_evidence: tuple[Evidence, ...]
    drop_line: int | None = None  # the merge driver's stale line, once recomputed


@dataclass(frozen=True)
class NewOpinion:
    opinion_id: str
    statement: str
    confidence: float
    updated: str
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class OpinionsFile:
    """bank/opinions.md as read: its text (to write back) and its sections."""

    path: str
    text: TextFile
    sections: tuple[OpinionSection, ...]
    warnings: tuple[Warn, ...]
    exists: bool

    @property
    def opinions(self) -> list[Opinion]:
        return [s.opinion for s in self.sections]

    def section(self, opinion_id: str) -> OpinionSection | None:
        return next((s for s in self.sections if s.opinion.opinion_id == opinion_id), None)

    def new_id(self, statement: str, taken: set[str] | None = None) -> str:
        """A stable id for a new opinion (``opinion_id_for``), made unique in the file."""
        used = {s.opinion.opinion_id for s in self.sections} | (taken or set())
        oid, n = opinion_id_for(statement), 1
        while oid in used:
            n += 1
            oid = opinion_id_for(f"{statement}\x1f{n}")
        return oid


def read_opinions(data: bytes | None, path: str = OPINIONS_PATH) -> OpinionsFile:
    """Parse the file's bytes (None: it does not exist yet). Never raises."""
    text = split_text(data if data is not None else b"")
    sections, warns = scan_opinions(list(text.lines), path)
    return OpinionsFile(path, text, tuple(sections), tuple(warns), data is not None)


def merged_evidence_ids(doc: OpinionsFile) -> list[str]:
    """The evidence the merge driver's stale lines name (what recomputing them reads), and the
    evidence of opinions a person merged into another (``- same as:``)."""
    return [*(i for s in doc.sections for i in stale_evidence(s)),
            *(e.fact_id for s in doc.sections if s.same_as is not None
              for e in s.opinion.cited)]


def write_opinions(doc: OpinionsFile, edits: Sequence[OpinionEdit] = (),
                   new: Sequence[NewOpinion] = (), *, shown: int | None = None) -> bytes:
    """The file with ``edits`` applied and ``new`` sections appended. An opinion that gets
    evidence lists its ``shown`` newest entries (None: all); older ones fold into one line
    (``folded_line``). Editing a malformed or unknown section is a programming error
    (ValueError): callers skip those, with a warning."""
    text = doc.text if doc.exists or not new else split_text(OPINIONS_TEMPLATE.encode())
    editor = Editor(text)
    by_id: Mapping[str, OpinionSection] = {s.opinion.opinion_id: s for s in doc.sections}
    for edit in edits:
        section = by_id.get(edit.opinion_id)
        if section is None or section.malformed:
            raise ValueError(f"cannot edit opinion {edit.opinion_id}: unknown or malformed")
        _edit(editor, section, edit, shown)
    if new:
        editor.append(_new_sections(editor.original, new, shown))
    return editor.result().encode()


def _edit(editor: Editor, section: OpinionSection, edit: OpinionEdit,
          shown: int | None) -> None:
    lines = editor.original.lines
    if section.id_line is None:
        editor.insert_after(section.heading, [f"<!-- opinion: {edit.opinion_id} -->"])
    assert section.confidence_line is not None  # a section without one is malformed
    old = section.opinion
    if old.confidence is None or f"{old.confidence:.2f}" != f"{edit.confidence:.2f}":
        editor.replace(section.confidence_line,
                       _set_value(lines[section.confidence_line], f"{edit.confidence:.2f}"))
    if edit.drop_line is not None:
        editor.replace_range(edit.drop_line, edit.drop_line + 1, [])
    last_field = section.confidence_line
    if section.updated_line is None:
        if edit.updated is not None:
            editor.insert_after(last_field, [f"- updated: {edit.updated}"])
    else:
        if edit.updated is not None and old.updated != edit.updated:
            editor.replace(section.updated_line, _set_value(lines[section.updated_line],
                                                            edit.updated))
        last_field = max(last_field, section.updated_line)
    if not edit.add_evidence:
        return
    indent = evidence_indent(list(lines), section)
    listed = (*old.evidence, *edit.add_evidence)
    n = _folding(len(listed), len(old.folded.fact_ids) if old.folded else 0, shown)
    for i in section.evidence_lines[:n]:  # the oldest listed entries go into the fold
        editor.replace_range(i, i + 1, [])
    items = [evidence_line(ev, indent) for ev in edit.add_evidence[max(0, n - len(old.evidence)):]]
    fold = [folded_line(_fold(old.folded, listed[:n]), indent)] if n else []
    if section.evidence_line is None:
        editor.insert_after(last_field, ["- evidence:", *fold, *items])
        return
    if fold and section.folded_line is not None:
        editor.replace(section.folded_line, fold[0])
    else:
        editor.insert_after(section.evidence_line, fold)
    after = max((section.evidence_line, *section.evidence_lines,
                 *(() if section.folded_line is None else (section.folded_line,))))
    editor.insert_after(after, items)


def _folding(listed: int, folded: int, shown: int | None) -> int:
    """How many of an opinion's listed evidence entries (oldest first) fold: none until the
    opinion has more than ``shown + 1`` entries in all (a fold line for one entry saves no
    line), then all but the ``shown`` newest. A function of the count alone, so daily runs
    and one run fold alike."""
    if shown is None or folded + listed <= shown + 1:
        return 0
    return max(0, listed - shown)


def _fold(folded: FoldedEvidence | None, entries: Sequence[Evidence]) -> FoldedEvidence:
    """``folded`` with ``entries`` (the next oldest) folded in (an entry listed and folded
    both, as a merge of two machines' files may leave it, is folded once)."""
    ids = tuple(dict.fromkeys((*(folded.fact_ids if folded else ()),
                               *(e.fact_id for e in entries))))
    against = tuple(dict.fromkeys((*(folded.against if folded else ()),
                                   *(e.fact_id for e in entries if e.stance == "against"))))
    first = folded.first if folded else entries[0].source
    return FoldedEvidence(ids, against, first, entries[-1].source if entries else first)


def _set_value(line: str, value: str) -> str:
    m = _VALUE.match(line)
    assert m is not None  # only called on lines the parser read as fields
    return m.group("prefix") + value


def _new_sections(text: TextFile, new: Sequence[NewOpinion], shown: int | None) -> list[str]:
    out: list[str] = []
    if text.lines and text.lines[-1].strip():
        out.append("")
    for n, op in enumerate(new):
        if n:
            out.append("")
        n = _folding(len(op.evidence), 0, shown)
        out += [f"## {one_line(op.statement)}",
                f"<!-- opinion: {op.opinion_id} -->",
                f"- confidence: {op.confidence:.2f}",
                f"- updated: {op.updated}",
                "- evidence:",
                *([folded_line(_fold(None, op.evidence[:n]))] if n else []),
                *(evidence_line(ev) for ev in op.evidence[n:])]
    return out


def one_line(text: str) -> str:
    """Text that must fit on one Markdown line (a heading): line breaks become spaces, and
    control and bidi characters visible escapes (``\\x1b``): a person reviewing the file sees
    every character the entry holds, and ``cat`` or a diff cannot drive their terminal."""
    return visible(re.sub(r"\s*[\r\n]+\s*", " ", text).strip())
