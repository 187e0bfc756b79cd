"""What ``entity`` and ``opinions`` share: the state of the memory a question is asked of
(``--as-of``: a time or a commit), and an entity name resolved through slugs and aliases
(SPEC §4)."""

from __future__ import annotations

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
    from gitmem.recall.empty import unknown_entity_message  # the error path only

    names = {row["key"]: str(row["name"]) for row in eq.entity_counts(store, state)}
    for path in eq.entity_pages(store, state):
        names.setdefault(entity_key(page_entity(path)), page_entity(path))
    for alias, spelled, page in queries.entity_keys(store):  # aliases as their pages write them
        if page is not None and entity_key(page) in names:
            names.setdefault(alias, f"{spelled} (an alias of {names[entity_key(page)]})")
    return unknown_entity_message(name, key, names)
