"""The read queries recall asks of the index: full-text candidates, nearest vectors, time and
entity filters, entity names. Every statement is here; ranking them is recall's business."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, TypedDict, cast

from gitmem.domain import ResultKind, TimeWindow
from gitmem.index.items import MAX_PASSAGES, page_entity
from gitmem.index.store import Store, aliases, batched, marks
from gitmem.parse.retain import entity_key

if TYPE_CHECKING:
    from gitmem.index.signbits import SignBits

VEC_K_MAX = 4096  # sqlite-vec's largest k for one k-NN query
# Hamming candidates (passages) per item asked, rescored exactly (bench/bench_growth.py,
# clustered vectors). With ~96-token passages (a few per chunk), 2 gave recall@10 of the exact
# k-NN 1.0 up to 135,000 vectors, 0.84-0.91 at 1,000,000, where 4 gave 0.995; but vec0's scan
# costs more than linearly in them (297 ms for 2 per item of 100 there, 697 ms for 4). A chunk
# is now embedded as its lines and list items (issue 41), several times as many vectors an
# item: 2 per item then reached too few items (and warm and cold answers differed on the
# sample workspace); 8 again reach every item there. Not re-measured at 1,000,000 yet. The
# sign bits in memory scan as fast either way: above WIDE_ABOVE vectors they take twice as many.
HAMMING_PER_ITEM = 8
HAMMING_PER_ITEM_WIDE = 16
WIDE_ABOVE = 150_000
# BM25 column weights: exact words, the file path, word stems (lower: exact forms rank first).
BM25_WEIGHTS = (1.0, 0.3, 0.5)
# The weight of the Han characters table, whose BM25 is added to the words' (bigrams first).
HAN_WEIGHT = 0.5

# A row the index answers with, read by column name: an item version (``items``: a fact or a
# chunk, with ``preferred`` and, where a query adds them, ``declared`` and ``entities``), an
# opinion version (``opinions``) or an entity's counts (``entity_counts``). One type for all, so
# a misspelt column is a type error; each query fills the columns it selects.
Row = TypedDict("Row", {
    # items (and opinions: path, start_line, end_line, recorded_at, commit_id, valid_to)
    "id": int, "path": str, "type": str, "kind": ResultKind, "fact_id": "str | None",
    "confidence": "float | None", "start_line": int, "end_line": int, "content": str,
    "event_start": "str | None", "event_end": "str | None", "recorded_at": "str | None",
    "commit_id": "str | None", "valid_to": "int | None", "class": str, "day": "str | None",
    "preferred": bool, "declared": "tuple[str, ...]",
    # (line, importance, trigger phrases) of its annotated lines, where recall adds them
    "annotations": "tuple[tuple[int, int | None, str], ...]",
    # its lines that count back into a query's preferred window, where recall adds them
    "counted_back": "set[int]",
    # the share of a query's preferred window's boost it keeps outside it, where recall adds it
    "nearness": float,
    # opinions
    "opinion_id": str, "statement": str, "entities": "list[str]", "updated": "str | None",
    "evidence": "list[dict[str, Any]]", "valid_from": int,
    # entity counts
    "key": str, "name": str, "mentions": int, "facts": int, "last": "str | None",
}, total=False)

_COLUMNS = (
    "i.id, i.path, i.type, i.kind, i.fact_id, i.confidence, i.start_line, i.end_line, "
    "i.content, i.event_start, i.event_end, i.recorded_at, i.commit_id, i.valid_to, "
    "i.class, i.day"
)
_NAMES = [c.split(".")[-1] for c in _COLUMNS.split(", ")]


@dataclass(frozen=True)
class ItemFilter:
    """Which item versions a query may return, and which window it prefers."""

    as_of_seq: int | None = None  # the versions held at this indexed commit (None: current)
    kinds: tuple[str, ...] = ()
    entity_keys: tuple[tuple[str, ...], ...] = ()  # each: an entity and its aliases
    window: TimeWindow | None = None  # event time overlaps (record time when unknown)
    prefer: TimeWindow | None = None  # marks rows inside it (column 'preferred')

    @property
    def narrows(self) -> bool:
        return bool(self.kinds or self.entity_keys or self.window or self.as_of_seq is not None)


def _day_bounds(window: TimeWindow) -> tuple[str | None, str | None]:
    first = window.start.date().isoformat() if window.start else None
    last = (window.end - timedelta(microseconds=1)).date().isoformat() if window.end else None
    return first, last


def window_clause(window: TimeWindow) -> tuple[str, list[Any]]:
    """Event time overlaps the window, or the daily note was written in it ("Bob's birthday is
    December 14", noted on November 3, is in both days' windows); record time stands in when
    both are unknown. The one statement of the rule, used to filter and to prefer."""
    first, last = _day_bounds(window)
    start = window.start.isoformat() if window.start else None
    end = window.end.isoformat() if window.end else None
    branches = (  # (when it applies, (upper bound, value), (lower bound, value))
        ("i.event_start IS NOT NULL", ("i.event_start <= ?", last),
         ("coalesce(i.event_end, i.event_start) >= ?", first)),
        ("i.day IS NOT NULL", ("i.day <= ?", last), ("i.day >= ?", first)),
        ("i.event_start IS NULL AND i.day IS NULL", ("i.recorded_at < ?", end),
         ("i.recorded_at >= ?", start)),
    )
    clauses: list[str] = []
    args: list[Any] = []
    for applies, *bounds in branches:
        given = [(sql, value) for sql, value in bounds if value is not None]
        clauses.append(" AND ".join([applies, *(sql for sql, _ in given)]))
        args.extend(value for _, value in given)
    return "(" + " OR ".join(f"({c})" for c in clauses) + ")", args


def _where(flt: ItemFilter) -> tuple[str, list[Any]]:
    if flt.as_of_seq is None:
        where = ["i.valid_to IS NULL"]
        args: list[Any] = []
    else:
        # Record time only (docs/memory-format.md): a plan recorded before then about a later day is
        # found.
        where = ["i.valid_from <= ?", "(i.valid_to IS NULL OR i.valid_to > ?)"]
        args = [flt.as_of_seq, flt.as_of_seq]
    if flt.kinds:
        where.append(f"i.kind IN ({marks(flt.kinds)})")
        args.extend(flt.kinds)
    for keys in flt.entity_keys:
        where.append("EXISTS (SELECT 1 FROM item_entities e WHERE e.item_id = i.id "
                     f"AND e.entity IN ({marks(keys)}))")
        args.extend(keys)
    if flt.window is not None and not flt.window.is_open:
        clause, window_args = window_clause(flt.window)
        where.append(clause)
        args.extend(window_args)
    return " AND ".join(where), args


def days_outside(row: Row, window: TimeWindow) -> int | None:
    """How many days a row lies outside a window by ``window_clause``'s rule (0: inside;
    the nearer of its event period and its daily note's day; record time when both are
    unknown), or None when it has no time or the window none."""
    first, last = _day_bounds(window)
    if first is None or last is None:
        return None
    spans = []
    if row.get("event_start"):
        start = str(row["event_start"])[:10]
        spans.append((start, str(row.get("event_end") or start)[:10]))
    if row.get("day"):
        spans.append((str(row["day"]), str(row["day"])))
    if not spans and row.get("recorded_at"):
        spans.append((str(row["recorded_at"])[:10],) * 2)
    if not spans:
        return None
    lo, hi = date.fromisoformat(first), date.fromisoformat(last)

    def apart(span: tuple[str, str]) -> int:
        begins, ends = date.fromisoformat(span[0]), date.fromisoformat(span[1])
        return max(0, (lo - ends).days, (begins - hi).days)

    try:
        return min(apart(span) for span in spans)
    except ValueError:  # a malformed date stored by an older index: no nearness
        return None


def _select(flt: ItemFilter) -> tuple[str, list[Any]]:
    """The item columns plus 'preferred' (1 when inside the preferred window)."""
    if flt.prefer is None or flt.prefer.is_open:
        return f"{_COLUMNS}, 0", []
    clause, args = window_clause(flt.prefer)
    return f"{_COLUMNS}, {clause}", args


def _rows(records: Sequence[Sequence[Any]]) -> list[Row]:
    out: list[Row] = []
    for record in records:
        row = cast(Row, dict(zip(_NAMES, record[: len(_NAMES)], strict=True)))
        row["preferred"] = bool(record[len(_NAMES)])
        out.append(row)
    return out


def lexical(store: Store, flt: ItemFilter, match: str, limit: int,
            han_match: str | None = None) -> list[tuple[Row, float]]:
    """Full-text candidates with their BM25 score (higher is better); with ``han_match``, the
    BM25 of the Han characters table is added (weighted by ``HAN_WEIGHT``)."""
    columns, col_args = _select(flt)
    where, args = _where(flt)
    words = (f"SELECT rowid AS rid, bm25(items_fts, {', '.join(map(str, BM25_WEIGHTS))}) "
             "AS score FROM items_fts WHERE items_fts MATCH ?")
    matches = [match]
    if han_match is not None:
        words = (f"SELECT rid, sum(score) AS score FROM ({words} UNION ALL SELECT rowid, "
                 f"{HAN_WEIGHT} * bm25(items_han) FROM items_han WHERE items_han MATCH ?) "
                 "GROUP BY rid")
        matches.append(han_match)
    if where == "i.valid_to IS NULL":  # the current memory, nothing else asked
        # The best of the open versions first, from the index of their ids (a common word
        # matches thousands of items over ten years: their rows were all read and sorted,
        # text and all), then the rows of those alone.
        best = (f"SELECT m.rid AS rid, m.score AS score FROM ({words}) m "
                f"JOIN items i INDEXED BY items_current ON i.id = m.rid WHERE {where} "
                "ORDER BY m.score LIMIT ?")
        sql = f"SELECT {columns}, m.score FROM ({best}) m JOIN items i ON i.id = m.rid " \
              "ORDER BY m.score"
    else:
        sql = (
            f"SELECT {columns}, m.score FROM ({words}) m "
            f"JOIN items i ON i.id = m.rid WHERE {where} ORDER BY m.score LIMIT ?"
        )
    records = store.conn.execute(sql, [*col_args, *matches, *args, limit]).fetchall()
    rows = _rows(records)
    return [(row, -float(str(rec[-1]))) for row, rec in zip(rows, records, strict=True)]


def known_terms(store: Store, terms: Sequence[str]) -> set[str]:
    """Which of these folded words or stems the full-text index holds (any column, any item
    version): the memory's own vocabulary, which Danish compounds are split against."""
    if not terms:
        return set()
    # fts5vocab reads the full-text index itself; a temp table, so nothing is written to the
    # index file (a read-only connection may create it)
    store.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.items_vocab "
                       "USING fts5vocab(main, 'items_fts', 'row')")
    found: set[str] = set()
    for part in batched(list(dict.fromkeys(terms))):
        found.update(str(r[0]) for r in store.conn.execute(
            f"SELECT term FROM temp.items_vocab WHERE term IN ({marks(part)})", part))
    return found


