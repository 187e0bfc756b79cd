"""The warm processes of this user: a small file for each ``gitmem serve`` in the socket folder.

Each ``gitmem serve`` has an entry ``serve-<pid>.json`` beside the sockets (``runtime_dir``, a
0700 folder): its pid, the repository and workspace it serves, its socket, when it started and
whether a recall started it (``autostarted``). The entry's modification time is its last
request: the server touches it when a request to run a command arrives (not a ping), before it
answers. An autostarted server's entry is written by the command that started it, under the
registry's lock, so the next autostart counts it while it is still warming up; a server
started by hand writes its own. The server removes its entry when it exits; an entry whose
process is gone (killed, or its pid now another program's) is stale and is removed by whoever
reads it next.

Autostart is bounded by ``warm.max_servers`` (``make_room``): before a recall starts one more
server, the least recently used autostarted ones are stopped (SIGTERM) until there is room.
Servers started by hand (``gitmem serve``, the OpenClaw plugin) are listed but neither counted
nor stopped: someone asked for each of them.

Processes are read from ``/proc`` (Linux): whether a pid is a ``gitmem serve``, its resident
memory. Elsewhere a live pid is taken as the server and memory is unknown.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.errors import GitmemError
from gitmem.front.warm.client import runtime_dir, socket_path
from gitmem.lifetime import start_detached
from gitmem.locks import file_lock, held_elsewhere

PREFIX, SUFFIX = "serve-", ".json"
REGISTRY_LOCK = "registry.lock"
LOCK_SECONDS = 10.0  # an autostart waits this long for another to finish choosing


@dataclass(frozen=True)
class Entry:
    """One warm process as its entry says, with ``last_request`` (the entry's mtime)."""

    pid: int
    repo: str  # the repository's work tree root: what the socket is for
    root: str  # the workspace (a folder in the repository, or the root itself)
    socket: str
    started: float  # seconds since the epoch
    autostarted: bool
    last_request: float
    path: str  # the entry file

    def to_json(self) -> dict[str, Any]:
        idle = max(0.0, time.time() - self.last_request)
        return {"pid": self.pid, "workspace": self.root, "repo": self.repo,
                "exists": os.path.isdir(self.root) and os.path.isdir(self.repo),
                "rss_bytes": rss_bytes(self.pid), "idle_seconds": round(idle, 1),
                "started": self.started, "autostarted": self.autostarted,
                "socket": self.socket}


def socket_folder() -> str:
    """The socket folder, made 0700 and checked to be this user's alone."""
    folder = runtime_dir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    info = os.lstat(folder)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise GitmemError(f"{folder} is not a folder of this user; cannot serve safely "
                          "(set XDG_RUNTIME_DIR to a private folder)")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return folder


def entry_path(pid: int) -> str:
    return os.path.join(runtime_dir(), f"{PREFIX}{pid}{SUFFIX}")


@contextlib.contextmanager
def locked() -> Iterator[None]:
    """The registry to this process alone: count, stop and start without another autostart
    choosing from the same entries meanwhile."""
    folder = socket_folder()
    with file_lock(Path(folder) / REGISTRY_LOCK, wait=True, timeout=LOCK_SECONDS,
                   busy="another gitmem process is starting a warm process"):
        yield


def register(pid: int, *, repo: str, root: str, socket: str, autostarted: bool) -> str:
    """Write the entry of process ``pid`` (user-only, replaced in one step); its path."""
    path = entry_path(pid)
    data = {"pid": pid, "repo": repo, "root": root, "socket": socket,
            "started": round(time.time(), 3), "autostarted": autostarted}
    socket_folder()
    partial = f"{path}.{os.getpid()}.tmp"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC | os.O_NOFOLLOW,
                 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(partial, path)
    return path


def touch(path: str) -> None:
    """A request arrived: the entry's mtime is the last request (gone entries are skipped)."""
    with contextlib.suppress(OSError):
        os.utime(path)


def unregister(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def _read(path: str) -> Entry | None:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
            mtime = os.fstat(fh.fileno()).st_mtime
        return Entry(pid=int(data["pid"]), repo=str(data["repo"]), root=str(data["root"]),
                     socket=str(data["socket"]), started=float(data["started"]),
                     autostarted=bool(data["autostarted"]), last_request=mtime, path=path)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def live() -> list[Entry]:
    """The entries of running warm processes, least recently used first; stale entries (and
    unreadable ones) are removed."""
    folder = runtime_dir()
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found: list[Entry] = []
    for name in names:
        if not (name.startswith(PREFIX) and name.endswith(SUFFIX)):
            continue
        path = os.path.join(folder, name)
        entry = _read(path)
        if entry is not None and entry.path == entry_path(entry.pid) and is_server(entry.pid):
            found.append(entry)
        else:
            unregister(path)
    return sorted(found, key=lambda e: (e.last_request, e.started))


def is_server(pid: int) -> bool:
    """Whether ``pid`` is a running ``gitmem serve`` (off Linux: whether it runs at all)."""
    proc = f"/proc/{pid}"
    if os.path.isdir("/proc/self"):
        try:
            with open(f"{proc}/cmdline", "rb") as fh:
                words = fh.read().decode("utf-8", "replace").split("\0")
        except OSError:
            return False
        return "serve" in words and any(os.path.basename(w) == "gitmem" for w in words)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def rss_bytes(pid: int) -> int | None:
    """Resident memory of ``pid`` (Linux ``VmRSS``), or None when unknown."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def is_serving(repo: str) -> bool:
    """Whether a live entry is for ``repo`` (serving, or started and still warming up)."""
    return any(e.repo == repo for e in live())


def terminate(entries: list[Entry]) -> list[Entry]:
    """Ask each process to exit (SIGTERM: within ``ACCEPT_POLL``; a client whose request it
    was running works alone) and drop its entry: it no longer counts. The entries signalled."""
    done: list[Entry] = []
    for entry in entries:
        if not is_server(entry.pid):
            unregister(entry.path)
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(entry.pid, signal.SIGTERM)
            done.append(entry)
        unregister(entry.path)
    return done


def make_room(cap: int) -> list[Entry]:
    """Stop the least recently used autostarted servers until fewer than ``cap`` run (call
    under ``locked``, before starting one more); the entries stopped."""
    started = [e for e in live() if e.autostarted]
    return terminate(started[:max(0, len(started) - cap + 1)])


def wait_gone(entries: list[Entry], timeout: float) -> list[Entry]:
    """Wait until none of ``entries``' processes runs; those still running after ``timeout``."""
    deadline = time.monotonic() + timeout
    left = [e for e in entries if is_server(e.pid)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [e for e in left if is_server(e.pid)]
    return left


def autostart(repo_root: str, root: str, *, cap: int) -> bool:
    """Start ``gitmem serve`` for ``repo_root`` (workspace ``root``) in the background (where
    ``client.may_autostart``), unless one serves it or is starting: its lock is held, or its
    entry here is live, whatever its environment. At most ``cap`` autostarted servers run
    (``warm.max_servers``): the least recently used ones are stopped to make room
    (``make_room``). True when started; False also when the registry cannot be used (its
    folder is not this user's, another autostart holds it for ``LOCK_SECONDS``): the command
    that asked has answered, and the next one works alone, as without a warm process."""
    if held_elsewhere(Path(socket_path(repo_root) + ".lock")):
        return False
    try:
        with locked():  # two recalls at once start one server, and count each other's
            if is_serving(repo_root):
                return False
            make_room(cap)
            pid = start_detached([sys.executable, "-m", "gitmem", "-C", repo_root, "serve",
                                  "--autostarted"], cwd=repo_root)
            register(pid, repo=repo_root, root=root, socket=socket_path(repo_root),
                     autostarted=True)
    except GitmemError:
        return False
    return True
