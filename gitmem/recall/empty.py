"""Why a recall found nothing, said instead of a silent "no results" (issue 9): no memory files
yet, a time window outside what the memory spans, uncommitted files left out, or an entity
name that is not known (with the closest ones)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import TYPE_CHECKING

from gitmem.config import Config
from gitmem.domain import TimeWindow
from gitmem.errors import GitmemError
from gitmem.index import queries
from gitmem.index.queries import ItemFilter
from gitmem.index.store import Store
from gitmem.parse.timeparse import show_time
from gitmem.recall.timing import last_day
from gitmem.workspace import Workspace, worktree_layer

if TYPE_CHECKING:
    from gitmem.recall.search import RecallQuery


def why_empty(store: Store, ws: Workspace, cfg: Config, q: RecallQuery,
              left_out: str | None) -> list[str]:
    """What the user should know about an empty answer; ``left_out`` names why uncommitted
    edits were not searched (``--committed``, ``index.worktree = false``), if they were not."""
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
    return notes


def _uncommitted(ws: Workspace, cfg: Config, *, deleted: bool = False) -> list[str]:
    """The memory files with uncommitted changes (``deleted``: only those deleted on disk)."""
    changes = worktree_layer(ws, cfg).changes
    return sorted(p for p, on_disk in changes.items() if not deleted or on_disk is None)


def _outside(store: Store, window: TimeWindow, as_of_seq: int | None) -> str:
    oldest, newest = queries.memory_span(store, ItemFilter(as_of_seq=as_of_seq))
    first = show_time(window.start) or "the beginning"  # both as the filters say them
    last = last_day(window.end) or "now"
    span = (f"oldest memory: {oldest}, newest memory: {newest}" if oldest
            else "the memory holds no dated entries")
    return f"nothing in the memory falls between {first} and {last} ({span})"


def unknown_entity(store: Store, name: str, key: str) -> GitmemError:
    """The error for an unknown ``--entity``: the closest entity names and aliases."""
    names: dict[str, str] = {}
    for k, shown, of in queries.entity_keys(store):
        names.setdefault(k, f"{shown} (an alias of {of})" if of else shown)
    return unknown_entity_message(name, key, names)


def unknown_entity_message(name: str, key: str, names: Mapping[str, str]) -> GitmemError:
    """No entity ``name`` (its key ``key``): the closest of ``names`` (key -> as shown) by
    similarity of keys (difflib's ratio) or containing the key, else a few known ones. One
    wording for ``recall --entity`` and ``gitmem entity``."""
    if not names:
        return GitmemError(f"no entity '{name}' in the memory: it names no entities yet (write "
                           "@Name)")
    close = difflib.get_close_matches(key, list(names), n=5, cutoff=0.6)
    close += sorted(k for k in names if len(key) >= 3 and key in k and k not in close)
    shown = list(dict.fromkeys(names[k] for k in close))[:5]
    if shown:
        return GitmemError.naming("no entity {name!r} in the memory; did you mean {shown}? "
                                  "({command_entity} lists them)", name=name,
                                  shown=", ".join(shown))
    some = ", ".join(n for n in names.values() if "(an alias of" not in n)
    listed = some if len(some) < 200 else some[:200].rsplit(", ", 1)[0] + ", ..."
    return GitmemError(f"no entity '{name}' in the memory; known entities include {listed}")
