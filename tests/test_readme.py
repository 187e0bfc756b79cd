"""The README's first command must stay true: build the sample workspace and get cited results."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The install steps of the first command: the test already runs inside an environment where
# `.[dev]` is installed (by the CI script the second block names).
INSTALL_STEPS = (
    ["python3", "-m", "venv", ".venv"],
    [".", ".venv/bin/activate"],
    ["pip", "install", "-e", ".[dev]"],
)


def _blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)


def _split(block: str) -> tuple[list[list[str]], str]:
    """The first command's install steps, and the rest as one shell command."""
    parts = [part.strip() for part in block.split("&&")]
    install = [shlex.split(part) for part in parts[: len(INSTALL_STEPS)]]
    return install, " && ".join(parts[len(INSTALL_STEPS) :])


def test_readme_opens_with_install_and_test_commands() -> None:
    blocks = _blocks()
    assert len(blocks) >= 2
    install, rest = _split(blocks[0])
    assert install == list(INSTALL_STEPS)
    assert "recall" in rest and "/tmp" not in blocks[0]
    assert blocks[1].strip() == "bash .ci/run"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest" in ci and "ruff check" in ci and "mypy" in ci


def test_readme_first_command_gives_cited_results_twice(tmp_path: Path) -> None:
    _, command = _split(_blocks()[0])
    # `python` and `gitmem` are this interpreter and the gitmem it imports (the checkout).
    shims = tmp_path / "bin"
    shims.mkdir()
    for name, target in (("python", [sys.executable]), ("gitmem", [sys.executable, "-m", "gitmem"])):
        shim = shims / name
        shim.write_text(f"#!/bin/sh\nexec {shlex.join(target)} \"$@\"\n", encoding="utf-8")
        shim.chmod(0o755)
    temp = tmp_path / "tmp"  # where `mktemp -d` makes the sample workspace
    temp.mkdir()
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}", "TMPDIR": str(temp)}
    for run in (1, 2):  # a second run must work as well as the first
        proc = subprocess.run(
            ["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, check=False
        )
        assert proc.returncode == 0, (run, command, proc.stderr)
        assert re.search(r"^memory/2025-11-\d\d\.md#L\d+", proc.stdout, flags=re.M), proc.stdout
        assert "gateway" in proc.stdout.lower()
        assert len(list(temp.iterdir())) == run  # a new sample workspace each time