def browse(store: Store, flt: ItemFilter, limit: int) -> list[Row]:
    """No words ("what happened last week", in a window or not): what was written, newest
    first (the daily note's day, else the record time), a day's facts before its text."""
    columns, col_args = _select(flt)
    where, args = _where(flt)
    sql = (
        f"SELECT {columns} FROM items i WHERE {where} "
        "ORDER BY coalesce(i.day, substr(i.recorded_at, 1, 10)) DESC, i.type = 'fact' DESC, "
        "i.path, i.start_line LIMIT ?"
    )
    return _rows(store.conn.execute(sql, [*col_args, *args, limit]).fetchall())


def memory_span(store: Store, flt: ItemFilter) -> tuple[str | None, str | None]:
    """(oldest, newest) day the memory speaks of: event times and daily notes' days, else the
    record day (the days a window can match)."""
    where, args = _where(flt)
    record = "substr(i.recorded_at, 1, 10)"
    row = store.conn.execute(
        f"SELECT min(min(coalesce(i.event_start, i.day, {record}), coalesce(i.day, "
        f"i.event_start, {record}))), max(max(coalesce(i.event_end, i.event_start, i.day, "
        f"{record}), coalesce(i.day, i.event_start, {record}))) FROM items i WHERE {where}",
        args).fetchone()
    return (None, None) if row is None else (row[0], row[1])


