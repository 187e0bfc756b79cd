"""Small shared helpers for tests that use real parts: git repos, SQLite, the CLI.

Everything runs inside the hermetic environment of ``conftest.py`` (HOME, XDG dirs, git identity,
TZ=UTC). Repositories are made with the ``git`` command line with fixed commit dates, so commit
ids and record times are reproducible.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gitmem.cli import run

DEFAULT_DATE = "2025-11-27T21:00:00+00:00"
GOOD_DAILY = "memory/2025-11-27.md"
GOOD_TEXT = "## Retain\n- W @Peter: Moved the gateway host to The Castle.\n"


def git(repo: Path, *args: str, env_date: str | None = None) -> str:
    """Run ``git -C repo ARGS`` and return its stdout; ``env_date`` fixes both commit dates."""
    env = dict(os.environ)
    if env_date is not None:
        env["GIT_AUTHOR_DATE"] = env_date
        env["GIT_COMMITTER_DATE"] = env_date
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return result.stdout


def make_repo(tmp_path: Path, name: str = "repo") -> Path:
    """A new, empty git repository (branch ``main``) at ``tmp_path / name``."""
    repo = tmp_path / name
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    return repo


def write(repo: Path, rel: str, content: str | bytes) -> Path:
    """Write a file (text as UTF-8 with no newline translation, or raw bytes)."""
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def commit_all(repo: Path, message: str, date: str = DEFAULT_DATE) -> str:
    """Stage everything and commit with a fixed date; returns the new commit id."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message, env_date=date)
    return git(repo, "rev-parse", "HEAD").strip()


def gitmem(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process via ``gitmem.cli.run``; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(list(args))
    return code, out.getvalue(), err.getvalue()


def gitmem_subprocess(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m gitmem ARGS`` as a real process (inherits the hermetic environment)."""
    return subprocess.run(
        [sys.executable, "-m", "gitmem", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def recall_json(repo: Path, query: str, *extra: str) -> dict[str, Any]:
    """``gitmem -C repo recall QUERY --json EXTRA...``; asserts exit 0 and returns the JSON."""
    code, out, err = gitmem("-C", str(repo), "recall", query, "--json", *extra)
    assert code == 0, f"recall {query!r} exited {code}: {err}"
    data: dict[str, Any] = json.loads(out)
    return data


def status_json(repo: Path) -> dict[str, Any]:
    """``gitmem -C repo status --json``; asserts exit 0 and returns the JSON."""
    code, out, err = gitmem("-C", str(repo), "status", "--json")
    assert code == 0, f"status exited {code}: {err}"
    data: dict[str, Any] = json.loads(out)
    return data


def sources(data: dict[str, Any]) -> list[str]:
    """The ``source`` citations of a recall JSON answer, in rank order."""
    return [r["source"] for r in data["results"]]
