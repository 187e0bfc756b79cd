"""``gitmem serve`` and the thin client: the same output warm or cold (JSON, text, errors), a
private socket, one server per repository, and no hang or wrong answer when the warm process is
out of date, from another environment, stopped, killed, or drops the connection."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gguf_model import tiny_gguf

from gitmem import __version__
from gitmem.front.warm import client
from testing.bounds import FAILURE_SECONDS
from testing.chaos import servers_under, wait_gone
from testing.cli import gitmem
from testing.repo import git, write
from testing.warm import run_cli, start_server

QUERIES = [
    ("recall", "gateway host", "--json"),
    ("recall", "gateway host"),
    ("recall", "Marrakech", "--entity", "Peter", "--kind", "W", "--json"),
    ("recall", "what happened last week", "--json"),
    ("recall", "gateway", "--mode", "lexical", "--k", "2", "--min-score", "0.1"),
    ("recall", "gateway", "--since", "last blue moon"),  # a usage error: exit 2
    ("recall", "gateway", "--entity", "Nobody", "--json"),  # an error the user can fix: exit 1
]


# A server a test starts outlives any gap between its requests (a hook's background run on a
# loaded machine can take a minute); the test stops it at its end.
IDLE = str(int(FAILURE_SECONDS))


def ping(repo: Path) -> dict[str, object] | None:
    return client.request(str(repo.resolve()), "ping")


@pytest.fixture
def served(fixture_repo: Path, runtime: Path) -> Iterator[subprocess.Popen[str]]:
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    proc = start_server(fixture_repo, "--idle-timeout", IDLE)
    yield proc
    if proc.poll() is None:
        proc.kill()
    proc.communicate()


def served_count(repo: Path) -> int:
    reply = ping(repo)
    assert reply is not None
    return int(str(reply["served"]))


def test_warm_and_cold_print_the_same(fixture_repo: Path, served: subprocess.Popen[str]) -> None:
    before = served_count(fixture_repo)
    for args in QUERIES:
        warm, _ = run_cli(fixture_repo, *args)
        cold, _ = run_cli(fixture_repo, *args, warm=False)
        assert (warm.returncode, warm.stdout, warm.stderr) == \
            (cold.returncode, cold.stdout, cold.stderr), args
    assert served_count(fixture_repo) == before + len(QUERIES)  # all of them went warm
    codes = [run_cli(fixture_repo, *args)[0].returncode for args in QUERIES[-2:]]
    assert codes == [2, 1]


def test_a_commit_between_warm_requests_is_seen(fixture_repo: Path,
                                               served: subprocess.Popen[str]) -> None:
    """The warm process remembers its workspace and a current index between requests (no git
    process while nothing changes): a commit, and an edit after it, are seen at once."""
    before = served_count(fixture_repo)
    args = ("recall", "zebracorn", "--json", "--mode", "lexical")
    for _ in range(2):
        assert json.loads(run_cli(fixture_repo, *args)[0].stdout)["results"] == []
    note = fixture_repo / "memory" / "2025-11-28.md"
    note.write_text("# 2025-11-28\n\n## Retain\n- W @Zed: The zebracorn moved.\n",
                    encoding="utf-8")
    git(fixture_repo, "add", "-A")
    git(fixture_repo, "commit", "-q", "-m", "a note")
    seen = []
    for edit in ("", "- W @Zed: The zebracorn came back.\n"):
        with note.open("a", encoding="utf-8") as fh:
            fh.write(edit)
        warm, _ = run_cli(fixture_repo, *args)
        cold, _ = run_cli(fixture_repo, *args, warm=False)
        assert warm.returncode == 0 and warm.stdout == cold.stdout
        seen.append({(r["source"], r["uncommitted"]) for r in json.loads(warm.stdout)["results"]})
    assert seen[0] == {("memory/2025-11-28.md#L4", False)}  # the commit
    assert ("memory/2025-11-28.md#L5", True) in seen[1]  # the edit after it
    assert served_count(fixture_repo) == before + 4  # every warm request was answered warm


def test_index_after_a_commit_goes_warm_and_a_rebuild_runs_alone(
        fixture_repo: Path, served: subprocess.Popen[str]) -> None:
    """``gitmem index`` only brings the derived index up to date, as a warm recall does first:
    the warm process answers it (the same output as alone), and recall then finds the commit.
    ``--force`` (a rebuild: long work) and help run in the command's own process."""
    before = served_count(fixture_repo)
    write(fixture_repo, "memory/2025-12-01.md", "# 2025-12-01\n\n## Retain\n"
          "- W @Zed: The zebracorn sleeps in the barn.\n")
    git(fixture_repo, "add", "-A")
    git(fixture_repo, "commit", "-q", "-m", "a note")
    head = git(fixture_repo, "rev-parse", "--short=7", "HEAD").strip()
    warm, _ = run_cli(fixture_repo, "index", "--no-embed")
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout.startswith(f"updated index at {head}: ")
    assert " 1 added, 0 modified" in warm.stdout
    assert served_count(fixture_repo) == before + 1
    again, _ = run_cli(fixture_repo, "index", "--no-embed")
    alone, _ = run_cli(fixture_repo, "index", "--no-embed", warm=False)
    assert again.stdout == alone.stdout  # nothing new either way
    assert " 0 added, 0 modified, 0 deleted" in again.stdout
    found = json.loads(run_cli(fixture_repo, "recall", "zebracorn barn", "--json")[0].stdout)
    assert [r["source"] for r in found["results"]][:1] == ["memory/2025-12-01.md#L4"]
    assert served_count(fixture_repo) == before + 3
    for args in (("index", "--force", "--no-embed"), ("index", "--help")):
        assert run_cli(fixture_repo, *args)[0].returncode == 0
    assert served_count(fixture_repo) == before + 3  # both ran alone


