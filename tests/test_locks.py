"""The index lock with real processes (issue 10 §1): a fork never holds it, a dead holder never
holds it, every wait is bounded and a busy lock is an error that names its holder; parse
workers die with their parent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gitmem.errors import LockBusy
from gitmem.index.store import open_store, settle_journal
from gitmem.locks import file_lock, writer_lock
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.chaos import (
    children_of,
    integrity,
    leave_hot_journal,
    leftovers,
    processes_mentioning,
    wait_gone,
)
from testing.cli import gitmem, recall_json
from testing.contract import GOOD_DAILY, GOOD_TEXT
from testing.repo import commit_all, make_repo, write

HOLD = """
import os, sys
from pathlib import Path
from gitmem.locks import writer_lock
from gitmem.workspace import open_workspace
ws, _ = open_workspace(Path(sys.argv[1]))
with writer_lock(ws):
    if sys.argv[2] == "fork" and os.fork() == 0:
        sys.stdin.read()  # a child that outlives its parent, like the old parse workers
        os._exit(0)
    print("holding", flush=True)
    sys.stdin.read()  # holds the lock until the test closes stdin or kills it
"""


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path, "lock ws")
    write(repo, GOOD_DAILY, GOOD_TEXT)
    commit_all(repo, "one note")
    return repo


def hold(repo: Path, mode: str = "plain") -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(repo), mode],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "holding\n"
    return proc


def end(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.communicate()


def test_a_killed_holder_releases_the_lock_at_once(repo: Path) -> None:
    proc = hold(repo)
    ws, _ = open_workspace(repo)
    with pytest.raises(LockBusy), writer_lock(ws, wait=False):
        pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    with writer_lock(ws, wait=False):
        pass  # no waiting, no stale lock file to clean up


def test_a_fork_of_the_holder_never_holds_the_lock(repo: Path) -> None:
    """flock locks are shared with forks; the lock must not be (the orphaned-worker hang)."""
    proc = hold(repo, "fork")
    kids = children_of(proc.pid)
    assert kids, "the holder did not fork"
    try:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert all(Path(f"/proc/{k}").exists() for k in kids)  # the orphan is still alive
        ws, _ = open_workspace(repo)
        with writer_lock(ws, wait=False):
            pass  # free at once: the orphan holds nothing (no clock needed)
    finally:
        for kid in kids:
            os.kill(kid, signal.SIGKILL)


def test_a_busy_lock_is_a_bounded_wait_then_an_error_naming_the_holder(repo: Path) -> None:
    proc = hold(repo)
    try:
        ws, _ = open_workspace(repo)
        started = time.monotonic()
        with pytest.raises(LockBusy) as caught, writer_lock(ws, timeout=0.5):
            pass
        waited = time.monotonic() - started
        assert 0.5 <= waited < FAILURE_SECONDS  # it waited, and not the default 600 s
        message = str(caught.value)
        assert f"held by process {proc.pid}" in message, message
        assert "since " in message and "waited 0 s" in message, message
    finally:
        end(proc)


def test_recall_without_an_index_waits_bounded_for_the_builder(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("gitmem.locks.RECALL_WAIT_SECONDS", 0.5)
    proc = hold(repo)
    try:
        started = time.monotonic()
        code, _, err = gitmem("-C", str(repo), "recall", "gateway")
        assert code == 1, err
        assert time.monotonic() - started >= 0.5
        assert f"held by process {proc.pid}" in err, err
        assert "waited 0 s" in err, err  # the recall wait (0.5 s), not the writers' 600 s
    finally:
        end(proc)
    assert recall_json(repo, "gateway")["results"]  # and once it is free, recall builds it


def test_threads_of_one_process_exclude_each_other(tmp_path: Path) -> None:
    path = tmp_path / "x.lock"
    inside = threading.Event()
    release = threading.Event()

    def holder() -> None:
        with file_lock(path, wait=True):
            inside.set()
            release.wait()  # until the test has tried: an event, not a time

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert inside.wait(FAILURE_SECONDS)
        with pytest.raises(LockBusy, match="another thread"), file_lock(path, wait=False):
            pass
    finally:
        release.set()
        thread.join(FAILURE_SECONDS)
    assert not thread.is_alive()
    with file_lock(path, wait=False):
        pass


POOL = """
import os, sys
from gitmem.index.pool import parse_pool
ready_r, ready_w = os.pipe()  # each worker says it runs
block_r, block_w = os.pipe()  # nobody writes: a worker reading it waits for ever


def work() -> None:
    os.write(ready_w, b"+")  # running (the initializer, which arms the parent watch, has run)
    os.read(block_r, 1)


pool = parse_pool(2, use_prctl=sys.argv[1] == "prctl")
futures = [pool.submit(work) for _ in range(2)]
seen = b""
while len(seen) < 2:  # both workers run, one task each: a pipe, not a sleep
    seen += os.read(ready_r, 2 - len(seen))
print("ready", flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize("mode", ["prctl", "watch"])
def test_parse_workers_die_with_their_parent(mode: str, tmp_path: Path) -> None:
    marker = str(tmp_path / "pool-parent")
    proc = subprocess.Popen([sys.executable, "-c", POOL, mode, marker], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    workers = children_of(proc.pid)
    assert len(workers) >= 2
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    left = wait_gone(marker, FAILURE_SECONDS)
    assert not left, f"workers outlived their parent: {left}"
    assert not processes_mentioning(marker)


def test_stale_temporaries_are_removed_with_a_note(repo: Path) -> None:
    memory = repo / ".memory"
    memory.mkdir()
    for name in ("index.sqlite.tmp-4242", "index.sqlite.tmp-4242-journal"):
        (memory / name).write_bytes(b"half a rebuild")
    code, _, err = gitmem("-C", str(repo), "index")
    assert code == 0, err
    assert "removed 2 temporary file(s)" in err
    assert leftovers(memory) == []
    (memory / "index.sqlite.tmp-77").write_bytes(b"x")  # the index is current: still swept
    code, _, err = gitmem("-C", str(repo), "index")
    assert code == 0 and "removed 1 temporary file(s)" in err, err
    assert leftovers(memory) == []


def test_a_hot_journal_is_rolled_back_before_a_rebuild_replaces_the_file(repo: Path) -> None:
    assert gitmem("-C", str(repo), "index")[0] == 0
    index = repo / ".memory" / "index.sqlite"
    journal = leave_hot_journal(index)
    settle_journal(index)
    assert not journal.exists()
    assert integrity(index) == "ok"
    store = open_store(index, readonly=True)
    try:
        assert store.get_meta("junk1") is None  # rolled back, not kept
    finally:
        store.close()
    code, _, err = gitmem("-C", str(repo), "index", "--force")
    assert code == 0, err
    assert integrity(index) == "ok" and not journal.exists()
