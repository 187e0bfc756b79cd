"""The README's first command must stay true: build the sample workspace and get cited results."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _blocks() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.*?)\n```", text, flags=re.S)


def _steps(block: str) -> list[list[str]]:
    steps = []
    for part in block.split("&&"):
        argv = shlex.split(part)
        if not argv or argv[0] in (".", "source") or argv[:3] == ["python3", "-m", "venv"]:
            continue  # the virtual environment: the test already runs inside one
        if argv[0] == "pip":
            continue  # installing: done by the CI script the second block names
        steps.append(argv)
    return steps


def test_readme_opens_with_install_and_test_commands() -> None:
    blocks = _blocks()
    assert len(blocks) >= 2
    assert "pip install -e '.[dev]'" in blocks[0] and "recall" in blocks[0]
    assert blocks[1].strip() == "bash .ci/run"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "python -m pytest" in ci and "ruff check" in ci and "mypy" in ci


def test_readme_first_command_gives_cited_results(tmp_path: Path) -> None:
    demo = str(tmp_path / "demo")
    output = ""
    for argv in _steps(_blocks()[0]):
        argv = [a.replace("/tmp/gitmem-demo", demo) for a in argv]
        if argv[0] == "gitmem":
            argv = [sys.executable, "-m", "gitmem", *argv[1:]]
        elif argv[0] == "python":
            argv = [sys.executable, *argv[1:]]
        proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, (argv, proc.stderr)
        output = proc.stdout
    assert re.search(r"^memory/2025-11-\d\d\.md#L\d+", output, flags=re.M), output
    assert "gateway" in output.lower()
