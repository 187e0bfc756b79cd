"""Git hooks with real git: a commit re-indexes in the background, existing hooks are
chained and restored, core.hooksPath and linked worktrees are honoured, odd paths work, git is
neither failed nor slowed, and failures land in .memory/hook.log.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from gitmem.front.cli import run
from gitmem.hooks import CHAINED_SUFFIX, COALESCED, HOOK_NAMES, install
from gitmem.hooks import status as hook_status
from gitmem.index.replay import index_workspace
from gitmem.index.store import open_store
from gitmem.locks import writer_lock
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.chaos import processes_mentioning
from testing.cli import recall_json, sources
from testing.index import dump
from testing.repo import git, make_repo, write


def daily(day: str, fact: str) -> str:
    return f"# {day}\n\n## Retain\n- {fact}\n"


def commit(repo: Path, message: str, date: str) -> None:
    """A real ``git commit`` (hooks run) of the memory files, with fixed dates; raises unless
    git's status is 0."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)


def seeded(repo: Path) -> Path:
    write(repo, "MEMORY.md", "# Memory\n\n## Retain\n- W @Peter: Lives in Copenhagen.\n")
    write(repo, "memory/2025-11-20.md", daily("2025-11-20", "W @Peter: Owns a red kayak."))
    commit(repo, "seed", "2025-11-20T21:00:00+00:00")
    return repo


def hooks_cli(repo: Path, *args: str) -> int:
    return run(["-C", str(repo), "hooks", *args])


def log_lines(repo: Path) -> list[str]:
    log = repo / ".memory" / "hook.log"
    if not log.is_file():
        return []
    return [ln for ln in log.read_text(encoding="utf-8").splitlines() if ln[:4].isdigit()]


def wait_for_log(repo: Path, count: int, needle: str = "") -> list[str]:
    """Wait until hook.log has ``count`` entries (each background run writes one)."""
    deadline = time.monotonic() + FAILURE_SECONDS
    while time.monotonic() < deadline:
        lines = log_lines(repo)
        if len([ln for ln in lines if needle in ln]) >= count:
            return lines
        time.sleep(0.05)
    raise AssertionError(f"hook.log of {repo} never got {count} x {needle!r}: {log_lines(repo)}")


def indexed(repo: Path, text: str) -> bool:
    """Whether the index (read directly, without triggering an index) holds ``text`` now."""
    path = repo / ".memory" / "index.sqlite"
    if not path.is_file():
        return False
    try:
        store = open_store(path, readonly=True)
    except Exception:
        return False
    try:
        row = store.conn.execute(
            "SELECT count(*) FROM items WHERE type = 'fact' AND valid_to IS NULL AND content LIKE ?",
            (f"%{text}%",),
        ).fetchone()
        head = git(repo, "rev-parse", "HEAD").strip()
        return bool(row and row[0]) and store.get_meta("last_indexed_commit") == head
    finally:
        store.close()


def wait_indexed(repo: Path, text: str) -> None:
    deadline = time.monotonic() + FAILURE_SECONDS
    while time.monotonic() < deadline:
        if indexed(repo, text):
            return
        time.sleep(0.05)
    raise AssertionError(f"{text!r} never became recallable in {repo}; log: {log_lines(repo)}")


def test_commit_reindexes_in_the_background(tmp_path: Path) -> None:
    repo = seeded(make_repo(tmp_path))
    assert hooks_cli(repo, "install") == 0
    hooks = repo / ".git" / "hooks"
    assert all(os.access(hooks / name, os.X_OK) for name in HOOK_NAMES)
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "B @Peter: Bought a zeppelin ticket."))
    commit(repo, "new fact", "2025-11-21T21:00:00+00:00")
    wait_indexed(repo, "zeppelin")
    lines = wait_for_log(repo, 1, "post-commit: indexed")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert any(head in ln for ln in lines)
    # the hook's index is the real one: recall answers without re-indexing
    assert sources(recall_json(repo, "zeppelin", "--kind", "B")) == ["memory/2025-11-21.md#L4"]
    assert ".memory" not in git(repo, "status", "--porcelain")
    # post-checkout and post-rewrite hooks re-index too
    git(repo, "commit", "-q", "--amend", "-m", "amended", date="2025-11-21T22:00:00+00:00")
    git(repo, "switch", "-q", "-c", "other", "HEAD~1")
    # Four hook runs so far (commit; amend = post-commit + post-rewrite; switch), each of which
    # logs exactly one line when it ends: indexed, or left its work to a run that was waiting
    # (which reads HEAD after it). Counting those lines needs no timing.
    lines = wait_for_runs(repo, 4)
    assert any(ln.split(" ", 1)[1].startswith("post-rewrite: ") for ln in lines), lines
    assert any(ln.split(" ", 1)[1].startswith("post-checkout: ") for ln in lines), lines
    assert not [ln for ln in lines if "failed" in ln], lines
    assert indexed(repo, "kayak")  # at the new HEAD
    assert not indexed(repo, "zeppelin")
    assert_like_a_rebuild(repo)


