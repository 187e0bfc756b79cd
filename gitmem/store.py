"""The SQLite index (SPEC §7): schema, numbered migrations, meta record, writes.

The binding is apsw: it bundles a current SQLite with FTS5 (including contentless-delete tables)
and can load the sqlite-vec extension on every platform, which the standard library's sqlite3
cannot do on many Python builds (this machine's included). pysqlite3-binary would work on Linux
only. The index is derived data: anything unreadable is rebuilt, never repaired.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw

from gitmem.model import ParsedFile, Warn
from gitmem.retain import entity_key, find_entities
from gitmem.textfold import fold

SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 15000

# Errors that mean "this file is not a usable index": rebuild it.
UNUSABLE = (apsw.NotADBError, apsw.CorruptError, apsw.CantOpenError)

DDL_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    path TEXT PRIMARY KEY,
    blob TEXT NOT NULL,
    class TEXT NOT NULL,
    day TEXT,
    title TEXT NOT NULL DEFAULT '',
    front_matter TEXT NOT NULL DEFAULT '{}',
    commit_id TEXT
);
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    blob TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('fact', 'chunk')),
    kind TEXT NOT NULL,
    fact_id TEXT,
    confidence REAL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    heading TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL,
    tokens INTEGER NOT NULL DEFAULT 0,
    event_start TEXT,
    event_end TEXT,
    recorded_at TEXT,
    commit_id TEXT,
    ended_at TEXT,
    ended_commit TEXT
);
CREATE INDEX items_path ON items (path);
CREATE INDEX items_fact ON items (fact_id);
CREATE TABLE item_entities (
    item_id INTEGER NOT NULL,
    entity TEXT NOT NULL,
    name TEXT NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('subject', 'mention', 'page')),
    PRIMARY KEY (item_id, entity, role)
);
CREATE INDEX item_entities_entity ON item_entities (entity);
CREATE TABLE entities (key TEXT PRIMARY KEY, name TEXT NOT NULL, page TEXT);
CREATE TABLE aliases (alias TEXT PRIMARY KEY, entity TEXT NOT NULL);
CREATE TABLE warnings (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX warnings_path ON warnings (path);
CREATE VIRTUAL TABLE items_fts USING fts5 (
    body, path, content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 0'
);
"""


def m001_initial(conn: apsw.Connection) -> None:
    conn.execute(DDL_V1)


# Numbered migrations: each runs in one transaction together with the row that records it.
MIGRATIONS: Sequence[tuple[int, str, Callable[[apsw.Connection], None]]] = (
    (1, "m001_initial", m001_initial),
)


