"""Long histories in one ``git fast-import`` stream: thousands of commits in seconds, where a
``git commit`` per day would take minutes.

Commits are dated in UTC by the caller and signed by a fixed identity, so the same content gives
the same commit ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from testing.gitenv import Identity, sealed_env
from testing.repo import git


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


@dataclass
class FastImportStream:
    """A fast-import stream being written: one ``commit`` call per commit, files inline."""

    identity: Identity
    branch: str = "main"
    payload_bytes: int = 0  # the files' contents written so far
    _chunks: list[bytes] = field(default_factory=lambda: [b"feature done\n"])

    def commit(self, when: datetime, message: str, files: Iterable[tuple[str, str]]) -> None:
        """A commit on the branch at ``when`` (timezone-aware) that adds or replaces ``files``
        (path, UTF-8 text)."""
        stamp = f"{self.identity} {int(when.timestamp())} +0000".encode()
        self._chunks += [
            f"commit refs/heads/{self.branch}\n".encode(),
            b"author " + stamp + b"\ncommitter " + stamp + b"\n",
            _data(message.encode("utf-8")),
        ]
        for path, text in files:
            payload = text.encode("utf-8")
            self.payload_bytes += len(payload)
            self._chunks += [f"M 100644 inline {path}\n".encode(), _data(payload)]

    def getvalue(self) -> bytes:
        return b"".join(self._chunks) + b"done\n"


def import_history(dest: Path, stream: FastImportStream) -> str:
    """A new repository at ``dest`` holding ``stream``'s history, its branch checked out (by a
    sealed git); returns the head commit id."""
    env = sealed_env(stream.identity)
    dest.mkdir(parents=True, exist_ok=True)
    git(dest, "init", "-q", "-b", stream.branch, env=env)
    git(dest, "config", "core.autocrlf", "false", env=env)  # later checkouts by the user's git, too
    git(dest, "fast-import", "--quiet", env=env, stdin=stream.getvalue())
    git(dest, "reset", "-q", "--hard", stream.branch, env=env)
    return git(dest, "rev-parse", "HEAD", env=env).strip()
