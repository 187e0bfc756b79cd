"""The read queries of ``gitmem reflect``: facts recorded in a window, every current fact of a
set of entities, and the entity names and aliases that resolve them. Read-only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitmem.domain import Kind
from gitmem.index.store import Store, batched, marks

_FACT_COLUMNS = ("i.id, i.fact_id, i.kind, i.content, i.path, i.start_line, i.end_line, "
                 "i.confidence, i.recorded_at, i.event_start, i.event_end, i.day")


@dataclass(frozen=True)
class FactRow:
    """A current Retain fact with its entities (key as indexed, name as written, role)."""

    item_id: int
    fact_id: str
    kind: Kind
    text: str
    path: str
    start_line: int
    end_line: int
    confidence: float | None
    recorded_at: str
    event_start: str | None
    event_end: str | None
    entities: tuple[tuple[str, str, str], ...]
    day: str | None = None  # the daily note's date

    @property
    def stated(self) -> str:
        """The day the memory says this: the daily note's date, else the record day (an
        event date may lie in the future; it is not when the fact was written)."""
        return self.day or self.recorded_at[:10]

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


def _facts(store: Store, where: str, args: Sequence[Any], *, current: bool = True
           ) -> list[FactRow]:
    now = "i.valid_to IS NULL AND " if current else ""
    rows: list[Any] = store.conn.execute(
        f"SELECT {_FACT_COLUMNS} FROM items i WHERE {now}i.type = 'fact' "
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
    return [FactRow(int(r[0]), str(r[1]), r[2], str(r[3]), str(r[4]), int(r[5]), int(r[6]),
                    None if r[7] is None else float(r[7]), str(r[8] or ""), r[9], r[10],
                    tuple(links[int(r[0])]), r[11]) for r in rows]


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


# When the memory said a fact: the daily note's date, else the day it was recorded (not its
# event time, which may lie in the future: "presents at the meetup on 2026-12-08").
FACT_DAY = "coalesce(i.day, substr(i.recorded_at, 1, 10))"


@dataclass(frozen=True)
class FactLink:
    """One entity of one current fact, with what ordering and counting facts needs."""

    item_id: int
    entity: str  # the key as indexed (an alias is not resolved here)
    kind: Kind
    day: str  # the daily note's date, else the record day
    path: str
    start_line: int


def fact_links(store: Store, keys: Sequence[str] | None = None) -> list[FactLink]:
    """Every (current fact, entity) pair, subjects and mentions, of the facts that name one of
    ``keys`` (all facts when None): one query, so that summing up any number of entities costs
    the same (a much-mentioned one has thousands of facts, and a query per entity would visit
    them all again). A week's reflect names a few dozen entities of the index's two hundred:
    reading only their facts' links halves its work on ten years."""
    about, args = "", []
    if keys is not None:
        key_list = sorted(set(keys))
        if not key_list:
            return []
        about = ("AND i.id IN (SELECT item_id FROM item_entities WHERE role != 'page' AND "
                 f"entity IN ({marks(key_list)})) ")
        args = key_list
    rows: list[Any] = store.conn.execute(
        f"SELECT i.id, e.entity, i.kind, {FACT_DAY}, i.path, i.start_line FROM items i "
        "JOIN item_entities e ON e.item_id = i.id AND e.role != 'page' "
        f"WHERE i.valid_to IS NULL AND i.type = 'fact' {about}", args).fetchall()
    return [FactLink(int(r[0]), str(r[1]), r[2], str(r[3] or ""), str(r[4]), int(r[5]))
            for r in rows]


def facts_by_id(store: Store, ids: Sequence[int]) -> list[FactRow]:
    """The current facts with these item ids, oldest first."""
    out: list[FactRow] = []
    for part in batched(sorted(set(ids))):
        out.extend(_facts(store, f"i.id IN ({marks(part)})", part))
    return sorted(out, key=lambda r: (*r.order, r.item_id))


def facts_by_fact_id(store: Store, fact_ids: Sequence[str]) -> dict[str, FactRow]:
    """Fact id -> the fact as it was recorded: its current version, else its last (evidence
    cites a fact id, and the entry may have been edited or removed since)."""
    latest: dict[str, int] = {}
    for part in batched(sorted(set(fact_ids))):
        for fact_id, item_id in store.conn.execute(
                f"SELECT fact_id, id FROM items WHERE type = 'fact' AND fact_id IN "
                f"({marks(part)}) ORDER BY valid_to IS NULL, valid_to", part):
            latest[str(fact_id)] = int(item_id)  # the last row wins: the current one, if any
    ids = sorted(latest.values())
    rows = [r for part in batched(ids)
            for r in _facts(store, f"i.id IN ({marks(part)})", part, current=False)]
    return {r.fact_id: r for r in rows}


def entity_names(store: Store) -> EntityNames:
    entities = {str(k): (str(n), None if p is None else str(p))
                for k, n, p in store.conn.execute("SELECT key, name, page FROM entities")}
    aliases = {str(a): str(e) for a, e in store.conn.execute("SELECT alias, entity FROM aliases")}
    return EntityNames(entities, aliases)


@dataclass(frozen=True)
class Replaced:
    """A current fact a current statement replaced (a hard edge of the replacement graph):
    where the newer one stands and the day it was stated."""

    path: str
    start_line: int
    end_line: int
    stated: str


def replaced_facts(store: Store, ids: Sequence[int]) -> dict[int, Replaced]:
    """Item id -> the newest current statement that replaced that fact, for the facts among
    ``ids`` a hard edge of the graph says are replaced (index.graph)."""
    found: dict[int, tuple[str, Replaced]] = {}
    for part in batched(sorted(set(ids))):
        for item_id, path, line, end, day in store.conn.execute(
                "SELECT o.item_id, n.path, n.line, n.end_line, coalesce(ni.day, "
                "substr(ni.recorded_at, 1, 10)) FROM statements o "
                "JOIN edges e ON e.older = o.id AND e.strength = 'hard' "
                "JOIN statements n ON n.id = e.newer "
                "JOIN items ni ON ni.id = n.item_id AND ni.valid_to IS NULL "
                f"WHERE o.item_id IN ({marks(part)})", part):
            key = f"{day}\x1f{path}\x1f{int(line):09d}"
            if int(item_id) not in found or key > found[int(item_id)][0]:
                found[int(item_id)] = (key, Replaced(str(path), int(line), int(end), str(day)))
    return {item_id: replaced for item_id, (_, replaced) in found.items()}
