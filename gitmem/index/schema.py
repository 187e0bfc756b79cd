"""The index's schema: one DDL constant and numbered migrations (docs/architecture.md).

Each migration runs in one transaction together with the row that records it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import apsw

SCHEMA_VERSION = 15
# An index older than this is rebuilt rather than migrated: its full-text rows cannot be
# brought up to date in place (the text they were made from is not stored).
REBUILD_BELOW = 2


DDL_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- The first-parent chain of commits replayed into the index, oldest first. A row with
-- commit_id 'worktree' is the uncommitted state layered on top (gitmem index --worktree).
CREATE TABLE commits (
    seq INTEGER PRIMARY KEY,
    commit_id TEXT NOT NULL UNIQUE,
    committed_at TEXT NOT NULL
);
CREATE INDEX commits_time ON commits (committed_at);
-- The memory files of the newest indexed state.
CREATE TABLE files (
    path TEXT PRIMARY KEY,
    blob TEXT NOT NULL,
    class TEXT NOT NULL,
    day TEXT,
    title TEXT NOT NULL DEFAULT '',
    front_matter TEXT NOT NULL DEFAULT '{}'
);
-- Every version of every fact and chunk. A version is valid from the commit (seq) that
-- introduced it until the commit that changed or removed it (valid_to; NULL while current).
-- Rows are never changed except to close or reopen them, so history can be rolled back
-- exactly to any earlier commit of the chain (rewrites converge to a rebuild).
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    vkey TEXT NOT NULL,
    path TEXT NOT NULL,
    blob TEXT NOT NULL,
    class TEXT NOT NULL,
    day TEXT,
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
    valid_from INTEGER NOT NULL,
    valid_to INTEGER,
    ended_at TEXT,
    ended_commit TEXT
);
CREATE INDEX items_open ON items (path, valid_to);
CREATE INDEX items_from ON items (valid_from);
CREATE INDEX items_to ON items (valid_to);
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
-- Opinions of bank/opinions.md, versioned like items.
CREATE TABLE opinions (
    id INTEGER PRIMARY KEY,
    vkey TEXT NOT NULL,
    opinion_id TEXT NOT NULL,
    statement TEXT NOT NULL,
    entities TEXT NOT NULL DEFAULT '[]',
    confidence REAL,
    updated TEXT,
    evidence TEXT NOT NULL DEFAULT '[]',
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    recorded_at TEXT,
    commit_id TEXT,
    valid_from INTEGER NOT NULL,
    valid_to INTEGER,
    ended_at TEXT
);
CREATE INDEX opinions_open ON opinions (path, valid_to);
CREATE INDEX opinions_id ON opinions (opinion_id);
CREATE TABLE warnings (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL
);
CREATE INDEX warnings_path ON warnings (path);
-- Embeddings of current items under the fingerprint in meta 'embed_fingerprint' (float32,
-- unit length), one per passage: a chunk is embedded as several short passages, because small
-- embedding models are trained on sentences and a 400-token average blurs them. The plain
-- table is the source of truth (searchable by an exact scan when the sqlite-vec extension
-- cannot be loaded); vec_bits, a vec0 table of their sign bits made when the dimension is
-- known, finds candidates by Hamming distance fast, and the plain vectors rescore them exactly
-- (rowid = item id * MAX_PASSAGES + passage).
CREATE TABLE vectors (
    item_id INTEGER NOT NULL,
    part INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (item_id, part)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE items_fts USING fts5 (
    body, path, content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 0'
);
"""


DDL_REPLACES = """
CREATE TABLE IF NOT EXISTS item_replaces (
    item_id INTEGER NOT NULL,
    ref TEXT NOT NULL,
    fact_id TEXT,
    PRIMARY KEY (item_id, ref)
);
CREATE INDEX IF NOT EXISTS item_replaces_fact ON item_replaces (fact_id);
"""

