"""What a warm process remembers between requests (``gitmem.index.watch``): a request after a
quiet spell runs no git process, and whatever a command alone would see changed (a commit, a
checkout, an uncommitted edit, a new folder, the configuration, a removed index, a commit in a
linked worktree) is seen by the very next request, with the same answer as a command alone."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gitmem.front.cli import run_captured
from gitmem.index.watch import WarmState
from testing.cli import gitmem
from testing.repo import commit_all, git, write

NOTE = "memory/2025-11-28.md"
ENTRY = "# 2025-11-28\n\n## Retain\n- W @Zed: The {word} moved to Oslo.\n"


@pytest.fixture
def warm(fixture_repo: Path) -> Iterator[WarmState]:
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    state = WarmState()
    yield state
    state.close()


Recall = Callable[..., dict[str, Any]]


@pytest.fixture
def recall(fixture_repo: Path, warm: WarmState) -> Recall:
    """A recall answered with the warm state, checked to be what a command alone prints; asked
    twice, so that the state remembers a current index when the next change comes (the first
    request after a change catches up, the second finds the index current)."""

    def ask(query: str, *extra: str) -> dict[str, Any]:
        args = ["-C", str(fixture_repo), "recall", query, "--json", "--mode", "lexical", *extra]
        code, out, err = run_captured(args, None, warm)
        assert run_captured(args, None, warm) == (code, out, err), query
        assert (code, out, err) == run_captured(args, None), query
        assert code == 0, err
        data: dict[str, Any] = json.loads(out)
        return data

    return ask


def found(data: dict[str, Any], word: str) -> list[str]:
    return [r["source"] for r in data["results"] if word in r["content"]]


def test_a_quiet_workspace_is_answered_without_git(fixture_repo: Path, warm: WarmState,
                                                   git_calls: list[tuple[str, ...]]) -> None:
    args = ["-C", str(fixture_repo), "recall", "gateway host", "--json"]
    first = run_captured(args, None, warm)
    assert git_calls  # the first request finds the workspace and checks the index
    # The second finds the workspace again: the first read it before its folders were watched.
    assert run_captured(args, None, warm) == first
    git_calls.clear()
    for _ in range(3):
        assert run_captured(args, None, warm) == first
    assert git_calls == []


def state_of(data: dict[str, Any], word: str) -> list[tuple[str, bool]]:
    """(citation, uncommitted) of the results holding ``word``."""
    return [(r["source"], r["uncommitted"]) for r in data["results"] if word in r["content"]]


def test_a_commit_between_requests_is_seen(fixture_repo: Path, recall: Recall) -> None:
    assert found(recall("zebracorn"), "zebracorn") == []
    write(fixture_repo, NOTE, ENTRY.format(word="zebracorn"))
    assert state_of(recall("zebracorn"), "zebracorn") == [(f"{NOTE}#L4", True)]
    commit_all(fixture_repo, "a new note")  # the working tree stays as it was: only refs move
    assert state_of(recall("zebracorn"), "zebracorn") == [(f"{NOTE}#L4", False)]
    git(fixture_repo, "reset", "-q", "--soft", "HEAD~1")  # the branch alone, back
    assert state_of(recall("zebracorn"), "zebracorn") == [(f"{NOTE}#L4", True)]
    git(fixture_repo, "reset", "-q", "--hard")
    assert found(recall("zebracorn"), "zebracorn") == []


def test_a_checkout_between_requests_is_seen(fixture_repo: Path, recall: Recall) -> None:
    git(fixture_repo, "branch", "before")
    git(fixture_repo, "checkout", "-q", "-b", "other")
    write(fixture_repo, NOTE, ENTRY.format(word="quokkafish"))
    commit = commit_all(fixture_repo, "on another branch")
    git(fixture_repo, "checkout", "-q", "main")
    assert found(recall("quokkafish"), "quokkafish") == []
    git(fixture_repo, "checkout", "-q", "other")
    assert state_of(recall("quokkafish"), "quokkafish") == [(f"{NOTE}#L4", False)]
    git(fixture_repo, "symbolic-ref", "HEAD", "refs/heads/before")  # HEAD alone: the file
    assert state_of(recall("quokkafish"), "quokkafish") == [(f"{NOTE}#L4", True)]  # is new
    git(fixture_repo, "checkout", "-q", "--detach", commit)  # HEAD a commit, not a branch
    assert state_of(recall("quokkafish"), "quokkafish") == [(f"{NOTE}#L4", False)]
    git(fixture_repo, "checkout", "-q", "main")
    assert found(recall("quokkafish"), "quokkafish") == []
    git(fixture_repo, "pack-refs", "--all")  # every branch in one file
    write(fixture_repo, NOTE, ENTRY.format(word="quokkafish"))
    assert state_of(recall("quokkafish"), "quokkafish") == [(f"{NOTE}#L4", True)]
    packed = fixture_repo / ".git" / "packed-refs"  # a packed branch moves, as git writes it:
    main = git(fixture_repo, "rev-parse", "main").strip()  # a new file renamed over the old
    (fixture_repo / ".git" / "packed-refs.lock").write_text(
        packed.read_text(encoding="utf-8").replace(main, commit), encoding="utf-8")
    (fixture_repo / ".git" / "packed-refs.lock").replace(packed)
    assert state_of(recall("quokkafish"), "quokkafish") == [(f"{NOTE}#L4", False)]
    git(fixture_repo, "update-ref", "refs/heads/main", main)  # a loose branch moves
    assert state_of(recall("quokkafish"), "quokkafish") == [(f"{NOTE}#L4", True)]


def test_uncommitted_edits_and_new_folders_are_seen(fixture_repo: Path, recall: Recall) -> None:
    with (fixture_repo / "memory" / "2025-11-27.md").open("a", encoding="utf-8") as fh:
        fh.write("- W @Zed: Bought a narwhalcopter.\n")
    hit = recall("narwhalcopter")
    assert found(hit, "narwhalcopter") and hit["results"][0]["uncommitted"]
    write(fixture_repo, "memory/projects/ideas.md", "# Ideas\n\nA lemurboat.\n")
    assert found(recall("lemurboat"), "lemurboat") == ["memory/projects/ideas.md#L1-L3"]
    with (fixture_repo / "memory" / "projects" / "ideas.md").open("a", encoding="utf-8") as fh:
        fh.write("An otterplane.\n")  # inside the folder that appeared since the last request
    assert found(recall("otterplane"), "otterplane")
    (fixture_repo / "memory" / "projects" / "ideas.md").unlink()
    assert found(recall("otterplane"), "otterplane") == []


def test_configuration_and_a_removed_index_are_seen(fixture_repo: Path, recall: Recall,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    assert len(recall("gateway")["results"]) > 1
    write(fixture_repo, ".gitmem.toml", "[recall]\nk = 1\n")
    assert len(recall("gateway")["results"]) == 1
    user = Path(str(tmp_path / "home" / "config"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))  # no such folder yet
    state = WarmState()
    args = ["-C", str(fixture_repo), "recall", "gateway", "--json"]
    assert len(json.loads(run_captured(args, None, state)[1])["results"]) == 1
    write(user, "gitmem/config.toml", "[recall]\nk = 2\n")  # its folder appears with it
    write(fixture_repo, ".gitmem.toml", "")
    assert len(json.loads(run_captured(args, None, state)[1])["results"]) == 2
    assert gitmem("-C", str(fixture_repo), "reset")[0] == 0
    assert run_captured(args, None, state) == run_captured(args, None)
    assert (fixture_repo / ".memory" / "index.sqlite").exists()  # built again
    state.close()


def test_a_commit_in_a_linked_worktree_is_seen(fixture_repo: Path, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    git(fixture_repo, "worktree", "add", "-q", "-b", "side", str(linked))
    assert gitmem("-C", str(linked), "index")[0] == 0
    state = WarmState()
    args = ["-C", str(linked), "recall", "pangolinbus", "--json", "--mode", "lexical"]
    assert json.loads(run_captured(args, None, state)[1])["results"] == []
    write(linked, NOTE, ENTRY.format(word="pangolinbus"))
    commit_all(linked, "in the linked worktree")
    git(linked, "status")  # a git command that refreshes the index: no change to memory
    out = run_captured(args, None, state)
    assert out == run_captured(args, None)
    assert found(json.loads(out[1]), "pangolinbus") == [f"{NOTE}#L4"]
    state.close()


def test_without_inotify_every_request_checks(fixture_repo: Path, warm: WarmState,
                                              git_calls: list[tuple[str, ...]],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inotify_simple", None)  # as off Linux: no such module
    args = ["-C", str(fixture_repo), "recall", "gateway host", "--json"]
    first = run_captured(args, None, warm)
    git_calls.clear()
    assert run_captured(args, None, warm) == first
    assert [c for c in git_calls if "status" in c]  # checked again, as a command alone does


def test_an_edit_of_memory_keeps_the_workspace_and_the_watch(
        fixture_repo: Path, recall: Recall, monkeypatch: pytest.MonkeyPatch) -> None:
    """An edit of a memory file (or the index's own write after it) changes what the index
    holds, not where the workspace is or how it is set up: the next request catches up without
    opening the workspace again or listing the memory folders to re-arm the watch. A change
    of the configuration still opens it again."""
    import gitmem.index.watch as watch

    opened: list[Path] = []
    listed: list[str] = []
    real_open, real_list = watch.open_workspace, watch._subfolders

    def counted_open(start: Path, **kw: Any) -> Any:
        opened.append(start)
        return real_open(start, **kw)

    def counted_list(top: str) -> Any:
        listed.append(top)
        return real_list(top)

    monkeypatch.setattr(watch, "open_workspace", counted_open)
    monkeypatch.setattr(watch, "_subfolders", counted_list)
    assert found(recall("gateway"), "gateway")
    opened.clear()
    listed.clear()
    note = fixture_repo / "memory" / "2025-11-27.md"
    for word in ("narwhalcopter", "walruskite"):
        with note.open("a", encoding="utf-8") as fh:
            fh.write(f"- W @Zed: Bought a {word}.\n")
        hit = recall(word)  # the catch-up, then a request after the catch-up's own write
        assert found(hit, word) and hit["results"][0]["uncommitted"]
    (fixture_repo / "MEMORY.md").write_text("# Memory\n\nThe yakferry.\n", encoding="utf-8")
    assert found(recall("yakferry"), "yakferry") == ["MEMORY.md#L1-L3"]
    assert opened == [] and listed == []
    write(fixture_repo, ".gitmem.toml", "[recall]\nk = 1\n")
    assert len(recall("gateway")["results"]) == 1
    assert opened and listed  # the configuration is read again, the folders watched anew


def test_after_its_own_catch_up_the_next_request_runs_no_git(
        fixture_repo: Path, warm: WarmState, git_calls: list[tuple[str, ...]]) -> None:
    """The catch-up after an edit writes the index, which the watch sees; the next request
    knows the write as its own (nothing else changed, and the index file is as the write
    left it) and runs no git process. Another process's write to the index, or a rebuilt
    file, is not its own: the request after it checks again, and answers as a command
    alone does."""
    from gitmem.index.store import open_store

    args = ["-C", str(fixture_repo), "recall", "narwhalcopter", "--json", "--mode", "lexical"]
    for _ in range(2):
        run_captured(args, None, warm)
    with (fixture_repo / "memory" / "2025-11-27.md").open("a", encoding="utf-8") as fh:
        fh.write("- W @Zed: Bought a narwhalcopter.\n")
    git_calls.clear()
    caught_up = run_captured(args, None, warm)
    assert found(json.loads(caught_up[1]), "narwhalcopter")
    assert [c for c in git_calls if "status" in c]  # the edit is seen, once
    git_calls.clear()
    assert run_captured(args, None, warm) == caught_up
    assert git_calls == []
    index = fixture_repo / ".memory" / "index.sqlite"
    store = open_store(index)  # another writer: the layer it records is not the files'
    with store.transaction():
        store.set_meta("worktree", "{}")
    store.close()
    answer = run_captured(args, None, warm)
    assert [c for c in git_calls if "status" in c]  # checked, and caught up again
    assert answer == run_captured(args, None)  # (the layer's record time is the run's)
    git_calls.clear()
    assert run_captured(args, None, warm) == answer
    assert git_calls == []
    assert gitmem("-C", str(fixture_repo), "index", "--force")[0] == 0  # a new file
    git_calls.clear()
    answer = run_captured(args, None, warm)
    assert [c for c in git_calls if "status" in c]
    assert answer == run_captured(args, None)


def test_the_read_connection_is_kept_and_holds_no_lock_between_requests(
        fixture_repo: Path, warm: WarmState, recall: Recall) -> None:
    """A warm process reads the index through the connection it kept from the last request
    (the same one while the file is the same file), never holding a lock between requests:
    a writer elsewhere takes the file at once. A rebuilt file gets a new connection."""
    import apsw

    index = fixture_repo / ".memory" / "index.sqlite"
    assert found(recall("gateway"), "gateway")
    kept = warm._readers[index][1]
    assert found(recall("gateway"), "gateway") and warm._readers[index][1] is kept
    writer = apsw.Connection(str(index))  # no busy timeout: a held lock fails at once
    writer.execute("BEGIN EXCLUSIVE; UPDATE meta SET value = value WHERE key = 'chunking'; "
                   "COMMIT")
    writer.close()
    with (fixture_repo / "memory" / "2025-11-27.md").open("a", encoding="utf-8") as fh:
        fh.write("- W @Zed: Bought a narwhalcopter.\n")
    assert found(recall("narwhalcopter"), "narwhalcopter")  # what the catch-up wrote
    assert warm._readers[index][1] is kept
    assert gitmem("-C", str(fixture_repo), "index", "--force")[0] == 0  # a new file
    assert found(recall("narwhalcopter"), "narwhalcopter")
    assert warm._readers[index][1] is not kept