def nearest(store: Store, qvec: bytes, k: int,
            passages: dict[tuple[int, int], float] | None = None,
            bits: SignBits | None = None) -> dict[int, float]:
    """Item id -> cosine similarity of its closest passage, for the ``k`` nearest items; each
    passage's similarity goes into ``passages`` too, (item id, passage number) -> similarity,
    when it is given.

    Candidates come from the sign bits by Hamming distance, rescored by exact cosine: from
    ``bits``, the bits a warm process holds in memory (brought up to date in the same read
    transaction as the rescoring), else from vec0 (fast); when the extension cannot be
    loaded, an exact scan gives the same answer slower."""
    if bits is not None:
        with store.transaction():
            bits.sync(store)
            wide = HAMMING_PER_ITEM_WIDE if len(bits) > WIDE_ABOVE else HAMMING_PER_ITEM
            near = bits.nearest_items(qvec, k * wide)
            found = passage_similarities(store, qvec, near)
    elif store.vec_error is None and store.has_vec_table():
        near = sorted({int(r) // MAX_PASSAGES for (r,) in store.conn.execute(
            "SELECT rowid FROM vec_bits WHERE embedding MATCH vec_quantize_binary(?) AND k = ?",
            (qvec, min(k * HAMMING_PER_ITEM, VEC_K_MAX)))})
        found = passage_similarities(store, qvec, near)
    else:
        from gitmem.embed.batch import unpack  # vectors only: not on a lexical recall's path

        query = unpack(qvec)
        found = {(int(i), int(n)): sum(a * b for a, b in zip(query, unpack(bytes(v)),
                                                             strict=False))
                 for i, n, v in store.conn.execute("SELECT item_id, part, vector FROM vectors")}
    best: dict[int, float] = {}
    for (item_id, _), similarity in found.items():  # an item is as close as its closest passage
        if similarity > best.get(item_id, -2.0):
            best[item_id] = similarity
    top = dict(heapq.nlargest(k, best.items(), key=lambda pair: pair[1]))
    if passages is not None:
        passages.update((key, sim) for key, sim in found.items() if key[0] in top)
    return top


