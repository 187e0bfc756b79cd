"""``testing.loaded_ci``, the flaky-test hunt's driver, with a fake ``.ci/run`` in a real git
repository: each run is a fresh clone of the asked revision with ``../shared`` beside it, runs
under busy loops with CI's environment, and the hunt stops at the first failure."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from testing.chaos import processes_mentioning
from testing.loaded_ci import BUSY_MARK, ci_environ, hunt, main, summary_of
from testing.repo import commit_all, git, make_repo, write

# What the fake CI saw, one line a run: the commit, CI, PYTHONPATH, VIRTUAL_ENV, whether
# ../shared is there, whether the work tree was fresh, and how many busy loops of its parent
# (the driver) were running. The second run fails, as pytest says it.
FAKE_CI = """#!/usr/bin/env bash
set -eu
cd "$(dirname "$0")/.."
busy=0
for f in /proc/[0-9]*/cmdline; do
  if tr '\\0' ' ' < "$f" 2>/dev/null | grep -q " $PPID {mark}"; then busy=$((busy + 1)); fi
done
fresh=yes; [ -e leftover ] && fresh=no; touch leftover
echo "$(git rev-parse HEAD) ci=${{CI:-}} pythonpath=${{PYTHONPATH-unset}} \\
venv=${{VIRTUAL_ENV-unset}} shared=$(cat ../shared/marker) fresh=$fresh busy=$busy" >> {seen}
if [ "$(wc -l < {seen})" -eq 2 ]; then
  echo "FAILED tests/test_x.py::test_y - assert 1 == 2"
  echo "1 failed, 2 passed in 0.12s"
  exit 1
fi
echo "3 passed in 0.10s"
"""


@pytest.fixture
def source(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path, "project")
    write(repo, ".ci/run", FAKE_CI.format(mark=BUSY_MARK, seen=tmp_path / "seen.log"))
    commit_all(repo, "the fake CI")
    write(repo, "later.txt", "a commit after the one under test\n")
    commit_all(repo, "later")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "marker").write_text("the shared folder\n", encoding="utf-8")
    return repo


def seen(tmp_path: Path) -> list[str]:
    return (tmp_path / "seen.log").read_text(encoding="utf-8").splitlines()


def test_runs_stop_at_the_first_failure_each_on_a_fresh_loaded_clone(
        source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "venv"))
    first = git(source, "rev-parse", "HEAD~1").strip()
    results = hunt(source, "HEAD~1", runs=3, shared=tmp_path / "shared", busy_per_core=1,
                   scratch=tmp_path)
    busy = os.cpu_count() or 1
    want = (f"{first} ci=true pythonpath=unset venv=unset shared=the shared folder fresh=yes "
            f"busy={busy}")
    assert seen(tmp_path) == [want, want]  # the third run was not made
    assert (results["rev"], results["busy_loops"]) == (first, busy)
    assert (results["passed"], results["failed"], results["in_a_row"]) == (1, 1, False)
    ok, failed = results["runs"]
    assert ok["ok"] and ok["summary"] == "3 passed in 0.10s" and ok["folder"] is None
    assert not failed["ok"] and failed["exit_code"] == 1
    assert failed["summary"] == "1 failed, 2 passed in 0.12s"
    assert failed["failed"] == ["tests/test_x.py::test_y"]
    assert Path(failed["log"]).is_file()  # a failed run's folder is kept for reading
    assert [p.name[:18] for p in tmp_path.glob("gitmem-loaded-ci-*")] == ["gitmem-loaded-ci-2"]
    assert failed["tail"][-1] == "1 failed, 2 passed in 0.12s"
    assert processes_mentioning(f"{os.getpid()}\0{BUSY_MARK}") == []  # the loops are gone


def test_keep_going_and_the_command_line(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    code = main(["--runs", "3", "--keep-going", "--source", str(source), "--shared",
                 str(tmp_path / "shared"), "--busy-per-core", "0", "--out", str(out),
                 "--scratch", str(tmp_path)])
    assert code == 1  # not three in a row
    results = json.loads(out.read_text(encoding="utf-8"))
    assert [r["ok"] for r in results["runs"]] == [True, False, True]
    head = git(source, "rev-parse", "HEAD").strip()
    assert results["rev"] == head and len(seen(tmp_path)) == 3
    assert all(line.startswith(f"{head} ") and line.endswith(" busy=0")
               for line in seen(tmp_path))


def test_a_missing_shared_folder_is_said_before_any_run(source: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--runs", "1", "--source", str(source), "--shared", str(tmp_path / "nowhere")])
    assert stopped.value.code == 2
    assert "needs ../shared beside the clone" in capsys.readouterr().err
    assert not (tmp_path / "seen.log").exists()


def test_ci_environment_drops_the_callers_python_setup(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    env = ci_environ({"PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin", "VIRTUAL_ENV": str(venv),
                      "PYTHONPATH": "/x", "HOME": "/h"})
    assert env["CI"] == "true" and env["HOME"] == "/h"
    assert "PYTHONPATH" not in env and "VIRTUAL_ENV" not in env
    assert str(venv) not in env["PATH"] and "/usr/bin" in env["PATH"].split(os.pathsep)


def test_pytest_summary_and_failures_are_read_from_the_log() -> None:
    lines = ["....F..", "=== short test summary info ===",
             "FAILED tests/test_semantic.py::test_a - assert False",
             "ERROR tests/test_b.py::test_c - RuntimeError",
             "1 failed, 1142 passed, 1 error, 3 warnings in 812.34s (0:13:32)"]
    assert summary_of(lines) == (lines[-1], ["tests/test_semantic.py::test_a",
                                             "tests/test_b.py::test_c"])
    assert summary_of(["ruff check failed"]) == (None, [])
