"""The thin client of the warm process, run before anything heavy is imported.

``gitmem [-C PATH] recall ...`` first looks for a warm process serving the repository (one
``stat`` when there is none). When one answers, its output and exit status are the command's:
it ran the very same command code, so the output is identical to working alone. Anything else
(no process, another gitmem version or environment, a refused or dropped connection, no
heartbeat for ``REPLY_TIMEOUT`` seconds) returns None and the command runs in this process.

Standard library only, and ``_socket`` only once a socket file exists: this module is on the
cold path of every command.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import zlib

from gitmem import __version__

TYPE_CHECKING = False  # not typing's: importing typing costs the warm path ~2 ms
if TYPE_CHECKING:
    from typing import Any

PROTOCOL = 1
CONNECT_TIMEOUT = 0.25  # seconds; a live server accepts at once
REPLY_TIMEOUT = 2.0  # seconds without a message (the server sends one every HEARTBEAT)
HEARTBEAT = 0.5
# The commands a warm process answers: those that read the memory, and ``index``, which only
# brings the derived index up to date (what a warm recall does first anyway). Not a rebuild
# (``--force``: long work for a process of its own) nor help or version text.
FAST_COMMANDS = ("recall", "get", "index")
_NOT_FAST = {"-h", "--help", "--version", "--", "--force"}


def answerable(args: list[str]) -> bool:
    """Whether a warm process answers ``gitmem ARGS`` (ARGS from the command's name on)."""
    return bool(args) and args[0] in FAST_COMMANDS and not _NOT_FAST & set(args)


def runtime_dir() -> str:
    """Where sockets live: ``$XDG_RUNTIME_DIR/gitmem``, else ``$TMPDIR/gitmem-<uid>`` (0700)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    if base and os.path.isdir(base):
        return os.path.join(base, "gitmem")
    return os.path.join(os.environ.get("TMPDIR") or "/tmp", f"gitmem-{os.getuid()}")


def socket_path(repo_root: str) -> str:
    """The socket of the warm process for a repository (its resolved work tree root)."""
    raw = repo_root.encode("utf-8", "surrogateescape")
    key = f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"
    return os.path.join(runtime_dir(), f"{key}.sock")


def env_fingerprint(environ: dict[str, str] | os._Environ[str]) -> str:
    """The environment that can change an answer: gitmem's variables, the user's folders
    (config, model cache) and API keys (hashed, never sent)."""
    keep = sorted((k, v) for k, v in environ.items()
                  if (k.startswith(("GITMEM_", "XDG_CONFIG", "XDG_CACHE")) or k == "HOME"
                      or k.endswith("_API_KEY")) and k != "GITMEM_WARM")
    raw = json.dumps(keep).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(raw):08x}{zlib.adler32(raw):08x}"


def find_repo_root(start: str) -> str | None:
    """The nearest folder at or above ``start`` holding ``.git`` (a folder or a worktree file)."""
    here = start
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def private_socket(path: str) -> bool:
    """The socket and its folder belong to this user and nobody else can enter the folder."""
    uid = os.getuid()
    try:
        folder, sock = os.lstat(os.path.dirname(path)), os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(folder.st_mode) and folder.st_uid == uid
            and not folder.st_mode & 0o077 and stat.S_ISSOCK(sock.st_mode)
            and sock.st_uid == uid)


def _split(argv: list[str]) -> tuple[str, list[str]] | None:
    """(the folder to run in, the command's arguments) for ``[-C PATH] recall ARGS``."""
    start, rest = os.getcwd(), argv
    if rest[:1] == ["-C"] and len(rest) > 2:
        start, rest = os.path.join(start, rest[1]), rest[2:]
    if not answerable(rest) or (rest[0] == "index" and sys.stderr.isatty()):
        return None  # (on a terminal, index shows its progress: it runs in this process)
    return os.path.realpath(start), rest


def exchange(path: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """Send one request and wait for its answer, skipping heartbeats; None on any failure."""
    import _socket  # socket itself builds enums of every constant: ~5 ms of each warm call

    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(path)
        sock.settimeout(REPLY_TIMEOUT)
        sock.sendall(json.dumps(message).encode("utf-8", "surrogateescape") + b"\n")
        buf = b""
        while True:
            chunk = sock.recv(1 << 16)
            if not chunk:
                return None  # the server went away mid-request
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                reply = json.loads(line)
                if not isinstance(reply, dict):
                    return None
                if not reply.get("working"):
                    return reply
    except (OSError, ValueError):
        return None
    finally:
        sock.close()


def request(repo_root: str, op: str, **fields: Any) -> dict[str, Any] | None:
    """One request to the warm process of ``repo_root``, or None when none answers."""
    path = socket_path(repo_root)
    if not private_socket(path):
        return None
    return exchange(path, {"protocol": PROTOCOL, "version": __version__, "repo": repo_root,
                           "env": env_fingerprint(os.environ), "op": op, **fields})


def try_warm(argv: list[str]) -> int | None:
    """Run ``gitmem ARGV`` through a warm process; its exit status, or None to run here."""
    if os.environ.get("GITMEM_WARM", "1") == "0" or "GIT_DIR" in os.environ \
            or "GIT_WORK_TREE" in os.environ:
        return None
    split = _split(argv)
    if split is None:
        return None
    start, args = split
    if not os.path.isdir(start):
        return None  # the command's own error message names the path as given
    root = find_repo_root(start)
    if root is None:
        return None
    reply = request(root, "run", argv=["-C", start, *args], color=sys.stdout.isatty())
    if reply is None or not reply.get("done"):
        return None
    sys.stdout.write(str(reply.get("out", "")))
    sys.stderr.write(str(reply.get("err", "")))
    sys.stdout.flush()
    return int(reply.get("code", 0))


def may_autostart(enabled: bool) -> bool:
    """Whether a command that no warm process answered may start one for the next: not when
    off in the configuration (``warm.autostart``), ``GITMEM_WARM=0``, in CI (``CI`` set), or
    in a git hook (``GIT_DIR`` set): nothing there would use it before its idle timeout."""
    environ = os.environ
    return enabled and environ.get("GITMEM_WARM", "1") != "0" and not _in_ci(environ) \
        and "GIT_DIR" not in environ and "GIT_WORK_TREE" not in environ


def _in_ci(environ: dict[str, str] | os._Environ[str]) -> bool:
    return environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
