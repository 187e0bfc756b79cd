"""Warm processes (``gitmem serve``) as real processes, for tests and benchmarks: started once
they listen, and commands run against them as a user would."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

from testing.bounds import FAILURE_SECONDS  # bounds for failures only


def run_cli(repo: Path, *args: str, warm: bool = True,
            env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m gitmem -C repo ARGS`` as a real process; (result, wall seconds)."""
    full = {**os.environ, **(env or {})}
    if not warm:
        full["GITMEM_WARM"] = "0"
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo), *args],
                          capture_output=True, text=True, env=full,
                          timeout=FAILURE_SECONDS)
    return proc, time.monotonic() - started


def start_server(repo: Path, *extra: str) -> subprocess.Popen[str]:
    """``gitmem serve`` once it listens: it says so on stderr after binding its socket, so a
    client that connects from then on is answered (however long the warm-up took)."""
    proc = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo), "serve", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    said = b""  # read from the pipe itself: a buffered reader could hold the line select awaits
    while not any(ln.startswith(b"gitmem: serving ") for ln in said.split(b"\n")[:-1]):
        ready, _, _ = select.select([proc.stderr], [], [], FAILURE_SECONDS)
        chunk = os.read(proc.stderr.fileno(), 4096) if ready else b""
        if not chunk:  # it ended, or said nothing for the failure bound
            proc.kill()
            raise AssertionError(f"the warm process did not start: {said!r}"
                                 f"{proc.communicate()[1]}")
        said += chunk  # a warning may come first
    return proc
