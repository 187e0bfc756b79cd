"""Finding the repository without starting git (``git.plain_repo_root``): the same answer as
``git rev-parse`` wherever it answers, and git itself asked for everything out of the plain
case (variables, a git dir, bare or moved work trees, another file system, no repository)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.errors import GitmemError
from gitmem.git import asked_repo_root, find_repo_root, plain_repo_root
from testing.repo import commit_all, git, make_repo, write


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path)
    write(root, "memory/2025-11-27.md", "# note\n")
    commit_all(root, "first")
    return root


def same_as_git(start: Path) -> tuple[Path, Path]:
    found = plain_repo_root(start)
    assert found is not None, start
    assert found == asked_repo_root(start)
    return found


def test_plain_repositories_are_found_as_git_finds_them(repo: Path, tmp_path: Path) -> None:
    assert same_as_git(repo) == (repo.resolve(), (repo / ".git").resolve())
    assert same_as_git(repo / "memory")[0] == repo.resolve()
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "side", str(linked))
    assert same_as_git(linked / "memory")[1] == (repo / ".git" / "worktrees" / "linked").resolve()
    separate = tmp_path / "separate"
    git(tmp_path, "init", "-q", "--separate-git-dir", str(tmp_path / "elsewhere.git"),
        str(separate))
    assert same_as_git(separate)[1] == (tmp_path / "elsewhere.git").resolve()
    (tmp_path / "link").symlink_to(repo / "memory")
    assert same_as_git(tmp_path / "link")[0] == repo.resolve()


def test_git_is_asked_out_of_the_plain_case(repo: Path, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    assert plain_repo_root(repo / ".git") is None  # inside the git dir: no work tree
    with pytest.raises(GitmemError, match="no work tree"):
        find_repo_root(repo / ".git")
    outside = tmp_path / "outside"
    outside.mkdir()
    with pytest.raises(GitmemError, match="not inside a git repository"):
        find_repo_root(outside)
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    assert plain_repo_root(repo) is None
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(repo))
    assert plain_repo_root(repo / "memory") is None
    monkeypatch.delenv("GIT_CEILING_DIRECTORIES")
    for key, value in (("core.bare", "true"), ("core.worktree", str(tmp_path))):
        git(repo, "config", key, value)
        assert plain_repo_root(repo) is None, key
        git(repo, "config", "--unset", key)
    assert plain_repo_root(repo) is not None


def test_a_plain_repository_is_found_without_git(repo: Path,
                                                 git_calls: list[tuple[str, ...]]) -> None:
    found = find_repo_root(repo / "memory")
    assert git_calls == []
    assert found == asked_repo_root(repo / "memory") and len(git_calls) == 1
