"""``gitmem retain`` (the library call behind memory_retain): where an entry goes in the daily
note, what is refused, and that the note is committed alone."""

from __future__ import annotations

import json
import subprocess
import time
from datetime import date
from pathlib import Path

import pytest
from gguf_model import tiny_gguf

from gitmem.errors import GitmemError, UsageError
from gitmem.hooks import install
from gitmem.index.run import index_is_current
from gitmem.locks import writer_lock
from gitmem.reflect.append import retain
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem, recall_json, status_json
from testing.index import read_index
from testing.repo import commit_all, git, make_repo, write

DAY = date(2025, 11, 27)
NOTE = "memory/2025-11-27.md"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# MEMORY\n")
    commit_all(repo, "start")
    return repo


def git_bytes(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True,
                          check=True).stdout


def keep(repo: Path, entry: str) -> dict[str, object]:
    ws, cfg = open_workspace(repo)
    return retain(ws, cfg, entry, day=DAY).to_json()


def test_a_new_note_gets_a_title_and_a_retain_section(repo: Path) -> None:
    out = keep(repo, "- W @Peter: Moved the gateway host to The Castle.")
    assert (repo / NOTE).read_text(encoding="utf-8") == (
        "# 2025-11-27\n\n## Retain\n- W @Peter: Moved the gateway host to The Castle.\n")
    assert out["source"] == f"{NOTE}#L4" and out["created"] is True
    assert git(repo, "log", "-1", "--format=%s").strip() == (
        "memory: retain W @Peter: Moved the gateway host to The Castle.")
    assert recall_json(repo, "gateway host")["results"][0]["source"] == f"{NOTE}#L4"


def test_entries_go_to_the_end_of_the_retain_section(repo: Path) -> None:
    write(repo, NOTE, "# Day\n\n## Retain\n- W @Peter: First.\n  more of the first\n\n"
                      "## Notes\nfree text\n")
    commit_all(repo, "note")
    out = keep(repo, "O(c=0.7) @Peter: Likes ferries.\nover several lines")
    assert (repo / NOTE).read_text(encoding="utf-8") == (
        "# Day\n\n## Retain\n- W @Peter: First.\n  more of the first\n"
        "- O(c=0.7) @Peter: Likes ferries.\n  over several lines\n\n## Notes\nfree text\n")
    assert (out["start_line"], out["end_line"], out["confidence"]) == (6, 7, 0.7)
    assert out["created"] is False


def test_a_note_without_retain_gets_the_section_appended_crlf_kept(repo: Path) -> None:
    write(repo, NOTE, "# Day\r\n\r\n## Log\r\n- 09:00 coffee\r\n")
    commit_all(repo, "note")
    out = keep(repo, "B: Wrote the retain tool.")
    assert (repo / NOTE).read_bytes() == (
        b"# Day\r\n\r\n## Log\r\n- 09:00 coffee\r\n\r\n## Retain\r\n- B: Wrote the retain tool.\r\n")
    assert out["start_line"] == 7


@pytest.mark.parametrize("entry, words", [
    ("just some text", "not a Retain entry"),
    ("X @Peter: unknown kind", "not a Retain entry"),
    ("W(c=0.9) @Peter: confidence on a world fact", "only meaningful on O entries"),
    ("O(c=1.5) @Peter: too sure", "outside [0, 1]"),
    ("W @Peter:", "has no text"),
    ("W @Peter: fine\n## Injected heading", "would break the daily note's structure"),
    ("W @Peter: fine\n```", "would break the daily note's structure"),
    ("", "empty Retain entry"),
])
def test_malformed_entries_are_refused_with_the_grammar(repo: Path, entry: str,
                                                        words: str) -> None:
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(UsageError) as caught:
        keep(repo, entry)
    assert words in str(caught.value)
    assert "<KIND>[(c=<confidence>)] [@Entity ...]: <text>" in str(caught.value)
    assert not (repo / NOTE).exists() and git(repo, "rev-parse", "HEAD") == head