# The replacement graph (docs/knowledge-updates.md, "Decided once"): each statement (a fact,
# or a note line about someone or something) of each item version, its subject keys, and the
# edges the rule of
# knowledge updates found between two statements when the later of them was indexed, with the
# seq of that commit (a rollback removes them with the versions). A statement's times and
# validity are its item's.
DDL_GRAPH = """
CREATE TABLE IF NOT EXISTS statements (
    id INTEGER PRIMARY KEY,
    item_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    kind TEXT NOT NULL,
    subjects TEXT NOT NULL DEFAULT '',
    content TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS statements_item ON statements (item_id);
CREATE INDEX IF NOT EXISTS statements_place ON statements (path, line);
CREATE TABLE IF NOT EXISTS statement_keys (
    key TEXT NOT NULL,
    statement_id INTEGER NOT NULL,
    PRIMARY KEY (key, statement_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS statement_keys_statement ON statement_keys (statement_id);
CREATE TABLE IF NOT EXISTS edges (
    older INTEGER NOT NULL,
    newer INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    strength TEXT NOT NULL CHECK (strength IN ('hard', 'hint')),
    basis TEXT NOT NULL,
    attribute TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (older, newer)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS edges_newer ON edges (newer);
CREATE INDEX IF NOT EXISTS edges_seq ON edges (seq);
"""

HAN_DDL = """
CREATE VIRTUAL TABLE IF NOT EXISTS items_han USING fts5 (
    chars, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0'
)
"""

# The items whose vectors changed, in order (every insert, delete or update of ``vectors``, by
# trigger): a long-running process that holds the vectors' sign bits in memory
# (``index.signbits``) reads it from where it left off. The log keeps its newest
# VECTOR_LOG_KEEP entries (trimmed by trigger); ``vector_epoch`` in meta is new with each file
# and each new model, and a reader older than either loads everything again.
VECTOR_LOG_KEEP = 65536
DDL_VECTOR_LOG = f"""
CREATE TABLE IF NOT EXISTS vector_changes (seq INTEGER PRIMARY KEY, item_id INTEGER NOT NULL);
CREATE TRIGGER IF NOT EXISTS vectors_added AFTER INSERT ON vectors BEGIN
    INSERT INTO vector_changes (item_id) VALUES (NEW.item_id);
END;
CREATE TRIGGER IF NOT EXISTS vectors_removed AFTER DELETE ON vectors BEGIN
    INSERT INTO vector_changes (item_id) VALUES (OLD.item_id);
END;
CREATE TRIGGER IF NOT EXISTS vectors_changed AFTER UPDATE ON vectors BEGIN
    INSERT INTO vector_changes (item_id) VALUES (OLD.item_id), (NEW.item_id);
END;
CREATE TRIGGER IF NOT EXISTS vector_changes_trimmed AFTER INSERT ON vector_changes
WHEN NEW.seq % 4096 = 0 BEGIN
    DELETE FROM vector_changes WHERE seq <= NEW.seq - {VECTOR_LOG_KEEP};
END;
"""
NEW_VECTOR_EPOCH = ("INSERT OR REPLACE INTO meta VALUES ('vector_epoch', "
                    "lower(hex(randomblob(8))))")

# OpenClaw's inline annotations (parse.annotations): each annotated line of an item version,
# with its importance and trigger phrases ('; '-joined, '' for none).
DDL_ANNOTATIONS = """
CREATE TABLE IF NOT EXISTS item_annotations (
    item_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    importance INTEGER,
    triggers TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (item_id, line)
);
"""

# The days a line of a dated note counts back to ("yesterday" in the note of March 17: March
# 16; ``timeparse.counted_back``), inclusive ISO days: a date phrase's window prefers the line.
DDL_DAYS = """
CREATE TABLE IF NOT EXISTS item_days (
    item_id INTEGER NOT NULL,
    line INTEGER NOT NULL,
    first_day TEXT NOT NULL,
    last_day TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS item_days_item ON item_days (item_id);
"""

# The tables every index has (sqlite-vec's vec_bits appears later, with the first vectors).
TABLES = frozenset(re.compile(r"CREATE (?:VIRTUAL )?TABLE (?:IF NOT EXISTS )?(\w+)").findall(
    DDL_V1 + DDL_REPLACES + HAN_DDL + DDL_VECTOR_LOG + DDL_GRAPH + DDL_ANNOTATIONS
    + DDL_DAYS)
) | {"migrations"}


def m001_initial(conn: apsw.Connection) -> None:
    conn.execute(DDL_V1)


def m002_stems_column(conn: apsw.Connection) -> None:
    """Word stems beside the exact words (issue 9): a third full-text column, weighted lower so
    that exact forms rank first. Applied to new indexes; older ones are rebuilt."""
    conn.execute("DROP TABLE items_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE items_fts USING fts5 (body, path, stems, content = '', "
        "contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0')"
    )


