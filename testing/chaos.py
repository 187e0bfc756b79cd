"""Killing gitmem at chosen moments and checking what it leaves behind (tests and
bench/reliability share these).

Processes are found through ``/proc`` (Linux): a gitmem run is recognised by the workspace path on
its command line, which is unique to a test's temporary folder, so a worker that outlived its
parent (same command line: the pool forks) is found as well.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gitmem.index.store import open_store
from testing.bounds import FAILURE_SECONDS

PROC = Path("/proc")


def processes_mentioning(text: str) -> list[int]:
    """Pids of live processes (not zombies) whose command line contains ``text``."""
    found: list[int] = []
    needle = text.encode()
    me = os.getpid()
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


def servers_under(folder: str) -> list[int]:
    """Pids of live ``gitmem serve`` processes started for a repository in ``folder`` (their
    ``-C PATH`` lies there). A server's child between fork and exec (a git command, a
    background index run) still shows the server's command line: it is no server, and is
    left out (its parent is one)."""
    found: dict[int, int] = {}  # pid -> parent pid
    for pid in processes_mentioning(folder):
        try:
            args = (PROC / str(pid) / "cmdline").read_bytes().decode("utf-8", "replace")
            # /proc/PID/stat: "pid (comm) state ppid ...", comm may hold spaces and parentheses
            parent = int((PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        words = args.split("\0")
        if "serve" in words and "-C" in words[:-1] \
                and words[words.index("-C") + 1].startswith(folder):
            found[pid] = parent
    return [pid for pid, parent in found.items() if parent not in found]


def wait_servers_gone(folder: str, timeout: float) -> list[int]:
    """Wait until no ``gitmem serve`` of a repository in ``folder`` runs; the survivors."""
    deadline = time.monotonic() + timeout
    while (left := servers_under(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def children_of(pid: int) -> list[int]:
    """Pids whose parent is ``pid``."""
    kids: list[int] = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            kids.append(int(entry.name))
    return kids


def descendants(pid: int) -> list[int]:
    """Children of ``pid``, their children, and so on."""
    found: list[int] = []
    todo = [pid]
    while todo:
        kids = children_of(todo.pop())
        found.extend(kids)
        todo.extend(kids)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie is not)."""
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def describe(pid: int) -> str:
    """``pid``, its state and its command line, for a failure message."""
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[:2]
        cmdline = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ")
    except (OSError, IndexError):
        return f"{pid} (gone)"
    return f"{pid} ({' '.join(state)}: {cmdline.decode('utf-8', 'replace')[:160]})"


def wait_gone(text: str, timeout: float) -> list[int]:
    """Wait until no process mentions ``text``; returns the survivors (empty when all gone)."""
    deadline = time.monotonic() + timeout
    while True:
        left = processes_mentioning(text)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)


def reap(pids: Sequence[int]) -> None:
    """SIGKILL leftovers a failed check found (so one failure does not spoil the next trial)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def gitmem_process(repo: Path, *args: str, env: dict[str, str] | None = None
                   ) -> subprocess.Popen[bytes]:
    """``python -m gitmem -C repo ARGS`` as a real process, output discarded."""
    return subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


def kill_after(proc: subprocess.Popen[bytes], seconds: float,
               family: list[int] | None = None) -> bool:
    """SIGKILL ``proc`` after ``seconds``; False when it had already finished. ``family``
    receives the processes it had started (workers, git, a model process) at that moment, which
    must not outlive it."""
    try:
        proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        if family is not None:
            family.extend(descendants(proc.pid))
        proc.kill()
        proc.wait()
        return True
    return False


def kill_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool],
              timeout: float = FAILURE_SECONDS) -> bool:
    """SIGKILL ``proc`` the moment ``ready()`` holds; False when it finished first."""
    deadline = time.monotonic() + timeout
    while proc.poll() is None and time.monotonic() < deadline:
        if ready():
            proc.kill()
            proc.wait()
            return True
        time.sleep(0.005)
    if proc.poll() is None:
        proc.kill()
        proc.wait()
        return True
    return False


def integrity(index: Path) -> str:
    """``PRAGMA integrity_check`` of an index file ('ok' when sound); 'missing' without one."""
    if not index.exists():
        return "missing"
    store = open_store(index, readonly=True)
    try:
        return store.integrity()
    finally:
        store.close()


def leftovers(memory_dir: Path) -> list[str]:
    """Temporary index files in ``.memory/`` (a finished run leaves none)."""
    if not memory_dir.is_dir():
        return []
    return sorted(p.name for p in memory_dir.iterdir() if ".tmp-" in p.name)


@dataclass
class Tally:
    """Trials of one scenario and what went wrong in each failed one."""

    scenario: str
    trials: int = 0
    killed: int = 0  # trials where the kill landed before the run finished
    failures: list[str] = field(default_factory=list)

    def fail(self, trial: int, what: str) -> None:
        self.failures.append(f"trial {trial}: {what}")


WRITER_KILLED_MID_TRANSACTION = """
import apsw, os, sys
conn = apsw.Connection(sys.argv[1])
conn.execute("PRAGMA cache_size = 5")  # spill pages to the file early: the journal is hot
conn.execute("BEGIN IMMEDIATE")
for i in range(3000):
    conn.execute(sys.argv[2], (f"junk{i}", "x" * 500))
os._exit(9)
"""


def leave_hot_journal(db: Path, insert: str = "INSERT INTO meta VALUES (?, ?)") -> Path:
    """Kill a writer of ``db`` in the middle of a big transaction (``insert`` takes two
    parameters: junk<n>, filler); returns the hot journal it leaves."""
    proc = subprocess.run([sys.executable, "-c", WRITER_KILLED_MID_TRANSACTION, str(db), insert],
                          check=False)
    assert proc.returncode == 9, proc
    journal = Path(f"{db}-journal")
    assert journal.exists(), "the killed writer left no journal"
    return journal