def passage_similarities(store: Store, qvec: bytes,
                         ids: Sequence[int]) -> dict[tuple[int, int], float]:
    """(item id, passage number) -> cosine similarity to ``qvec``, for every embedded passage of
    these items (exact; items without vectors are absent)."""
    out: dict[tuple[int, int], float] = {}
    if store.vec_error is None:
        for part in batched(ids):
            out.update(((int(i), int(n)), 1.0 - float(d)) for i, n, d in store.conn.execute(
                f"SELECT item_id, part, vec_distance_cosine(vector, ?) FROM vectors "
                f"WHERE item_id IN ({marks(part)})", (qvec, *part)))
        return out
    from gitmem.embed.batch import unpack  # vectors only: not on a lexical recall's path

    query = unpack(qvec)
    for part in batched(ids):
        for i, n, v in store.conn.execute(
                f"SELECT item_id, part, vector FROM vectors WHERE item_id IN ({marks(part)})",
                part):
            out[(int(i), int(n))] = sum(a * b for a, b in zip(query, unpack(bytes(v)),
                                                             strict=False))
    return out


TYPICAL_SAMPLE = 256  # embedded items whose similarity to a query is its typical one


def typical_similarity(store: Store, qvec: bytes) -> float | None:
    """The query's mean cosine similarity to this memory's items (the first passages of the
    first ``TYPICAL_SAMPLE`` embedded items, a sample that a rebuild keeps): the level a
    result must stand above to be a semantic match. None without vectors."""
    sample = ("SELECT vector FROM vectors WHERE part = 0 ORDER BY item_id "
              f"LIMIT {TYPICAL_SAMPLE}")
    if store.vec_error is None:
        row = store.conn.execute(
            f"SELECT avg(1.0 - vec_distance_cosine(vector, ?)), count(*) FROM ({sample})",
            (qvec,)).fetchone()
        return None if row is None or not row[1] else float(row[0])
    from gitmem.embed.batch import unpack  # vectors only: not on a lexical recall's path

    query = unpack(qvec)
    sims = [sum(a * b for a, b in zip(query, unpack(bytes(v)), strict=False))
            for (v,) in store.conn.execute(sample)]
    return sum(sims) / len(sims) if sims else None


def rows_by_id(store: Store, ids: Sequence[int], flt: ItemFilter) -> list[Row]:
    """The rows of ``ids`` that pass the filter."""
    columns, col_args = _select(flt)
    where, args = _where(flt)
    out: list[Row] = []
    for part in batched(ids):
        out.extend(_rows(store.conn.execute(
            f"SELECT {columns} FROM items i WHERE i.id IN ({marks(part)}) AND {where}",
            [*col_args, *part, *args]).fetchall()))
    return out


