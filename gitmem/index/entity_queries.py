"""The read queries of ``gitmem entity`` and ``gitmem opinions``: an entity's facts, mentions,
co-mentions and page, the list of entities, and the versions of bank/opinions.md's opinions.

Every query reads one state of the memory: the current one (``seq`` None) or the one held at
an indexed commit (``seq``: record time, docs/memory-format.md). Nothing is dropped for its event
time.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import apsw

from gitmem.index.queries import Row
from gitmem.index.store import Store, aliases, batched, marks
from gitmem.parse.retain import entity_key

ENTITY_DIR = "bank/entities/"
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


def _records(cursor: apsw.Cursor) -> list[dict[str, Any]]:
    try:
        names = [d[0] for d in cursor.getdescription()]
    except apsw.ExecutionCompleteError:  # no rows: the statement has already finished
        return []
    return [dict(zip(names, record, strict=True)) for record in cursor]


def _dicts(cursor: apsw.Cursor) -> list[Row]:
    return [cast(Row, record) for record in _records(cursor)]


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


def alias_spellings(store: Store) -> dict[str, str]:
    """alias key -> the alias as its page's front matter writes it (``Alice Meyer``)."""
    out: dict[str, str] = {}
    for (front_matter,) in store.conn.execute(
            "SELECT front_matter FROM files WHERE class = 'entity' ORDER BY path"):
        for alias in aliases(str(front_matter)):
            out.setdefault(entity_key(alias), alias)
    return out


def entity_pages(store: Store, state: State) -> list[str]:
    """The entity page paths of a state (current: the files table)."""
    if state.seq is None:
        return [str(p) for (p,) in store.conn.execute(
            "SELECT path FROM files WHERE class = 'entity'")]
    where, args = state.clause()
    # Entity pages live under bank/entities/ (docs/memory-format.md): a range of the path index, not
    # a scan.
    return [str(p) for (p,) in store.conn.execute(
        f"SELECT DISTINCT i.path FROM items i WHERE i.path >= ? AND i.path < ? "
        f"AND i.class = 'entity' AND {where}", [ENTITY_DIR, ENTITY_DIR[:-1] + "0", *args])]


def spellings(store: Store, keys: Sequence[str], state: State) -> dict[str, int]:
    """How an entity is written in a state: spelling -> items (none: unknown then). The
    current state reads the entities table (its most frequent spelling, or its page's)."""
    if state.seq is None:
        return {str(n): 1 for (n,) in store.conn.execute(
            f"SELECT name FROM entities WHERE key IN ({marks(keys)})", list(keys))}
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
    """Every entity mentioned in a state (aliases folded into it): key, the name most often
    written, mentions (items naming it, its own page's text aside), facts, and the last day it
    was mentioned."""
    where, args = state.clause()
    # Aliases folded before counting: an item naming an entity twice (by name and by an
    # alias) is one mention, as ``entity NAME`` counts it.
    sql = (
        "SELECT coalesce(a.entity, e.entity) AS key, count(DISTINCT e.item_id) AS mentions, "
        "count(DISTINCT CASE WHEN i.type = 'fact' THEN e.item_id END) AS facts, "
        f"max({STATED}) AS last "
        f"FROM item_entities e JOIN items i ON i.id = e.item_id AND {where} "
        "LEFT JOIN aliases a ON a.alias = e.entity "
        "WHERE e.role != 'page' GROUP BY 1")
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


# -- one entity -------------------------------------------------------------------------------

ITEM_FIELDS = (
    "id", "type", "kind", "content", "path", "start_line", "end_line", "commit_id", "valid_to",
    "event_start", "event_end", "day", "recorded_at", "confidence", "fact_id", "stated",
    "mentions",
)
_ITEM_COLUMNS = ", ".join(
    f"{STATED} AS stated" if f == "stated"
    else "CASE WHEN i.type = 'fact' THEN i.content END" if f == "content"
    # a mention names the entity; its own page's text is linked to it without naming it
    else "EXISTS (SELECT 1 FROM item_entities m WHERE m.item_id = i.id AND m.role != 'page' "
         "AND m.entity IN ({keys})) AS mentions" if f == "mentions"
    else f"i.{f}" for f in ITEM_FIELDS)
_NEWEST_FIRST = "stated DESC, i.recorded_at DESC, i.path DESC, i.start_line DESC"


