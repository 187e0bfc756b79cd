"""The freshness check's first step: HEAD read from git's files (git.head_from_files), so that a
commit since the index was written is seen without a process; anything unusual asks git."""

from __future__ import annotations

from pathlib import Path

from gitmem.git import head_from_files
from testing.cli import gitmem
from testing.repo import commit_all, git, make_repo, write


def _head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def test_head_from_files_agrees_with_git(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    assert head_from_files(repo / ".git") is None  # no commit yet
    write(repo, "MEMORY.md", "# Memory\n")
    first = commit_all(repo, "first")
    assert head_from_files(repo / ".git") == first == _head(repo)  # a loose branch ref
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert head_from_files(repo / ".git") == first  # packed
    write(repo, "USER.md", "# User\n")
    second = commit_all(repo, "second")
    assert head_from_files(repo / ".git") == second
    git(repo, "checkout", "-q", "--detach", first)
    assert head_from_files(repo / ".git") == first  # detached
    git(repo, "checkout", "-q", "main")
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "side"), first)
    side_git = Path(git(tmp_path / "side", "rev-parse", "--absolute-git-dir").strip())
    assert head_from_files(side_git) == first and head_from_files(repo / ".git") == second
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/.invalid\n", encoding="utf-8")
    assert head_from_files(repo / ".git") is None  # as a reftable repository writes it
    (repo / ".git" / "HEAD").write_text("garbage\n", encoding="utf-8")
    assert head_from_files(repo / ".git") is None


def test_index_after_a_commit_runs_one_git_status(tmp_path: Path,
                                                  git_calls: list[tuple[str, ...]]) -> None:
    """A commit since the index was written is seen from the files: 'gitmem index' then runs
    git status once (under the writer lock), not once more to find it is behind; and the index
    found current still asks git status (an uncommitted edit is seen)."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-27.md", "## Retain\n- W @Peter: One.\n")
    commit_all(repo, "one")
    assert gitmem("-C", str(repo), "index")[0] == 0
    write(repo, "memory/2025-11-28.md", "## Retain\n- W @Peter: Two.\n")
    commit_all(repo, "two")
    git_calls.clear()
    assert gitmem("-C", str(repo), "index")[0] == 0
    assert sum("status" in call for call in git_calls) == 1, git_calls
    git_calls.clear()
    write(repo, "memory/2025-11-28.md", "## Retain\n- W @Peter: Two, edited.\n")
    code, out, _ = gitmem("-C", str(repo), "recall", "edited", "--mode", "lexical")
    assert code == 0 and "(uncommitted)" in out
    assert any("status" in call for call in git_calls)


def test_recall_after_an_uncommitted_edit_runs_one_git_status(
        tmp_path: Path, git_calls: list[tuple[str, ...]]) -> None:
    """The freshness check's git status is the one the catch-up records: not run again under
    the writer lock while HEAD is still the commit it named."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-27.md", "## Retain\n- W @Peter: One.\n")
    commit_all(repo, "one")
    assert gitmem("-C", str(repo), "index")[0] == 0
    write(repo, "memory/2025-11-27.md", "## Retain\n- W @Peter: One, edited.\n")
    git_calls.clear()
    code, out, _ = gitmem("-C", str(repo), "recall", "edited", "--mode", "lexical")
    assert code == 0 and "(uncommitted)" in out
    assert sum("status" in call for call in git_calls) == 1, git_calls


def test_an_edit_after_the_check_is_seen_by_the_next_recall(tmp_path: Path) -> None:
    """The layer read before the lock is what the index records: an edit made after it, or a
    commit (then the layer is read again under the lock), is seen."""
    from gitmem.index.replay import index_workspace
    from gitmem.index.run import index_is_current
    from gitmem.workspace import open_workspace, worktree_layer

    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-27.md", "## Retain\n- W @Peter: One.\n")
    commit_all(repo, "one")
    assert gitmem("-C", str(repo), "index")[0] == 0
    ws, cfg = open_workspace(repo)
    write(repo, "memory/2025-11-27.md", "## Retain\n- W @Peter: One, first edit.\n")
    seen = worktree_layer(ws, cfg)
    write(repo, "memory/2025-11-27.md", "## Retain\n- W @Peter: One, second edit.\n")
    index_workspace(ws, cfg, layer=seen, report_plan=False)
    assert not index_is_current(ws, cfg)  # it holds the first edit; the second is seen
    code, out, _ = gitmem("-C", str(repo), "recall", "second", "--mode", "lexical")
    assert code == 0 and "second edit" in out
    seen = worktree_layer(ws, cfg)
    write(repo, "memory/2025-11-28.md", "## Retain\n- W @Peter: Two.\n")
    two = commit_all(repo, "two")
    index_workspace(ws, cfg, layer=seen)  # HEAD moved since: read again under the lock
    assert index_is_current(ws, cfg)
    code, out, _ = gitmem("-C", str(repo), "recall", "Two", "--mode", "lexical", "--json")
    assert code == 0 and two[:7] in out
