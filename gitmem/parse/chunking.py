"""Line-aligned, heading-aware chunks: ~400 tokens with 80 tokens of overlap."""

from __future__ import annotations

import re
from collections.abc import Container, Sequence
from dataclasses import dataclass

from gitmem.domain import Chunk, Section
from gitmem.parse.textfold import count_tokens

CHUNK_TOKENS = 400
OVERLAP_TOKENS = 80


@dataclass(frozen=True)
class ChunkParams:
    tokens: int = CHUNK_TOKENS
    overlap: int = OVERLAP_TOKENS

    @property
    def fingerprint(self) -> str:
        return f"lines-v2:{self.tokens}:{self.overlap}"  # v2: heading-only chunks dropped


DEFAULT_CHUNKING = ChunkParams()


_RULE = re.compile(r"^ {0,3}([-=*_] *)+$")  # a setext underline or a thematic break


def _has_content(lines: Sequence[str], rows: Sequence[int], headings: Container[int]) -> bool:
    """Whether a chunk holds more than headings and rules ("# 2025-03-09" alone says nothing:
    the heading is searched with the chunks below it)."""
    return any(lines[i].strip() and (i + 1) not in headings and not _RULE.match(lines[i])
               for i in rows)


def _heading_at(sections: Sequence[Section]) -> dict[int, Section]:
    return {s.start_line: s for s in sections}


def _title_for(line_no: int, sections: Sequence[Section]) -> str:
    """The heading path (outermost first) governing a line."""
    path = [s for s in sections if s.start_line <= line_no <= s.end_line]
    path.sort(key=lambda s: s.level)
    return " > ".join(s.title for s in path)


def chunk_lines(
    lines: Sequence[str],
    sections: Sequence[Section],
    *,
    first_line: int = 1,
    params: ChunkParams | None = None,
) -> list[Chunk]:
    """Cut ``lines`` (line ``first_line`` onwards, 1-based) into chunks.

    A heading always starts a new chunk, with no overlap, so a chunk never straddles two sections.
    Inside a section a chunk closes before the line that would take it past ``params.tokens``, and
    the next one repeats up to ``params.overlap`` tokens of trailing lines. A line is never split;
    a single line longer than the budget is a chunk of its own.
    """
    params = params or DEFAULT_CHUNKING
    headings = _heading_at(sections)
    costs = [count_tokens(ln) + 1 for ln in lines]
    chunks: list[Chunk] = []
    start = first_line - 1  # index into lines
    cur: list[int] = []
    cur_tokens = 0

    def emit() -> None:
        if not cur:
            return
        text = "\n".join(lines[i] for i in cur).strip("\n")
        if _has_content(lines, cur, headings):
            chunks.append(
                Chunk(
                    start_line=cur[0] + 1,
                    end_line=cur[-1] + 1,
                    heading=_title_for(cur[0] + 1, sections),
                    text=text,
                    tokens=sum(costs[i] for i in cur),
                )
            )

    for i in range(start, len(lines)):
        if (i + 1) in headings and any(lines[j].strip() for j in cur):
            emit()
            cur, cur_tokens = [], 0
        if cur and cur_tokens + costs[i] > params.tokens:
            emit()
            keep: list[int] = []
            kept = 0
            for j in reversed(cur):
                if kept + costs[j] > params.overlap or (j + 1) in headings:
                    break
                keep.insert(0, j)
                kept += costs[j]
            # An overlap must leave room to advance; drop it when the next line would not fit.
            if kept + costs[i] > params.tokens:
                keep, kept = [], 0
            cur, cur_tokens = keep, kept
        if not cur and not lines[i].strip():
            continue  # chunks start at content, not at blank lines
        cur.append(i)
        cur_tokens += costs[i]
    emit()
    return chunks


_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_ITEM = re.compile(r"^\s*([-*+]|\d{1,9}[.)])\s|^\s*\|")  # a list item, a table row


def passage_lines(text: str, tokens: int, limit: int | None = None) -> list[list[int]]:
    """A chunk's text cut into the units that are embedded and ranked: each list item (with its
    continuation lines), table row and paragraph on its own, so that one line's meaning is not
    averaged with its neighbours' (a note line in Japanese between two in Danish); a unit
    longer than ``tokens`` is cut at line boundaries. A heading line is cited with the unit
    that follows it but is not embedded (``unit_text``); rules belong to no unit. Each unit is
    the 0-based offsets of its lines (a single empty one when the text has none). With more
    than ``limit`` units, neighbours are packed together so that there are at most ``limit``.
    What is embedded for a chunk (``index.items.embedding_passages``) and the units recall ranks
    and cites (``recall.ranking``) are both made from this one cut."""
    units: list[list[int]] = []
    current: list[int] = []
    lead: list[int] = []  # heading lines waiting for the unit they introduce
    size = 0
    for offset, line in enumerate(text.split("\n")):
        if not line.strip() or _HEADING.match(line) or _RULE.match(line):
            if current:
                units.append(current)
            current, size = [], 0
            if _HEADING.match(line):
                lead.append(offset)
            continue
        cost = count_tokens(line) + 1
        if current and (_ITEM.match(line) or size + cost > tokens):
            units.append(current)
            current, size = [], 0
        current.extend(lead)
        lead = []
        current.append(offset)
        size += cost
    if current:
        units.append(current)
    if not units:
        return [[]]
    if limit is not None and len(units) > limit:
        per = -(-len(units) // limit)
        units = [[o for unit in units[i: i + per] for o in unit]
                 for i in range(0, len(units), per)]
    return units


def unit_text(lines: Sequence[str], offsets: Sequence[int]) -> str:
    """What is embedded for a unit: its lines without the heading cited with it (a heading
    shared by a chunk's units pulls them towards one meaning)."""
    return "\n".join(lines[i] for i in offsets if not _HEADING.match(lines[i]))
