"""The read queries of ``gitmem reflect``: facts recorded in a window, every current fact of a
set of entities, and the entity names and aliases that resolve them. Read-only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitmem.index.store import Store, batched, marks

_FACT_COLUMNS = ("i.id, i.fact_id, i.kind, i.content, i.path, i.start_line, i.end_line, "
                 "i.confidence, i.recorded_at, i.event_start, i.event_end")


@dataclass(frozen=True)
class FactRow:
    """A current Retain fact with its entities (key as indexed, name as written, role)."""

    item_id: int
    fact_id: str
    kind: str
    text: str
    path: str
    start_line: int
    end_line: int
    confidence: float | None
    recorded_at: str
    event_start: str | None
    event_end: str | None
    entities: tuple[tuple[str, str, str], ...]

    @property
    def order(self) -> tuple[str, str, int]:
        """Chronological order: record time, then file and line."""
        return (self.recorded_at, self.path, self.start_line)


@dataclass(frozen=True)
class EntityNames:
    """Every entity the index knows: key -> (name as most often written, page path or None),
    and alias key -> entity key."""

    entities: dict[str, tuple[str, str | None]]
    aliases: dict[str, str]

    def canonical(self, key: str) -> str:
        return self.aliases.get(key, key)


def _facts(store: Store, where: str, args: Sequence[Any]) -> list[FactRow]:
    rows: list[Any] = store.conn.execute(
        f"SELECT {_FACT_COLUMNS} FROM items i WHERE i.valid_to IS NULL AND i.type = 'fact' "
        f"AND {where} ORDER BY i.recorded_at, i.path, i.start_line", list(args)).fetchall()
    links: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    ids = [int(r[0]) for r in rows]
    for part in batched(ids):
        found: list[Any] = store.conn.execute(
                f"SELECT item_id, entity, name, role FROM item_entities "
                f"WHERE item_id IN ({marks(part)}) ORDER BY item_id, role = 'mention', rowid",
                part).fetchall()
        for item_id, key, name, role in found:
            links[int(item_id)].append((str(key), str(name), str(role)))
    return [FactRow(int(r[0]), str(r[1]), str(r[2]), str(r[3]), str(r[4]), int(r[5]), int(r[6]),
                    None if r[7] is None else float(r[7]), str(r[8] or ""), r[9], r[10],
                    tuple(links[int(r[0])])) for r in rows]


def facts_recorded(store: Store, since: str | None, until: str | None = None) -> list[FactRow]:
    """Current facts whose record time (ISO, UTC) is in [since, until), oldest first."""
    where, args = ["1"], []
    if since is not None:
        where.append("i.recorded_at >= ?")
        args.append(since)
    if until is not None:
        where.append("i.recorded_at < ?")
        args.append(until)
    return _facts(store, " AND ".join(where), args)


def facts_of_entities(store: Store, keys: Sequence[str]) -> list[FactRow]:
    """Current facts linked (as subject or mention) to any of the entity ``keys``."""
    out: dict[int, FactRow] = {}
    for part in batched(list(keys)):
        sub = (f"i.id IN (SELECT item_id FROM item_entities WHERE entity IN ({marks(part)}) "
               "AND role != 'page')")
        for row in _facts(store, sub, part):
            out[row.item_id] = row
    return sorted(out.values(), key=lambda r: r.order)


def entity_names(store: Store) -> EntityNames:
    entities = {str(k): (str(n), None if p is None else str(p))
                for k, n, p in store.conn.execute("SELECT key, name, page FROM entities")}
    aliases = {str(a): str(e) for a, e in store.conn.execute("SELECT alias, entity FROM aliases")}
    return EntityNames(entities, aliases)