def m003_recall_indexes(conn: apsw.Connection) -> None:
    """Two indexes for questions every recall asks. Which current items still need embedding
    (before every hybrid query): probing the vectors table itself reads pages full of vectors
    (~0.5 s at 50,000 items), ``vectors_item`` holds only (item, passage) pairs. The newest facts
    about a subject after a given one (knowledge updates of each shown fact): a range of
    ``item_entities_subject`` instead of every fact about the subject, sorted. Applied in place:
    nothing is rebuilt or re-embedded."""
    conn.execute("CREATE INDEX IF NOT EXISTS vectors_item ON vectors (item_id)")
    conn.execute("CREATE INDEX IF NOT EXISTS item_entities_subject "
                 "ON item_entities (entity, role, item_id)")


class RebuildNeeded(Exception):
    """A migration cannot bring this index up to date in place: it is rebuilt."""


# Han characters (CJK unified ideographs, extension A, compatibility ideographs), for GLOB.
_HAN_GLOB = "*[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]*"


def _holds_han(conn: apsw.Connection) -> bool:
    """Whether any item's text, heading or subject has a Han character."""
    return bool(conn.execute(
        "SELECT 1 FROM items WHERE content GLOB ?1 OR heading GLOB ?1 UNION ALL "
        "SELECT 1 FROM item_entities WHERE name GLOB ?1 LIMIT 1", (_HAN_GLOB,)).fetchall())


def m004_cjk_characters(conn: apsw.Connection) -> None:
    """The stems column held each Han character of the text as a token of its own (issue 17;
    m006 moved them to a table of their own). An index without Han characters has nothing to
    redo; one with them is rebuilt (the exact text its rows were made from is not stored)."""
    if _holds_han(conn):
        raise RebuildNeeded("index of CJK text made before its Han characters were indexed")


def m005_declared_replacements(conn: apsw.Connection) -> None:
    """Declared replacements: the refs of each fact's ``- replaces:`` item, and the fact id each
    names, resolved when the replacing version is first recorded. An index whose facts hold
    such an item in their text (parsed before the item meant anything) is rebuilt; any other
    gets the empty table in place."""
    found = conn.execute("SELECT 1 FROM items WHERE type = 'fact' AND content LIKE ? LIMIT 1",
                         ("%- replaces:%",)).fetchall()
    if found:
        raise RebuildNeeded("index made before '- replaces:' items declared replacements")
    conn.execute(DDL_REPLACES)


def m006_han_table(conn: apsw.Connection) -> None:
    """A full-text table of the Han characters of each item, one token each (issue 17): a
    question's one-character words and verb stems (猫, 住む / 住んで) match. A table of its own,
    not the stems column (m004), so that the BM25 of every other query (FTS5 normalises by the
    whole row's length) is what it was. An index without Han characters gets the empty table
    in place; one with them is rebuilt."""
    if _holds_han(conn):
        raise RebuildNeeded("index of CJK text made before its Han characters had a table")
    conn.execute(HAN_DDL)


def m007_current_items_index(conn: apsw.Connection) -> None:
    """The ids of the open versions (``valid_to IS NULL``) as an index of their own: recounting
    an entity's spellings after a commit asks, for each of its mentions, whether the item is
    current, and reading that from the items' rows (text and all) took ~0.2 s on ten years of
    notes. Applied in place."""
    conn.execute("CREATE INDEX IF NOT EXISTS items_current ON items (id) WHERE valid_to IS NULL")


def m008_vector_log(conn: apsw.Connection) -> None:
    """The log of vector changes (``DDL_VECTOR_LOG``, issue 21): a warm process keeps the sign
    bits of 1,000,000 vectors in memory in step with the index by reading it. Applied in
    place: a reader loads every vector once at the new epoch, then follows the log."""
    conn.execute(DDL_VECTOR_LOG)
    conn.execute(NEW_VECTOR_EPOCH)


def m009_fact_ids_index(conn: apsw.Connection) -> None:
    """The ids of the facts as an index of their own: the knowledge-update candidates of a
    shown fact include the facts among its subject's newest mentions, and telling them from
    text passages by the items' rows (text and all) read 640 rows a subject, most of recall's
    SQL time for a fact-rich answer (4x less from this index on ten years). Applied in place."""
    conn.execute("CREATE INDEX IF NOT EXISTS items_facts ON items (id) WHERE type = 'fact'")


