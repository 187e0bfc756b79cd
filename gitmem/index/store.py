"""The SQLite index (docs/architecture.md): the connection, migrations applied, meta record, writes.

The binding is apsw: it bundles a current SQLite with FTS5 (including contentless-delete tables)
and can load the sqlite-vec extension on every platform, which the standard library's sqlite3
cannot do on many Python builds (this machine's included). pysqlite3-binary would work on Linux
only. The index is derived data: anything unreadable is rebuilt, never repaired.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence, Sized
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import apsw

from gitmem.domain import MemoryFile, Opinion, ParsedFile, Warn
from gitmem.index.items import (
    MAX_PASSAGES,
    VECTOR_LAYOUT,
    ItemVersion,
    embedding_passages,
    page_entity,
    path_search_text,
)
from gitmem.index.schema import (
    MIGRATIONS,
    NEW_VECTOR_EPOCH,
    REBUILD_BELOW,
    SCHEMA_VERSION,
    TABLES,
    RebuildNeeded,
)
from gitmem.parse.pages import page_aliases
from gitmem.parse.retain import entity_key
from gitmem.userdirs import private_file
from gitmem.workspace import OPINIONS_PATH

if TYPE_CHECKING:
    from gitmem.parse.statements import Drafted

T = TypeVar("T")

WORKTREE = "worktree"  # the commit id recorded for uncommitted edits (index --worktree)
BUSY_TIMEOUT_MS = 15000



class DamagedIndex(Exception):
    """A SQLite file that is not, or no longer, a whole gitmem index (foreign tables, tables
    missing): rebuilt like a corrupt one."""


# Errors that mean "this file is not a usable index": rebuild it.
UNUSABLE = (apsw.NotADBError, apsw.CorruptError, apsw.CantOpenError, DamagedIndex)
BUSY = apsw.BusyError
BATCH = 500  # ids per "IN (...)" statement (SQLite's default limit of variables is 32766)


def batched(ids: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    """``ids`` in slices of at most ``size`` (one statement each)."""
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


def marks(values: Sized) -> str:
    """``?,?,?`` for an ``IN (...)`` list of ``values``."""
    return ",".join("?" * len(values))


class NewerIndexError(Exception):
    """The index's schema is not this version's: written by a newer gitmem, or by one too old
    to migrate in place. It is rebuilt rather than misread."""


def vec_extension_path() -> str:
    """Where the sqlite-vec package keeps its loadable extension.

    Found without importing ``sqlite_vec``, whose ``__init__`` imports numpy (~100 ms of every
    command's start-up otherwise)."""
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        raise OSError("the sqlite-vec package is not installed")
    return os.path.join(next(iter(spec.submodule_search_locations)), "vec0")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# A reader maps up to this much of the index file (ten years with vectors: 244 MiB). Mapped
# pages are the page cache's, shared and reclaimable, but they count in the process's RSS: the
# bound keeps a warm process over a million vectors (a 1.5 GB file) from showing all of them.
READ_MMAP_BYTES = 256 << 20


class Store:
    """One connection to an index file."""

    def __init__(self, path: Path, *, readonly: bool = False) -> None:
        self.path = path
        # Readers open read-write (never creating) but do not write: a read-only connection
        # cannot roll back the hot journal a killed writer leaves, and would fail until then.
        flags = apsw.SQLITE_OPEN_READWRITE | (0 if readonly else apsw.SQLITE_OPEN_CREATE)
        if not readonly:
            private_file(path)  # user-only; SQLite gives its journal the same mode
        self.conn = apsw.Connection(str(path), flags=flags)
        self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        self.vec_error: str | None = self._load_vec()
        self._next_id: int | None = None
        # Entity bookkeeping for refresh_entities(): keys whose versions changed, or "all",
        # and the net change of each spelling's mentions among the current versions.
        self._entities_touched: set[str] = set()
        self._entities_all = False
        self._spellings: Counter[tuple[str, str]] = Counter()
        if readonly:
            # Pages read through a memory map, not one pread each: a hybrid recall reads the
            # vectors of ~400 items (~1.5 kB each, past a page: two pages a row) scattered
            # over the file, 12.6 -> 3.4 ms. The file is only ever replaced (os.replace) or
            # changed by SQLite itself, which re-maps as it grows or shrinks.
            self.conn.execute(f"PRAGMA mmap_size = {READ_MMAP_BYTES}")
        else:
            # A large cache keeps big transactions from spilling to the file early, which would
            # take the exclusive lock (and make readers wait) long before the commit.
            self.conn.execute("PRAGMA journal_mode = DELETE; PRAGMA synchronous = NORMAL; "
                              "PRAGMA cache_size = -65536")

    def _load_vec(self) -> str | None:
        try:
            self.conn.enable_load_extension(True)
            self.conn.load_extension(vec_extension_path())
            self.conn.enable_load_extension(False)
        except (OSError, apsw.Error) as exc:
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
        if 0 < current < REBUILD_BELOW:
            raise NewerIndexError(f"index schema {current} predates {SCHEMA_VERSION} (word "
                                  "stems in the full-text index)")
        applied: list[str] = []
        for version, name, fn in MIGRATIONS:
            if version <= current:
                continue
            try:
                with self.conn:
                    fn(self.conn)
                    self.conn.execute(
                        "INSERT INTO migrations VALUES (?, ?, ?)", (version, name, now_iso())
                    )
                    self.set_meta("schema_version", str(version))
            except apsw.SQLError as exc:  # tables of something else in the way
                raise DamagedIndex(f"not a gitmem index: {exc}") from exc
            except RebuildNeeded as exc:
                raise NewerIndexError(f"index schema {current}: {exc}") from exc
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

    def file_count(self) -> int:
        return int(next(iter(self.conn.execute("SELECT count(*) FROM files")))[0])

    # -- the commit chain -------------------------------------------------------------------

    def seq_of(self, commit_id: str) -> int | None:
        row = self.conn.execute("SELECT seq FROM commits WHERE commit_id = ?",
                                (commit_id,)).fetchone()
        return None if row is None else int(row[0])

    def last_commit(self, *, committed: bool = False) -> tuple[int, str] | None:
        """(seq, commit id) of the newest replayed commit; ``committed``: not the uncommitted
        layer."""
        where = f"WHERE commit_id != '{WORKTREE}' " if committed else ""
        row = self.conn.execute(
            f"SELECT seq, commit_id FROM commits {where}ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        return None if row is None else (int(row[0]), str(row[1]))

    def add_commit(self, seq: int, commit_id: str, committed_at: str) -> None:
        self.conn.execute("INSERT INTO commits VALUES (?, ?, ?)", (seq, commit_id, committed_at))

    def seq_at(self, instant: str) -> int | None:
        """The newest replayed commit whose time is at or before ``instant`` (ISO, UTC)."""
        row = self.conn.execute(
            "SELECT max(seq) FROM commits WHERE committed_at <= ? AND commit_id != 'worktree'",
            (instant,),
        ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def rollback_to(self, seq: int) -> None:
        """Undo every commit after ``seq``: exact, because versions are only opened and closed."""
        ids = [
            (r[0],) for r in self.conn.execute("SELECT id FROM items WHERE valid_from > ?", (seq,))
        ]
        reopened = [int(r[0]) for r in self.conn.execute(
            "SELECT id FROM items WHERE valid_to > ?", (seq,))]
        # Current versions removed lose their mentions; closed ones that reopen regain theirs.
        self._touch([i for (i,) in ids], "i.valid_to IS NULL", (), -1)
        self._touch(reopened, "i.valid_from <= ?", (seq,), +1)
        self.conn.executemany("DELETE FROM items_fts WHERE rowid = ?", ids)
        self.conn.executemany("DELETE FROM items_han WHERE rowid = ?", ids)
        self.conn.executemany("DELETE FROM item_entities WHERE item_id = ?", ids)
        self.conn.executemany("DELETE FROM item_replaces WHERE item_id = ?", ids)
        self.conn.executemany("DELETE FROM item_annotations WHERE item_id = ?", ids)
        self.conn.executemany("DELETE FROM item_days WHERE item_id = ?", ids)
        self._remove_statements([i for (i,) in ids], seq)
        self.drop_vectors([i for (i,) in ids])
        # Only the versions closed after seq reopen (ended_commit is set with valid_to alone):
        # an UPDATE of every open version cost ~40 ms a rollback on ten years of notes.
        for table, ended in (("items", ", ended_commit = NULL"), ("opinions", "")):
            self.conn.execute(f"DELETE FROM {table} WHERE valid_from > ?", (seq,))
            self.conn.execute(
                f"UPDATE {table} SET valid_to = NULL, ended_at = NULL{ended} WHERE valid_to > ?",
                (seq,))
        self.conn.execute("DELETE FROM commits WHERE seq > ?", (seq,))
        self._next_id = None  # entity pages that change with it are recounted by put_file

    # -- versions ---------------------------------------------------------------------------

    def open_versions(self, path: str) -> dict[str, tuple[int, str | None, str | None]]:
        """vkey -> (item id, fact id, recorded_at) of the current versions of a file."""
        return {
            str(k): (int(i), f, r)
            for i, k, f, r in self.conn.execute(
                "SELECT id, vkey, fact_id, recorded_at FROM items "
                "WHERE path = ? AND valid_to IS NULL",
                (path,),
            )
        }

    def close_versions(self, ids: Sequence[int], seq: int, commit_id: str, at: str, *,
                       keep_vectors: bool = False) -> None:
        if not keep_vectors:
            self.drop_vectors(ids)
        self._touch(ids, "i.valid_to IS NULL", (), -1)
        self.conn.executemany(
            "UPDATE items SET valid_to = ?, ended_at = ?, ended_commit = ? WHERE id = ?",
            [(seq, at, commit_id, i) for i in ids],
        )

    def insert_versions(
        self, mf: MemoryFile, versions: Sequence[tuple[ItemVersion, str]], *, seq: int,
        commit_id: str,
    ) -> None:
        """Insert item versions (each with its record time) of one file, in three batches."""
        if not versions:
            return
        if self._next_id is None:
            row = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM items").fetchone()
            self._next_id = int(row[0]) if row else 1
        first = self._next_id
        self._next_id += len(versions)
        day = mf.day.isoformat() if mf.day else None
        path_text = path_search_text(mf.path)
        items: list[tuple[Any, ...]] = []
        fts: list[tuple[int, str, str, str]] = []
        han: list[tuple[int, str]] = []
        links: list[tuple[int, str, str, str]] = []
        declared: list[tuple[int, str, str]] = []
        statements: list[tuple[int, Drafted]] = []
        notes: list[tuple[int, int, int | None, str]] = []
        days: list[tuple[int, int, str, str]] = []
        for n, (v, recorded_at) in enumerate(versions):
            item_id = first + n
            items.append((item_id, v.vkey, mf.path, mf.blob, mf.file_class, day, v.type, v.kind,
                          v.fact_id, v.confidence, v.start_line, v.end_line, v.heading,
                          v.content, v.tokens, v.event_start, v.event_end, recorded_at,
                          commit_id, seq))
            fts.append((item_id, v.search_text, path_text, v.stem_text))
            if v.han_text:
                han.append((item_id, v.han_text))
            links.extend((item_id, entity_key(name), name, role) for name, role in v.links
                         if entity_key(name))
            declared.extend((item_id, ref, "replaces") for ref in v.replaces)
            declared.extend((item_id, ref, "keeps") for ref in v.keeps)
            statements.extend((item_id, d) for d in v.statements)
            notes.extend((item_id, *note) for note in v.annotations)
            days.extend((item_id, *found) for found in v.days)
        self.conn.executemany(
            "INSERT INTO items (id, vkey, path, blob, class, day, type, kind, fact_id, "
            "confidence, start_line, end_line, heading, content, tokens, event_start, "
            "event_end, recorded_at, commit_id, valid_from) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", items)
        self.conn.executemany(
            "INSERT INTO items_fts (rowid, body, path, stems) VALUES (?, ?, ?, ?)", fts)
        self.conn.executemany("INSERT INTO items_han (rowid, chars) VALUES (?, ?)", han)
        self.conn.executemany(
            "INSERT OR IGNORE INTO item_entities (item_id, entity, name, role) "
            "VALUES (?, ?, ?, ?)", links)
        # the rows INSERT OR IGNORE keeps (the first name per item, entity and role): new
        # versions are current
        kept: dict[tuple[int, str, str], str] = {}
        for item_id, key, name, role in links:
            kept.setdefault((item_id, key, role), name)
        self._entities_touched.update(key for _, key, _ in kept)
        self._spellings.update((key, name) for (_, key, role), name in kept.items()
                               if role != "page")
        if declared:
            self.conn.executemany(
                "INSERT OR IGNORE INTO item_replaces (item_id, ref, how) VALUES (?, ?, ?)",
                declared)
        if notes:
            self.conn.executemany(
                "INSERT OR IGNORE INTO item_annotations (item_id, line, importance, triggers) "
                "VALUES (?, ?, ?, ?)", notes)
        if days:
            self.conn.executemany(
                "INSERT INTO item_days (item_id, line, first_day, last_day) VALUES (?, ?, ?, ?)",
                days)
        self._insert_statements(statements)

    def _insert_statements(self, statements: Sequence[tuple[int, Drafted]]) -> None:
        """The statements of new item versions, and their subject keys (the graph's nodes;
        ``index.graph`` links them)."""
        if not statements:
            return
        from gitmem.parse.statements import pack, read, remember  # indexing only

        readings = []
        for _, d in statements:
            if d.reading is not None:
                remember(d.text, d.subjects, d.kind, d.reading)
            readings.append(pack(d.reading or read(d.text, d.subjects, d.kind)))
        row = self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM statements").fetchone()
        first = int(row[0]) if row else 1
        self.conn.executemany(
            "INSERT INTO statements (id, item_id, path, line, end_line, kind, subjects, content, "
            "reading) SELECT ?, ?, path, ?, ?, ?, ?, ?, ? FROM items WHERE id = ?",
            [(first + n, item_id, d.line, d.end_line, d.kind, "\t".join(d.subjects), d.text,
              packed, item_id)
             for n, ((item_id, d), packed) in enumerate(zip(statements, readings, strict=True))])
        self.conn.executemany(
            "INSERT OR IGNORE INTO statement_keys (key, statement_id) VALUES (?, ?)",
            [(key, first + n) for n, (_, d) in enumerate(statements) for key in d.keys])

    def _remove_statements(self, item_ids: Sequence[int], seq: int) -> None:
        """A rollback to ``seq``: the statements of removed versions and every edge found
        after it go."""
        gone = [(int(r[0]),) for part in batched(item_ids) for r in self.conn.execute(
            f"SELECT id FROM statements WHERE item_id IN ({marks(part)})", part)]
        self.conn.executemany("DELETE FROM statement_keys WHERE statement_id = ?", gone)
        self.conn.executemany("DELETE FROM statements WHERE id = ?", gone)
        self.conn.execute("DELETE FROM edges WHERE seq > ?", (seq,))

    def resolve_replaces(self, seq: int, paths: Sequence[str]) -> None:
        """Give the declared replacements first recorded at ``seq`` the fact id each ref names,
        read in the state of that commit (a version of a fact recorded earlier keeps what its
        first version resolved: later line moves do not change it); then warn, in ``paths``
        (the files this commit re-parsed, whose warnings were replaced), of each current ref
        that names no earlier fact."""
        self._resolve_replaces(seq)
        for part in batched(list(paths)):
            unresolved = self.conn.execute(
                "SELECT i.path, i.start_line, r.ref, r.how FROM item_replaces r JOIN items i "
                f"ON i.id = r.item_id WHERE i.path IN ({marks(part)}) AND i.valid_to IS NULL "
                "AND r.fact_id IS NULL", part).fetchall()
            self.conn.executemany(
                "INSERT INTO warnings (path, line, code, message) VALUES (?, ?, ?, ?)",
                [(path, line, f"{how}-unknown", f"'{how}: {ref}' names no earlier fact "
                  "(a fact id or the citation of a fact recorded before this entry); the "
                  "entry is still a fact") for path, line, ref, how in unresolved])

    def _resolve_replaces(self, seq: int) -> None:
        pending = self.conn.execute(
            "SELECT r.item_id, r.ref, i.fact_id, i.path, i.start_line FROM item_replaces r "
            "JOIN items i ON i.id = r.item_id WHERE i.valid_from = ? AND r.fact_id IS NULL",
            (seq,)).fetchall()
        for item_id, ref, own, _path, _line in pending:
            earlier = self.conn.execute(
                "SELECT r.fact_id FROM item_replaces r JOIN items i ON i.id = r.item_id "
                "WHERE i.fact_id = ? AND r.ref = ? AND i.valid_from < ? AND r.fact_id IS NOT NULL "
                "ORDER BY i.valid_from LIMIT 1", (own, ref, seq)).fetchone()
            named = earlier[0] if earlier else self._fact_named(str(ref), seq, str(own))
            if named is not None:
                self.conn.execute(
                    "UPDATE item_replaces SET fact_id = ? WHERE item_id = ? AND ref = ?",
                    (named, item_id, ref))

    def _fact_named(self, ref: str, seq: int, own: str) -> str | None:
        """The fact id a ref names at ``seq``: a fact id held then, or the fact whose lines
        hold the cited line then (never the replacing fact itself)."""
        held = "i.valid_from <= ? AND (i.valid_to IS NULL OR i.valid_to > ?)"
        if ref.startswith("f-"):
            row = self.conn.execute(
                f"SELECT i.fact_id FROM items i WHERE i.fact_id = ? AND i.fact_id != ? AND {held} "
                "LIMIT 1", (ref, own, seq, seq)).fetchone()
            return None if row is None else str(row[0])
        path, _, lines = ref.partition("#L")
        line = int(lines.split("-", 1)[0])
        row = self.conn.execute(
            f"SELECT i.fact_id FROM items i WHERE i.type = 'fact' AND i.path = ? AND "
            f"i.start_line <= ? AND i.end_line >= ? AND i.fact_id != ? AND {held} "
            "ORDER BY i.start_line DESC LIMIT 1", (path, line, line, own, seq, seq)).fetchone()
        return None if row is None else str(row[0])

    # -- vectors ----------------------------------------------------------------------------

    def has_vec_table(self) -> bool:
        return bool(self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'vec_bits'").fetchall())

    def drop_vectors(self, ids: Sequence[int]) -> None:
        """Vectors belong to current versions only; a closed version loses its vectors (the
        embedding cache keeps them, so reopening it costs no provider call)."""
        if not ids:
            return
        # Their sign bits by row id, one at a time: vec0 answers a range of row ids by reading
        # every row (~20 ms an item over 45,000 vectors), and the passages are known.
        parts = [int(i) * MAX_PASSAGES + int(n) for part in batched(ids)
                 for i, n in self.conn.execute(
                     f"SELECT item_id, part FROM vectors WHERE item_id IN ({marks(part)})", part)]
        self.conn.executemany("DELETE FROM vectors WHERE item_id = ?", [(i,) for i in ids])
        if parts and self.vec_error is None and self.has_vec_table():
            self.conn.executemany("DELETE FROM vec_bits WHERE rowid = ?", [(r,) for r in parts])

    def reset_vectors(self, fingerprint: str, dims: int) -> None:
        """Start over for a new embedding model (or dimension): a new vector epoch, whose log
        starts empty (a reader of the sign bits loads them again)."""
        self.conn.execute("DELETE FROM vectors")
        self.conn.execute("DELETE FROM vector_changes")
        self.conn.execute(NEW_VECTOR_EPOCH)
        if self.vec_error is None:
            self.conn.execute("DROP TABLE IF EXISTS vec_bits")
            self.conn.execute(
                f"CREATE VIRTUAL TABLE vec_bits USING vec0(embedding bit[{int(dims)}])")
        self.set_meta("embed_fingerprint", fingerprint)
        self.set_meta("embed_dims", str(int(dims)))
        self.set_meta("embed_layout", VECTOR_LAYOUT)

    def put_vectors(self, rows: Sequence[tuple[int, str, int, bytes]]) -> int:
        """Store (item id, version key, passage number, vector); returns how many items got
        vectors. A vector is stored only if its item is still current and still the same
        version: ids of rolled-back rows are reused, so the id alone could point at new text."""
        wanted = {(i, k) for i, k, _, _ in rows}
        live_ids = {i for i, k in wanted if self.conn.execute(
            "SELECT 1 FROM items WHERE id = ? AND vkey = ? AND valid_to IS NULL",
            (i, k)).fetchone()}
        live = [(i, n, v) for i, _, n, v in rows if i in live_ids and n < MAX_PASSAGES]
        self.drop_vectors(sorted(live_ids))
        self.conn.executemany("INSERT INTO vectors VALUES (?, ?, ?)", live)
        if self.vec_error is None and self.has_vec_table():
            bits = [(i * MAX_PASSAGES + n, v) for i, n, v in live]
            # sign bits a process without the extension left behind for a reused id
            self.conn.executemany("DELETE FROM vec_bits WHERE rowid = ?",
                                  [(r,) for r, _ in bits])
            self.conn.executemany("INSERT INTO vec_bits (rowid, embedding) "
                                  "VALUES (?, vec_quantize_binary(?))", bits)
        return len(live_ids)

    def vector_counts(self) -> tuple[int, int]:
        """(current items with vectors, current items). Vectors belong to current items, and to
        versions hidden by the uncommitted layer (not counted)."""
        have = self.conn.execute(
            "SELECT count(*) FROM items i WHERE i.valid_to IS NULL AND "
            "i.id IN (SELECT item_id FROM vectors)").fetchone()
        total = self.conn.execute("SELECT count(*) FROM items WHERE valid_to IS NULL").fetchone()
        return (int(have[0]) if have else 0, int(total[0]) if total else 0)

    def committed_backlog(self) -> tuple[int, int]:
        """(committed current items without vectors, current items): what a hybrid recall
        warns about (uncommitted edits wait for the next index, unremarked). The item ids with
        vectors come from the small ``vectors_item`` index, never from the vectors' pages."""
        pending = self._count(
            "SELECT count(*) FROM items i WHERE i.valid_to IS NULL AND i.commit_id != "
            f"'{WORKTREE}' AND i.id NOT IN (SELECT item_id FROM vectors)")
        return pending, self._count("SELECT count(*) FROM items WHERE valid_to IS NULL")

    def pending_embeddings(self, limit: int,
                           path: str | None = None) -> list[tuple[int, str, list[str]]]:
        """(item id, version key, passages) of current items without vectors, oldest first
        (of one file when ``path`` is given: a few index lookups instead of a scan)."""
        in_path = "i.path = ? AND " if path is not None else ""
        rows = self.conn.execute(
            "SELECT i.id, i.vkey, i.type, i.content, (SELECT group_concat(e.name, ' ') "
            f"FROM item_entities e WHERE e.item_id = i.id AND e.role = 'subject') "
            f"FROM items i WHERE {in_path}i.valid_to IS NULL AND NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.item_id = i.id) ORDER BY i.id LIMIT ?",
            (*([path] if path is not None else []), limit)).fetchall()
        return [(cast(int, i), str(k),
                 embedding_passages(str(t), str(c), str(s or "")))
                for i, k, t, c, s in rows]

    def open_opinions(self) -> dict[str, int]:
        return {
            str(k): int(i)
            for i, k in self.conn.execute("SELECT id, vkey FROM opinions WHERE valid_to IS NULL")
        }

    def close_opinions(self, ids: Sequence[int], seq: int, at: str) -> None:
        self.conn.executemany(
            "UPDATE opinions SET valid_to = ?, ended_at = ? WHERE id = ?",
            [(seq, at, i) for i in ids],
        )

    def insert_opinion(self, op: Opinion, *, seq: int, commit_id: str, at: str) -> None:
        # folded entries first (oldest first), marked: the opinion's whole evidence, in order
        evidence = [*({**e.to_json(), "folded": True} for e in
                      (op.folded.entries() if op.folded else ())),
                    *(e.to_json() for e in op.evidence)]
        self.conn.execute(
            "INSERT INTO opinions (vkey, opinion_id, statement, entities, confidence, updated, "
            "evidence, path, start_line, end_line, recorded_at, commit_id, valid_from) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                op.vkey,
                op.opinion_id,
                op.statement,
                json.dumps(list(op.entities), ensure_ascii=False),
                op.confidence,
                op.updated,
                json.dumps(evidence),
                OPINIONS_PATH,
                op.start_line,
                op.end_line,
                at,
                commit_id,
                seq,
            ),
        )

    # -- status -----------------------------------------------------------------------------

    def _count(self, sql: str) -> int:
        row = self.conn.execute(sql).fetchone()
        return int(row[0]) if row else 0

    def counts(self) -> dict[str, int]:
        """Memory files, current facts and chunks, entities."""
        current = "SELECT count(*) FROM items WHERE valid_to IS NULL AND type = "
        return {
            "files": self._count("SELECT count(*) FROM files"),
            "facts": self._count(current + "'fact'"),
            "chunks": self._count(current + "'chunk'"),
            "entities": self._count("SELECT count(*) FROM entities"),
        }

    def warnings(self) -> list[Warn]:
        return [Warn(str(p), int(ln), str(c), str(m)) for p, ln, c, m in self.conn.execute(
            "SELECT path, line, code, message FROM warnings ORDER BY path, line")]

    def integrity(self) -> str:
        """``PRAGMA integrity_check``: 'ok', or SQLite's list of problems."""
        rows = self.conn.execute("PRAGMA integrity_check").fetchall()
        return "; ".join(str(r[0]) for r in rows)

    def vec_self_test(self) -> str:
        """Run a real vec0 function: proves the extension loads and answers."""
        if self.vec_error is not None:
            return f"failed: {self.vec_error} (vector search falls back to an exact scan)"
        try:
            self.conn.execute("SELECT vec_distance_cosine('[1, 0]', '[0, 1]')").fetchall()
        except apsw.Error as exc:
            return f"failed: {exc}"
        return "ok"

    def commit_at(self, seq: int) -> str | None:
        row = self.conn.execute("SELECT commit_id FROM commits WHERE seq = ?",
                                (seq,)).fetchone()
        return None if row is None else str(row[0])

    # -- the newest state's files and warnings ----------------------------------------------

    def remove_files(self, paths: Iterable[str]) -> None:
        for path in paths:
            if self.conn.execute("SELECT 1 FROM files WHERE path = ? AND class = 'entity'",
                                 (path,)).fetchone():
                self._entities_all = True  # a page (and its aliases) went or changed
            self.conn.execute("DELETE FROM warnings WHERE path = ?", (path,))
            self.conn.execute("DELETE FROM files WHERE path = ?", (path,))

    def put_file(self, parsed: ParsedFile) -> None:
        mf = parsed.file
        self.remove_files([mf.path])
        if mf.file_class == "entity":
            self._entities_all = True
        self.conn.execute(
            "INSERT INTO files (path, blob, class, day, title, front_matter) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (mf.path, mf.blob, mf.file_class, mf.day.isoformat() if mf.day else None,
             parsed.title, json.dumps(parsed.front_matter, default=str, ensure_ascii=False)))
        self.conn.executemany(
            "INSERT INTO warnings (path, line, code, message) VALUES (?, ?, ?, ?)",
            [(w.path, w.line, w.code, w.message) for w in parsed.warnings],
        )

    def replace_global_warnings(self, warns: Sequence[Warn]) -> None:
        """Warnings not tied to an indexed file (symlinks, config), replaced on every run."""
        indexed = "SELECT path FROM files"
        self.conn.execute(f"DELETE FROM warnings WHERE path NOT IN ({indexed})")
        self.conn.executemany(
            "INSERT INTO warnings (path, line, code, message) VALUES (?, ?, ?, ?)",
            [(w.path, w.line, w.code, w.message) for w in warns],
        )

    def clear_warnings(self, code: str) -> None:
        self.conn.execute("DELETE FROM warnings WHERE code = ?", (code,))

    def replace_warnings(self, code: str, warns: Sequence[Warn]) -> None:
        """Every warning of one kind, replaced (the uncommitted layer's symbolic links)."""
        self.clear_warnings(code)
        self.conn.executemany(
            "INSERT INTO warnings (path, line, code, message) VALUES (?, ?, ?, ?)",
            [(w.path, w.line, code, w.message) for w in warns],
        )

    def clear_link_warnings(self, paths: Iterable[str]) -> None:
        """Paths changed by commits that made no link are no longer links."""
        self.conn.executemany("DELETE FROM warnings WHERE code = 'symlink' AND path = ?",
                              [(p,) for p in paths])

    def _touch(self, ids: Sequence[int], current: str, args: Sequence[Any], sign: int) -> None:
        """The entities of these items change versions: their keys are touched, and ``sign``
        times the mentions (not page links) of those items for which ``current`` holds (over
        ``items i``) go into the net change of each spelling. One read per batch."""
        for part in batched(ids):
            for key, name, n in self.conn.execute(
                    f"SELECT e.entity, e.name, sum(e.role != 'page' AND {current}) "
                    "FROM item_entities e JOIN items i ON i.id = e.item_id "
                    f"WHERE e.item_id IN ({marks(part)}) GROUP BY e.entity, e.name",
                    [*args, *part]):
                self._entities_touched.add(str(key))
                if n:
                    self._spellings[(str(key), str(name))] += sign * int(n)

    def _unchanged_names(self, keys: Sequence[str]) -> set[str]:
        """Of these entity keys, those whose row cannot change in a recount: an entity page's,
        or one whose spelling stays the most frequent (no spelling gained or lost mentions,
        or only it gained and only others lost). An entity's name is its spelling with the
        most current mentions (ties: the first by name); counting them again is the costly
        part of an index run after one edit (an entity with thousands of mentions)."""
        change: dict[str, dict[str, int]] = {}
        for (key, name), n in self._spellings.items():
            if n:
                change.setdefault(key, {})[name] = n
        kept = {k for k in keys if k not in change}
        asked = [k for k in keys if k in change]
        for part in batched(asked):
            for key, name, page in self.conn.execute(
                    f"SELECT key, name, page FROM entities WHERE key IN ({marks(part)})", part):
                moved = change[str(key)]
                if page is not None or (moved.get(str(name), 0) >= 0 and all(
                        n <= 0 for spelling, n in moved.items() if spelling != name)):
                    kept.add(str(key))
        return kept

    def refresh_entities(self) -> None:
        """Bring entities and aliases up to date with what changed in this transaction.

        Entity pages (and their aliases) mean a full recount; otherwise only the entity keys
        that changed versions in this run are recounted (cheap per commit), and of those only
        the ones whose name may change (``_unchanged_names``)."""
        if self._entities_all:
            self.conn.execute("DELETE FROM entities")
            self.conn.execute("DELETE FROM aliases")
            self._insert_pages()
            keys: list[str] | None = None
        else:
            unchanged = self._unchanged_names(sorted(self._entities_touched))
            keys = sorted(self._entities_touched - unchanged)
            if not keys:
                self._entities_touched.clear()
                self._spellings.clear()
                return
            self.conn.executemany("DELETE FROM entities WHERE key = ? AND page IS NULL",
                                  [(k,) for k in keys])
        # The mentions of the changed entities first, then whether each item is current: an
        # index of the open versions' ids answers that without reading the items' rows (the
        # planner, left alone, walked every open item instead: ~0.2 s after each commit).
        counted = (
            "SELECT e.entity AS entity, e.name AS name, row_number() OVER ("
            "  PARTITION BY e.entity ORDER BY count(*) DESC, e.name) AS rank "
            "FROM item_entities e CROSS JOIN items i INDEXED BY items_current "
            "ON i.id = e.item_id AND i.valid_to IS NULL "
            "WHERE e.role != 'page' {only} GROUP BY e.entity, e.name")
        if keys is None:
            sql, args = counted.format(only=""), []
        else:
            marks = ",".join("?" * len(keys))
            sql, args = counted.format(only=f"AND e.entity IN ({marks})"), keys
        self.conn.execute(
            f"INSERT OR IGNORE INTO entities (key, name, page) "
            f"SELECT entity, name, NULL FROM ({sql}) WHERE rank = 1", args)
        # An alias names an entity that has a page; it is not an entity of its own.
        self.conn.execute("DELETE FROM entities WHERE key IN (SELECT alias FROM aliases)")
        self._entities_all = False
        self._entities_touched.clear()
        self._spellings.clear()

    def _insert_pages(self) -> None:
        pages = self.conn.execute(
            "SELECT path, front_matter FROM files WHERE class = 'entity'").fetchall()
        for path, fm in pages:
            slug = page_entity(str(path))
            key = entity_key(slug)
            self.conn.execute("INSERT OR REPLACE INTO entities VALUES (?, ?, ?)",
                              (key, slug, path))
            for alias in aliases(str(fm)):
                akey = entity_key(alias)
                if akey and akey != key:
                    self.conn.execute("INSERT OR IGNORE INTO aliases VALUES (?, ?)", (akey, key))


def aliases(front_matter_json: str) -> list[str]:
    """The aliases an entity page's front matter (as stored, JSON) gives."""
    try:
        return page_aliases(json.loads(front_matter_json))
    except ValueError:
        return []


def open_store(path: Path, *, readonly: bool = False) -> Store:
    """Open an index and bring its schema up to date. Raises UNUSABLE errors or NewerIndexError."""
    store = Store(path, readonly=readonly)
    try:
        if not readonly:
            store.migrate()
        elif store.schema_version() != SCHEMA_VERSION:
            raise NewerIndexError("index schema differs; it must be re-indexed")
        tables = {str(r[0]) for r in store.conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        if TABLES - tables:
            missing = ", ".join(sorted(TABLES - tables))
            raise DamagedIndex(f"tables missing from the index: {missing}")
        store.conn.execute("SELECT count(*) FROM meta").fetchall()
    except BaseException:
        store.close()
        raise
    return store


IndexStamp = tuple[int, int, bytes]


def index_stamp(path: Path) -> IndexStamp | None:
    """The index file's identity and SQLite's file change counter (header bytes 24-27, moved
    by every write transaction with a rollback journal): an equal stamp later means no
    transaction was written in between, by any process; None when there is no file."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        return info.st_dev, info.st_ino, os.pread(fd, 4, 24)
    finally:
        os.close(fd)


def remove_index_files(path: Path) -> None:
    for suffix in ("", "-journal", "-wal", "-shm"):
        with suppress(FileNotFoundError):
            os.unlink(str(path) + suffix)


def remove_stale_temporaries(index: Path) -> list[str]:
    """Remove the half-built files of full rebuilds that were killed (``index.sqlite.tmp-<pid>``
    and their journals). Only a writer builds one, under the writer lock, so a writer that holds
    the lock knows every one it finds is stale. Returns a note when it removed any."""
    stale = sorted(index.parent.glob(f"{index.name}.tmp-*"))
    for path in stale:
        with suppress(FileNotFoundError):
            path.unlink()
    if not stale:
        return []
    return [f"removed {len(stale)} temporary file(s) left in {index.parent} by an index run "
            "that was killed"]


def settle_journal(path: Path) -> None:
    """Roll back the hot journal a killed writer left beside ``path`` (opening the file does
    that), then remove what is left: a journal of a file that is not a database, or one that was
    not hot. Raises BusyError when another process is still using the file."""
    journal = Path(f"{path}-journal")
    if journal.exists():
        try:
            conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
            try:
                conn.set_busy_timeout(BUSY_TIMEOUT_MS)
                conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
            finally:
                conn.close()
        except UNUSABLE:
            pass
    for suffix in ("-journal", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
