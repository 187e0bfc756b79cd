"""Hermetic test environment: no user git config, home, or clock leaks in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def hermetic_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Agent")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "agent@example.invalid")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Agent")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "agent@example.invalid")
    monkeypatch.setenv("TZ", "UTC")
    for name in list(__import__("os").environ):
        if name.startswith("GITMEM_"):
            monkeypatch.delenv(name)
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    yield


@pytest.fixture
def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent


def _load_builder():  # type: ignore[no-untyped-def]
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "fixtures" / "build_fixture.py"
    spec = importlib.util.spec_from_file_location("build_fixture", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def built_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample workspace as a real git repository (built once; copy it before changing it)."""
    dest = tmp_path_factory.mktemp("fixture") / "ws"
    _load_builder().build_fixture(dest)
    return dest


@pytest.fixture
def fixture_repo(built_fixture: Path, tmp_path: Path) -> Path:
    """A private copy of the sample workspace repository, safe to change."""
    import shutil

    dest = tmp_path / "ws"
    shutil.copytree(built_fixture, dest, symlinks=True)
    return dest