def test_socket_is_private_and_one_server_per_repository(fixture_repo: Path,
                                                         served: subprocess.Popen[str]) -> None:
    path = client.socket_path(str(fixture_repo.resolve()))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    refused = client.request(str(fixture_repo.resolve()), "run",
                             argv=["-C", str(fixture_repo), "reset"], color=False)
    assert refused is not None and "stale" in refused  # only read-only commands run warm
    assert (fixture_repo / ".memory" / "index.sqlite").exists()
    second, _ = run_cli(fixture_repo, "serve", "--idle-timeout", "5")
    assert second.returncode == 1 and "already serves" in second.stderr
    stopped, _ = run_cli(fixture_repo, "serve", "--stop")
    assert "stopped the warm process" in stopped.stdout
    assert served.wait(timeout=FAILURE_SECONDS) == 0
    assert not os.path.exists(path)


def test_another_version_retires_the_server_and_recall_works_alone(
        fixture_repo: Path, served: subprocess.Popen[str]) -> None:
    path = client.socket_path(str(fixture_repo.resolve()))
    reply = client.exchange(path, {"protocol": client.PROTOCOL, "version": "0.0.0-other",
                                   "repo": str(fixture_repo.resolve()), "op": "ping"})
    assert reply is not None and __version__ in str(reply["stale"])
    assert served.wait(timeout=FAILURE_SECONDS) == 0  # out of date: it made way
    cold, _ = run_cli(fixture_repo, "recall", "gateway host", "--json", warm=False)
    after, _ = run_cli(fixture_repo, "recall", "gateway host", "--json")
    assert after.returncode == 0 and after.stdout == cold.stdout


def test_another_environment_is_answered_here(fixture_repo: Path,
                                              served: subprocess.Popen[str]) -> None:
    before = served_count(fixture_repo)
    env = {"GITMEM_EMBED_PROVIDER": "none"}
    warm, _ = run_cli(fixture_repo, "recall", "gateway host", "--json", env=env)
    cold, _ = run_cli(fixture_repo, "recall", "gateway host", "--json", warm=False, env=env)
    assert warm.returncode == 0 and warm.stdout == cold.stdout
    assert served_count(fixture_repo) == before


def test_a_stopped_or_killed_server_never_hangs_the_cli(fixture_repo: Path,
                                                        served: subprocess.Popen[str]) -> None:
    cold, _ = run_cli(fixture_repo, "recall", "gateway host", "--json", warm=False)
    served.send_signal(signal.SIGSTOP)  # alive but silent: no heartbeat
    try:
        stuck, seconds = run_cli(fixture_repo, "recall", "gateway host", "--json")
    finally:
        served.kill()  # dead, its socket file left behind
        served.wait(timeout=FAILURE_SECONDS)
    assert stuck.returncode == 0 and stuck.stdout == cold.stdout
    assert seconds < FAILURE_SECONDS  # it gave up on the silent server (no heartbeat)
    assert os.path.exists(client.socket_path(str(fixture_repo.resolve())))
    dead, _ = run_cli(fixture_repo, "recall", "gateway host", "--json")
    assert dead.returncode == 0 and dead.stdout == cold.stdout


