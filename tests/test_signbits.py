"""The sign bits a warm process holds in memory (``gitmem.index.signbits``), against the real
sqlite-vec index: the exact k-NN when the candidates cover every vector, vec0's own Hamming
distances when they do not, and a copy that follows every vector write of the index (new
embeddings, closed and removed items, a rollback, a new model, a rebuilt file, a trimmed
log) to exactly what loading everything again gives."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from embed_server import EmbedServer

from gitmem.index import queries
from gitmem.index.items import MAX_PASSAGES
from gitmem.index.signbits import SignBits, pack
from gitmem.index.store import READ_MMAP_BYTES, Store, open_store
from testing.cli import gitmem
from testing.repo import commit_all, git, write

DIMS = 48  # not a multiple of 64: the last word is padded


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture
def small_index(tmp_path: Path) -> Iterator[tuple[Store, np.ndarray, list[tuple[int, int]]]]:
    """A real index with vec0 holding 150 items of one to three passages (clustered unit
    vectors, as embeddings of related texts are): (store, vectors, their (item, passage))."""
    rng = np.random.default_rng(7)
    keys = [(item, part) for item in range(1, 151) for part in range(1 + item % 3)]
    centres = unit(rng.standard_normal((12, DIMS)))
    data = unit(centres[rng.integers(0, 12, len(keys))] +
                0.15 * rng.standard_normal((len(keys), DIMS)))
    store = open_store(tmp_path / "index.sqlite")
    with store.transaction():
        store.reset_vectors("test:small", DIMS)
        store.conn.executemany("INSERT INTO vectors VALUES (?, ?, ?)",
                               [(i, n, v.tobytes()) for (i, n), v in zip(keys, data, strict=True)])
        store.conn.executemany(
            "INSERT INTO vec_bits (rowid, embedding) VALUES (?, vec_quantize_binary(?))",
            [(i * MAX_PASSAGES + n, v.tobytes()) for (i, n), v in zip(keys, data, strict=True)])
    yield store, data, keys
    store.close()


def exact_knn(data: np.ndarray, keys: list[tuple[int, int]], q: np.ndarray,
              k: int) -> list[int]:
    best: dict[int, float] = {}
    for (item, _), sim in zip(keys, (data @ q).tolist(), strict=True):
        best[item] = max(best.get(item, -2.0), sim)
    return sorted(best, key=lambda i: -best[i])[:k]


@pytest.mark.parametrize("wide_above", [queries.WIDE_ABOVE, 0])
def test_candidates_covering_every_vector_give_the_exact_knn_and_vec0s_answer(
        small_index: tuple[Store, np.ndarray, list[tuple[int, int]]], wide_above: int,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Either number of candidates per item (2, or 4 above WIDE_ABOVE vectors) that covers
    all 300 passages gives the exact k-NN."""
    store, data, keys = small_index
    monkeypatch.setattr(queries, "WIDE_ABOVE", wide_above)
    bits = SignBits()
    for q in unit(np.random.default_rng(8).standard_normal((12, DIMS))):
        k = 150 if wide_above else 75
        warm_passages: dict[tuple[int, int], float] = {}
        warm = queries.nearest(store, q.tobytes(), k, warm_passages, bits)
        assert list(warm) == exact_knn(data, keys, q, k)
        for (item, part), sim in warm_passages.items():
            assert sim == pytest.approx(float(data[keys.index((item, part))] @ q), abs=1e-5)
        # vec0 with as many candidates covers them all too: the same answer, to the bit
        assert queries.nearest(store, q.tobytes(), len(keys)) == \
            queries.nearest(store, q.tobytes(), len(keys), bits=bits)
    assert bits.loads == 1 and len(bits) == len(keys)