def run_ends(repo: Path) -> list[str]:
    """The hook.log lines that end a background run: each run writes exactly one."""
    return [ln for ln in log_lines(repo)
            if any(what in ln for what in (": indexed ", COALESCED, "failed", "not indexed"))]


def wait_for_runs(repo: Path, count: int) -> list[str]:
    """Wait until ``count`` background hook runs have ended (a count, not a time: a loaded
    machine only makes this slower)."""
    deadline = time.monotonic() + FAILURE_SECONDS
    while time.monotonic() < deadline:
        if len(run_ends(repo)) >= count:
            return log_lines(repo)
        time.sleep(0.05)
    raise AssertionError(f"hook.log of {repo} never had {count} ended runs: {log_lines(repo)}")


def assert_like_a_rebuild(repo: Path) -> None:
    """What the design promises after any sequence of hooks: the index equals a rebuild's."""
    ws, cfg = open_workspace(repo)
    with writer_lock(ws):
        hooked = dump(repo)
    index_workspace(ws, cfg, force=True)
    assert dump(repo) == hooked


def baseline_checkout_status(tmp_path: Path) -> int:
    """What this git returns from ``git checkout`` when a plain post-checkout hook exits 3."""
    repo = seeded(make_repo(tmp_path, "baseline"))
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_bytes(b"#!/bin/sh\nexit 3\n")
    hook.chmod(0o755)
    res = subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "b"], capture_output=True)
    return res.returncode


def test_existing_hooks_are_chained_and_restored(tmp_path: Path) -> None:
    repo = seeded(make_repo(tmp_path))
    hooks = repo / ".git" / "hooks"
    calls = tmp_path / "chained calls.log"
    original = f'#!/bin/sh\necho "post-commit ran $#" >> "{calls}"\n'.encode()
    (hooks / "post-commit").write_bytes(original)
    (hooks / "post-commit").chmod(0o750)
    checkout = b"#!/bin/sh\n# fails on purpose\nexit 3\n"
    (hooks / "post-checkout").write_bytes(checkout)
    (hooks / "post-checkout").chmod(0o755)

    assert hooks_cli(repo, "install") == 0
    chained = hooks / f"post-commit{CHAINED_SUFFIX}"
    assert chained.read_bytes() == original
    assert (hooks / f"post-checkout{CHAINED_SUFFIX}").read_bytes() == checkout
    assert hooks_cli(repo, "install") == 0  # refreshing keeps the chain as it is
    assert chained.read_bytes() == original

    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "W @Peter: Chained hooks still run."))
    commit(repo, "chained", "2025-11-21T21:00:00+00:00")
    assert calls.read_text(encoding="utf-8") == "post-commit ran 0\n"
    wait_indexed(repo, "Chained hooks")

    # post-checkout's status becomes git checkout's: the chained hook's failure passes through.
    # (git itself turns any failing post-checkout into exit 1; the hook script exits 3.)
    res = subprocess.run(
        ["git", "-C", str(repo), "checkout", "-q", "-b", "topic"], capture_output=True, text=True
    )
    assert res.returncode == baseline_checkout_status(tmp_path) != 0, res.stderr
    zero = "0" * 40
    direct = subprocess.run(
        [str(hooks / "post-checkout"), zero, zero, "1"], cwd=repo, capture_output=True
    )
    assert direct.returncode == 3
    wait_for_runs(repo, 3)  # any of the three may leave its work to a waiting one

    assert hooks_cli(repo, "uninstall") == 0
    assert (hooks / "post-commit").read_bytes() == original
    assert (hooks / "post-commit").stat().st_mode & 0o777 == 0o750
    assert (hooks / "post-checkout").read_bytes() == checkout
    assert not chained.exists() and not (hooks / "post-merge").exists()
    assert sorted(p.name for p in hooks.iterdir() if CHAINED_SUFFIX in p.name) == []
    write(repo, "memory/2025-11-22.md", daily("2025-11-22", "W @Peter: After uninstall."))
    commit(repo, "after", "2025-11-22T21:00:00+00:00")
    assert calls.read_text(encoding="utf-8") == "post-commit ran 0\npost-commit ran 0\n"


def test_gitmem_part_never_fails_git(tmp_path: Path) -> None:
    """Without a chained hook git's status is 0 even when gitmem's Python is gone."""
    repo = seeded(make_repo(tmp_path))
    install(repo, python=str(tmp_path / "no such python"))
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "W @Peter: Broken python."))
    commit(repo, "x", "2025-11-21T21:00:00+00:00")  # git's status is 0
    res = subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "t"], capture_output=True)
    assert res.returncode == 0
    states = {h.name: h for h in hook_status(repo)}
    assert states["post-commit"].state == "installed" and not states["post-commit"].python_ok