def entity_items(store: Store, keys: Sequence[str], state: State) -> list[tuple[Any, ...]]:
    """Every item (fact or chunk) linked to an entity, newest first, as tuples of
    ``ITEM_FIELDS`` (chunks without their text). One pass: the entity view derives its facts,
    timeline and first and last mention from these; thousands of rows, so no dicts."""
    where, args = state.clause()
    # Driven by the ids: each row is read by its key, so validity is checked on the row
    # ('+' keeps SQLite from searching the valid_to index for every id as well).
    where = where.replace("i.valid", "+i.valid")
    sql = (
        f"SELECT {_ITEM_COLUMNS.format(keys=marks(keys))} FROM items i WHERE {where} AND i.id IN "
        f"(SELECT item_id FROM item_entities WHERE entity IN ({marks(keys)})) "
        f"ORDER BY {_NEWEST_FIRST}")
    return store.conn.execute(sql, [*keys, *args, *keys]).fetchall()


def fact_entities(store: Store, ids: Sequence[int]) -> dict[int, set[str]]:
    """Fact item id -> the entity keys it names (subjects and mentions), for these facts."""
    out: dict[int, set[str]] = {}
    for part in batched(ids):
        for item_id, key in store.conn.execute(
                f"SELECT item_id, entity FROM item_entities WHERE item_id IN ({marks(part)}) "
                "AND role != 'page'", part):
            out.setdefault(int(item_id), set()).add(str(key))
    return out


def chunks_naming_others(store: Store, ids: Sequence[int],
                         keys: Sequence[str]) -> list[tuple[str, int, str]]:
    """(path, first line, text) of the chunks among ``ids`` that name an entity besides
    ``keys``: the only ones whose lines can name two entities together."""
    out: list[tuple[str, int, str]] = []
    for part in batched(ids):
        out.extend((str(p), int(n), str(t)) for p, n, t in store.conn.execute(
            f"SELECT i.path, i.start_line, i.content FROM items i WHERE i.id IN ({marks(part)}) "
            "AND i.type = 'chunk' AND EXISTS (SELECT 1 FROM item_entities e WHERE "
            f"e.item_id = i.id AND e.role != 'page' AND e.entity NOT IN ({marks(keys)}))",
            [*part, *keys]))
    return out


# -- opinions ---------------------------------------------------------------------------------

_OPINION_COLUMNS = (
    "o.id, o.opinion_id, o.statement, o.entities, o.confidence, o.updated, o.evidence, o.path, "
    "o.start_line, o.end_line, o.recorded_at, o.commit_id, o.valid_from, o.valid_to"
)


def _opinion_rows(cursor: apsw.Cursor) -> list[Row]:
    rows = _records(cursor)
    for row in rows:
        row["entities"] = json.loads(row["entities"])
        row["evidence"] = json.loads(row["evidence"])
    return [cast(Row, row) for row in rows]


def opinions_at(store: Store, state: State) -> list[Row]:
    """The opinions of bank/opinions.md in a state, in file order."""
    where, args = state.clause("o")
    return _opinion_rows(store.conn.execute(
        f"SELECT {_OPINION_COLUMNS} FROM opinions o WHERE {where} ORDER BY o.path, o.start_line",
        args))


def opinion_entries(store: Store, state: State) -> tuple[int, str | None]:
    """How many ``O`` entries (opinion facts) the memory holds in a state, and the day the
    oldest was recorded (what ``reflect --since`` must reach back to)."""
    where, args = state.clause()
    row = store.conn.execute(
        "SELECT count(*), min(substr(i.recorded_at, 1, 10)) FROM items i "
        f"WHERE i.type = 'fact' AND i.kind = 'opinion' AND {where}", args).fetchone()
    n, first = row if row is not None else (0, None)
    return int(n), None if first is None else str(first)


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


@dataclass(frozen=True)
class Said:
    """A fact as first recorded: the day it was said (its daily note's date, else its record
    day), its text, where it was written (path, first and last line) and its stated c."""

    day: str
    content: str
    path: str
    start_line: int
    end_line: int
    confidence: float | None


def facts_said(store: Store, fact_ids: Sequence[str]) -> dict[str, Said]:
    """fact id -> the fact as first recorded, current or not: what an opinion's evidence
    cites (a folded entry keeps only its id in bank/opinions.md)."""
    out: dict[str, Said] = {}
    for part in batched(sorted(set(fact_ids))):
        for fid, day, content, path, start, end, c in store.conn.execute(
                f"SELECT i.fact_id, {STATED}, i.content, i.path, i.start_line, i.end_line, "
                f"i.confidence FROM items i WHERE i.type = 'fact' "
                f"AND i.fact_id IN ({marks(part)}) ORDER BY i.valid_from", part):
            out.setdefault(str(fid), Said(str(day), str(content), str(path), int(start),
                                          int(end), c))
    return out
