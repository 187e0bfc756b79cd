"""Warm processes that clean up after themselves (issue 37): a ``gitmem serve`` exits when its
workspace or ``.git`` is removed or moved; autostarted ones are capped per user, the least
recently used stopped first; ``serve --list`` shows them and ``serve --stop --all`` ends them.
Real processes throughout; every wait is bounded for failures only."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.front.warm import client, registry
from testing.bounds import FAILURE_SECONDS
from testing.chaos import alive, processes_mentioning, servers_under, wait_servers_gone
from testing.cli import gitmem
from testing.warm import run_cli, start_server


def ping(repo: Path) -> dict[str, object] | None:
    return client.request(str(repo.resolve()), "ping")


def wait_exit(pid: int) -> bool:
    """Until process ``pid`` is gone (not a zombie either); False after FAILURE_SECONDS."""
    deadline = time.monotonic() + FAILURE_SECONDS
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def wait_serving(repo: Path) -> int:
    """Until a warm process answers for ``repo``; its pid."""
    deadline = time.monotonic() + FAILURE_SECONDS * 2
    while (reply := ping(repo)) is None:
        assert time.monotonic() < deadline, f"no warm process serves {repo}"
        time.sleep(0.1)
    return int(str(reply["pid"]))


def listed(cwd: Path) -> list[dict[str, object]]:
    """``gitmem serve --list --json``, run outside any workspace."""
    proc = subprocess.run([sys.executable, "-m", "gitmem", "serve", "--list", "--json"],
                          capture_output=True, text=True, cwd=cwd, timeout=90, check=False)
    assert proc.returncode == 0, proc.stderr
    rows: list[dict[str, object]] = json.loads(proc.stdout)["servers"]
    return rows


def copies(fixture_repo: Path, parent: Path, n: int) -> list[Path]:
    """``n`` indexed copies of the sample workspace under ``parent``."""
    out = []
    for i in range(n):
        dest = parent / f"ws{i}"
        shutil.copytree(fixture_repo, dest, symlinks=True)
        assert gitmem("-C", str(dest), "index")[0] == 0
        out.append(dest)
    return out


def remove(repo: Path) -> None:
    shutil.rmtree(repo)


def move(repo: Path) -> None:
    repo.rename(repo.with_name("moved-away"))


def remove_git(repo: Path) -> None:
    shutil.rmtree(repo / ".git")


def move_parent(repo: Path) -> None:
    repo.parent.rename(repo.parent.with_name("outer-moved"))


@pytest.mark.parametrize("gone", [remove, move, remove_git, move_parent],
                         ids=["removed", "moved", "git-removed", "parent-moved"])
def test_a_server_exits_when_its_workspace_goes(fixture_repo: Path, runtime: Path,
                                                tmp_path: Path,
                                                gone: Callable[[Path], None]) -> None:
    """Deleted or moved away (itself, its .git, or a folder above it): nobody will ask for
    it again, so it exits long before its idle timeout, and leaves no socket or entry."""
    repo = tmp_path / "outer" / "ws"
    repo.parent.mkdir()
    fixture_repo.rename(repo)
    assert gitmem("-C", str(repo), "index")[0] == 0
    sock = client.socket_path(str(repo.resolve()))
    proc = start_server(repo, "--idle-timeout", "3600")
    try:
        assert [e.pid for e in registry.live()] == [proc.pid]
        gone(repo)
        assert proc.wait(timeout=FAILURE_SECONDS) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        _, err = proc.communicate()
    assert "was removed or moved" in err
    assert not os.path.exists(sock)
    assert registry.live() == []
    assert not [n for n in os.listdir(runtime / "gitmem") if n.startswith(registry.PREFIX)]


def test_autostart_stops_the_least_recently_used_past_the_cap(
        fixture_repo: Path, runtime: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """warm.max_servers = 2: a recall in a third workspace stops the server asked least
    recently (b: a was asked again after b started), not the oldest, and starts its own."""
    monkeypatch.setenv("GITMEM_WARM_AUTOSTART", "true")
    monkeypatch.setenv("GITMEM_WARM_MAX_SERVERS", "2")
    monkeypatch.delenv("CI", raising=False)
    a, b, c = copies(fixture_repo, tmp_path / "many", 3)
    args = ("recall", "gateway host", "--json")
    try:
        assert run_cli(a, *args)[0].returncode == 0
        pid_a = wait_serving(a)
        assert run_cli(b, *args)[0].returncode == 0
        pid_b = wait_serving(b)
        assert run_cli(a, *args)[0].returncode == 0  # answered warm: a is used again
        assert (ping(a) or {}).get("served") == 1
        assert run_cli(c, *args)[0].returncode == 0
        assert wait_exit(pid_b), "the least recently used server was not stopped"
        pid_c = wait_serving(c)
        assert alive(pid_a) and ping(a) is not None
        assert sorted(e.pid for e in registry.live()) == sorted([pid_a, pid_c])
    finally:
        stopped = run_cli(a, "serve", "--stop", "--all")[0]
    assert stopped.returncode == 0, stopped.stderr
    assert wait_servers_gone(str(tmp_path), FAILURE_SECONDS) == []


def test_two_recalls_at_once_start_one_server(fixture_repo: Path, runtime: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each autostart sees the other's server in the registry from the moment it is started
    (under the registry's lock), not only once it listens."""
    monkeypatch.setenv("GITMEM_WARM_AUTOSTART", "true")
    monkeypatch.delenv("CI", raising=False)
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    cmd = [sys.executable, "-m", "gitmem", "-C", str(fixture_repo), "recall", "gateway host"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for _ in range(4)]
    try:
        assert [p.wait(timeout=FAILURE_SECONDS * 2) for p in procs] == [0] * 4
        started = servers_under(str(fixture_repo))
        assert len(started) == 1
        assert [e.pid for e in registry.live()] == started
        assert wait_serving(fixture_repo) == started[0]
    finally:
        run_cli(fixture_repo, "serve", "--stop", "--all")
    assert wait_servers_gone(str(fixture_repo), FAILURE_SECONDS) == []


