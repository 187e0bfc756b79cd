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


def passage_lines(text: str, tokens: int) -> list[list[int]]:
    """A chunk's text cut into passages of about ``tokens`` tokens at line boundaries: each
    passage is the 0-based offsets of its non-blank lines (the last one may be empty when the
    text is blank). What is embedded for a chunk (``index.items.embedding_passages``) and the
    units recall ranks and cites (``recall.ranking``) are both made from this one cut."""
    passages: list[list[int]] = []
    current: list[int] = []
    size = 0
    for offset, line in enumerate(text.split("\n")):
        cost = count_tokens(line) + 1
        if current and size + cost > tokens:
            passages.append(current)
            current, size = [], 0
        if line.strip():
            current.append(offset)
            size += cost
    if current or not passages:
        passages.append(current)
    return passages