def facts_meeting(store: Store, path: str, first: int, last: int, flt: ItemFilter) -> list[Row]:
    """The facts of ``path`` with a line within ``first``..``last``, in the filter's state."""
    columns, col_args = _select(flt)
    where, args = _where(flt)
    return _rows(store.conn.execute(
        f"SELECT {columns} FROM items i WHERE i.type = 'fact' AND i.path = ? "
        f"AND i.start_line <= ? AND i.end_line >= ? AND {where} ORDER BY i.start_line",
        [*col_args, path, last, first, *args]).fetchall())


def fact_covering(store: Store, path: str, first: int, last: int, flt: ItemFilter) -> Row | None:
    """The fact of ``path`` whose lines hold ``first``..``last``, in the filter's state."""
    columns, col_args = _select(flt)
    where, args = _where(flt)
    found = _rows(store.conn.execute(
        f"SELECT {columns} FROM items i WHERE i.type = 'fact' AND i.path = ? "
        f"AND i.start_line <= ? AND i.end_line >= ? AND {where} ORDER BY i.start_line LIMIT 1",
        [*col_args, path, first, last, *args]).fetchall())
    return found[0] if found else None


def entity_names(store: Store, item_id: int) -> tuple[str, ...]:
    """An item's entities as written, subjects first."""
    return tuple(dict.fromkeys(str(r[0]) for r in store.conn.execute(
        "SELECT name FROM item_entities WHERE item_id = ? ORDER BY role = 'mention', rowid",
        (item_id,))))


def entity_with_aliases(store: Store, key: str) -> tuple[str, ...] | None:
    """(the entity's key, its aliases' keys) for a key or an alias; None when unknown."""
    row = store.conn.execute(
        "SELECT entity FROM aliases WHERE alias = ? UNION SELECT key FROM entities WHERE key = ?",
        (key, key)).fetchone()
    if row is None:
        return None
    main = str(row[0])
    aliases = [str(r[0]) for r in store.conn.execute(
        "SELECT alias FROM aliases WHERE entity = ?", (main,))]
    return (main, *aliases)


def entity_names_like(store: Store, fragment: str, limit: int = 5) -> list[str]:
    return [str(r[0]) for r in store.conn.execute(
        "SELECT name FROM entities WHERE key LIKE ? ORDER BY name LIMIT ?",
        (f"%{fragment}%", limit))]


MENTIONS_SCANNED = 4  # mentions read per fact wanted, newest first (subject_facts_newest)


def subject_facts_newest(store: Store, keys: Sequence[str], after: int,
                         limit: int) -> dict[str, list[int]]:
    """Entity key -> ids of the newest ``limit`` fact versions recorded after item ``after``
    with that key as a subject or naming it in their text, newest first. The newest ``limit``
    of any union of these lists, with ids above a higher bound, are the newest of that union's
    keys above that bound: one call serves every shown fact."""
    out: dict[str, list[int]] = {}
    for key in dict.fromkeys(keys):
        subject = [int(r) for (r,) in store.conn.execute(
            "SELECT DISTINCT item_id FROM item_entities WHERE entity = ? AND role = 'subject' "
            "AND item_id > ? ORDER BY item_id DESC LIMIT ?", (key, after, limit))]
        # a fact that names it inside its text ("Moved Home Assistant off the @homelab Pi"),
        # among its newest MENTIONS_SCANNED mentions: most mentions are in text passages, and
        # finding the facts among all of them read every mention of a busy entity (50 ms for
        # one with 4,600 on ten years, on every recall that showed a fact about it)
        mention = [int(r) for (r,) in store.conn.execute(
            "SELECT DISTINCT m.item_id FROM (SELECT item_id FROM item_entities WHERE entity = ? "
            "AND role = 'mention' AND item_id > ? ORDER BY item_id DESC LIMIT ?) m "
            "JOIN items i ON i.id = m.item_id WHERE i.type = 'fact' "
            "ORDER BY m.item_id DESC LIMIT ?", (key, after, MENTIONS_SCANNED * limit, limit))]
        out[key] = sorted({*subject, *mention}, reverse=True)[:limit]
    return out


def facts_by_id(store: Store, ids: Sequence[int], flt: ItemFilter) -> dict[int, Row]:
    """Of these item ids, the facts that pass the filter, by id."""
    columns, col_args = _select(flt)
    where, args = _where(flt)
    out: dict[int, Row] = {}
    for part in batched(ids):
        for row in _rows(store.conn.execute(
                f"SELECT {columns} FROM items i WHERE i.id IN ({marks(part)}) "
                f"AND i.type = 'fact' AND {where}", [*col_args, *part, *args]).fetchall()):
            out[int(row["id"])] = row
    return out