def test_serve_list_shows_each_server_and_stop_all_ends_them(
        fixture_repo: Path, runtime: Path, tmp_path: Path) -> None:
    a, b = copies(fixture_repo, tmp_path / "two", 2)
    server_a = start_server(a, "--idle-timeout", "600")
    server_b = start_server(b, "--idle-timeout", "600")
    try:
        server_b.send_signal(signal.SIGSTOP)  # frozen: it cannot notice what comes next
        shutil.rmtree(b)
        rows = {row["pid"]: row for row in listed(tmp_path)}
        assert set(rows) == {server_a.pid, server_b.pid}
        assert rows[server_a.pid]["workspace"] == str(a.resolve())
        assert (rows[server_a.pid]["exists"], rows[server_b.pid]["exists"]) == (True, False)
        for row in rows.values():
            assert isinstance(row["rss_bytes"], int) and row["rss_bytes"] > 1 << 20
            assert isinstance(row["idle_seconds"], float) and row["idle_seconds"] >= 0
            assert row["autostarted"] is False
        text = subprocess.run([sys.executable, "-m", "gitmem", "serve", "--list"],
                              capture_output=True, text=True, cwd=tmp_path, timeout=90)
        assert f"{b.resolve()}  (removed)" in text.stdout
        server_b.send_signal(signal.SIGCONT)  # thawed: its workspace is gone, it exits
        assert server_b.wait(timeout=FAILURE_SECONDS) == 0
        assert [row["pid"] for row in listed(tmp_path)] == [server_a.pid]
        stop = subprocess.run([sys.executable, "-m", "gitmem", "serve", "--stop", "--all",
                               "--json"], capture_output=True, text=True, cwd=tmp_path,
                              timeout=90)
        assert json.loads(stop.stdout) == {"stopped": [server_a.pid], "still_running": []}
        assert server_a.wait(timeout=FAILURE_SECONDS) == 0
        assert listed(tmp_path) == []
    finally:
        for proc in (server_a, server_b):
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
            proc.communicate()


def test_a_killed_server_is_not_listed(fixture_repo: Path, runtime: Path,
                                       tmp_path: Path) -> None:
    """SIGKILL leaves its entry behind; the next reader finds the process gone and drops it."""
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    proc = start_server(fixture_repo, "--idle-timeout", "600")
    proc.kill()
    proc.communicate()
    entry = registry.entry_path(proc.pid)
    assert os.path.exists(entry)
    assert listed(tmp_path) == []
    assert not os.path.exists(entry)


def test_stop_reaches_a_server_of_another_environment(fixture_repo: Path,
                                                      runtime: Path) -> None:
    """A server started with other settings refuses this environment's requests, a stop
    among them; ``serve --stop`` stops it all the same."""
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    proc = start_server(fixture_repo, "--idle-timeout", "600")
    try:
        done, _ = run_cli(fixture_repo, "serve", "--stop",
                          env={"GITMEM_EMBED_PROVIDER": "none"})
        assert done.returncode == 0 and f"stopped the warm process {proc.pid}" in done.stdout
        assert proc.wait(timeout=FAILURE_SECONDS) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()
    assert servers_under(str(fixture_repo)) == []


def test_a_servers_child_before_exec_is_not_counted_as_a_server(tmp_path: Path) -> None:
    """A warm server forks for each git command; until the child execs, its command line is
    the server's. Counting it made "two recalls at once start one server" fail under load
    (two pids, one after the other: a server and its fork)."""
    repo = tmp_path / "ws"
    repo.mkdir()
    # A stand-in server: the command line of one, and a child that forks and never execs.
    code = ("import os, sys, time\n"
            "r, w = os.pipe()\n"
            "if os.fork() == 0:\n"
            "    os.close(r); os.write(w, b'x'); time.sleep(60); os._exit(0)\n"
            "os.close(w); os.read(r, 1); print('ready', flush=True); time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code, "-m", "gitmem", "-C", str(repo),
                             "serve"], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        assert servers_under(str(repo)) == [proc.pid]
    finally:
        for pid in processes_mentioning(str(repo)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()
