"""What ``--as-of`` names (docs/memory-format.md): a time (a record-time axis) or a commit, on every
command that has it, and the indexed commit that answers."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from gitmem.errors import UsageError
from gitmem.git import commit_time
from gitmem.index.store import Store
from gitmem.parse.timeparse import ACCEPTED_FORMS, as_of_bounds, show_time
from gitmem.workspace import Workspace


@dataclass(frozen=True)
class AsOf:
    """What --as-of names: the last instant included, and the commit when one was given."""

    instant: datetime
    commit: str | None = None

    @property
    def shown(self) -> str:
        end = self.instant + timedelta(microseconds=1)
        if self.commit is None and end.time() == datetime.min.time():
            return self.instant.date().isoformat()  # a day, month or year: up to its end
        return str(show_time(self.instant))


def resolve_as_of(ws: Workspace, value: str, now: datetime) -> AsOf:
    """--as-of as a time (docs/memory-format.md, "Time": a record-time axis; a date, month or year
    means up to its very end) or a commit (any revision git understands: an id, branch, tag,
    HEAD~2)."""
    try:
        return AsOf(as_of_bounds(value, now)[0])
    except UsageError:
        found = commit_time(ws.repo_root, value)
        if found is None:
            raise UsageError.naming("invalid {as_of} {value!r}: use {forms}, or a commit (an "
                                    "id, branch, tag or HEAD~2)", value=value.strip(),
                                    forms=ACCEPTED_FORMS) from None
        return AsOf(datetime.fromisoformat(found[1]), found[0])


def as_of_seq(store: Store, as_of: AsOf) -> int | None:
    """The indexed commit that answers as of ``as_of``: the commit it names, else (a time, or
    a commit off the indexed first-parent chain) the last one at or before its time."""
    seq = store.seq_of(as_of.commit) if as_of.commit else None
    return seq if seq is not None else store.seq_at(as_of.instant.isoformat())
