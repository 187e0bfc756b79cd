"""The index's locks and its folder: cheap to import (no pygit2, no parser), so commands that
only read, or find nothing to do, start fast."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gitmem.errors import LockBusy
from gitmem.workspace import Workspace, ensure_memory_dir

LOCK_WAIT_SECONDS = 600.0


@contextmanager
def file_lock(path: Path, *, wait: bool, timeout: float = LOCK_WAIT_SECONDS,
              busy: str = "another gitmem process holds the lock") -> Iterator[None]:
    """An advisory exclusive lock on ``path``; LockBusy(busy) when it cannot be had in time."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if not wait or time.monotonic() > deadline:
                    raise LockBusy(busy) from exc
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


@contextmanager
def writer_lock(
    ws: Workspace, *, wait: bool = True, timeout: float = LOCK_WAIT_SECONDS
) -> Iterator[None]:
    """Serialise writers (two hooks at once) with an advisory lock on .memory/index.lock."""
    ensure_memory_dir(ws)
    with file_lock(ws.memory_dir / "index.lock", wait=wait, timeout=timeout,
                   busy="another gitmem process is updating the index; try again when it "
                        "finishes"):
        yield