def stated_after(row: Row, than: Row) -> bool:
    """Was ``row`` stated after ``than`` (a later day, or the same day recorded no earlier)?"""
    day = row["day"] or (row["recorded_at"] or "")[:10]
    than_day = than["day"] or (than["recorded_at"] or "")[:10]
    return bool(day > than_day or (day == than_day
                                   and (row["recorded_at"] or "") >= (than["recorded_at"] or "")))


def current_facts_about(store: Store, keys: Sequence[str], limit: int) -> list[Row]:
    """The newest ``limit`` current facts with one of these entity keys as a subject."""
    if not keys:
        return []
    return _rows(store.conn.execute(
        f"SELECT {_COLUMNS}, 0 FROM items i WHERE i.type = 'fact' AND i.valid_to IS NULL AND "
        "i.id IN (SELECT item_id FROM item_entities WHERE role = 'subject' AND "
        f"entity IN ({marks(keys)})) ORDER BY i.id DESC LIMIT ?", [*keys, limit]).fetchall())


def current_fact_named(store: Store, ref: str) -> Row | None:
    """The current fact a ref names: a fact id, or a citation ``path#Lline`` of its lines."""
    if ref.startswith("f-"):
        found = store.conn.execute(
            f"SELECT {_COLUMNS}, 0 FROM items i WHERE i.type = 'fact' AND i.fact_id = ? AND "
            "i.valid_to IS NULL LIMIT 1", (ref,)).fetchall()
    else:
        path, _, lines = ref.partition("#L")
        line = int(lines.split("-", 1)[0]) if lines.split("-", 1)[0].isdigit() else 0
        found = store.conn.execute(
            f"SELECT {_COLUMNS}, 0 FROM items i WHERE i.type = 'fact' AND i.path = ? AND "
            "i.start_line <= ? AND i.end_line >= ? AND i.valid_to IS NULL LIMIT 1",
            (path, line, line)).fetchall()
    rows = _rows(found)
    return rows[0] if rows else None