def test_core_hooks_path_is_honoured(tmp_path: Path) -> None:
    repo = seeded(make_repo(tmp_path))
    custom = tmp_path / "team hooks"
    git(repo, "config", "core.hooksPath", str(custom))
    assert hooks_cli(repo, "install") == 0
    assert sorted(p.name for p in custom.iterdir()) == sorted(HOOK_NAMES)
    assert not (repo / ".git" / "hooks" / "post-commit").exists()
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "W @Peter: Custom hooks path works."))
    commit(repo, "custom", "2025-11-21T21:00:00+00:00")
    wait_indexed(repo, "Custom hooks path")
    wait_for_log(repo, 1, "post-commit: indexed")
    # a relative core.hooksPath is relative to the work tree
    git(repo, "config", "core.hooksPath", ".githooks")
    assert hooks_cli(repo, "install") == 0
    assert (repo / ".githooks" / "post-commit").is_file()


def test_linked_worktree_uses_common_hooks_and_its_own_index(tmp_path: Path) -> None:
    repo = seeded(make_repo(tmp_path))
    wt = tmp_path / "linked wt"
    git(repo, "worktree", "add", "-q", "-b", "wt-branch", str(wt))
    assert hooks_cli(wt, "install") == 0
    assert (repo / ".git" / "hooks" / "post-commit").is_file()
    assert not (repo / ".git" / "worktrees" / "linked wt" / "hooks").exists()
    write(wt, "memory/2025-11-21.md", daily("2025-11-21", "W @Peter: Written in the worktree."))
    commit(wt, "in worktree", "2025-11-21T21:00:00+00:00")
    wait_indexed(wt, "Written in the worktree")
    wait_for_log(wt, 1, "post-commit: indexed")
    assert not (repo / ".memory" / "index.sqlite").exists()  # the main checkout is untouched
    # and a commit in the main checkout indexes the main checkout's own .memory/
    write(repo, "memory/2025-11-22.md", daily("2025-11-22", "W @Peter: Written in main."))
    commit(repo, "in main", "2025-11-22T21:00:00+00:00")
    wait_indexed(repo, "Written in main")
    assert not indexed(repo, "Written in the worktree")
    assert ".memory" not in git(wt, "status", "--porcelain")
    wait_for_log(repo, 1, "post-commit: indexed")


def test_path_with_spaces_and_quote(tmp_path: Path) -> None:
    repo = seeded(make_repo(tmp_path, "my 'mem' repo"))
    assert hooks_cli(repo, "install") == 0
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "W @Peter: Odd paths are fine."))
    commit(repo, "odd path", "2025-11-21T21:00:00+00:00")
    wait_indexed(repo, "Odd paths")
    wait_for_log(repo, 1, "post-commit: indexed")
    states = {h.name: h for h in hook_status(repo)}
    assert all(h.state == "installed" and h.python_ok for h in states.values())


def test_hook_returns_to_git_without_waiting_for_the_index(tmp_path: Path) -> None:
    """The re-index runs in the background, not while git waits: with the index's writer lock
    held, ``git commit`` still returns (a hook that indexed in the foreground would block on
    the lock), and the run waiting in the background indexes the commit once the lock is free.
    No clock involved, so a loaded machine cannot fail it."""
    repo = seeded(make_repo(tmp_path))
    assert hooks_cli(repo, "install") == 0
    ws, _ = open_workspace(repo)
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "W @Peter: Fact while locked."))
    with writer_lock(ws):
        git(repo, "add", "-A")
        done = subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "locked"],
                              capture_output=True, text=True, timeout=FAILURE_SECONDS)
        assert done.returncode == 0, done.stderr
        assert not indexed(repo, "Fact while locked")
    wait_indexed(repo, "Fact while locked")
    wait_for_log(repo, 1, "post-commit: indexed")


def test_failing_reindex_is_logged_and_git_succeeds(tmp_path: Path) -> None:
    repo = seeded(make_repo(tmp_path))
    assert hooks_cli(repo, "install") == 0
    (repo / ".memory" / "index.sqlite").mkdir(parents=True)
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "W @Peter: Cannot be indexed."))
    commit(repo, "broken index", "2025-11-21T21:00:00+00:00")  # git's status is 0
    lines = wait_for_log(repo, 1, "post-commit: re-index failed")
    assert lines
    log = (repo / ".memory" / "hook.log").read_text(encoding="utf-8")
    assert "Traceback" in log
    assert (repo / ".memory" / "index.sqlite").is_dir()
    assert not list((repo / ".memory").glob("index.sqlite.tmp-*"))


