"""A canonical dump of a workspace's index, for comparing an incremental update with a rebuild
and for reading what the index holds without going through recall."""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gitmem.index.store import Store, open_store
from gitmem.workspace import open_workspace

ITEM_COLUMNS = (
    "vkey", "path", "blob", "class", "day", "type", "kind", "fact_id", "confidence", "start_line",
    "end_line", "heading", "content", "tokens", "event_start", "event_end", "recorded_at",
    "commit_id", "valid_from", "valid_to", "ended_at", "ended_commit",
)
OPINION_COLUMNS = (
    "vkey", "opinion_id", "statement", "entities", "confidence", "updated", "evidence", "path",
    "start_line", "end_line", "recorded_at", "commit_id", "valid_from", "valid_to", "ended_at",
)
_TABLES = (
    ("entity", "SELECT key, name, page FROM entities"),
    ("alias", "SELECT alias, entity FROM aliases"),
    ("warning", "SELECT path, line, code, message FROM warnings"),
    ("opinion", f"SELECT {', '.join(OPINION_COLUMNS)} FROM opinions"),
    ("commit", "SELECT seq, commit_id, committed_at FROM commits"),
)
_FTS_TERMS = ("gateway", "peter", "castle", "zed")
_HAN_TERMS = ("日", "滞", "城", "关")  # of the sample workspace's Japanese and Chinese
_META = ("last_indexed_commit", "worktree", "chunking", "schema_version", "rule_version")


@contextmanager
def read_index(repo: Path) -> Iterator[Store]:
    """The index of the workspace in ``repo``, opened read-only."""
    ws, _ = open_workspace(repo)
    store = open_store(ws.index_path, readonly=True)
    try:
        yield store
    finally:
        store.close()


def sorted_rows(rows: Iterable[Any]) -> list[Any]:
    """Sort rows that may hold NULLs next to values (repr order: stable and total)."""
    return sorted(rows, key=repr)


def dump(repo: Path) -> list[tuple[Any, ...]]:
    """A canonical dump of the whole index of ``repo``, without row ids (which differ between
    an incremental update and a rebuild): files, every item version with its history columns
    (valid_from/valid_to, recorded_at/ended_at, commit ids), item entities, the full-text rows,
    entities, aliases, opinions (with their history), warnings and the commit chain.
    """
    with read_index(repo) as store:
        conn = store.conn
        items = {
            int(r[0]): tuple(r[1:])
            for r in conn.execute(f"SELECT id, {', '.join(ITEM_COLUMNS)} FROM items")
        }
        valid_from = ITEM_COLUMNS.index("valid_from")

        def key(item_id: Any) -> tuple[Any, ...]:
            vkey, path, *_ = version = items[int(item_id)]
            return (vkey, path, version[valid_from])

        rows: list[tuple[Any, ...]] = []
        rows.extend(sorted_rows(("item", *v) for v in items.values()))
        files = conn.execute("SELECT path, blob, class, day, title, front_matter FROM files")
        rows.extend(sorted_rows(("file", *r) for r in files))
        entities = conn.execute("SELECT item_id, entity, name, role FROM item_entities")
        rows.extend(sorted_rows(("item_entity", *key(r[0]), *r[1:]) for r in entities))
        declared = conn.execute("SELECT item_id, ref, fact_id, how FROM item_replaces")
        rows.extend(sorted_rows(("item_replaces", *key(r[0]), *r[1:]) for r in declared))
        # the replacement graph: statements by their item and line, edges by both ends
        statements = {int(r[0]): (*key(r[1]), *r[2:]) for r in conn.execute(
            "SELECT id, item_id, line, end_line, kind, subjects, content FROM statements")}
        rows.extend(sorted_rows(("statement", *v) for v in statements.values()))
        keys = conn.execute("SELECT key, statement_id FROM statement_keys")
        rows.extend(sorted_rows(("statement_key", r[0], *statements[int(r[1])][:4])
                                for r in keys))
        edges = conn.execute("SELECT older, newer, seq, strength, basis, attribute, reason "
                             "FROM edges")
        rows.extend(sorted_rows(("edge", statements[int(r[0])][:4], statements[int(r[1])][:4],
                                 *r[2:]) for r in edges))
        for term in _FTS_TERMS:
            hits = conn.execute("SELECT rowid FROM items_fts WHERE items_fts MATCH ?", (term,))
            rows.append(("fts", term, tuple(sorted_rows(key(r[0]) for r in hits))))
        for term in _HAN_TERMS:
            hits = conn.execute("SELECT rowid FROM items_han WHERE items_han MATCH ?", (term,))
            rows.append(("han", term, tuple(sorted_rows(key(r[0]) for r in hits))))
        for table in ("items_fts", "items_han"):
            total = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            rows.append((f"{table}_rows", total[0] if total else None))
        for table, sql in _TABLES:
            rows.extend(sorted_rows((table, *r) for r in conn.execute(sql)))
        rows.extend(("meta", name, store.get_meta(name)) for name in _META)
        return rows


def records(rows: Iterable[tuple[Any, ...]], kind: str) -> list[dict[str, Any]]:
    """The ``item`` or ``opinion`` rows of a ``dump`` as {column: value}."""
    columns = {"item": ITEM_COLUMNS, "opinion": OPINION_COLUMNS}[kind]
    return [dict(zip(columns, row[1:], strict=True)) for row in rows if row[0] == kind]


# How far a stored vector may move with the texts it was embedded beside: the local model packs
# several texts into one llama.cpp decode (issue 41), and flash attention's f16 keys and values
# move a text's vector in the fourth decimal with its neighbours. A vector of another text
# differs by tenths.
VECTOR_TOL = 1e-3


def same_vectors(got: dict[tuple[Any, ...], bytes], want: dict[tuple[Any, ...], bytes]) -> bool:
    """The same items with the same fingerprint, each vector within ``VECTOR_TOL``."""
    if got.keys() != want.keys() or got.get(("meta",)) != want.get(("meta",)):
        return False
    for key, blob in got.items():
        if key == ("meta",):
            continue
        a, b = struct.unpack(f"<{len(blob) // 4}f", blob), want[key]
        other = struct.unpack(f"<{len(b) // 4}f", b)
        if len(a) != len(other) or any(abs(x - y) > VECTOR_TOL for x, y in zip(a, other,
                                                                                  strict=True)):
            return False
    return True


def vectors(repo: Path) -> dict[tuple[Any, ...], bytes]:
    """The stored vectors of ``repo``'s index keyed by (version key, path, valid_from, passage),
    plus the embedding fingerprint under the key ``("meta",)`` (row ids differ between runs)."""
    with read_index(repo) as store:
        rows = store.conn.execute(
            "SELECT i.vkey, i.path, i.valid_from, v.part, v.vector FROM vectors v "
            "JOIN items i ON i.id = v.item_id")
        out: dict[tuple[Any, ...], bytes] = {(k, p, f, n): bytes(v) for k, p, f, n, v in rows}
        out[("meta",)] = (store.get_meta("embed_fingerprint") or "").encode()
        return out
