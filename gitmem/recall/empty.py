"""Why a recall found nothing, said instead of a silent "no results" (issue 9): no memory files
yet, a time window outside what the memory spans, or uncommitted files left out. (An entity
name that is not known is an error: ``lookup.unknown_entity``.)"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from gitmem.config import Config
from gitmem.domain import TimeWindow
from gitmem.index import queries
from gitmem.index.queries import ItemFilter
from gitmem.index.store import Store
from gitmem.parse.textfold import query_terms
from gitmem.parse.timeparse import show_time
from gitmem.recall.timing import last_day
from gitmem.workspace import Workspace, worktree_layer

_TERMS_SHOWN = 6

if TYPE_CHECKING:
    from gitmem.recall.search import RecallQuery


def why_empty(store: Store, ws: Workspace, cfg: Config, q: RecallQuery,
              left_out: str | None, entities: Sequence[str] = ()) -> list[str]:
    """What the user should know about an empty answer; ``left_out`` names why uncommitted
    edits were not searched (``--committed``, ``index.worktree = false``), if they were not;
    ``entities``: the --entity names asked for. Never nothing: at least what was searched for,
    where, and what the memory spans."""
    counts = store.counts()
    if counts["files"] == 0 and not _uncommitted(ws, cfg):
        return [f"no memory files in {ws.root}: 'gitmem init' creates MEMORY.md, memory/ and "
                "bank/; write notes there (memory/YYYY-MM-DD.md) and recall finds them"]
    if counts["facts"] + counts["chunks"] == 0:
        return ["the memory files hold no text yet (headings only): write notes in "
                "memory/YYYY-MM-DD.md or MEMORY.md and recall finds them"]
    notes: list[str] = []
    if q.window is not None and not q.window.is_open and not queries.browse(
            store, ItemFilter(as_of_seq=q.as_of_seq, window=q.window), 1):
        notes.append(_outside(store, q.window, q.as_of_seq))
    if left_out is not None:
        paths = _uncommitted(ws, cfg)
        if paths:
            count = (f"1 memory file has uncommitted changes ({paths[0]})" if len(paths) == 1
                     else f"{len(paths)} memory files have uncommitted changes "
                     f"({', '.join(paths[:3])}{', ...' if len(paths) > 3 else ''})")
            notes.append(f"{count}, not searched because of {left_out}")
    elif q.as_of_seq is None:
        gone = _uncommitted(ws, cfg, deleted=True)
        if gone:
            count = (f"1 memory file deleted but not committed ({gone[0]}) is"
                     if len(gone) == 1 else f"{len(gone)} memory files deleted but not committed "
                     f"({', '.join(gone[:3])}{', ...' if len(gone) > 3 else ''}) are")
            notes.append(f"{count} not searched; --committed searches HEAD, where they still are")
    return notes or [_no_match(store, q, entities)]


def _no_match(store: Store, q: RecallQuery, entities: Sequence[str]) -> str:
    """What was searched for and where, and what the memory holds: "no memory text holds any of
    'zebra', 'crossing' between 2026-11-20 and 2026-11-21 (the memory spans 2026-11-01 ..
    2026-12-05: 35 facts, 71 text chunks)"."""
    terms = query_terms(q.text)
    shown = ", ".join(repr(" ".join(t)) for t in terms[:_TERMS_SHOWN])
    what = (f"no memory text holds any of {shown}{', ...' if len(terms) > _TERMS_SHOWN else ''}"
            if terms else "nothing was written")
    scope: list[str] = []
    if q.window is not None and not q.window.is_open:
        scope.append(_between(q.window))
    if entities:
        scope.append("about " + " and ".join(f"@{e.lstrip('@')}" for e in entities))
    if q.kinds:
        scope.append("of kind " + " or ".join(q.kinds))
    if q.as_of_seq is not None:
        scope.append("in the commit --as-of names")
    oldest, newest = queries.memory_span(store, ItemFilter(as_of_seq=q.as_of_seq))
    counts = store.counts()
    span = (f"the memory spans {oldest} .. {newest}" if oldest else "the memory holds no dates")
    return (f"{what}{' ' if scope else ''}{', '.join(scope)} ({span}: "
            f"{counts['facts']} facts, {counts['chunks']} text chunks)")


def _uncommitted(ws: Workspace, cfg: Config, *, deleted: bool = False) -> list[str]:
    """The memory files with uncommitted changes (``deleted``: only those deleted on disk)."""
    changes = worktree_layer(ws, cfg).changes
    return sorted(p for p, on_disk in changes.items() if not deleted or on_disk is None)


def _outside(store: Store, window: TimeWindow, as_of_seq: int | None) -> str:
    oldest, newest = queries.memory_span(store, ItemFilter(as_of_seq=as_of_seq))
    span = (f"oldest memory: {oldest}, newest memory: {newest}" if oldest
            else "the memory holds no dated entries")
    return f"nothing in the memory falls {_between(window)} ({span})"


def _between(window: TimeWindow) -> str:
    """A window as the filters say it: "between 2025-06-01 and 2025-06-19", "on or after
    2025-06-21" (no end: "after today"), "on or before 2025-06-19" (no start)."""
    first, last = show_time(window.start), last_day(window.end)
    if first and last:
        return f"between {first} and {last}"
    return f"on or after {first}" if first else f"on or before {last}"
