"""The user's folders for gitmem, and files of derived data kept there per interpreter.

The bottom of the layers (standard library only), so that :mod:`gitmem.records` may keep a file
too. ``user_cache_dir`` is where models, logs and the per-interpreter files live;
``private_dir`` and ``private_file`` make gitmem's own folders and files user-only.

An :class:`InterpreterFile` holds what Python would otherwise compute again in every process,
for one interpreter build only (``regex-cpython-311.marshal``: the SRE programs of
:mod:`gitmem.parse.patterns`; ``dataclass-cpython-311.marshal``: the methods
:mod:`gitmem.records` has ``dataclasses`` write). Like ``__pycache__`` it is derived data and may
be deleted at any time: a missing, damaged or foreign file reads as empty, and a folder that
cannot be made means working without one.
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Any


def user_dir(variable: str, default: str, kind: str) -> Path:
    """gitmem's folder of the user's ``kind`` (config, cache), as platformdirs finds it. On
    Linux that is the XDG rule (``$XDG_CONFIG_HOME/gitmem`` when it is an absolute path, else
    ``$HOME/.config/gitmem``), answered here when it applies plainly: importing platformdirs
    costs every command a few milliseconds (it imports tempfile, shutil and random)."""
    if sys.platform.startswith("linux"):
        xdg, home = os.environ.get(variable, ""), os.environ.get("HOME", "")
        if os.path.isabs(xdg):
            return Path(xdg) / "gitmem"
        if os.path.isabs(home):
            return Path(home) / default / "gitmem"
    import platformdirs

    found = getattr(platformdirs, f"user_{kind}_dir")("gitmem", appauthor=False)
    return Path(str(found))


def user_cache_dir() -> Path:
    """The user's cache folder for gitmem (``$XDG_CACHE_HOME/gitmem`` on Linux): models, logs."""
    return user_dir("XDG_CACHE_HOME", ".cache", "cache")


def private_dir(path: Path) -> Path:
    """Create ``path`` (and its parents) if needed and make it user-only (0700): gitmem's own
    folders hold memory text, vectors and logs."""
    path.mkdir(parents=True, exist_ok=True)
    if path.stat().st_mode & 0o077:
        path.chmod(0o700)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` if needed as a user-only file (0600), or make an existing one so."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    return path


class InterpreterFile:
    """One marshal file of derived data in the user's cache folder, for this interpreter build
    only: a dict read on first use (empty when the file is missing, damaged, or stamped by
    another build), and the entries this process adds, merged into the file when it ends
    (with what other processes wrote meanwhile). Each value is kept marshalled on its own and
    read when asked for: a process uses a few of the entries all commands have left there.
    ``usable`` turns False when there is no cache folder to read: the caller then computes
    everything, as without a file."""

    def __init__(self, name: str, stamp: tuple[Any, ...], *, max_entries: int = 2000) -> None:
        self.name, self.stamp, self.max_entries = name, (*stamp, sys.version), max_entries
        self.known: dict[Any, Any] | None = None
        self.added: dict[Any, Any] = {}
        self.path: Path | None = None
        self.usable = True

    def load(self) -> dict[Any, Any]:
        if self.known is None:
            self.known = {}
            try:
                self.path = user_cache_dir() / f"{self.name}-{sys.implementation.cache_tag}.marshal"
                self.known = self._read(self.path)
            except OSError:  # no home or cache folder
                self.usable = False
        return self.known

    def get(self, key: Any) -> Any:
        """The value kept for ``key``, or None."""
        blob = self.load().get(key)
        if not isinstance(blob, bytes):
            return None
        import marshal

        try:
            return marshal.loads(blob)
        except (ValueError, EOFError, TypeError):  # damaged: computed again
            return None

    def add(self, key: Any, value: Any) -> None:
        """Keep ``key: value`` for the next process (written when this one ends)."""
        import marshal

        if not self.added:
            import atexit

            atexit.register(self.save)
        self.added[key] = marshal.dumps(value)

    def save(self) -> None:
        """Add this process's entries to the file (merged with what others wrote since)."""
        if not self.added or self.path is None:
            return
        try:
            merged = self._read(self.path)
            if len(merged) + len(self.added) > self.max_entries:  # many versions' entries
                merged = {}
            merged.update(self.added)
            self._write(self.path, merged)
        except OSError:
            pass  # a cache that cannot be written is only slower
        self.added.clear()

    def _read(self, path: Path) -> dict[Any, Any]:
        import marshal

        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return {}
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # a symbolic link: not followed, replaced at the end
                return {}
            raise
        with open(fd, "rb") as fh:
            if not _owned_privately(os.fstat(fh.fileno())):
                return {}  # another user's, or writable by others: not trusted, replaced
            raw = fh.read()
        try:
            data = marshal.loads(raw)
        except (ValueError, EOFError, TypeError):  # damaged: written again at the end
            return {}
        if not (isinstance(data, tuple) and len(data) == 2 and data[0] == self.stamp
                and isinstance(data[1], dict)):
            return {}
        return data[1]

    def _write(self, path: Path, entries: dict[Any, Any]) -> None:
        import marshal

        private_dir(path.parent)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            # user-only whatever the umask: a file others may write is not read back
            private_file(tmp).write_bytes(marshal.dumps((self.stamp, entries)))
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)


def _owned_privately(st: os.stat_result) -> bool:
    """A file this user owns that nobody else may write (what the cache folder's 0700 makes
    of it): what it holds is used as this process's own work."""
    return st.st_uid == os.getuid() and not st.st_mode & 0o022
