"""TEMPORARY: gitmem's modules under their new names, falling back to the old ones.

gitmem's modules are being moved (issue 7); ``testing`` and ``bench`` are written against the
new names. This is the one place that also knows the old ones, so the branch runs before and
after the move: at run time each name is taken from its new module when that has it, else from
the old one; mypy checks against the old layout, which this branch has. Remove this module after
the merge and import the new names directly.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the "X as X" form re-exports
    from gitmem.api import index_and_embed as index_and_embed
    from gitmem.api import open_workspace as open_workspace
    from gitmem.model import KIND_NAMES as KIND_NAMES
    from gitmem.recall import RecallRequest as RecallRequest
    from gitmem.recall import answer as answer
    from gitmem.retain import fact_id as fact_id
    from gitmem.retain import find_entities as find_entities
    from gitmem.search import Ranking as Ranking
    from gitmem.store import Store as Store
    from gitmem.store import open_store as open_store

# name -> (new module, old module)
_MOVED = {
    "KIND_NAMES": ("gitmem.domain", "gitmem.model"),
    "fact_id": ("gitmem.parse.retain", "gitmem.retain"),
    "find_entities": ("gitmem.parse.retain", "gitmem.retain"),
    "open_workspace": ("gitmem.workspace", "gitmem.api"),
    "index_and_embed": ("gitmem.index.run", "gitmem.api"),
    "Store": ("gitmem.index.store", "gitmem.store"),
    "open_store": ("gitmem.index.store", "gitmem.store"),
    "RecallRequest": ("gitmem.recall.answer", "gitmem.recall"),
    "answer": ("gitmem.recall.answer", "gitmem.recall"),
    "Ranking": ("gitmem.recall.ranking", "gitmem.search"),
}


def _resolve(name: str) -> Any:
    new, old = _MOVED[name]
    try:
        return getattr(importlib.import_module(new), name)
    except (ImportError, AttributeError):
        return getattr(importlib.import_module(old), name)


if not TYPE_CHECKING:
    globals().update({name: _resolve(name) for name in _MOVED})