def test_a_symlinked_memory_folder_is_refused(repo: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (repo / "memory").symlink_to(elsewhere)
    with pytest.raises(GitmemError, match="symbolic link"):
        keep(repo, "W @Peter: not through a link.")
    assert not list(elsewhere.iterdir())


# -- what the commit holds: HEAD's note plus the entry, never an uncommitted edit -------------

UNFINISHED = "- B: Halfway through writing th"
ENTRY = "W @Peter: Booked the ferry."


def at_head(repo: Path, rel: str = NOTE) -> bytes:
    return git(repo, "show", f"HEAD:{rel}").encode("utf-8")


def test_an_unfinished_line_stays_uncommitted_beside_the_entry(repo: Path) -> None:
    """The agent's half-written line is in the work tree, not in 'memory: retain ...'; a
    person's change staged in another file stays staged and out of the commit."""
    committed = "# Day\n\n## Retain\n- W @Peter: First.\n"
    write(repo, NOTE, committed)
    commit_all(repo, "note")
    write(repo, NOTE, committed + UNFINISHED)  # no newline yet: the agent is mid-sentence
    write(repo, "USER.md", "staged by a person\n")
    git(repo, "add", "USER.md")
    before = git(repo, "rev-parse", "HEAD").strip()
    out = keep(repo, ENTRY)
    assert at_head(repo) == (committed + f"- {ENTRY}\n").encode()
    assert out["source"] == f"{NOTE}#L5"
    assert (repo / NOTE).read_text(encoding="utf-8") == committed + UNFINISHED + f"\n- {ENTRY}\n"
    assert git(repo, "rev-list", f"{before}..HEAD").split() == [out["commit"]]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [NOTE]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["USER.md"]
    assert git(repo, "diff", "-U0", "--", NOTE).splitlines()[-1] == f"+{UNFINISHED}"
    assert sorted(git(repo, "status", "--porcelain").splitlines()) == [f" M {NOTE}",
                                                                       "A  USER.md"]


def test_an_uncommitted_new_note_is_not_committed_only_the_entry_is(repo: Path) -> None:
    write(repo, NOTE, "# Draft\n\nnotes the agent has not committed\n")
    out = keep(repo, ENTRY)
    assert at_head(repo) == f"# 2025-11-27\n\n## Retain\n- {ENTRY}\n".encode()
    assert out["created"] is True and out["source"] == f"{NOTE}#L4"
    assert (repo / NOTE).read_text(encoding="utf-8") == (
        f"# Draft\n\nnotes the agent has not committed\n\n## Retain\n- {ENTRY}\n")


def test_crlf_notes_keep_crlf_in_the_commit_and_the_work_tree(repo: Path) -> None:
    committed = b"# Day\r\n\r\n## Retain\r\n- W @Peter: First.\r\n"
    write(repo, NOTE, committed)
    commit_all(repo, "note")
    write(repo, NOTE, committed + b"- B: unfinished\r\n")
    keep(repo, ENTRY)
    assert git_bytes(repo, "show", f"HEAD:{NOTE}") == committed + f"- {ENTRY}\r\n".encode()
    assert (repo / NOTE).read_bytes() == committed + f"- B: unfinished\r\n- {ENTRY}\r\n".encode()


def test_a_deleted_note_is_not_committed_as_deleted(repo: Path) -> None:
    """The committed note keeps its lines and gains the entry; the work tree keeps the person's
    deletion of those lines (still uncommitted) and gets a note holding the entry."""
    committed = "# Day\n\n## Retain\n- W @Peter: First.\n"
    write(repo, NOTE, committed)
    commit_all(repo, "note")
    (repo / NOTE).unlink()
    out = keep(repo, ENTRY)
    assert at_head(repo) == (committed + f"- {ENTRY}\n").encode()
    assert out["created"] is False and out["source"] == f"{NOTE}#L5"
    assert (repo / NOTE).read_text(encoding="utf-8") == f"# 2025-11-27\n\n## Retain\n- {ENTRY}\n"


def test_a_staged_edit_of_the_note_is_refused_and_nothing_changes(repo: Path) -> None:
    write(repo, NOTE, "# Day\n\n## Retain\n- W @Peter: First.\n")
    commit_all(repo, "note")
    write(repo, NOTE, "# Day\n\n## Retain\n- W @Peter: First, staged.\n")
    git(repo, "add", NOTE)
    head, disk = git(repo, "rev-parse", "HEAD"), (repo / NOTE).read_bytes()
    with pytest.raises(GitmemError, match=rf"{NOTE} has staged changes.*git restore --staged"):
        keep(repo, ENTRY)
    assert git(repo, "rev-parse", "HEAD") == head and (repo / NOTE).read_bytes() == disk
    assert git(repo, "diff", "--cached", "--name-only").split() == [NOTE]


# -- after the commit: the command line indexes and embeds, as memory_retain does ------------


def test_the_command_line_indexes_and_embeds_what_it_retained(
        repo: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "local")
    monkeypatch.setenv("GITMEM_EMBED_MODEL", str(tiny_gguf(tmp_path_factory)))
    assert gitmem("-C", str(repo), "index")[0] == 0
    code, out, err = gitmem("-C", str(repo), "retain", ENTRY, "--json")
    assert code == 0, err
    ws, cfg = open_workspace(repo)
    with read_index(repo) as store:
        assert store.get_meta("last_indexed_commit") == json.loads(out)["commit"]
    assert index_is_current(ws, cfg)
    assert status_json(repo)["semantic"]["pending"] == 0


def test_a_hook_after_retain_sees_the_work_tree_against_gits_own_index(repo: Path) -> None:
    """git hands its hooks the index a commit was made from; retain's is temporary and gone
    when the background re-index runs, which must still record the uncommitted layer right."""
    install(repo)
    write(repo, NOTE, "# Day\n\n## Retain\n- W @Peter: First.\n")
    commit_all(repo, "note")
    write(repo, NOTE, "# Day\n\n## Retain\n- W @Peter: First.\n" + UNFINISHED)
    out = keep(repo, ENTRY)
    log = repo / ".memory" / "hook.log"
    deadline = time.monotonic() + FAILURE_SECONDS
    while f"indexed {out['commit']}" not in (log.read_text(encoding="utf-8")
                                               if log.is_file() else ""):
        assert time.monotonic() < deadline, "the post-commit hook never indexed the retain"
        time.sleep(0.05)
    ws, cfg = open_workspace(repo)
    with writer_lock(ws):
        assert index_is_current(ws, cfg)


def test_a_workspace_in_a_subfolder_of_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    """The note's repository path carries the workspace's folder, and git's index is the linked
    worktree's own (.git/worktrees/NAME/index): the main work tree's staged files stay staged."""
    write(repo, ".gitmem.toml", '[workspace]\nroot = "mem"\n')
    write(repo, f"mem/{NOTE}", "# Day\n\n## Retain\n- W @Peter: First.\n")
    commit_all(repo, "mem")
    write(repo, "USER.md", "staged in the main work tree\n")
    git(repo, "add", "USER.md")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "agent", str(linked))
    write(linked, f"mem/{NOTE}", "# Day\n\n## Retain\n- W @Peter: First.\n" + UNFINISHED + "\n")
    ws, cfg = open_workspace(linked / "mem")
    out = retain(ws, cfg, ENTRY, day=DAY)
    assert git(linked, "show", "--name-only", "--format=", "agent").split() == [f"mem/{NOTE}"]
    assert at_head(linked, f"mem/{NOTE}") == (
        f"# Day\n\n## Retain\n- W @Peter: First.\n- {ENTRY}\n").encode()
    assert git(linked, "rev-parse", "agent").strip() == out.commit
    assert git(linked, "status", "--porcelain").splitlines() == [f" M mem/{NOTE}"]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["USER.md"]
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "mem"
