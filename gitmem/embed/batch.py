"""The shared embedding layer: batching, caching and validation, once for every provider."""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from gitmem.embed.base import Embedder, EmbeddingError, InputType, Vector


class VectorCache(Protocol):
    """Where embedded vectors are kept by (fingerprint, text hash); the index provides one."""

    def get_many(self, fingerprint: str, hashes: Iterable[str]) -> dict[str, bytes]: ...

    def put_many(self, fingerprint: str, vectors: Mapping[str, bytes]) -> None: ...


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def pack(vector: Sequence[float]) -> bytes:
    """float32, little-endian: the layout sqlite-vec reads."""
    return struct.pack(f"<{len(vector)}f", *vector)


def unpack(blob: bytes) -> Vector:
    return list(struct.unpack(f"<{len(blob) // 4}f", blob))


@dataclass
class EmbedStats:
    texts: int = 0
    cached: int = 0
    embedded: int = 0
    calls: int = 0


def _check(vectors: Sequence[Sequence[float]], expected: int, dims: int | None, who: str) -> None:
    if len(vectors) != expected:
        raise EmbeddingError(f"{who} returned {len(vectors)} vectors for {expected} texts")
    for vector in vectors:
        if dims is not None and len(vector) != dims:
            raise EmbeddingError(
                f"{who} returned a vector of {len(vector)} dimensions, expected {dims}"
            )
        if not all(math.isfinite(x) for x in vector):
            raise EmbeddingError(f"{who} returned a vector with NaN or infinite values")


def embed_texts(
    embedder: Embedder,
    texts: Sequence[str],
    *,
    input_type: InputType,
    cache: VectorCache | None = None,
    batch_size: int = 32,
    stats: EmbedStats | None = None,
    dims: int | None = None,
) -> list[bytes]:
    """Packed float32 vectors for ``texts`` in order. Cached text never reaches the provider;
    each distinct missing text is embedded once, in batches of at most ``batch_size``.
    ``dims``: the size every vector must have (the index's); a batch of another size is an
    error before anything of it is cached."""
    stats = stats if stats is not None else EmbedStats()
    hashes = [text_hash(t) for t in texts]
    stats.texts += len(texts)
    known = cache.get_many(embedder.fingerprint, hashes) if cache is not None else {}
    stats.cached += sum(1 for h in hashes if h in known)
    todo = list({h: t for h, t in zip(hashes, texts, strict=True) if h not in known}.items())
    size = max(1, min(batch_size, embedder.max_batch))
    dims = dims or next((len(b) // 4 for b in known.values()), None)
    for start in range(0, len(todo), size):
        part = todo[start : start + size]
        vectors = embedder.embed_batch([t for _, t in part], input_type=input_type)
        stats.calls += 1
        _check(vectors, len(part), dims, embedder.name)
        dims = dims or (len(vectors[0]) if vectors else None)
        fresh = {h: pack(_normalised(v)) for (h, _), v in zip(part, vectors, strict=True)}
        stats.embedded += len(fresh)
        if cache is not None:
            cache.put_many(embedder.fingerprint, fresh)
        known.update(fresh)
    return [known[h] for h in hashes]


def _normalised(vector: Sequence[float]) -> list[float]:
    """Unit length, so cosine similarity is a dot product (and sqlite-vec's L2 order agrees)."""
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else list(vector)
