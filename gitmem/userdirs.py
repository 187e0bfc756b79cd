"""The user's folders for gitmem (standard library only, the bottom of the layers).

``user_cache_dir`` is where models and crash logs live; ``private_dir`` and ``private_file``
make gitmem's own folders and files user-only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


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
