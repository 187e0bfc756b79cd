"""Filling in embeddings after the lexical index has landed.

A real local model embeds a few thousand tokens a second on two cores, so a large workspace
takes an hour or more the first time. The lexical index is therefore committed first and is
usable at once; this stage then embeds current items that have no vector yet, batch by batch.
The provider is called outside any index lock, and each batch is written in its own short
transaction under the writer lock, so a kill loses at most one batch, hooks and re-indexes
are not held up, and recall never waits. One embedding job runs at a time per workspace.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitmem.config import Config
from gitmem.embed.base import Embedder, EmbeddingError
from gitmem.embed.batch import EmbedStats, embed_texts
from gitmem.errors import LockBusy
from gitmem.index.cache import EmbeddingCache
from gitmem.index.items import VECTOR_LAYOUT
from gitmem.index.store import open_store
from gitmem.locks import EMBED_LOCK, file_lock, writer_lock
from gitmem.workspace import Workspace

BATCH_ITEMS = 64


@dataclass
class EmbedReport:
    done: int = 0  # vectors written in this run
    pending: int = 0  # current items still without a vector afterwards
    total: int = 0
    seconds: float = 0.0
    stats: EmbedStats | None = None
    skipped: str | None = None  # why nothing ran (another job is embedding)

    def to_json(self) -> dict[str, Any]:
        return {
            "embedded": self.done,
            "pending": self.pending,
            "total": self.total,
            "provider_calls": self.stats.calls if self.stats else 0,
            "cached": self.stats.cached if self.stats else 0,
            "seconds": round(self.seconds, 3),
            "skipped": self.skipped,
        }


def _prepare(ws: Workspace, embedder: Embedder, cache: EmbeddingCache,
             stats: EmbedStats) -> int:
    """Make the index's vectors belong to this embedder's fingerprint (reset on a change);
    returns their dimension."""
    store = open_store(ws.index_path, readonly=True)
    try:
        current = store.get_meta("embed_fingerprint")
        has_table = store.has_vec_table() or store.vec_error is not None
        layout = store.get_meta("embed_layout")
        dims = int(store.get_meta("embed_dims") or 0)
    finally:
        store.close()
    if current == embedder.fingerprint and has_table and layout == VECTOR_LAYOUT and dims:
        return dims
    probe = embed_texts(embedder, ["gitmem dimension probe"], input_type="document",
                        cache=cache, batch_size=1, stats=stats)
    with writer_lock(ws):
        store = open_store(ws.index_path)
        try:
            with store.transaction():
                store.reset_vectors(embedder.fingerprint, len(probe[0]) // 4)
        finally:
            store.close()
    return len(probe[0]) // 4


def _check_dims(vectors: list[bytes], dims: int, embedder: Embedder) -> None:
    """Vectors must keep the index's dimension: a server that silently changed its output
    (same settings) would otherwise mix sizes that cannot be compared."""
    wrong = next((len(v) // 4 for v in vectors if len(v) // 4 != dims), None)
    if wrong is not None:
        raise EmbeddingError(
            f"{embedder.name} returned vectors of {wrong} dimensions where the index holds "
            f"{dims}-dimension vectors from the same settings; if the model changed, set "
            "embed.dimensions or embed.model so that gitmem starts over with the new vectors")


def embed_pending(
    ws: Workspace,
    cfg: Config,
    embedder: Embedder,
    *,
    progress: Callable[[int, int], None] | None = None,
    limit: int | None = None,
    path: str | None = None,
) -> EmbedReport:
    """Embed current items that have no vector yet; resumable, one batch at a time. ``path``:
    only that file's (what a retain just wrote, embedded before it answers)."""
    started = time.monotonic()
    report = EmbedReport(stats=EmbedStats())
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(file_lock(ws.memory_dir / EMBED_LOCK, wait=False))
        except LockBusy:
            report.skipped = "another gitmem process is embedding this workspace"
            return report
        cache = EmbeddingCache(ws.memory_dir / "embeddings.sqlite")
        try:
            assert report.stats is not None
            dims = _prepare(ws, embedder, cache, report.stats)
            while limit is None or report.done < limit:
                store = open_store(ws.index_path, readonly=True)
                try:
                    batch = store.pending_embeddings(BATCH_ITEMS, path)
                    have, total = store.vector_counts() if progress else (0, 0)
                finally:
                    store.close()
                if progress is not None:
                    progress(have, total)
                if not batch:
                    break
                texts = [t for _, _, passages in batch for t in passages]
                vectors = embed_texts(embedder, texts, input_type="document", cache=cache,
                                      batch_size=cfg.embed_batch_size, stats=report.stats,
                                      dims=dims)
                _check_dims(vectors, dims, embedder)
                rows: list[tuple[int, str, int, bytes]] = []
                at = 0
                for item_id, vkey, passages in batch:
                    rows.extend((item_id, vkey, n, vectors[at + n]) for n in range(len(passages)))
                    at += len(passages)
                stored = 0
                with writer_lock(ws):
                    store = open_store(ws.index_path)
                    try:
                        held = store.get_meta("embed_fingerprint")
                        if held == embedder.fingerprint:
                            with store.transaction():
                                stored = store.put_vectors(rows)
                    finally:
                        store.close()
                if held is None:  # 'index --force' swapped in a new file: carry on in it
                    dims = _prepare(ws, embedder, cache, report.stats)
                    continue
                if held != embedder.fingerprint:
                    break  # another model's vectors: the run that made them owns the index
                report.done += stored  # items that ended meanwhile are simply skipped
        finally:
            cache.close()
    store = open_store(ws.index_path, readonly=True)
    try:
        have, report.total = store.vector_counts()
    finally:
        store.close()
    report.pending = report.total - have
    report.seconds = time.monotonic() - started
    return report