class NewerIndexError(Exception):
    """The index was written by a newer gitmem; it is rebuilt rather than misread."""


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    """One connection to an index file."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        flags = (
            apsw.SQLITE_OPEN_READONLY
            if readonly
            else (apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE)
        )
        self.conn = apsw.Connection(str(path), flags=flags)
        self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        self.vec_error: str | None = self._load_vec()
        if not readonly:
            self.conn.execute("PRAGMA journal_mode = DELETE; PRAGMA synchronous = NORMAL")

    def _load_vec(self) -> str | None:
        try:
            import sqlite_vec

            self.conn.enable_load_extension(True)
            self.conn.load_extension(sqlite_vec.loadable_path())
            self.conn.enable_load_extension(False)
        except (ImportError, apsw.Error) as exc:
            return str(exc)
        return None

    def close(self) -> None:
        self.conn.close()

    # -- schema -----------------------------------------------------------------------------

    def schema_version(self) -> int:
        if not self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'migrations'"
        ).fetchall():
            return 0
        row = self.conn.execute("SELECT max(version) FROM migrations").fetchone()
        return int(row[0] or 0) if row else 0

    def migrate(self) -> list[str]:
        """Apply missing migrations; returns the names applied."""
        with self.conn:
            self.conn.execute(
                "CREATE TABLE IF NOT EXISTS migrations (version INTEGER PRIMARY KEY, "
                "name TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise NewerIndexError(f"index schema {current} is newer than {SCHEMA_VERSION}")
        applied: list[str] = []
        for version, name, fn in MIGRATIONS:
            if version <= current:
                continue
            with self.conn:
                fn(self.conn)
                self.conn.execute(
                    "INSERT INTO migrations VALUES (?, ?, ?)", (version, name, now_iso())
                )
                self.set_meta("schema_version", str(version))
            applied.append(name)
        return applied

    # -- meta -------------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def meta(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.conn.execute("SELECT key, value FROM meta")}

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.conn:
            yield

    # -- files ------------------------------------------------------------------------------

    def file_blobs(self) -> dict[str, str]:
        return {str(p): str(b) for p, b in self.conn.execute("SELECT path, blob FROM files")}

    def remove_paths(self, paths: Iterable[str]) -> None:
        for path in paths:
            ids = [r[0] for r in self.conn.execute("SELECT id FROM items WHERE path = ?", (path,))]
            self.conn.executemany("DELETE FROM items_fts WHERE rowid = ?", [(i,) for i in ids])
            self.conn.executemany(
                "DELETE FROM item_entities WHERE item_id = ?", [(i,) for i in ids]
            )
            self.conn.execute("DELETE FROM items WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM warnings WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM files WHERE path = ?", (path,))

    def add_file(self, parsed: ParsedFile, commit_id: str | None, recorded_at: str | None) -> None:
        mf = parsed.file
        self.conn.execute(
            "INSERT INTO files (path, blob, class, day, title, front_matter, commit_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                mf.path,
                mf.blob,
                mf.file_class,
                mf.day.isoformat() if mf.day else None,
                parsed.title,
                json.dumps(parsed.front_matter, default=str, ensure_ascii=False),
                commit_id,
            ),
        )
        day = mf.day.isoformat() if mf.day else None
        path_text = fold(mf.path.replace("/", " ").replace(".", " "))
        page_entity = _page_entity(mf.path) if mf.file_class == "entity" else None
        for fact in parsed.facts:
            item_id = self._insert_item(
                mf.path,
                mf.blob,
                "fact",
                fact.kind,
                fact.fact_id,
                fact.confidence,
                fact.start_line,
                fact.end_line,
                "",
                fact.text,
                fact.event_start.isoformat() if fact.event_start else None,
                fact.event_end.isoformat() if fact.event_end else None,
                recorded_at,
                commit_id,
            )
            names = " ".join(fact.subjects)
            self.conn.execute(
                "INSERT INTO items_fts (rowid, body, path) VALUES (?, ?, ?)",
                (item_id, fold(f"{names} {fact.text}"), path_text),
            )
            links = [(s, "subject") for s in fact.subjects] + [
                (m, "mention") for m in fact.mentions
            ]
            self._link(item_id, links)
        for chunk in parsed.chunks:
            item_id = self._insert_item(
                mf.path,
                mf.blob,
                "chunk",
                "note",
                None,
                None,
                chunk.start_line,
                chunk.end_line,
                chunk.heading,
                chunk.text,
                day,
                day,
                recorded_at,
                commit_id,
                chunk.tokens,
            )
            body = chunk.text if not chunk.heading else f"{chunk.heading}\n{chunk.text}"
            self.conn.execute(
                "INSERT INTO items_fts (rowid, body, path) VALUES (?, ?, ?)",
                (item_id, fold(body), path_text),
            )
            links = [(e, "mention") for e in find_entities(chunk.text)]
            if page_entity:
                links.append((page_entity, "page"))
            self._link(item_id, links)
        self.conn.executemany(
            "INSERT INTO warnings (path, line, code, message) VALUES (?, ?, ?, ?)",
            [(w.path, w.line, w.code, w.message) for w in parsed.warnings],
        )

    def _insert_item(
        self,
        path: str,
        blob: str,
        type_: str,
        kind: str,
        fact_id: str | None,
        confidence: float | None,
        start: int,
        end: int,
        heading: str,
        content: str,
        ev_start: str | None,
        ev_end: str | None,
        recorded_at: str | None,
        commit_id: str | None,
        tokens: int = 0,
    ) -> int:
        self.conn.execute(
            "INSERT INTO items (path, blob, type, kind, fact_id, confidence, start_line, "
            "end_line, heading, content, tokens, event_start, event_end, recorded_at, commit_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                path,
                blob,
                type_,
                kind,
                fact_id,
                confidence,
                start,
                end,
                heading,
                content,
                tokens,
                ev_start,
                ev_end,
                recorded_at,
                commit_id,
            ),
        )
        return int(self.conn.last_insert_rowid())

    def _link(self, item_id: int, links: Sequence[tuple[str, str]]) -> None:
        self.conn.executemany(
            "INSERT OR IGNORE INTO item_entities (item_id, entity, name, role) VALUES (?, ?, ?, ?)",
            [(item_id, entity_key(name), name, role) for name, role in links if entity_key(name)],
        )

    def replace_global_warnings(self, warns: Sequence[Warn]) -> None:
        """Warnings not tied to an indexed file (symlinks, config), replaced on every run."""
        indexed = "SELECT path FROM files"
        self.conn.execute(f"DELETE FROM warnings WHERE path NOT IN ({indexed})")
        self.conn.executemany(
            "INSERT INTO warnings (path, line, code, message) VALUES (?, ?, ?, ?)",
            [(w.path, w.line, w.code, w.message) for w in warns],
        )

    def refresh_entities(self) -> None:
        """Recompute entities and aliases from entity pages and entry links (cheap, derived)."""
        self.conn.execute("DELETE FROM entities")
        self.conn.execute("DELETE FROM aliases")
        pages = self.conn.execute(
            "SELECT path, front_matter FROM files WHERE class = 'entity'"
        ).fetchall()
        for path, fm in pages:
            slug = _page_entity(str(path))
            key = entity_key(slug)
            self.conn.execute("INSERT OR REPLACE INTO entities VALUES (?, ?, ?)", (key, slug, path))
            for alias in _aliases(str(fm)):
                akey = entity_key(alias)
                if akey and akey != key:
                    self.conn.execute("INSERT OR IGNORE INTO aliases VALUES (?, ?)", (akey, key))
        self.conn.execute(
            "INSERT OR IGNORE INTO entities (key, name, page) "
            "SELECT entity, name, NULL FROM ("
            "  SELECT entity, name, count(*) AS n FROM item_entities "
            "  WHERE role != 'page' GROUP BY entity, name ORDER BY n DESC, name)"
            " GROUP BY entity"
        )


def _page_entity(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def _aliases(front_matter_json: str) -> list[str]:
    try:
        data = json.loads(front_matter_json)
    except ValueError:
        return []
    raw = data.get("aliases") if isinstance(data, dict) else None
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        return [str(a) for a in raw if isinstance(a, (str, int))]
    return []


def open_store(path: Path, *, readonly: bool = False) -> Store:
    """Open an index and bring its schema up to date. Raises UNUSABLE errors or NewerIndexError."""
    store = Store(path, readonly=readonly)
    try:
        if not readonly:
            store.migrate()
        elif store.schema_version() != SCHEMA_VERSION:
            raise NewerIndexError("index schema differs; it must be re-indexed")
        store.conn.execute("SELECT count(*) FROM meta").fetchall()
    except BaseException:
        store.close()
        raise
    return store


def remove_index_files(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with suppress(FileNotFoundError):
            os.unlink(str(path) + suffix)


def row_dicts(cursor: Any) -> list[dict[str, Any]]:
    names = [d[0] for d in cursor.getdescription()]
    return [dict(zip(names, row, strict=True)) for row in cursor]
