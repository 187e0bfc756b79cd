"""OpenClaw's inline recall annotations (docs/memory-format.md, "Importance and triggers").

A writer appends them to a line as trailing HTML comments, as OpenClaw's own writers do
(OpenClaw 2026.9.6, docs/concepts/memory-architecture.md; its reader is memory-host-sdk's
``extractCuratedEntryRecallMetadata``):

    - Keep the gateway on loopback. <!-- trigger: gateway setup, network safety -->
      <!-- importance: 9 -->   (on the same line)

``importance`` is a whole number from 1 to 10, set once when the entry is written; it scales
the entry's score by OpenClaw's own factor (``recall.ranking.importance_factor``: 0.8 for 1,
1.0 for 5, 1.25 for 10; an entry without one is neutral, 1.0). ``trigger`` phrases are
separated by commas or semicolons.
Like OpenClaw, only a line that ends with a comment carries them, and a comment must close on
its line; an entry's importance is the highest its lines state. The comments are not part of
a fact's text (nor its id): annotating an entry later does not make it a new fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CARRIER = re.compile(r"[ \t]*<!--\s*(trigger|importance)\s*:([^\n]*?)-->", flags=re.IGNORECASE)
_WHOLE = re.compile(r"^\d+$")
LOWEST, HIGHEST = 1, 10


@dataclass(frozen=True)
class LineNotes:
    """What one line's annotations say."""

    importance: int | None
    triggers: tuple[str, ...]


def line_notes(line: str) -> LineNotes | None:
    """The annotations a line carries, or None (none, or the line does not end with one)."""
    if "<!--" not in line or not line.rstrip().endswith("-->"):
        return None
    importance: int | None = None
    phrases: dict[str, None] = {}
    for m in _CARRIER.finditer(line):
        value = m.group(2).strip()
        if m.group(1).lower() == "trigger":
            phrases.update((p.strip(), None) for p in value.replace(";", ",").split(",")
                           if p.strip())
        elif _WHOLE.match(value) and LOWEST <= int(value) <= HIGHEST:
            importance = max(importance or int(value), int(value))
    if importance is None and not phrases:
        return None
    return LineNotes(importance, tuple(phrases))


def merged(notes: list[LineNotes]) -> LineNotes | None:
    """Several lines' annotations as one entry's: the highest importance, every phrase."""
    if not notes:
        return None
    levels = [n.importance for n in notes if n.importance is not None]
    phrases = tuple(dict.fromkeys(p for n in notes for p in n.triggers))
    return LineNotes(max(levels) if levels else None, phrases)


def without_notes(text: str) -> str:
    """Text without its annotation comments (a fact's text, a trigger candidate's snippet)."""
    if "<!--" not in text:
        return text
    return "\n".join(_CARRIER.sub("", line).rstrip() if line_notes(line) else line
                     for line in text.split("\n"))
