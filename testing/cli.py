"""gitmem's command line, run in-process (fast) or as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from gitmem.front.cli import run_captured
from testing.bounds import FAILURE_SECONDS


def gitmem(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process via ``gitmem.front.cli.run``; returns (exit code, stdout, stderr)."""
    return run_captured(list(args), color=None)


def gitmem_subprocess(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m gitmem ARGS`` as a real process (inherits this process's environment)."""
    return subprocess.run(
        [sys.executable, "-m", "gitmem", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=FAILURE_SECONDS,
    )


def gitmem_json(*args: str) -> dict[str, Any]:
    """``gitmem ARGS`` in-process; asserts exit 0 and returns its JSON output."""
    code, out, err = gitmem(*args)
    assert code == 0, f"gitmem {' '.join(args)} exited {code}: {err}"
    data: dict[str, Any] = json.loads(out)
    return data


def recall_json(repo: Path, query: str, *extra: str) -> dict[str, Any]:
    """``gitmem -C repo recall QUERY --json EXTRA...``; asserts exit 0 and returns the JSON."""
    return gitmem_json("-C", str(repo), "recall", query, "--json", *extra)


def status_json(repo: Path) -> dict[str, Any]:
    """``gitmem -C repo status --json``; asserts exit 0 and returns the JSON."""
    return gitmem_json("-C", str(repo), "status", "--json")


def sources(data: dict[str, Any]) -> list[str]:
    """The ``source`` citations of a recall JSON answer, in rank order."""
    return [r["source"] for r in data["results"]]