def declared_of(store: Store, ids: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """Item id -> the fact ids its '- replaces:' item names (resolved refs only)."""
    out: dict[int, list[str]] = {}
    for part in batched(ids):
        for item_id, fact_id in store.conn.execute(
                f"SELECT item_id, fact_id FROM item_replaces WHERE item_id IN ({marks(part)}) "
                "AND fact_id IS NOT NULL ORDER BY item_id, ref", part):
            out.setdefault(int(item_id), []).append(str(fact_id))
    return {k: tuple(v) for k, v in out.items()}


def declaring_facts(store: Store, fact_ids: Sequence[str], flt: ItemFilter,
                    ) -> dict[str, list[Row]]:
    """Fact id -> the facts that pass the filter and declare (a '- replaces:' item) that they
    replace it, newest first; each row's 'declared' holds that fact id."""
    wanted = [f for f in dict.fromkeys(fact_ids) if f]
    out: dict[str, list[Row]] = {}
    if not wanted or store.conn.execute("SELECT 1 FROM item_replaces LIMIT 1").fetchone() is None:
        return out
    columns, col_args = _select(flt)
    where, args = _where(flt)
    for part in batched(wanted):
        records = store.conn.execute(
            f"SELECT {columns}, r.fact_id FROM items i JOIN item_replaces r ON r.item_id = i.id "
            f"WHERE r.fact_id IN ({marks(part)}) AND i.type = 'fact' AND {where} "
            "ORDER BY i.id DESC", [*col_args, *part, *args]).fetchall()
        for record, row in zip(records, _rows(records), strict=True):
            row["declared"] = (str(record[-1]),)
            out.setdefault(str(record[-1]), []).append(row)
    return out


def entity_names_of(store: Store, ids: Sequence[int]) -> dict[int, list[str]]:
    """Item id -> its entities as written, subjects first."""
    out: dict[int, list[str]] = {}
    for part in batched(ids):
        for item_id, name in store.conn.execute(
                f"SELECT item_id, name FROM item_entities WHERE item_id IN ({marks(part)}) "
                "AND role != 'page' ORDER BY item_id, role = 'mention', rowid", part):
            names = out.setdefault(int(item_id), [])
            if name not in names:
                names.append(str(name))
    return out


def entity_keys(store: Store) -> list[tuple[str, str, str | None]]:
    """(key, entity name, the entity an alias names or None) of every entity and alias."""
    rows: list[tuple[str, str, str | None]] = [
        (str(k), str(n), None)
        for k, n in store.conn.execute("SELECT key, name FROM entities ORDER BY name")]
    for path, front_matter in store.conn.execute(
            "SELECT path, front_matter FROM files WHERE class = 'entity' ORDER BY path"):
        page = page_entity(str(path))
        rows.extend((entity_key(alias), alias, page) for alias in aliases(str(front_matter))
                    if entity_key(alias) and entity_key(alias) != entity_key(page))
    return rows


def current_fact_paths(store: Store, fact_ids: Sequence[str]) -> dict[str, list[str]]:
    """Fact id -> the files that hold it now (a fact id may stand in several files)."""
    out: dict[str, list[str]] = {}
    for part in batched(list(dict.fromkeys(fact_ids))):
        for fact_id, path in store.conn.execute(
                f"SELECT DISTINCT fact_id, path FROM items WHERE type = 'fact' AND valid_to IS "
                f"NULL AND fact_id IN ({marks(part)}) ORDER BY path", part):
            out.setdefault(str(fact_id), []).append(str(path))
    return out


def current_facts_naming(store: Store, keys: Sequence[str]) -> list[Row]:
    """Every current fact with one of these entity keys as a subject or a mention, in file
    order."""
    if not keys:
        return []
    return _rows(store.conn.execute(
        f"SELECT {_COLUMNS}, 0 FROM items i WHERE i.type = 'fact' AND i.valid_to IS NULL AND "
        "i.id IN (SELECT item_id FROM item_entities WHERE role IN ('subject', 'mention') AND "
        f"entity IN ({marks(keys)})) ORDER BY i.path, i.start_line", list(keys)).fetchall())


Notes = tuple[tuple[int, "int | None", str], ...]  # (line, importance, trigger phrases)


def annotations_of(store: Store, ids: Sequence[int]) -> dict[int, Notes]:
    """Item id -> its annotated lines (``<!-- importance -->``, ``<!-- trigger -->``); empty
    at once when no item of the index has any."""
    out: dict[int, list[tuple[int, int | None, str]]] = {}
    if not ids or store.conn.execute("SELECT 1 FROM item_annotations LIMIT 1").fetchone() is None:
        return {}
    for part in batched(list(ids)):
        for item_id, line, importance, triggers in store.conn.execute(
                "SELECT item_id, line, importance, triggers FROM item_annotations WHERE item_id "
                f"IN ({marks(part)}) ORDER BY item_id, line", part):
            out.setdefault(int(item_id), []).append(
                (int(line), None if importance is None else int(importance), str(triggers)))
    return {k: tuple(v) for k, v in out.items()}


def lines_counting_back(store: Store, ids: Sequence[int], window: TimeWindow
                        ) -> dict[int, set[int]]:
    """Item id -> its lines that count back to days inside ``window`` (``item_days``: "last
    week" is no answer about one of its days)."""
    first, last = _day_bounds(window)
    out: dict[int, set[int]] = {}
    for part in batched(list(ids)):
        for item_id, line in store.conn.execute(
                f"SELECT item_id, line FROM item_days WHERE item_id IN ({marks(part)}) "
                "AND first_day >= ? AND last_day <= ?",
                [*part, first or "0000-00-00", last or "9999-99-99"]):
            out.setdefault(int(item_id), set()).add(int(line))
    return out


def trigger_lines(store: Store, classes: Sequence[str]) -> list[tuple[Row, int, Notes]]:
    """Current items of these file classes with trigger phrases: (row, annotated line, the
    item's annotations), in file order."""
    found = store.conn.execute(
        f"SELECT {_COLUMNS}, 0, a.line FROM items i JOIN item_annotations a ON a.item_id = i.id "
        f"WHERE i.valid_to IS NULL AND a.triggers != '' AND i.class IN ({marks(classes)}) "
        "ORDER BY i.path, a.line", list(classes)).fetchall()
    rows = _rows(found)
    notes = annotations_of(store, [int(r["id"]) for r in rows])
    return [(row, int(cast(int, record[-1])), notes.get(int(row["id"]), ()))
            for row, record in zip(rows, found, strict=True)]
