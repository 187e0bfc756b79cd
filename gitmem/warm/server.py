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
``idle_timeout`` seconds without a request the server exits.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitmem import __version__
from gitmem.errors import GitmemError, LockBusy
from gitmem.index.watch import WarmState
from gitmem.locks import file_lock
from gitmem.warm.client import (
    HEARTBEAT,
    PROTOCOL,
    answerable,
    env_fingerprint,
    exchange,
    request,
    runtime_dir,
    socket_path,
)
from gitmem.workspace import Workspace

# (argv, color, what is remembered) -> (exit status, stdout, stderr): the command line run in
# this process.
Handler = Callable[[list[str], "bool | None", WarmState], "tuple[int, str, str]"]
ACCEPT_POLL = 0.5  # seconds between idle checks


def private_dir() -> str:
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

    # -- lifetime ------------------------------------------------------------------------------

    def warm_up(self) -> None:
        """Load what every request needs (imports, the index caught up, the embedding model)."""
        self.handler(["-C", str(self.ws.root), "recall", "warm up", "--json"], None, self.warm)

    def serve(self, ready: Callable[[str], None] | None = None) -> None:
        """Serve until stopped or idle. Raises GitmemError when another process serves."""
        private_dir()
        try:
            with file_lock(Path(self.path + ".lock"), wait=False,
                           busy=f"a warm process already serves {self.repo}"):
                listener = self._bind()
                with self._count_lock:  # idle from now on: the warm-up is not idle time
                    self._last = self.clock()
                try:
                    if ready is not None:
                        ready(self.path)
                    self._accept_loop(listener)
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

    def _accept_loop(self, listener: socket.socket) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                with self._count_lock:
                    self.idle_checks += 1
                    idle = self._active == 0 and self.clock() - self._last > self.idle_timeout
                if idle:
                    return
                continue
            with self._count_lock:
                self._active += 1
            threading.Thread(target=self._serve_one, args=(conn,), daemon=True).start()

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
          announce: Callable[[dict[str, Any]], None], warning: str | None = None) -> None:
    """Warm up (index, model, imports), then serve in the foreground until idle or stopped.
    ``announce`` gets the ``handshake`` once the socket listens."""
    server = WarmServer(ws, handler, idle_timeout=idle_timeout)
    server.warm_up()

    def terminate(signum: int, frame: object) -> None:
        server.stop()

    signal.signal(signal.SIGTERM, terminate)
    # A client that stopped waiting (no heartbeat in time: a long request can hold the
    # interpreter) has closed its socket: writing to it must fail with an error the connection
    # handles, not end the process by SIGPIPE as the command line's default action would.
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    server.serve(lambda path: announce(handshake(server, warning)))


def stop(ws: Workspace) -> str | None:
    """Ask the warm process of ``ws`` to exit; a message, or None when none answered."""
    reply = request(str(ws.repo_root), "stop")
    if reply is None or not reply.get("done"):
        return None
    return f"stopped the warm process {reply.get('pid')} of {ws.repo_root}"


def ping(ws: Workspace) -> dict[str, Any] | None:
    """The warm process's answer to a ping (pid, repository), or None."""
    return request(str(ws.repo_root), "ping")


__all__ = ["WarmServer", "exchange", "handshake", "ping", "private_dir", "serve", "stop"]
