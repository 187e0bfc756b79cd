"""Running git: one ``git`` process, its output as text or as a path, or git's reason it failed."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from gitmem.errors import GitmemError

NO_BLOB = "0" * 40  # the id git prints for "no object" (a new file's old side, a deletion)


def run(cwd: Path, *args: str, env: Mapping[str, str] | None = None,
        stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C cwd ARGS`` and capture its output (never raises for git's exit status)."""
    try:
        return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, check=False,
                              env=env, input=stdin)
    except OSError as exc:
        raise GitmemError(f"cannot run git ({exc}); gitmem needs git on PATH") from exc


def output(proc: subprocess.CompletedProcess[bytes]) -> str:
    """What git printed, as text without the surrounding white space."""
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def path_output(proc: subprocess.CompletedProcess[bytes]) -> str:
    """A path git printed: only the line end is removed (names may end in spaces or hold
    newlines)."""
    text = proc.stdout.decode("utf-8", "surrogateescape")
    return text[:-1] if text.endswith("\n") else text


def checked_output(repo_root: Path, env: Mapping[str, str] | None, *args: str,
                   stdin: bytes | None = None) -> str:
    """``checked_bytes`` as text."""
    return checked_bytes(repo_root, *args, env=env, stdin=stdin).decode("utf-8", "replace").strip()


def checked_bytes(repo_root: Path, *args: str, env: Mapping[str, str] | None = None,
                  stdin: bytes | None = None) -> bytes:
    """The output of a git command that must succeed (GitmemError with git's reason)."""
    proc = run(repo_root, "--literal-pathspecs", *args, env=env, stdin=stdin)
    if proc.returncode != 0:
        reason = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        raise GitmemError(f"git {args[0]} failed in {repo_root}: {reason}")
    return proc.stdout


def git_path(repo_root: Path, name: str) -> Path:
    """Where git keeps ``name`` (``index``, ``filter-repo``) for this work tree."""
    proc = run(repo_root, "rev-parse", "--git-path", name)
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot ask git where its {name} is in {repo_root}: {reason}")
    path = Path(path_output(proc))
    return path if path.is_absolute() else (repo_root / path).resolve()
