"""The embedding cache: vectors keyed by (provider fingerprint, text hash).

It is SQL, so it lives in the index layer, but in its own file, ``.memory/embeddings.sqlite``,
so that a full rebuild of the index, a change of chunking or ``gitmem reset`` never costs a
second call to the provider for text it has already embedded. The fingerprint covers
provider, model, endpoint and dimensions.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import apsw

from gitmem.index.store import batched, marks
from gitmem.userdirs import private_dir, private_file

_DDL = """
CREATE TABLE IF NOT EXISTS cache (
    fingerprint TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dims INTEGER NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (fingerprint, text_hash)
) WITHOUT ROWID;
"""


class EmbeddingCache:
    def __init__(self, path: Path) -> None:
        private_file(private_dir(path.parent) / path.name)
        self.conn = apsw.Connection(str(path))
        self.conn.set_busy_timeout(15000)
        try:
            self.conn.execute(_DDL)
        except (apsw.NotADBError, apsw.CorruptError):
            # A cache is only a cache: start a new one rather than fail.
            self.conn.close()
            path.unlink(missing_ok=True)
            private_file(path)
            self.conn = apsw.Connection(str(path))
            self.conn.set_busy_timeout(15000)
            self.conn.execute(_DDL)

    def get_many(self, fingerprint: str, hashes: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(hashes))
        found: dict[str, bytes] = {}
        for part in batched(wanted):
            for h, blob in self.conn.execute(
                f"SELECT text_hash, vector FROM cache WHERE fingerprint = ? "
                f"AND text_hash IN ({marks(part)})",
                (fingerprint, *part),
            ):
                found[str(h)] = bytes(blob)
        return found

    def put_many(self, fingerprint: str, vectors: Mapping[str, bytes]) -> None:
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?)",
                [(fingerprint, h, len(blob) // 4, blob) for h, blob in vectors.items()],
            )

    def close(self) -> None:
        self.conn.close()