def hook_processes(repo: Path) -> list[int]:
    """Live processes of ``repo``'s hooks: the hook script (git runs it in the work tree), the
    background run it forks, before and after that exec's ``gitmem -C <repo> hooks run``."""
    found = []
    for pid in processes_mentioning("hooks"):
        try:
            cwd = os.readlink(f"/proc/{pid}/cwd")
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if cwd == str(repo) or str(repo).encode() in cmdline:
            found.append(pid)
    return found


def wait_quiet(repo: Path) -> None:
    """Wait until no hook process of ``repo`` is alive (the background runs are done), however
    long a loaded machine takes: a process count, not a quiet period."""
    deadline = time.monotonic() + FAILURE_SECONDS
    while hook_processes(repo):
        if time.monotonic() > deadline:
            raise AssertionError(f"hook runs of {repo} still alive: {hook_processes(repo)}")
        time.sleep(0.05)


def test_rebase_with_hooks_converges_to_a_rebuild(tmp_path: Path) -> None:
    """post-checkout (rebase start) and post-rewrite (its end) leave the index exactly right."""
    repo = seeded(make_repo(tmp_path))
    assert hooks_cli(repo, "install") == 0
    git(repo, "switch", "-q", "-c", "topic")
    write(repo, "memory/2025-11-22.md", daily("2025-11-22", "W @Peter: Topic work one."))
    commit(repo, "t1", "2025-11-22T21:00:00+00:00")
    write(repo, "memory/2025-11-23.md", daily("2025-11-23", "W @Peter: Topic work two."))
    commit(repo, "t2", "2025-11-23T21:00:00+00:00")
    git(repo, "switch", "-q", "main")
    write(repo, "MEMORY.md", "# Memory\n\n## Retain\n- W @Peter: Lives in Aarhus now.\n")
    commit(repo, "m1", "2025-11-24T21:00:00+00:00")
    git(repo, "switch", "-q", "topic")
    git(repo, "rebase", "-q", "main", date="2025-11-25T09:00:00+00:00")
    wait_indexed(repo, "Topic work two")
    wait_indexed(repo, "Aarhus")
    wait_quiet(repo)
    ws, cfg = open_workspace(repo)
    with writer_lock(ws):
        pass  # no background run is still writing
    lines = log_lines(repo)
    # the rebase's end either indexed, or left it to a run that was waiting (and read HEAD after)
    assert any(f"post-rewrite: {what}" in ln for ln in lines
               for what in ("indexed", COALESCED)), lines
    assert not [ln for ln in lines if "failed" in ln], lines
    hooked = dump(repo)
    index_workspace(ws, cfg, force=True)
    assert dump(repo) == hooked


def test_hook_scripts_in_the_repository_match_what_gitmem_installs(repo_root: Path) -> None:
    """hooks/ holds the scripts gitmem installs (calling gitmem on PATH), for hook managers and
    for copying by hand; they cannot drift from the installed ones."""
    from gitmem.hooks import HOOK_NAMES, hook_script

    for name in HOOK_NAMES:
        shipped = repo_root / "hooks" / name
        assert shipped.read_text(encoding="utf-8") == hook_script(name, None)
        assert os.access(shipped, os.X_OK)
    assert "-m gitmem -C" in hook_script("post-commit", "/usr/bin/python3")


def test_hook_runs_that_arrive_while_one_waits_leave_the_work_to_it(tmp_path: Path) -> None:
    """Twenty hook runs at once while a writer is busy: one waits its turn, the others stop at
    once (the waiting run reads HEAD after their commits), and nothing is lost."""
    repo = seeded(make_repo(tmp_path))
    ws, _ = open_workspace(repo)
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "W @Peter: Herded the hooks."))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "no hook yet", date="2025-11-21T21:00:00+00:00")
    procs = []
    with writer_lock(ws):
        first = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo), "hooks", "run",
                                  "post-commit"])
        deadline = time.monotonic() + FAILURE_SECONDS
        queue = repo / ".memory" / "hook-queue.lock"
        while not (queue.exists() and queue.stat().st_size):  # the first run holds the queue
            assert time.monotonic() < deadline, "the first run never took the queue"
            time.sleep(0.02)  # (it writes its pid there)
        procs = [subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo), "hooks",
                                   "run", "post-commit"]) for _ in range(19)]
        for proc in procs:
            assert proc.wait(FAILURE_SECONDS) == 0
        lines = log_lines(repo)
        assert sum(COALESCED in ln for ln in lines) == 19, lines
        assert not any("indexed" in ln for ln in lines)
    assert first.wait(FAILURE_SECONDS) == 0
    wait_indexed(repo, "Herded the hooks")
    assert sum("post-commit: indexed" in ln for ln in log_lines(repo)) == 1
