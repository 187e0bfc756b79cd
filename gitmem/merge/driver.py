"""The driver's entry point: three files in, the merge written to ours, an exit status out."""

from __future__ import annotations

import os

from gitmem.merge.lines import merge_lines

MAX_BYTES = 8 * 1024 * 1024
OPINIONS_FILE = "bank/opinions.md"


class MergeOutcome:
    """What the driver did to one file. (A plain class: ``dataclasses`` costs the driver's
    process more than its merge.)"""

    __slots__ = ("conflicts", "fallback", "path", "stale")

    def __init__(self, path: str, conflicts: int, stale: int = 0, fallback: bool = False):
        self.path = path
        self.conflicts = conflicts  # conflicting regions left with markers
        self.stale = stale  # generated blocks or opinions flagged for the next reflect
        self.fallback = fallback  # git's merge-file did it (a file gitmem does not read)

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "conflicts": self.conflicts, "stale": self.stale,
                "fallback": self.fallback}


def merge_file(base: str | os.PathLike[str], ours: str | os.PathLike[str],
               theirs: str | os.PathLike[str], path: str) -> MergeOutcome:
    """Merge ``theirs`` into ``ours`` (written in place) from their ancestor ``base``."""
    texts = [_text(_read(p)) for p in (base, ours, theirs)]
    if any(t is None for t in texts):
        from pathlib import Path

        from gitmem.git import merge_file_fallback  # (git's module costs the driver's start-up)

        conflicts = merge_file_fallback(Path(base), Path(ours), Path(theirs), path)
        return MergeOutcome(path, conflicts, fallback=True)
    o, a, b = (t for t in texts if t is not None)
    merged, conflicts, stale = merge_text(o, a, b, path)
    with open(ours, "wb") as fh:
        fh.write(merged.encode("utf-8"))
    return MergeOutcome(path, conflicts, stale)


def run_driver(base: str, ours: str, theirs: str, path: str = "") -> int:
    """``gitmem merge-file``'s exit status: 0 clean, 1 with conflict markers left in ``ours``."""
    outcome = merge_file(base, ours, theirs, path or os.path.basename(ours))
    return 1 if outcome.conflicts else 0


def _read(path: str | os.PathLike[str]) -> bytes:
    with open(path, "rb") as fh:
        return fh.read()


def _text(data: bytes) -> str | None:
    if len(data) > MAX_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def merge_text(o: str, a: str, b: str, path: str) -> tuple[str, int, int]:
    """(merged text, conflicts, stale flags) for the file at ``path``."""
    if a == b or o == b:
        return a, 0, 0
    if o == a:
        return b, 0, 0
    if path.endswith(OPINIONS_FILE):
        from gitmem.merge.opinion_sections import merge_opinions

        return merge_opinions(o, a, b)
    stale = 0
    if "bank/entities/" in path:
        from gitmem.merge.page_blocks import settle_blocks

        a, b, stale = settle_blocks(o, a, b)
    text, conflicts = merge_lines(o, a, b)
    return text, conflicts, stale
