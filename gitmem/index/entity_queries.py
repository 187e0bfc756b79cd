"""The read queries of ``gitmem entity`` and ``gitmem opinions``: an entity's facts, mentions,
co-mentions and page, the list of entities, and the versions of bank/opinions.md's opinions.

Every query reads one state of the memory: the current one (``seq`` None) or the one held at
an indexed commit (``seq``: record time, SPEC §6). Nothing is dropped for its event time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import apsw

from gitmem.index.store import Store, batched, marks

Row = dict[str, Any]

# The date an item was stated: the daily note's day, else the day the memory recorded it.
STATED = "coalesce(i.day, substr(i.recorded_at, 1, 10))"


@dataclass(frozen=True)
class State:
    """One state of the memory: current (``seq`` None) or as held at indexed commit ``seq``."""

    seq: int | None = None

    def clause(self, alias: str = "i") -> tuple[str, list[Any]]:
        if self.seq is None:
            return f"{alias}.valid_to IS NULL", []
        return (f"{alias}.valid_from <= ? AND ({alias}.valid_to IS NULL OR {alias}.valid_to > ?)",
                [self.seq, self.seq])


def _dicts(cursor: apsw.Cursor) -> list[Row]:
    try:
        names = [d[0] for d in cursor.getdescription()]
    except apsw.ExecutionCompleteError:  # no rows: the statement has already finished
        return []
    return [dict(zip(names, record, strict=True)) for record in cursor]


# -- names ------------------------------------------------------------------------------------


def alias_target(store: Store, key: str) -> str | None:
    row = store.conn.execute("SELECT entity FROM aliases WHERE alias = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def aliases_of(store: Store, key: str) -> list[str]:
    return [str(r[0]) for r in store.conn.execute(
        "SELECT alias FROM aliases WHERE entity = ? ORDER BY alias", (key,))]


def alias_map(store: Store) -> dict[str, str]:
    """alias key -> entity key."""
    return {str(a): str(e) for a, e in store.conn.execute("SELECT alias, entity FROM aliases")}


def entity_pages(store: Store, state: State) -> list[str]:
    """The entity page paths of a state (current: the files table)."""
    if state.seq is None:
        return [str(p) for (p,) in store.conn.execute(
            "SELECT path FROM files WHERE class = 'entity'")]
    where, args = state.clause()
    return [str(p) for (p,) in store.conn.execute(
        f"SELECT DISTINCT i.path FROM items i WHERE i.class = 'entity' AND {where}", args)]


def spellings(store: Store, keys: Sequence[str], state: State) -> dict[str, int]:
    """How an entity is written in a state: spelling -> items (none: not mentioned then)."""
    where, args = state.clause()
    return {str(n): int(c) for n, c in store.conn.execute(
        f"SELECT e.name, count(*) FROM item_entities e JOIN items i ON i.id = e.item_id "
        f"AND {where} WHERE e.entity IN ({marks(keys)}) AND e.role != 'page' GROUP BY e.name",
        [*args, *keys])}


def page_blob(store: Store, path: str, state: State) -> str | None:
    """The blob id of a page in a state (None when the page holds no text then)."""
    if state.seq is None:
        row = store.conn.execute("SELECT blob FROM files WHERE path = ?", (path,)).fetchone()
    else:
        where, args = state.clause()
        row = store.conn.execute(
            f"SELECT i.blob FROM items i WHERE i.path = ? AND {where} LIMIT 1",
            [path, *args]).fetchone()
    return None if row is None else str(row[0])


def entity_counts(store: Store, state: State) -> list[Row]:
    """Every entity mentioned in a state: key, the name most often written, mentions (items),
    facts, and the last day it was mentioned."""
    where, args = state.clause()
    sql = (
        "SELECT e.entity AS key, count(DISTINCT e.item_id) AS mentions, "
        "count(DISTINCT CASE WHEN i.type = 'fact' THEN e.item_id END) AS facts, "
        f"max({STATED}) AS last "
        f"FROM item_entities e JOIN items i ON i.id = e.item_id AND {where} "
        "WHERE e.role != 'page' GROUP BY e.entity")
    rows = _dicts(store.conn.execute(sql, args))
    names = _common_names(store, state)
    for row in rows:
        row["name"] = names.get(row["key"], row["key"])
    return rows


def _common_names(store: Store, state: State) -> dict[str, str]:
    """Key -> the spelling written most often (the entities table holds the current state)."""
    if state.seq is None:
        return {str(k): str(n) for k, n in store.conn.execute("SELECT key, name FROM entities")}
    where, args = state.clause()
    best: dict[str, tuple[int, str]] = {}
    for key, name, n in store.conn.execute(
            "SELECT e.entity, e.name, count(*) FROM item_entities e JOIN items i "
            f"ON i.id = e.item_id AND {where} WHERE e.role != 'page' GROUP BY e.entity, e.name",
            args):
        if (int(n), str(name)) > best.get(str(key), (0, "")):
            best[str(key)] = (int(n), str(name))
    return {k: name for k, (_, name) in best.items()}


def current_names(store: Store) -> list[tuple[str, str]]:
    """(key, name) of every current entity and alias, for suggestions."""
    rows = [(str(k), str(n)) for k, n in store.conn.execute("SELECT key, name FROM entities")]
    rows += [(str(a), str(a)) for (a,) in store.conn.execute("SELECT alias FROM aliases")]
    return rows


# -- one entity -------------------------------------------------------------------------------

_FACT_COLUMNS = (
    "i.id, i.kind, i.content, i.path, i.start_line, i.end_line, i.commit_id, i.valid_to, "
    f"i.event_start, i.event_end, i.day, i.recorded_at, i.confidence, i.fact_id, "
    f"{STATED} AS stated"
)
_NEWEST_FIRST = "stated DESC, i.recorded_at DESC, i.path DESC, i.start_line DESC"


def entity_facts(store: Store, keys: Sequence[str], state: State) -> list[Row]:
    """The facts about (or mentioning) an entity, newest first."""
    where, args = state.clause()
    sql = (
        f"SELECT {_FACT_COLUMNS} FROM items i WHERE i.type = 'fact' AND {where} AND i.id IN "
        f"(SELECT item_id FROM item_entities WHERE entity IN ({marks(keys)})) "
        f"ORDER BY {_NEWEST_FIRST}")
    return _dicts(store.conn.execute(sql, [*args, *keys]))


def mention_stats(store: Store, keys: Sequence[str], state: State) -> dict[str, Any]:
    """Mentions (facts and notes; not its own page) of an entity: per month, the first and
    the last."""
    where, args = state.clause()
    mentioned = (f"FROM items i WHERE {where} AND i.id IN (SELECT item_id FROM item_entities "
                 f"WHERE entity IN ({marks(keys)}) AND role != 'page')")
    months = [
        {"period": str(p), "mentions": int(n), "facts": int(f)}
        for p, n, f in store.conn.execute(
            f"SELECT substr({STATED}, 1, 7) AS period, count(*), sum(i.type = 'fact') "
            f"{mentioned} GROUP BY period ORDER BY period", [*args, *keys])
        if p is not None
    ]
    ends: dict[str, Row | None] = {}
    for name, order in (("first", "ASC"), ("last", "DESC")):
        found = _dicts(store.conn.execute(
            f"SELECT i.path, i.start_line, i.end_line, i.commit_id, i.valid_to, {STATED} AS stated "
            f"{mentioned} ORDER BY stated {order}, i.path {order}, i.start_line {order} LIMIT 1",
            [*args, *keys]))
        ends[name] = found[0] if found else None
    return {"months": months, "first": ends["first"], "last": ends["last"]}


def co_mentions(store: Store, keys: Sequence[str], state: State, limit: int) -> list[Row]:
    """The entities most often mentioned in the same items: key, mentions."""
    where, args = state.clause()
    sql = (
        "SELECT o.entity AS key, count(DISTINCT o.item_id) AS mentions "
        f"FROM item_entities e JOIN items i ON i.id = e.item_id AND {where} "
        f"JOIN item_entities o ON o.item_id = e.item_id AND o.entity NOT IN ({marks(keys)}) "
        f"WHERE e.entity IN ({marks(keys)}) GROUP BY o.entity "
        "ORDER BY mentions DESC, o.entity LIMIT ?")
    return _dicts(store.conn.execute(sql, [*args, *keys, *keys, limit]))


# -- opinions ---------------------------------------------------------------------------------

_OPINION_COLUMNS = (
    "o.id, o.opinion_id, o.statement, o.entities, o.confidence, o.updated, o.evidence, o.path, "
    "o.start_line, o.end_line, o.recorded_at, o.commit_id, o.valid_from, o.valid_to"
)


def _opinion_rows(cursor: apsw.Cursor) -> list[Row]:
    rows = _dicts(cursor)
    for row in rows:
        row["entities"] = json.loads(row["entities"])
        row["evidence"] = json.loads(row["evidence"])
    return rows


def opinions_at(store: Store, state: State) -> list[Row]:
    """The opinions of bank/opinions.md in a state, in file order."""
    where, args = state.clause("o")
    return _opinion_rows(store.conn.execute(
        f"SELECT {_OPINION_COLUMNS} FROM opinions o WHERE {where} ORDER BY o.path, o.start_line",
        args))


def opinion_versions(store: Store, opinion_ids: Sequence[str], state: State) -> list[Row]:
    """Every version of these opinions recorded up to a state, oldest first, with the time
    and commit of the version."""
    up_to = "" if state.seq is None else "AND o.valid_from <= ?"
    out: list[Row] = []
    for part in batched(opinion_ids):
        out.extend(_opinion_rows(store.conn.execute(
            f"SELECT {_OPINION_COLUMNS} FROM opinions o WHERE o.opinion_id IN ({marks(part)}) "
            f"{up_to} ORDER BY o.opinion_id, o.valid_from",
            [*part, *([] if state.seq is None else [state.seq])])))
    return out
