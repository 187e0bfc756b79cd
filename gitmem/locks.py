"""The index's locks and its folder: cheap to import (no pygit2, no parser), so commands that
only read, or find nothing to do, start fast.

A lock is a POSIX record lock (``fcntl.lockf``) on a small file in ``.memory/``, not ``flock``:
a record lock belongs to the process that took it. A forked child (the parse workers) does not
inherit it, and the kernel drops it the moment its holder dies, however it dies, so a killed run
never leaves a lock behind. ``flock`` locks are shared with every fork: a killed ``gitmem index``
used to leave its workers holding the index lock, and the next writer waited forever.

Record locks do not exclude threads of one process, and closing any descriptor of the file drops
the process's lock, so each path also has a thread lock, and a process opens a lock file at most
once at a time. Every wait is bounded; a lock that stays busy is an error that names its holder
(the holder writes its pid and command into the file).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from gitmem.errors import LockBusy
from gitmem.workspace import Workspace, ensure_memory_dir

INDEX_LOCK = "index.lock"  # the writer lock
EMBED_LOCK = "embed.lock"  # held by the one embedding job of a workspace
QUEUE_LOCK = "hook-queue.lock"  # held by the one hook run waiting for its turn to index
LOCK_WAIT_SECONDS = 600.0  # a writer (a hook: it must not lose its commit) waits this long
RECALL_WAIT_SECONDS = 30.0  # recall waits this long for another process to build the index
_POLL = 0.05
_guards: dict[str, threading.Lock] = {}
_guards_lock = threading.Lock()


def _guard(path: Path) -> threading.Lock:
    key = os.path.realpath(path)
    with _guards_lock:
        return _guards.setdefault(key, threading.Lock())


def _describe_self() -> str:
    """This process, as the lock file records it: pid, start time, command."""
    words = ["gitmem", *sys.argv[1:4]] if sys.argv else ["gitmem"]
    command = re.sub(r"[\x00-\x1f\x7f]", "?", " ".join(words))[:160]
    since = datetime.now(UTC).isoformat(timespec="seconds")
    return f"{os.getpid()} {since} {command}\n"


def _recorded_holder(fd: int) -> tuple[int, str] | None:
    """(pid, description) the holder wrote into the lock file, if it did."""
    try:
        text = os.pread(fd, 512, 0).decode("utf-8", "replace")
    except OSError:
        return None
    pid, _, rest = text.strip().partition(" ")
    if not pid.isdigit():
        return None
    since, _, command = rest.partition(" ")
    return int(pid), f"{command or 'gitmem'}, since {since}"


def _kernel_holder(fd: int) -> int | None:
    """The pid holding a record lock on ``fd``'s file, from /proc/locks (Linux), else None."""
    try:
        st = os.fstat(fd)
        with open("/proc/locks", encoding="ascii", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    device = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "POSIX" and parts[5] == device:
            with_pid = parts[4]
            return int(with_pid) if with_pid.isdigit() else None
    return None


def held_elsewhere(path: Path) -> bool:
    """Whether another process (or another thread here) holds the lock on ``path``, found
    without taking it: taking it, even for a moment, could make a job that tries it without
    waiting (an embedding run) give up. Unknown where /proc/locks is missing: False."""
    if _guard(path).locked():
        return True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        pid = _kernel_holder(fd)
    finally:
        os.close(fd)
    return pid is not None and pid != os.getpid()


def lock_holder(fd: int) -> str:
    """Who holds the lock on ``fd``'s file, for an error message."""
    recorded = _recorded_holder(fd)
    pid = _kernel_holder(fd)
    if recorded is not None and (pid is None or pid == recorded[0]):
        return f"held by process {recorded[0]} ({recorded[1]})"
    if pid is not None:
        return f"held by process {pid}"
    return "held by another process"


def _take(fd: int, *, wait: bool, deadline: float) -> bool:
    """Take the record lock on ``fd``, polling until ``deadline``; False when still busy."""
    while True:
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
        if not wait or time.monotonic() >= deadline:
            return False
        time.sleep(_POLL)


@contextmanager
def file_lock(path: Path, *, wait: bool, timeout: float = LOCK_WAIT_SECONDS,
              busy: str = "another gitmem process holds the lock") -> Iterator[None]:
    """An exclusive lock on ``path`` for this thread; LockBusy(busy, naming the holder) when it
    cannot be had within ``timeout`` seconds (at once when not ``wait``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    guard = _guard(path)
    got = guard.acquire(timeout=max(timeout, 0.0)) if wait else guard.acquire(blocking=False)
    if not got:
        raise LockBusy(f"{busy} (held by another thread of this process)")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            if not _take(fd, wait=wait, deadline=deadline):
                waited = f"; waited {timeout:.0f} s" if wait else ""
                raise LockBusy(f"{busy} ({lock_holder(fd)}{waited})")
            record = _describe_self().encode("utf-8", "replace")
            os.ftruncate(fd, 0)
            os.pwrite(fd, record, 0)
            yield
        finally:
            os.close(fd)  # drops the lock
    finally:
        guard.release()


@contextmanager
def writer_lock(
    ws: Workspace, *, wait: bool = True, timeout: float = LOCK_WAIT_SECONDS
) -> Iterator[None]:
    """Serialise writers (two hooks at once) with a lock on .memory/index.lock."""
    ensure_memory_dir(ws)
    with file_lock(ws.memory_dir / INDEX_LOCK, wait=wait, timeout=timeout,
                   busy="another gitmem process is updating the index; try again when it "
                        "finishes"):
        yield