def test_a_server_dropping_the_request_falls_back(fixture_repo: Path, runtime: Path) -> None:
    """A process that accepts, reads the request and dies before answering."""
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    path = client.socket_path(str(fixture_repo.resolve()))
    os.makedirs(os.path.dirname(path), mode=0o700)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    requests: list[dict[str, object]] = []

    def drop_one() -> None:
        conn, _ = listener.accept()
        with conn:
            requests.append(json.loads(conn.makefile("rb").readline()))
            conn.sendall(b'{"working": true}\n')

    thread = threading.Thread(target=drop_one, daemon=True)
    thread.start()
    try:
        dropped, _ = run_cli(fixture_repo, "recall", "gateway host", "--json")
    finally:
        listener.close()
    cold, _ = run_cli(fixture_repo, "recall", "gateway host", "--json", warm=False)
    assert requests and requests[0]["op"] == "run"
    assert dropped.returncode == 0 and dropped.stdout == cold.stdout


def test_idle_timeout_ends_the_server(fixture_repo: Path, runtime: Path) -> None:
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    proc = start_server(fixture_repo, "--idle-timeout", "1")
    assert proc.wait(timeout=FAILURE_SECONDS) == 0
    assert not os.path.exists(client.socket_path(str(fixture_repo.resolve())))


def test_hybrid_warm_and_cold_are_identical(fixture_repo: Path, runtime: Path,
                                            tmp_path_factory: pytest.TempPathFactory,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "local")
    monkeypatch.setenv("GITMEM_EMBED_MODEL", str(tiny_gguf(tmp_path_factory)))
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    proc = start_server(fixture_repo, "--idle-timeout", IDLE)
    try:
        before = served_count(fixture_repo)
        for args in (("recall", "gateway host", "--json"), ("recall", "ferry crash")):
            warm, _ = run_cli(fixture_repo, *args)
            cold, _ = run_cli(fixture_repo, *args, warm=False)
            assert warm.returncode == 0 and (warm.stdout, warm.stderr) == \
                (cold.stdout, cold.stderr)
        hybrid, _ = run_cli(fixture_repo, "recall", "gateway host", "--json")
        assert json.loads(hybrid.stdout)["mode"] == "hybrid"
        assert served_count(fixture_repo) == before + 3
    finally:
        proc.kill()
        proc.communicate()


def vectors_in(repo: Path) -> int:
    from gitmem.index.store import open_store

    store = open_store(repo / ".memory" / "index.sqlite", readonly=True)
    try:
        return int(store.conn.execute("SELECT count(*) FROM vectors").fetchone()[0])
    finally:
        store.close()


def test_hybrid_warm_follows_a_commit_through_its_hook(fixture_repo: Path, runtime: Path,
                                                       tmp_path_factory: pytest.TempPathFactory,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm process finds vector candidates in the sign bits it holds in memory
    (issue 21); a commit whose hook re-indexes and embeds in the background (a fact changed,
    a file removed) is followed: the next warm answer is the cold one, byte for byte, with the
    new fact, and the bits held are the index's vectors again."""
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "local")
    monkeypatch.setenv("GITMEM_EMBED_MODEL", str(tiny_gguf(tmp_path_factory)))
    assert gitmem("-C", str(fixture_repo), "hooks", "install")[0] == 0
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    proc = start_server(fixture_repo, "--idle-timeout", IDLE)
    args = ("recall", "Peter rides a green bicycle in Lisbon", "--json")
    try:
        warm, _ = run_cli(fixture_repo, *args)
        assert warm.stdout == run_cli(fixture_repo, *args, warm=False)[0].stdout
        held = (ping(fixture_repo) or {}).get("vectors_held")
        assert held == vectors_in(fixture_repo) > 0
        write(fixture_repo, "memory/2025-11-30.md", "# 2025-11-30\n\n## Retain\n"
              "- W @Peter: Rides a green bicycle in Lisbon now.\n")
        (fixture_repo / "memory" / "2025-11-27-marrakech.md").unlink()
        git(fixture_repo, "add", "-A")
        git(fixture_repo, "commit", "-q", "-m", "Lisbon")  # the hook indexes and embeds
        _wait_indexed_and_embedded(fixture_repo)
        warm, _ = run_cli(fixture_repo, *args)
        cold, _ = run_cli(fixture_repo, *args, warm=False)
        assert warm.returncode == 0 and warm.stdout == cold.stdout
        results = json.loads(warm.stdout)["results"]
        assert json.loads(warm.stdout)["mode"] == "hybrid"
        assert any("green bicycle" in r["content"] for r in results)
        assert (ping(fixture_repo) or {}).get("vectors_held") == vectors_in(fixture_repo) != held
    finally:
        proc.kill()
        proc.communicate()