def m010_replacement_graph(conn: apsw.Connection) -> None:
    """The replacement graph (``DDL_GRAPH``, issue 38) and ``- keeps:`` refs beside
    ``- replaces:`` ones. Its edges are derived when statements are indexed, so an index that
    holds items is rebuilt; an empty one gets the tables in place."""
    if conn.execute("SELECT 1 FROM items LIMIT 1").fetchall():
        raise RebuildNeeded("index made before the replacement graph")
    conn.execute(DDL_GRAPH)
    conn.execute("ALTER TABLE item_replaces ADD COLUMN how TEXT NOT NULL DEFAULT 'replaces'")


def m011_annotations(conn: apsw.Connection) -> None:
    """OpenClaw's ``<!-- importance: N -->`` and ``<!-- trigger: ... -->`` (issue 42): a table
    of each item's annotated lines, and facts whose text no longer holds the comments. An index
    whose items hold such a comment (read before it meant anything) is rebuilt; any other gets
    the empty table in place."""
    found = conn.execute(
        "SELECT 1 FROM items WHERE content LIKE '%<!--%importance%:%-->%' OR content LIKE "
        "'%<!--%trigger%:%-->%' LIMIT 1").fetchall()
    if found:
        raise RebuildNeeded("index made before <!-- importance --> and <!-- trigger --> "
                            "annotations were read")
    conn.execute(DDL_ANNOTATIONS)


def m012_statement_readings(conn: apsw.Connection) -> None:
    """What the rule read of each statement (``parse.statements.pack``), stored when it is
    indexed: a commit's statements are compared with earlier ones by their stored readings
    instead of reading every candidate again (a catch-up of 50 days read 2,600 statements to
    link 900). Applied in place: a statement without one is read when it is compared."""
    conn.execute("ALTER TABLE statements ADD COLUMN reading TEXT")


def m013_counted_back_days(conn: apsw.Connection) -> None:
    """The days each line of a dated note counts back to (``DDL_DAYS``), read in place from
    the items the index holds (a tenth of a millisecond a chunk)."""
    conn.execute(DDL_DAYS)
    _read_counted_back_days(conn)


def m014_counted_back_again(conn: apsw.Connection) -> None:
    """Once the days read again for "the week before last", "a few days ago" (± 1) and counts
    in words past twelve; m015 reads them all again after it, so it does nothing now."""


def m015_counted_back_loosely(conn: apsw.Connection) -> None:
    """The same days read again, now that "the other day", "several days ago", "a fortnight
    ago", "a week and a half ago" and "earlier this week" count back too."""
    conn.execute("DELETE FROM item_days")
    _read_counted_back_days(conn)


def _read_counted_back_days(conn: apsw.Connection) -> None:
    from gitmem.index.items import counted_back_days  # migrations only

    rows = conn.execute("SELECT id, start_line, content, day FROM items WHERE day IS NOT NULL")
    days = [(int(str(item)), *found) for item, start, content, day in rows.fetchall()
            for found in counted_back_days(int(str(start)), str(content), str(day))]
    conn.executemany("INSERT INTO item_days (item_id, line, first_day, last_day) "
                     "VALUES (?, ?, ?, ?)", days)


# Numbered migrations: each runs in one transaction together with the row that records it.
MIGRATIONS: Sequence[tuple[int, str, Callable[[apsw.Connection], None]]] = (
    (1, "m001_initial", m001_initial),
    (2, "m002_stems_column", m002_stems_column),
    (3, "m003_recall_indexes", m003_recall_indexes),
    (4, "m004_cjk_characters", m004_cjk_characters),
    (5, "m005_declared_replacements", m005_declared_replacements),
    (6, "m006_han_table", m006_han_table),
    (7, "m007_current_items_index", m007_current_items_index),
    (8, "m008_vector_log", m008_vector_log),
    (9, "m009_fact_ids_index", m009_fact_ids_index),
    (10, "m010_replacement_graph", m010_replacement_graph),
    (11, "m011_annotations", m011_annotations),
    (12, "m012_statement_readings", m012_statement_readings),
    (13, "m013_counted_back_days", m013_counted_back_days),
    (14, "m014_counted_back_again", m014_counted_back_again),
    (15, "m015_counted_back_loosely", m015_counted_back_loosely),
)
