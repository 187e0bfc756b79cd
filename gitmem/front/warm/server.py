"""``gitmem serve``: a warm process for one repository that runs ``recall``, ``get`` and
``index`` (the derived index brought up to date, as a warm recall does first) for thin clients.

It binds a Unix socket (mode 0600, in a 0700 folder of the user's runtime directory) and holds
a lock next to it for its lifetime, so one process serves a repository. Each request runs the
command line's own code in this process (``handler``: the CLI with its output captured), so a
warm answer is byte for byte what the command prints working alone; the embedding model and
the imported modules stay loaded between requests. The workspace, its configuration and the
freshness check of the index are remembered between requests while a file watcher sees nothing
they depend on change (``gitmem.index.watch``): a request then runs no git process, and after
a commit, a checkout or an edit the index catches up as it does for a command alone.

A request from another gitmem version makes the server exit (it is out of date); one from
another environment (configuration variables, user folders, keys) or repository is refused
and the client works alone. While a command runs, a heartbeat goes to the client every
``HEARTBEAT`` seconds, so a client gives up quickly on a stopped or dead server. After
``idle_timeout`` seconds without a request the server exits; and at once (at its next idle
check, every ``ACCEPT_POLL`` seconds) when its workspace, repository or ``.git`` is removed or
moved (``WarmServer.moved``: a stat of each path, which also sees a folder above them renamed,
as an inotify watch of the folder itself would not). It is in the user's registry of warm
processes (``gitmem.front.warm.registry``) from its start to its end.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitmem import __version__
from gitmem.errors import GitmemError, LockBusy
from gitmem.front.warm import registry
from gitmem.front.warm.client import (
    HEARTBEAT,
    PROTOCOL,
    answerable,
    env_fingerprint,
    exchange,
    request,
    socket_path,
)
from gitmem.index.watch import WarmState
from gitmem.locks import file_lock
from gitmem.workspace import Workspace

# (argv, color, what is remembered) -> (exit status, stdout, stderr): the command line run in
# this process.
Handler = Callable[[list[str], "bool | None", WarmState], "tuple[int, str, str]"]
ACCEPT_POLL = 0.5  # seconds between idle checks (and checks that the workspace is there)
STOPPED, IDLE, MOVED = "stopped", "idle", "moved"  # why a server ended


def identity(paths: list[str]) -> list[tuple[int, int] | None]:
    """(device, inode) of each path, None where it is not there: a path that now names
    another file (the folder moved away, another put in its place) has another identity."""
    found: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            found.append(None)
        else:
            found.append((info.st_dev, info.st_ino))
    return found


class WarmServer:
    def __init__(self, ws: Workspace, handler: Handler, *, idle_timeout: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ws, self.handler, self.idle_timeout, self.clock = ws, handler, idle_timeout, clock
        self.repo = str(ws.repo_root)
        self.path = socket_path(self.repo)
        self.env = env_fingerprint(os.environ)
        self.warm = WarmState()
        self._stop = threading.Event()
        self._run_lock = threading.Lock()  # one command at a time: output capture is global
        self._active = 0
        self._served = 0  # commands run for clients
        self.idle_checks = 0  # accept timeouts so far: each one checks for the idle timeout
        self._last = clock()
        self._count_lock = threading.Lock()
        self.entry: str | None = None  # this process's entry in the registry (its last request)
        # What the server exits without: the workspace, the repository, its .git (a folder,
        # or a worktree's file) and the git folder it names.
        self.watched = list(dict.fromkeys(str(p) for p in (
            ws.root, ws.repo_root, ws.repo_root / ".git", ws.git_dir)))
        self._identity = identity(self.watched)

    def moved(self) -> bool:
        """Whether the workspace, the repository or its ``.git`` was removed or moved since
        the server started: a path no longer there, or there as another file (another
        device and inode), as after ``rm -rf``, ``mv`` of it or of a folder above it."""
        now = identity(self.watched)
        return None in now or now != self._identity

    # -- lifetime ------------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Load what every request needs (imports, the index caught up, the embedding model)."""
        self.handler(["-C", str(self.ws.root), "recall", "warm up", "--json"], None, self.warm)

    def serve(self, ready: Callable[[str], None] | None = None) -> str:
        """Serve until stopped, idle, or the workspace is gone; why it ended (``STOPPED``,
        ``IDLE``, ``MOVED``). Raises GitmemError when another process serves."""
        registry.socket_folder()
        try:
            with file_lock(Path(self.path + ".lock"), wait=False,
                           busy=f"a warm process already serves {self.repo}"):
                listener = self._bind()
                with self._count_lock:  # idle from now on: the warm-up is not idle time
                    self._last = self.clock()
                try:
                    if ready is not None:
                        ready(self.path)
                    return self._accept_loop(listener)
                finally:
                    listener.close()
                    self._unlink(listener)
        except LockBusy as exc:
            raise GitmemError(str(exc)) from None

    def _bind(self) -> socket.socket:
        if os.path.lexists(self.path):  # we hold the lock: whatever is there is stale
            os.unlink(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            listener.bind(self.path)
        except OSError as exc:  # most often a path longer than sockets allow (~100 bytes)
            listener.close()
            raise GitmemError(f"cannot listen on {self.path}: {exc.strerror or exc}; set "
                              "XDG_RUNTIME_DIR to a short private folder") from None
        os.chmod(self.path, 0o600)
        listener.listen(16)
        listener.settimeout(ACCEPT_POLL)
        self._inode = os.stat(self.path).st_ino
        return listener

    def _unlink(self, listener: socket.socket) -> None:
        try:
            if os.stat(self.path).st_ino == self._inode:
                os.unlink(self.path)
        except OSError:
            pass

    def _accept_loop(self, listener: socket.socket) -> str:
        while not self._stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                with self._count_lock:
                    self.idle_checks += 1
                    busy = self._active > 0
                    idle = not busy and self.clock() - self._last > self.idle_timeout
                if idle:
                    return IDLE
                if not busy and self.moved():  # a throw-away workspace deleted: nobody
                    return MOVED  # will ask for it again (and its folder is gone)
                continue
            with self._count_lock:
                self._active += 1
            threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()
        return STOPPED

    def stop(self) -> None:
        self._stop.set()

    # -- one connection ------------------------------------------------------------------------

    def _serve_one(self, conn: socket.socket) -> None:
        try:
            with conn:
                conn.settimeout(5.0)
                message = self._read(conn)
                if message is not None:
                    self._answer(conn, message)
        except OSError:
            pass  # the client went away; it works alone
        finally:
            with self._count_lock:
                self._active -= 1
                self._last = self.clock()

    @staticmethod
    def _read(conn: socket.socket) -> dict[str, Any] | None:
        buf = b""
        while b"\n" not in buf:
            chunk = conn.recv(1 << 16)
            if not chunk:
                return None
            buf += chunk
        try:
            message = json.loads(buf.split(b"\n", 1)[0])
        except ValueError:
            return None
        return message if isinstance(message, dict) else None

    @staticmethod
    def _send(conn: socket.socket, reply: dict[str, Any]) -> None:
        conn.sendall(json.dumps(reply).encode("utf-8", "surrogateescape") + b"\n")

    def _answer(self, conn: socket.socket, message: dict[str, Any]) -> None:
        if message.get("protocol") != PROTOCOL or message.get("version") != __version__:
            self._send(conn, {"stale": f"this warm process runs gitmem {__version__}"})
            self.stop()  # out of date: make way for one of the caller's version
            return
        if message.get("repo") != self.repo:
            self._send(conn, {"stale": f"this warm process serves {self.repo}"})
            return
        if message.get("env") != self.env:
            self._send(conn, {"stale": "started with another environment"})
            return
        op = message.get("op")
        if op == "ping":
            self._send(conn, {"done": True, "pid": os.getpid(), "repo": self.repo,
                              "served": self._served, "vectors_held": self.warm.vectors_held()})
        elif op == "stop":
            self._send(conn, {"done": True, "pid": os.getpid()})
            self.stop()
        elif op == "run" and _answerable(message.get("argv")):
            if self.entry is not None:  # before answering: the client may ask for the list
                registry.touch(self.entry)  # (or start another server) once answered
            argv = [str(a) for a in message["argv"]]
            color = message.get("color")
            self._run(conn, argv, color if isinstance(color, bool) else None)
        else:
            self._send(conn, {"stale": f"unknown request {op!r}"})

    def _run(self, conn: socket.socket, argv: list[str], color: bool | None) -> None:
        outcome: list[tuple[int, str, str]] = []
        finished = threading.Event()

        def work() -> None:
            try:
                with self._run_lock:
                    outcome.append(self.handler(argv, color, self.warm))
            finally:
                finished.set()

        threading.Thread(target=work, daemon=True).start()
        while not finished.wait(HEARTBEAT):
            self._send(conn, {"working": True})
        if not outcome:  # the handler itself failed (it maps every error): let the client
            self._send(conn, {"stale": "the warm process failed"})  # work alone
            return
        code, out, err = outcome[0]
        self._served += 1
        self._send(conn, {"done": True, "code": code, "out": out, "err": err})


def _answerable(argv: object) -> bool:
    """Only ``-C PATH <a command a warm process answers> ...``: nothing that writes memory."""
    return (isinstance(argv, list) and len(argv) >= 3 and argv[0] == "-C"
            and all(isinstance(a, str) for a in argv) and answerable(argv[2:]))


def handshake(server: WarmServer, warning: str | None) -> dict[str, Any]:
    """What a program that started ``gitmem serve --json`` needs to talk to it directly:
    the socket and the fields every request carries (protocol, version, repo, env)."""
    return {"serving": server.repo, "socket": server.path, "pid": os.getpid(),
            "protocol": PROTOCOL, "version": __version__, "repo": server.repo,
            "env": server.env, "idle_timeout": server.idle_timeout, "warning": warning}


def serve(ws: Workspace, handler: Handler, *, idle_timeout: float,
          announce: Callable[[dict[str, Any]], None], warning: str | None = None,
          autostarted: bool = False) -> str:
    """Warm up (index, model, imports), then serve in the foreground until idle, stopped, or
    the workspace is gone (why it ended: ``STOPPED``, ``IDLE``, ``MOVED``). ``announce`` gets
    the ``handshake`` once the socket listens. The server is in the user's registry of warm
    processes from the start (``autostarted``: the command that started it wrote its entry)."""
    server = WarmServer(ws, handler, idle_timeout=idle_timeout)
    entry = registry.entry_path(os.getpid())
    if not (autostarted and os.path.exists(entry)):
        entry = registry.register(os.getpid(), repo=server.repo, root=str(ws.root),
                                  socket=server.path, autostarted=autostarted)
    server.entry = entry
    try:
        server.warm_up()

        def terminate(signum: int, frame: object) -> None:
            server.stop()

        signal.signal(signal.SIGTERM, terminate)
        # A client that stopped waiting (no heartbeat in time: a long request can hold the
        # interpreter) has closed its socket: writing to it must fail with an error the
        # connection handles, not end the process by SIGPIPE as the command line's default
        # action would.
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
        return server.serve(lambda path: announce(handshake(server, warning)))
    finally:
        registry.unregister(entry)


def stop(ws: Workspace) -> str | None:
    """Ask the warm process of ``ws`` to exit (one started with another environment, which
    refuses requests, by a signal); a message, or None when none serves it."""
    repo = str(ws.repo_root)
    reply = request(repo, "stop")
    if reply is not None and reply.get("done"):
        return f"stopped the warm process {reply.get('pid')} of {repo}"
    stopped = registry.terminate([e for e in registry.live() if e.repo == repo])
    if not stopped:
        return None
    return f"stopped the warm process {', '.join(str(e.pid) for e in stopped)} of {repo}"


def stop_all(timeout: float) -> tuple[list[registry.Entry], list[registry.Entry]]:
    """Stop every warm process of this user; (those stopped, those still running after
    ``timeout`` seconds)."""
    stopped = registry.terminate(registry.live())
    return stopped, registry.wait_gone(stopped, timeout)


def ping(ws: Workspace) -> dict[str, Any] | None:
    """The warm process's answer to a ping (pid, repository), or None."""
    return request(str(ws.repo_root), "ping")


__all__ = ["IDLE", "MOVED", "STOPPED", "WarmServer", "exchange", "handshake", "ping", "serve",
           "stop", "stop_all"]
