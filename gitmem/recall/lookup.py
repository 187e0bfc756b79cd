"""What ``entity``, ``opinions`` and recall's ``--entity`` share: the state of the memory a
question is asked of (``--as-of``: a time or a commit), an entity name resolved through slugs
and aliases (docs/memory-format.md), and the error that names the closest entities when it is not
known."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from gitmem.errors import GitmemError
from gitmem.index import entity_queries as eq
from gitmem.index import queries
from gitmem.index.entity_queries import State
from gitmem.index.items import page_entity
from gitmem.index.store import Store
from gitmem.parse.retain import entity_key
from gitmem.parse.timeparse import show_time
from gitmem.recall.asof import as_of_seq, resolve_as_of
from gitmem.workspace import Workspace


def state_at(ws: Workspace, store: Store, as_of: str | None,
             now: datetime) -> tuple[State, str | None]:
    """The state ``--as-of`` names (record time), with the instant it ends, as shown to users.
    An instant before the first commit is an error: nothing was recorded yet."""
    if as_of is None:
        return State(), None
    at = resolve_as_of(ws, as_of, now)
    seq = as_of_seq(store, at)
    shown = str(show_time(at.instant))
    if seq is None:
        raise GitmemError(f"the memory has no commit at or before {shown}")
    return State(seq), shown


@dataclass(frozen=True)
class EntityRef:
    """An entity as a question names it: its key, every key that means it (aliases), the
    spelling to show, and its page (path) when it has one in the state asked of."""

    key: str
    keys: tuple[str, ...]
    name: str
    page: str | None


def _page_of(store: Store, keys: tuple[str, ...], state: State) -> str | None:
    for path in sorted(eq.entity_pages(store, state)):
        if entity_key(page_entity(path)) in keys:
            return path
    return None


def resolve_entity(store: Store, name: str, state: State) -> EntityRef:
    """``@The-Castle``, ``the_castle``, ``The Castle`` and an alias of its page are one entity.
    An entity the state does not know is an error that lists the closest names."""
    key = entity_key(name.strip().lstrip("@"))
    main = eq.alias_target(store, key) or key
    keys = (main, *[a for a in eq.aliases_of(store, main) if a != main])
    page = _page_of(store, keys, state) if key else None
    spelled = eq.spellings(store, keys, state) if key else {}
    if page is None and not spelled:
        raise _unknown(store, name, key, state)
    shown = page_entity(page) if page else max(spelled, key=lambda n: (spelled[n], n))
    return EntityRef(main, keys, shown, page)


def _unknown(store: Store, name: str, key: str, state: State) -> GitmemError:
    names = {row["key"]: str(row["name"]) for row in eq.entity_counts(store, state)}
    for path in eq.entity_pages(store, state):
        names.setdefault(entity_key(page_entity(path)), page_entity(path))
    for alias, spelled, page in queries.entity_keys(store):  # aliases as their pages write them
        if page is not None and entity_key(page) in names:
            names.setdefault(alias, f"{spelled} (an alias of {names[entity_key(page)]})")
    return unknown_entity_message(name, key, names)


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