def _wait_indexed_and_embedded(repo: Path) -> None:
    """Until the index holds HEAD with no embedding pending and none running (what the hook's
    run leaves when it has ended), as ``gitmem status`` says; the deadline is for failures."""
    head = git(repo, "rev-parse", "HEAD").strip()
    deadline = time.monotonic() + FAILURE_SECONDS
    while True:
        status = json.loads(gitmem("-C", str(repo), "status", "--json")[1])
        semantic = status["semantic"]
        if (status["last_indexed_commit"] == head and semantic.get("pending") == 0
                and semantic.get("fill") != "running"):
            return
        assert time.monotonic() < deadline, f"the post-commit hook never finished: {status}"
        time.sleep(0.1)


def test_the_idle_clock_starts_after_the_warm_up(fixture_repo: Path, runtime: Path) -> None:
    """A warm-up longer than the idle timeout (the clock moves 10 s while it runs, on a clock
    of the test's own) does not end the server at its first idle check: it serves, and ends
    once it has been idle for the timeout after it started listening."""
    from gitmem.front.warm.server import WarmServer
    from gitmem.workspace import open_workspace

    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    now = [0.0]
    warmed: list[list[str]] = []

    def handler(argv: list[str], color: bool | None, warm: object) -> tuple[int, str, str]:
        warmed.append(argv)
        now[0] += 10.0  # the warm-up: loading a model, catching up with HEAD
        return 0, "", ""

    ws, _ = open_workspace(fixture_repo)
    server = WarmServer(ws, handler, idle_timeout=1.0, clock=lambda: now[0])
    server.warm_up()
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    deadline = time.monotonic() + FAILURE_SECONDS
    while server.idle_checks < 2 and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert thread.is_alive() and server.idle_checks >= 2  # not ended by the warm-up's time
    assert ping(fixture_repo) is not None
    assert len(warmed) == 1
    checks = server.idle_checks
    while thread.is_alive() and time.monotonic() < deadline:  # the ping's connection may
        now[0] += 1.5  # still be closing: idle for longer than the timeout after it
        thread.join(0.5)
    assert not thread.is_alive() and server.idle_checks > checks


def test_the_first_recall_starts_a_warm_process(fixture_repo: Path, runtime: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """warm.autostart: a recall that no warm process answered starts one in the background
    (without holding the caller's pipes: run_cli would wait for them), and the next recall is
    answered by it, with the same output."""
    monkeypatch.setenv("GITMEM_WARM_AUTOSTART", "true")
    monkeypatch.delenv("CI", raising=False)
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    args = ("recall", "gateway host", "--json")
    first, _ = run_cli(fixture_repo, *args)
    assert first.returncode == 0
    try:
        deadline = time.monotonic() + FAILURE_SECONDS
        while ping(fixture_repo) is None:
            assert time.monotonic() < deadline, "no warm process started"
            time.sleep(0.1)
        before = served_count(fixture_repo)
        warm, _ = run_cli(fixture_repo, *args)
        assert warm.stdout == first.stdout and served_count(fixture_repo) == before + 1
        again, _ = run_cli(fixture_repo, "get", "memory/2025-11-27.md#L14")
        assert again.returncode == 0 and served_count(fixture_repo) == before + 2
        assert len(servers_under(str(fixture_repo))) == 1  # the one it started, no other
    finally:
        run_cli(fixture_repo, "serve", "--stop")
    assert wait_gone(str(fixture_repo), FAILURE_SECONDS) == []


@pytest.mark.parametrize("env", [{"CI": "true"}, {"GITMEM_WARM_AUTOSTART": "false"},
                                 {"GITMEM_WARM": "0"}, {"GIT_DIR": ".git"}],
                         ids=["ci", "off", "warm-off", "git-hook"])
def test_no_warm_process_is_started_in_ci_hooks_or_when_off(
        fixture_repo: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch,
        env: dict[str, str]) -> None:
    """Where nothing would use it before its idle timeout, or it is turned off, no warm
    process is started (it would be running when the command ends: it is started first)."""
    monkeypatch.setenv("GITMEM_WARM_AUTOSTART", "true")
    monkeypatch.delenv("CI", raising=False)
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    full = {k: str(fixture_repo / v) if k == "GIT_DIR" else v for k, v in env.items()}
    done, _ = run_cli(fixture_repo, "recall", "gateway host", "--json", env=full)
    assert done.returncode == 0, done.stderr
    assert servers_under(str(fixture_repo)) == []
    assert gitmem("-C", str(fixture_repo), "recall", "gateway host")[0] == 0  # in-process:
    assert servers_under(str(fixture_repo)) == []  # never
