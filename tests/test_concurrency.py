"""Concurrency with real processes (docs/architecture.md): writers are serialised, readers never fail and
never see a half-written index."""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

from gitmem.index.replay import index_workspace
from gitmem.index.session import Session
from gitmem.recall.answer import RecallRequest, answer
from gitmem.workspace import open_workspace
from testing import synth
from testing.bounds import FAILURE_SECONDS
from testing.index import dump
from testing.repo import commit_all, git, write

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def gitmem_popen(repo: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "gitmem", "-C", str(repo), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=FAILURE_SECONDS)
    return proc.returncode, out, err


def forced_dump(repo: Path) -> list[tuple[object, ...]]:
    ws, cfg = open_workspace(repo)
    assert index_workspace(ws, cfg, force=True).full
    return dump(repo)


def test_two_index_processes_at_once(fixture_repo: Path) -> None:
    # no index yet: both want to build it; the lock serialises them
    procs = [gitmem_popen(fixture_repo, "index", "--json") for _ in range(2)]
    results = [finish(p) for p in procs]
    assert [r[0] for r in results] == [0, 0], [r[2] for r in results]
    first = dump(fixture_repo)
    assert forced_dump(fixture_repo) == first

    # an index exists and HEAD moved: both update incrementally, one after the other
    write(
        fixture_repo, "memory/2025-12-01.md", "## Retain\n- B @Peter: Flew home from Marrakech.\n"
    )
    commit_all(fixture_repo, "new day", "2025-12-01T21:00:00+00:00")
    write(fixture_repo, "memory/2025-11-29.md", "## Retain\n- W @Peter: Rewrote the 29th.\n")
    commit_all(fixture_repo, "edit", "2025-12-02T21:00:00+00:00")
    procs = [gitmem_popen(fixture_repo, "index", "--json") for _ in range(2)]
    results = [finish(p) for p in procs]
    assert [r[0] for r in results] == [0, 0], [r[2] for r in results]
    assert all('"full": false' in r[1] for r in results), [r[1] for r in results]
    updated = dump(fixture_repo)
    assert ("meta", "last_indexed_commit", commit_id(fixture_repo)) in updated
    assert forced_dump(fixture_repo) == updated
    assert not list((fixture_repo / ".memory").glob("index.sqlite.tmp-*"))


def commit_id(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


WRITER = """
import sys
from pathlib import Path
from gitmem.workspace import open_workspace
from gitmem.index.replay import index_workspace
ws, cfg = open_workspace(Path(sys.argv[1]))


def halfway(done: int, total: int) -> None:
    # Halfway through the replay (the new file half written, the writer lock held), wait for
    # the readers: they run against this state for certain, whatever the machine's load.
    if done == total // 2:
        print("halfway", flush=True)
        assert sys.stdin.readline() == "go\\n"


for _ in range(int(sys.argv[2])):
    assert index_workspace(ws, cfg, force=True, progress=halfway).full
    print("rebuilt", flush=True)
"""


def test_recall_while_a_forced_rebuild_runs(tmp_path: Path) -> None:
    repo = tmp_path / "year"
    synth.generate(repo, years=1, seed=3)
    ws, cfg = open_workspace(repo)
    index_workspace(ws, cfg)
    queries = ["Peter", "gateway", "Copenhagen", "warelay"]
    baseline = {q: answer(Session(ws, cfg), RecallRequest(query=q), now=NOW).results for q in queries}
    assert all(baseline.values()), baseline

    def check(calls: int) -> None:
        q = queries[calls % len(queries)]
        results = answer(Session(ws, cfg), RecallRequest(query=q), now=NOW).results
        assert results, (q, calls)
        assert [r.source for r in results] == [r.source for r in baseline[q]], (q, calls)

    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(repo), "2"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert writer.stdin is not None and writer.stdout is not None
    calls = 0
    try:
        for rebuild in range(2):
            assert writer.stdout.readline() == "halfway\n", writer.communicate(timeout=FAILURE_SECONDS)
            assert list(ws.memory_dir.glob("index.sqlite.tmp-*")), "no rebuild in progress"
            for _ in range(5):  # while the rebuild is half done
                check(calls)
                calls += 1
            writer.stdin.write("go\n")
            writer.stdin.flush()
            if rebuild == 0:
                assert writer.stdout.readline() == "rebuilt\n", writer.communicate(timeout=FAILURE_SECONDS)
        while writer.poll() is None:  # and while the second one finishes and swaps the file
            check(calls)
            calls += 1
    finally:
        out, err = writer.communicate(timeout=FAILURE_SECONDS)
    assert writer.returncode == 0, err
    assert out.split() == ["rebuilt"]
    assert calls >= 10
    # and from a separate process, right after
    res = subprocess.run(
        [sys.executable, "-m", "gitmem", "-C", str(repo), "recall", "Peter", "--json"],
        capture_output=True,
        text=True,
        timeout=FAILURE_SECONDS,
    )
    assert res.returncode == 0 and '"source"' in res.stdout, res.stderr


INCREMENTAL_WRITER = """
import os, subprocess, sys
from pathlib import Path
from gitmem.workspace import open_workspace
from gitmem.index.replay import index_workspace
repo = Path(sys.argv[1])
ws, cfg = open_workspace(repo)
for n in range(1, 7):
    (repo / "memory" / f"2026-12-0{n}.md").write_text(f"## Retain\\n- W @Peter: Zeppelin day {n}.\\n")
    date = f"2026-12-0{n}T21:00:00+00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", f"day {n}"], check=True, env=env)
    assert not index_workspace(ws, cfg).full
"""


def test_recall_while_incremental_updates_commit(tmp_path: Path) -> None:
    """Readers against a writer that commits and updates the live file in place (no swap)."""
    repo = tmp_path / "months"
    synth.generate(repo, days=90, seed=5)
    ws, cfg = open_workspace(repo)
    index_workspace(ws, cfg)
    writer = subprocess.Popen(
        [sys.executable, "-c", INCREMENTAL_WRITER, str(repo)], stderr=subprocess.PIPE, text=True
    )
    calls = 0
    try:
        while writer.poll() is None or calls < 5:
            response = answer(Session(ws, cfg), RecallRequest(query="Peter"), now=NOW)
            assert response.results, calls
            calls += 1
    finally:
        _, err = writer.communicate(timeout=FAILURE_SECONDS)
    assert writer.returncode == 0, err
    found = answer(Session(ws, cfg), RecallRequest(query="Zeppelin day", k=10), now=NOW).results
    # (other notes' "days" share the stem of "day": only the Zeppelin facts are checked)
    assert sorted(r.source for r in found if "Zeppelin" in r.content) == [
        f"memory/2026-12-0{n}.md#L2" for n in range(1, 7)]
    incremental = dump(repo)
    assert forced_dump(repo) == incremental
