"""Change planning: a pure function from two {path: blob id} maps to what must be re-indexed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitmem.index.store import IndexStamp


@dataclass(frozen=True)
class ChangePlan:
    added: tuple[str, ...]
    modified: tuple[str, ...]
    deleted: tuple[str, ...]
    renamed: tuple[tuple[str, str], ...]  # (old path, new path), same blob

    @property
    def empty(self) -> bool:
        return not (self.added or self.modified or self.deleted or self.renamed)

    @property
    def to_parse(self) -> tuple[str, ...]:
        """Paths to parse. A rename is parsed again: a daily note's date comes from its name."""
        return self.added + self.modified + tuple(new for _, new in self.renamed)

    @property
    def to_remove(self) -> tuple[str, ...]:
        """Paths whose indexed rows go: deleted, modified, and the old side of renames."""
        return self.deleted + self.modified + tuple(old for old, _ in self.renamed)


def plan_changes(indexed: Mapping[str, str], target: Mapping[str, str]) -> ChangePlan:
    """Compare the indexed files with the target tree's files (path -> blob id).

    A deleted path and an added path with the same blob are a rename. Nothing here depends on
    how the two states are related in history, so any rewrite converges.
    """
    added = {p for p in target if p not in indexed}
    deleted = {p for p in indexed if p not in target}
    modified = sorted(p for p in target if p in indexed and indexed[p] != target[p])
    by_blob: dict[str, list[str]] = {}
    for path in sorted(deleted):
        by_blob.setdefault(indexed[path], []).append(path)
    renamed: list[tuple[str, str]] = []
    for path in sorted(added):
        olds = by_blob.get(target[path])
        if olds:
            old = olds.pop(0)
            renamed.append((old, path))
    for old, new in renamed:
        deleted.discard(old)
        added.discard(new)
    return ChangePlan(tuple(sorted(added)), tuple(modified), tuple(sorted(deleted)), tuple(renamed))


@dataclass(frozen=True)
class IndexReport:
    commit: str | None
    full: bool
    plan: ChangePlan  # the net change of the memory files since the previous index
    files: int
    seconds: float
    notes: tuple[str, ...]
    commits: int = 0  # commits replayed
    stamp: IndexStamp | None = None  # the index file as the run left it (index_stamp)
