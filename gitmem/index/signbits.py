"""The sign bits of the index's vectors held in memory, for a long-running process.

At 1,000,000 vectors a k-NN query is sqlite-vec's vec0 scan of their sign bits: ~300 ms for
200 Hamming candidates, growing faster than the candidates asked (~700 ms for the 400 that
recall@10 of the exact k-NN >= 0.95 needs). The same bits in a numpy array (46 MB) are scanned
in tens of milliseconds. A warm process (``gitmem serve``, ``gitmem mcp``) keeps them here, in
step with the index through its log of vector changes (``vector_changes``, written by triggers
on every insert, delete and update of ``vectors``; schema m008): before each query the log is
read from where this copy left off and the items it names are read again. Another file or
another model (a new ``vector_epoch``), or a log trimmed past this copy, loads everything
again. Candidates are always rescored exactly from the index (``queries.nearest``), so an
answer never holds a vector from memory: what memory could get wrong is only which passages
are candidates.

numpy is used where it is importable (llama-cpp-python, the local provider, depends on it): this
module raises ImportError without numpy 2 (``bitwise_count``), and the warm process asks vec0.
A command run alone never imports it: loading the bits would cost it more than the vec0 scan
it saves.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any

import numpy as np

from gitmem.index.items import MAX_PASSAGES
from gitmem.index.store import Store, batched, marks

if not hasattr(np, "bitwise_count"):
    raise ImportError("gitmem.index.signbits needs numpy 2 or later (bitwise_count)")

LOAD_ROWS = 20_000  # vectors read per batch when loading everything
RELOAD_SHARE = 4  # more changed items than 1/RELOAD_SHARE of those held: load everything
SCAN_BLOCK = 65536  # vectors scanned at a time: 512 KB a word, within a core's cache
Array = np.ndarray[Any, Any]


def pack(vectors: Array) -> Array:
    """The sign bits (value > 0, as vec_quantize_binary sets them) of float vectors, one row
    each, as 64-bit words: an array of shape (words, vectors), one contiguous row per word (the
    scan reads one word of every vector at a time)."""
    bits = np.packbits(vectors > 0, axis=1, bitorder="little")
    pad = -bits.shape[1] % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return np.ascontiguousarray(bits.view(np.uint64).T)


class SignBits:
    """The sign bits of one index file's vectors, keyed by vec_bits' rowid (item id *
    MAX_PASSAGES + passage, ascending). ``sync`` before each use, in the same read transaction
    as the rescoring, so that both see one state of the index."""

    def __init__(self) -> None:
        self.epoch: str | None = None
        self.seen = 0  # the last vector_changes seq applied
        self.dims = 0
        self.loads = 0  # full loads so far
        self.keys: Array = np.empty(0, np.int64)
        self.words: Array = np.empty((0, 0), np.uint64)

    def __len__(self) -> int:
        return len(self.keys)

    def sync(self, store: Store) -> None:
        """Bring this copy up to the index's current vectors."""
        epoch = store.get_meta("vector_epoch")
        dims = int(store.get_meta("embed_dims") or 0)
        # Two subqueries: SQLite answers min() or max() alone from the key's ends, but scans
        # the whole log (45,000 rows on ten years: 3.8 ms a recall) for both in one SELECT.
        low, high = store.conn.execute(
            "SELECT (SELECT min(seq) FROM vector_changes), (SELECT max(seq) FROM vector_changes)"
        ).fetchone() or (None, None)
        high = int(high or 0)
        if (not dims or epoch != self.epoch or dims != self.dims or high < self.seen
                or (low is not None and int(low) > self.seen + 1)):
            self._load(store, epoch, dims, high)  # a log trimmed past us cannot be followed
            return
        if high == self.seen:
            return
        changed = [int(r[0]) for r in store.conn.execute(
            "SELECT DISTINCT item_id FROM vector_changes WHERE seq > ?", (self.seen,))]
        if len(changed) * RELOAD_SHARE > len(self.keys) + LOAD_ROWS:
            self._load(store, epoch, dims, high)
            return
        self._replace(store, sorted(changed))
        self.seen = high

    def _load(self, store: Store, epoch: str | None, dims: int, high: int) -> None:
        keys: list[Array] = []
        words: list[Array] = []
        rows = store.conn.execute(  # in primary-key order: the keys come sorted
            f"SELECT item_id * {MAX_PASSAGES} + part, vector FROM vectors ORDER BY item_id, part")
        while dims and (batch := list(islice(rows, LOAD_ROWS))):
            k, w = self._rows(batch, dims)
            keys.append(k)
            words.append(w)
        self.keys = np.concatenate(keys) if keys else np.empty(0, np.int64)
        self.words = (np.concatenate(words, axis=1) if words
                      else np.empty(((dims + 63) // 64, 0), np.uint64))
        self.epoch, self.dims, self.seen = epoch, dims, high
        self.loads += 1

    def _rows(self, rows: Sequence[tuple[Any, ...]], dims: int) -> tuple[Array, Array]:
        """(keys, packed bits) of (key, float32 vector) rows; a vector of another size (never
        written by gitmem) is left out rather than misread."""
        whole = [(int(k), bytes(v)) for k, v in rows if len(v) == 4 * dims]
        keys = np.fromiter((k for k, _ in whole), np.int64, len(whole))
        floats = np.frombuffer(b"".join(v for _, v in whole), np.float32).reshape(-1, dims)
        return keys, pack(floats)

    def _replace(self, store: Store, items: Sequence[int]) -> None:
        """Put the passages the index holds now for ``items`` where theirs were (each item's
        keys are one run of the sorted keys): one copy of the arrays, in runs."""
        ids = np.asarray(items, np.int64)
        start = np.searchsorted(self.keys, ids * MAX_PASSAGES)
        stop = np.searchsorted(self.keys, (ids + 1) * MAX_PASSAGES)
        rows: list[tuple[Any, ...]] = []
        for part in batched(list(items)):
            rows.extend(store.conn.execute(
                f"SELECT item_id * {MAX_PASSAGES} + part, vector FROM vectors "
                f"WHERE item_id IN ({marks(part)}) ORDER BY item_id, part", part))
        new_keys, new_words = self._rows(rows, self.dims)
        new_start = np.searchsorted(new_keys, ids * MAX_PASSAGES)
        new_stop = np.searchsorted(new_keys, (ids + 1) * MAX_PASSAGES)
        keys: list[Array] = []
        words: list[Array] = []
        after = 0
        for old_from, old_to, new_from, new_to in zip(start.tolist(), stop.tolist(),
                                                      new_start.tolist(), new_stop.tolist(),
                                                      strict=True):
            keys += [self.keys[after:old_from], new_keys[new_from:new_to]]
            words += [self.words[:, after:old_from], new_words[:, new_from:new_to]]
            after = old_to
        self.keys = np.concatenate([*keys, self.keys[after:]])
        self.words = np.concatenate([*words, self.words[:, after:]], axis=1)

    def nearest_items(self, qvec: bytes, count: int) -> list[int]:
        """The item ids of the ``count`` passages nearest ``qvec`` by Hamming distance of their
        sign bits (ties: the lower rowid), ascending. Every passage when ``count`` covers them
        all: then the exact rescoring gives the exact k-NN."""
        n = len(self.keys)
        if count >= n:
            chosen = self.keys
        else:
            distance = self._distances(qvec)
            # The smallest distances by their counts (a distance is at most the dimension):
            # everything under the cut-off, then the first at it; cheaper than a partition.
            below = np.cumsum(np.bincount(distance, minlength=self.dims + 1))
            cut = int(np.searchsorted(below, count))
            inside = np.flatnonzero(distance < cut)
            at_cut = np.flatnonzero(distance == cut)[: count - len(inside)]
            chosen = self.keys[np.concatenate([inside, at_cut])]
        return sorted({int(k) // MAX_PASSAGES for k in chosen.tolist()})

    def _distances(self, qvec: bytes) -> Array:
        """The Hamming distance of every vector held to ``qvec``, in blocks that stay in the
        processor's cache (twice as fast as whole rows at 1,000,000 vectors)."""
        query = pack(np.frombuffer(qvec, np.float32)[None, : self.dims])[:, 0]
        n = len(self.keys)
        distance = np.zeros(n, np.uint16)
        spare, counts = np.empty(SCAN_BLOCK, np.uint64), np.empty(SCAN_BLOCK, np.uint8)
        for at in range(0, n, SCAN_BLOCK):
            size = min(SCAN_BLOCK, n - at)
            block = distance[at:at + size]
            for word, bits in zip(query, self.words, strict=True):
                np.bitwise_xor(bits[at:at + size], word, out=spare[:size])
                np.bitwise_count(spare[:size], out=counts[:size])
                np.add(block, counts[:size], out=block)
        return distance