def test_fewer_candidates_are_vec0s_nearest_by_hamming_distance(
        small_index: tuple[Store, np.ndarray, list[tuple[int, int]]]) -> None:
    """The packed bits are vec_quantize_binary's, and the candidates are the passages vec0
    finds nearest (the same distances; ties may pick other passages)."""
    store, data, _ = small_index
    bits = SignBits()
    with store.transaction():
        bits.sync(store)
    for v in data[:5]:
        quantized = store.conn.execute("SELECT vec_quantize_binary(?)", (v.tobytes(),)).fetchone()
        assert pack(v[None, :])[:, 0].tobytes()[: DIMS // 8] == quantized[0]
    for q in unit(np.random.default_rng(9).standard_normal((8, DIMS))):
        vec0 = store.conn.execute(
            "SELECT rowid, distance FROM vec_bits WHERE embedding MATCH vec_quantize_binary(?) "
            "AND k = 40", (q.tobytes(),)).fetchall()
        qbits = pack(q[None, :])[:, 0]
        mine = bits.nearest_items(q.tobytes(), 40)
        held = np.isin(bits.keys // MAX_PASSAGES, mine)
        distance = sum(np.bitwise_count(w ^ qw).astype(np.int64)
                       for w, qw in zip(bits.words, qbits, strict=True))
        # every passage of a chosen item is held; the 40 nearest of them are vec0's distances
        assert sorted(distance[held].tolist())[:40] == sorted(int(d) for _, d in vec0)
        assert {int(r) // MAX_PASSAGES for r, _ in vec0} <= set(mine) | {
            int(k) // MAX_PASSAGES for k in bits.keys[distance == max(d for _, d in vec0)]}


def same_as_loaded(repo: Path, bits: SignBits) -> None:
    """``bits``, brought up to date as a warm process does before a query (a connection of
    its own each time), hold what a fresh load of the index holds: its vectors, each once."""
    store = open_store(repo / ".memory" / "index.sqlite", readonly=True)
    try:
        with store.transaction():
            bits.sync(store)
            fresh = SignBits()
            fresh.sync(store)
            have = sorted(i * MAX_PASSAGES + n for i, n in store.conn.execute(
                "SELECT item_id, part FROM vectors"))
    finally:
        store.close()
    assert bits.keys.tolist() == fresh.keys.tolist() == have
    assert bits.words.tobytes() == fresh.words.tobytes() and bits.dims == fresh.dims


@pytest.fixture
def embedded(fixture_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with EmbedServer(dim=16) as server:
        monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "openai")
        monkeypatch.setenv("GITMEM_EMBED_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        assert gitmem("-C", str(fixture_repo), "index")[0] == 0
        yield fixture_repo


def test_the_bits_follow_every_vector_write(embedded: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    repo = embedded
    bits = SignBits()
    same_as_loaded(repo, bits)
    assert bits.loads == 1 and len(bits) > 100
    # new and changed text embedded, a removed file's items closed: followed through the log
    write(repo, "memory/2025-12-01.md", "# 2025-12-01\n\n## Retain\n- W @Peter: Back home.\n")
    (repo / "memory" / "2025-11-27.md").unlink()
    commit_all(repo, "a day more, one less", date="2025-12-01T21:00:00+00:00")
    held = len(bits)
    assert gitmem("-C", str(repo), "index")[0] == 0
    same_as_loaded(repo, bits)
    assert len(bits) != held
    # a rewrite of history: the rollback drops the vectors of the versions it undoes
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert gitmem("-C", str(repo), "index")[0] == 0
    same_as_loaded(repo, bits)
    assert bits.loads == 1 and len(bits) == held
    # a log trimmed past this copy (another process wrote a great deal): loaded again
    seen = bits.seen
    write(repo, "memory/2025-12-02.md", "# 2025-12-02\n\n## Retain\n- W @Peter: Out again.\n")
    commit_all(repo, "another day", date="2025-12-02T21:00:00+00:00")
    assert gitmem("-C", str(repo), "index")[0] == 0
    writer = open_store(repo / ".memory" / "index.sqlite")
    with writer.transaction():
        writer.conn.execute("DELETE FROM vector_changes WHERE seq <= ?", (seen + 1,))
    writer.close()
    same_as_loaded(repo, bits)
    assert bits.loads == 2
    # another model: a new epoch, everything loaded again
    monkeypatch.setenv("GITMEM_EMBED_MODEL", "another-model")
    assert gitmem("-C", str(repo), "index")[0] == 0
    same_as_loaded(repo, bits)
    assert bits.loads == 3
    # a rebuilt file: its own epoch
    assert gitmem("-C", str(repo), "index", "--force")[0] == 0
    same_as_loaded(repo, bits)
    assert bits.loads == 4


def vec0_matches_vectors(repo: Path) -> int:
    """vec0's sign bits are those of the stored vectors, row for row; how many."""
    store = open_store(repo / ".memory" / "index.sqlite", readonly=True)
    try:
        have = sorted(i * MAX_PASSAGES + n for i, n in store.conn.execute(
            "SELECT item_id, part FROM vectors"))
        bits = sorted(int(r) for (r,) in store.conn.execute("SELECT rowid FROM vec_bits"))
    finally:
        store.close()
    assert bits == have
    return len(have)


def test_vec0_follows_every_vector_dropped(embedded: Path) -> None:
    """Vectors are dropped by their row ids (vec0 reads every row for a range of them): an
    uncommitted edit, the layer replaced and dropped, a commit and a rollback leave vec0 with
    exactly the bits of the stored vectors."""
    repo = embedded
    held = vec0_matches_vectors(repo)
    note = repo / "memory" / "2025-11-27.md"
    committed = note.read_text(encoding="utf-8")
    note.write_text(committed + "- W @Zed: Bought a narwhalcopter.\n", encoding="utf-8")
    assert gitmem("-C", str(repo), "index")[0] == 0  # the layer closes the note's versions
    assert vec0_matches_vectors(repo) != held  # (and its own are embedded)
    note.write_text(committed + "- W @Zed: Bought a walruskite.\n", encoding="utf-8")
    assert gitmem("-C", str(repo), "index")[0] == 0  # the layer again
    vec0_matches_vectors(repo)
    note.write_text(committed, encoding="utf-8")
    assert gitmem("-C", str(repo), "index")[0] == 0  # dropped: the versions reopen, embedded
    assert vec0_matches_vectors(repo) == held
    write(repo, "memory/2025-12-01.md", "# 2025-12-01\n\n## Retain\n- W @Peter: Back home.\n")
    commit_all(repo, "a day more", date="2025-12-01T21:00:00+00:00")
    assert gitmem("-C", str(repo), "index")[0] == 0
    assert vec0_matches_vectors(repo) != held
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    assert gitmem("-C", str(repo), "index")[0] == 0
    assert vec0_matches_vectors(repo) == held


def test_a_sync_with_nothing_changed_reads_no_whole_table(embedded: Path) -> None:
    """Every hybrid request of a warm process syncs the bits: with nothing written since, its
    statements are answered from the ends of keys, never by a scan (``min(seq), max(seq)`` in
    one SELECT scanned the whole change log: 3.8 ms a request on ten years)."""
    bits = SignBits()
    same_as_loaded(embedded, bits)
    store = open_store(embedded / ".memory" / "index.sqlite", readonly=True)
    statements: list[tuple[str, object]] = []

    def trace(_cursor: object, sql: str, bindings: object) -> bool:
        statements.append((sql, bindings))
        return True

    try:
        with store.transaction():
            store.conn.exec_trace = trace
            bits.sync(store)
            store.conn.exec_trace = None
            assert bits.loads == 1 and statements
            plans = {sql: [row[3] for row in store.conn.execute(f"EXPLAIN QUERY PLAN {sql}",
                                                                  bindings)]
                     for sql, bindings in statements}
    finally:
        store.close()
    scans = {sql: plan for sql, plan in plans.items()
             if any(step.startswith("SCAN") and step != "SCAN CONSTANT ROW" for step in plan)}
    assert not scans, scans


def test_a_reader_maps_the_index_and_sees_another_connections_write(tmp_path: Path) -> None:
    """Readers read pages through a memory map (a hybrid recall reads ~400 scattered vectors),
    and still see what a writer commits after they opened."""
    path = tmp_path / "index.sqlite"
    writer = open_store(path)
    reader = open_store(path, readonly=True)
    try:
        assert reader.conn.execute("PRAGMA mmap_size").fetchone() == (READ_MMAP_BYTES,)
        with writer.transaction():
            writer.set_meta("probe", "one")
        assert reader.get_meta("probe") == "one"
        with writer.transaction():
            writer.conn.execute("CREATE TABLE filler (x BLOB)")
            writer.conn.executemany("INSERT INTO filler VALUES (?)",
                                    [(bytes(4000),) for _ in range(500)])
            writer.set_meta("probe", "two")
        assert reader.get_meta("probe") == "two"
        assert reader.conn.execute("SELECT count(*) FROM filler").fetchone() == (500,)
    finally:
        reader.close()
        writer.close()
