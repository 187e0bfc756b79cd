"""Ranking, as pure functions of rows: recency decay, exact file matches, near-duplicate
removal, snippets, and the benchmarked weights. No I/O; ``recall.search`` feeds it rows."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from gitmem.parse.textfold import STOPWORDS, fold

SNIPPET_CHARS = 700
# The weight an old daily note keeps (recency decay never drops below it). Tuned on LoCoMo,
# whose questions do not favour recent sessions: see BENCHMARKS.md.
DECAY_FLOOR = 0.9
PREFER_BOOST = 0.5  # a date phrase with topic words: in-window results are preferred
IMPORTANCE = {"fact": 1.0, "chunk": 0.9}
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Ranking:
    """How candidates are scored. The defaults are the shipped, benchmarked ones (see
    BENCHMARKS.md); ``openclaw()`` is the published hybrid baseline."""

    vector_weight: float = 0.8
    text_weight: float = 0.2
    decay: bool = True
    diversity: bool = True
    vector_candidates: int = 100  # items; 2x as many passages are fetched by Hamming distance

    @classmethod
    def openclaw(cls) -> Ranking:
        return cls(vector_weight=0.7, text_weight=0.3, decay=False, diversity=False)


def decay(row: dict[str, Any], now: date, half_life: float, floor: float) -> float:
    """Daily notes lose weight with age (half-life), down to ``floor``; other files never."""
    if row["class"] != "daily":
        return 1.0
    last = row["event_end"] or row["day"]
    if not last:
        return 1.0
    age = max(0, (now - date.fromisoformat(str(last)[:10])).days)
    return floor + (1 - floor) * math.pow(0.5, age / half_life)


def exact_file_match(query: str, path: str) -> bool:
    q = query.strip().casefold()
    name = path.rsplit("/", 1)[-1].casefold()
    return q in (path.casefold(), name, name.removesuffix(".md"))


def redundant(
    row: dict[str, Any], words: frozenset[str], kept: Sequence[tuple[str, int, int, frozenset[str]]]
) -> bool:
    """Near-duplicates: a line range inside (or around) a better result, or ≥90% the same words."""
    for path, start, end, other in kept:
        if path == row["path"]:
            inner = start <= row["start_line"] and row["end_line"] <= end
            outer = row["start_line"] <= start and end <= row["end_line"]
            if inner or outer:
                return True
        if words and other:
            union = len(words | other)
            if union and len(words & other) / union >= 0.9:
                return True
    return False


def make_snippet(
    content: str, terms: list[list[str]], limit: int = SNIPPET_CHARS
) -> tuple[str, int, int]:
    """At most ``limit`` characters of whole lines around the line that best matches the query,
    with the offsets (0-based, inclusive) of its first and last line within ``content``.

    Exact words count first, then word stems (the first five letters), so "painted" finds
    "painting".
    """
    lines = content.split("\n")
    if len(content) <= limit:
        return content, 0, len(lines) - 1
    tokens = {t for term in terms for t in term}
    stems = {t[:5] for t in tokens if len(t) > 2 and t not in STOPWORDS}

    def hits(line: str) -> tuple[int, int]:
        words = set(_WORD.findall(fold(line)))
        return len(tokens & words), len(stems & {w[:5] for w in words})

    best = max(range(len(lines)), key=lambda i: (hits(lines[i]), -i))
    if len(lines[best]) >= limit:
        return lines[best][: limit - 1] + "…", best, best
    lo = hi = best
    size = len(lines[best])
    while True:
        grew = False
        for cand in (hi + 1, lo - 1):
            if 0 <= cand < len(lines) and not (lo <= cand <= hi):
                extra = len(lines[cand]) + 1
                if size + extra <= limit:
                    size += extra
                    lo, hi = min(lo, cand), max(hi, cand)
                    grew = True
        if not grew:
            break
    return "\n".join(lines[lo : hi + 1]), lo, hi
