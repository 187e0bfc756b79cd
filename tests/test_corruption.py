"""A damaged index (docs/architecture.md): truncated, empty, garbage, a foreign or newer SQLite file, tables
missing, a stale lock, a crashed writer's journal. Each is detected, reported once (by the
command that rebuilt it, not again), rebuilt or recovered automatically, and ``status`` never
crashes on it. The hot journal of the index itself is covered in test_bad_input.py and
test_locks.py."""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from gitmem.index.replay import index_workspace
from gitmem.workspace import open_workspace
from testing.chaos import integrity, leave_hot_journal
from testing.cli import gitmem, status_json
from testing.index import dump


def _truncate(index: Path, size: int) -> None:
    index.write_bytes(index.read_bytes()[:size])


def _foreign(index: Path) -> None:
    index.unlink()
    conn = apsw.Connection(str(index))
    conn.execute("CREATE TABLE meta (x); CREATE TABLE notes (a, b); INSERT INTO notes VALUES (1, 2)")
    conn.close()


def _sql(index: Path, sql: str) -> None:
    conn = apsw.Connection(str(index))
    conn.execute(sql)
    conn.close()


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {  # name: (damage, what the note says)
    "truncated to half": (lambda p: _truncate(p, p.stat().st_size // 2), "malformed"),
    "truncated to 100 bytes": (lambda p: _truncate(p, 100), "malformed"),
    "zero-length": (lambda p: p.write_bytes(b""), "empty file"),
    "garbage": (lambda p: p.write_bytes(random.Random(1).randbytes(60_000)), "not a database"),
    "a foreign SQLite file": (_foreign, "not a gitmem index"),
    "a newer schema": (lambda p: _sql(p, "INSERT INTO migrations VALUES (99, 'm099', 'x')"),
                       "newer"),
    "a table missing": (lambda p: _sql(p, "DROP TABLE items"), "tables missing"),
}


@pytest.fixture(scope="module")
def rebuilt(built_fixture: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> list[tuple[object, ...]]:
    repo = tmp_path_factory.mktemp("clean") / "ws"
    shutil.copytree(built_fixture, repo, symlinks=True)
    ws, cfg = open_workspace(repo)
    index_workspace(ws, cfg, force=True)
    return dump(repo)


def damaged(fixture_repo: Path, name: str) -> Path:
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    index = fixture_repo / ".memory" / "index.sqlite"
    DAMAGE[name][0](index)
    return index


def notes_of(command: str, out: str, err: str) -> list[str]:
    if command == "recall":
        return list(json.loads(out)["warnings"])
    return [line for line in err.splitlines() if line.startswith("note:")]


@pytest.mark.parametrize("command", ["recall", "index"])
@pytest.mark.parametrize("name", list(DAMAGE))
def test_damage_is_reported_once_and_rebuilt(fixture_repo: Path, name: str, command: str,
                                             rebuilt: list[tuple[object, ...]]) -> None:
    index = damaged(fixture_repo, name)
    status = status_json(fixture_repo)  # status reports it, and does not crash
    assert "index_error" in status or name.startswith("truncated to half"), status
    args = ("recall", "Peter", "--json") if command == "recall" else ("index",)
    first = gitmem("-C", str(fixture_repo), *args)
    assert first[0] == 0, first[2]
    said = [n for n in notes_of(command, first[1], first[2]) if "rebuilt it" in n]
    assert len(said) == 1 and DAMAGE[name][1] in said[0], said
    again = gitmem("-C", str(fixture_repo), *args)
    assert again[0] == 0, again[2]
    assert not [n for n in notes_of(command, again[1], again[2]) if "rebuilt" in n]
    assert integrity(index) == "ok"
    assert dump(fixture_repo) == rebuilt
    assert "index_error" not in status_json(fixture_repo)


def test_damage_found_only_by_a_deep_status_and_a_forced_rebuild(fixture_repo: Path) -> None:
    """Pages damaged past what any cheap check reads: 'status --deep' runs integrity_check and
    names the fix, which works."""
    index = damaged(fixture_repo, "a newer schema")  # any index; now damage its middle
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    data = bytearray(index.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle:middle + 8192] = b"\x00" * 8192
    index.write_bytes(bytes(data))
    code, out, _ = gitmem("-C", str(fixture_repo), "status", "--deep", "--json")
    assert code == 0
    info = json.loads(out)
    # the counts may already trip over the damage; otherwise integrity_check finds it
    assert "index_error" in info or info["integrity"] != "ok", info
    code, out, _ = gitmem("-C", str(fixture_repo), "status", "--deep")
    assert "gitmem index" in out and ("integrity check:" in out or "cannot be used" in out)
    assert gitmem("-C", str(fixture_repo), "index", "--force")[0] == 0
    assert integrity(index) == "ok"


def test_an_index_path_that_is_a_folder_is_a_clear_error(fixture_repo: Path) -> None:
    index = fixture_repo / ".memory" / "index.sqlite"
    index.mkdir(parents=True)
    code, _, err = gitmem("-C", str(fixture_repo), "index")
    assert code == 1, err
    assert "is a folder, not an index file" in err
    code, out, _ = gitmem("-C", str(fixture_repo), "status", "--json")
    assert code == 0 and "index_error" in json.loads(out)


def test_a_stale_lock_file_is_ignored(fixture_repo: Path) -> None:
    """A lock file left by a dead process (any content) holds nothing: the next run goes on."""
    memory = fixture_repo / ".memory"
    memory.mkdir()
    (memory / "index.lock").write_text("999999 2020-01-01T00:00:00+00:00 gitmem index\n")
    (memory / "embed.lock").write_bytes(b"\x00garbage\xff")
    code, _, err = gitmem("-C", str(fixture_repo), "index")
    assert code == 0, err
    assert "held by" not in err


def test_a_crashed_writer_of_the_embedding_cache_is_recovered(fixture_repo: Path) -> None:
    """A hot journal, then garbage, in .memory/embeddings.sqlite: the cache is a cache."""
    from gitmem.index.cache import EmbeddingCache

    memory = fixture_repo / ".memory"
    memory.mkdir()
    path = memory / "embeddings.sqlite"
    EmbeddingCache(path).close()
    leave_hot_journal(path, "INSERT INTO cache VALUES ('fp', ?, 4, ?)")
    cache = EmbeddingCache(path)
    try:
        assert cache.get_many("fp", ["junk1", "junk2"]) == {}  # rolled back
    finally:
        cache.close()
    path.write_bytes(random.Random(3).randbytes(10_000))
    cache = EmbeddingCache(path)
    try:
        cache.put_many("fp", {"h": b"\x00\x00\x80?"})
        assert cache.get_many("fp", ["h"]) == {"h": b"\x00\x00\x80?"}
    finally:
        cache.close()
