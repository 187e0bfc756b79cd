"""``gitmem retain`` (the library call behind memory_retain): where an entry goes in the daily
note, what is refused, and that the note is committed alone."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from gitmem.errors import GitmemError, UsageError
from gitmem.reflect.retain import retain
from gitmem.workspace import open_workspace
from testing.cli import recall_json
from testing.repo import commit_all, git, make_repo, write

DAY = date(2025, 11, 27)
NOTE = "memory/2025-11-27.md"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# MEMORY\n")
    commit_all(repo, "start")
    return repo


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
