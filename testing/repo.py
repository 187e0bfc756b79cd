"""Small repositories built with the git command line, with fixed commit dates.

``env`` defaults to this process's environment: inside the test suite that is the hermetic one
(``gitenv.hermetic_environ``); builders pass ``gitenv.sealed_env(...)``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

DEFAULT_DATE = "2025-11-27T21:00:00+00:00"


class GitFailed(RuntimeError):
    """A git command exited non-zero; the message carries git's own."""


def git(
    repo: Path,
    *args: str,
    date: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    check: bool = True,
) -> str:
    """Run ``git -C repo ARGS`` and return its stdout; ``date`` fixes both commit dates.
    ``check``: a failure raises GitFailed (else its stdout, usually empty, is returned)."""
    run_env = None if env is None else dict(env)
    if date is not None:
        dates = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        run_env = {**(os.environ if env is None else env), **dates}
    result = subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=run_env
    )
    if result.returncode and check:
        message = result.stderr.decode("utf-8", "replace").strip()
        raise GitFailed(f"git {' '.join(args)} failed ({result.returncode}) in {repo}: {message}")
    return result.stdout.decode("utf-8", "replace")


def make_repo(parent: Path, name: str = "repo", *, env: Mapping[str, str] | None = None) -> Path:
    """A new, empty git repository (branch ``main``) at ``parent / name``."""
    repo = parent / name
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main", env=env)
    return repo


def write(repo: Path, rel: str, content: str | bytes) -> Path:
    """Write a file (text as UTF-8 with no newline translation, or raw bytes)."""
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def commit_all(
    repo: Path,
    message: str,
    date: str = DEFAULT_DATE,
    *,
    env: Mapping[str, str] | None = None,
    allow_empty: bool = False,
) -> str:
    """Stage everything and commit (hooks skipped) at ``date``; returns the new commit id."""
    git(repo, "add", "-A", env=env)
    empty = ("--allow-empty",) if allow_empty else ()
    git(repo, "commit", "-q", "--no-verify", *empty, "-m", message, date=date, env=env)
    return git(repo, "rev-parse", "HEAD", env=env).strip()


def notes_history(parent: Path, name: str, start: Mapping[str, str], start_date: str,
                  days: Mapping[str, str]) -> Path:
    """A repository: a first commit of ``start`` (path -> text) at ``start_date``, then per day
    (``YYYY-MM-DD`` -> text) ``memory/DAY.md`` committed at 21:00 UTC, in the order given."""
    repo = make_repo(parent, name)
    for path, text in start.items():
        write(repo, path, text)
    if start:
        commit_all(repo, "memory: start", start_date)
    for day, text in days.items():
        write(repo, f"memory/{day}.md", text)
        commit_all(repo, f"memory: {day}", f"{day}T21:00:00+00:00")
    return repo


def daily_notes_repo(parent: Path, lines: Sequence[tuple[str, str]]) -> Path:
    """A repository with one daily note a day (``memory/DAY.md``: the line under ``## Notes``),
    each committed on its day at 20:00 UTC, in the order given."""
    repo = make_repo(parent)
    for day, text in lines:
        write(repo, f"memory/{day}.md", f"# {day}\n\n## Notes\n\n{text}\n")
        commit_all(repo, day, f"{day}T20:00:00+00:00")
    return repo


def pasted_log(chars: int = 2_500_000) -> str:
    """One line of a log dump as an agent pastes it into a note (issue 37: 2.5 MB): distinct
    tokens after an ``ECONNRESET gateway dump:`` head, no line break; the same every time."""
    import random

    rng = random.Random(37)
    parts, size = ["ECONNRESET gateway dump:"], 0
    while size < chars:
        parts.append(f"frame{len(parts):07d}={rng.getrandbits(32):08x}")
        size += len(parts[-1]) + 1
    return " ".join(parts)[:chars]
