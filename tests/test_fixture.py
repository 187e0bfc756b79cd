"""The fixture workspace and its builder (fixtures/build_fixture.py)."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from fixtures import build_fixture as builder
from testing.repo import git

REPO_ROOT = Path(__file__).resolve().parent.parent
WORKSPACE = REPO_ROOT / "fixtures" / "workspace"
DAILY_RE = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:-[^/]+)?\.md$")
RETAIN_HEADING_RE = re.compile(r"^(#{2,6})[ \t]+retain[ \t]*$", re.IGNORECASE | re.MULTILINE)
ENTRY_RE = re.compile(r"^- [WBOS](?:\(c=(?:0(?:\.\d+)?|1(?:\.0+)?)\))?(?: @[^\s:]+)*: \S", re.M)

SPEC_EXAMPLES = [
    "- W @Peter: Currently in Marrakech for Andy's birthday (2025-11-27 – 2025-12-01).",
    "- B @warelay: Fixed the Baileys WS crash by wrapping the connection.update handler in "
    "try/catch (see memory/2025-11-27.md).",
    "- O(c=0.95) @Peter: Prefers concise WhatsApp replies (under 1500 chars); long content goes "
    "to a file.",
    "- W @Peter @The-Castle: Moved the gateway host to The Castle.",
    "- W @ピーター: アンディの誕生日のため、マラケシュに滞在（2025年11月27日〜12月1日）。",
    "- O(c=0.6) @Пётр: Предпочитает короткие ответы.",
]

# (path, exact substring that must occur in that file)
REQUIRED_TOKENS = [
    ("MEMORY.md", "memorySearch.query.hybrid"),
    ("MEMORY.md", "a828e60"),
    ("MEMORY.md", "gateway host"),
    ("memory/2025-11-11.md", '"ECONNRESET: socket hang up"'),
    ("memory/2025-11-17.md", "Nov 27–Dec 1, 2025"),
    ("memory/2025-11-17.md", "peter@example.com"),
    ("memory/2025-11-12.md", "Kødboller"),
    ("memory/2025-11-12.md", "Nørrebro"),
    ("memory/2025-11-12.md", "smørrebrød"),
    ("memory/2025-11-16.md", "我们决定把网关迁移到城堡。"),
    ("memory/2025-11-15.md", "- X: not a kind"),
    ("memory/2025-11-20.md", "- W(c=0.9) @The-Castle:"),
    ("bank/entities/The-Castle.md", "aliases: [Castle, Slottet]"),
]


def _daily_notes() -> list[Path]:
    return sorted(p for p in (WORKSPACE / "memory").glob("*.md") if DAILY_RE.match(p.name))


def _expected_days() -> list[str]:
    days = {m.group(1) for p in _daily_notes() if (m := DAILY_RE.match(p.name))}
    days |= {p.name for p in (WORKSPACE / "_history").iterdir() if p.is_dir()}
    return sorted(days)


def _final_files() -> dict[str, bytes]:
    return {
        p.relative_to(WORKSPACE).as_posix(): p.read_bytes()
        for p in WORKSPACE.rglob("*")
        if p.is_file() and p.relative_to(WORKSPACE).parts[0] != "_history"
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("fixture") / "repo"
    result: Path = builder.build_fixture(dest)
    return result


def test_workspace_has_consecutive_daily_notes() -> None:
    days = sorted({date.fromisoformat(d) for d in _expected_days()})
    assert len(days) >= 21
    assert [(b - a).days for a, b in itertools.pairwise(days)] == [1] * (len(days) - 1)
    assert (WORKSPACE / "memory" / "2025-11-27-marrakech.md").is_file()


def test_one_commit_per_day_with_fixed_dates_and_identity(built: Path) -> None:
    log = git(built, "log", "--reverse", "--format=%aI|%cI|%an <%ae>|%cn <%ce>").splitlines()
    days = _expected_days()
    assert len(log) == len(days)
    identity = "gitmem fixture <fixture@example.invalid>"
    for i, (line, day) in enumerate(zip(log, days, strict=True)):
        author_date, committer_date, author, committer = line.split("|")
        expected = f"{day}T08:00:00+00:00" if i == 0 else f"{day}T21:00:00+00:00"
        assert author_date == committer_date == expected
        assert author == committer == identity


def test_daily_note_committed_on_its_day(built: Path) -> None:
    for note in _daily_notes():
        rel = f"memory/{note.name}"
        dates = git(built, "log", "--format=%aI", "--", rel).split()
        day = DAILY_RE.match(note.name).group(1)  # type: ignore[union-attr]
        assert dates[-1].startswith(day), rel  # added on its own day


def test_first_commit_has_core_and_bank_pages(built: Path) -> None:
    first = git(built, "rev-list", "--max-parents=0", "HEAD").strip()
    files = set(git(built, "ls-tree", "-r", "--name-only", first).split())
    assert {
        "MEMORY.md",
        "USER.md",
        "bank/opinions.md",
        "bank/entities/Peter.md",
        "bank/entities/The-Castle.md",
        "bank/entities/warelay.md",
        "memory/2025-11-10.md",
    } == files


def test_final_tree_equals_workspace_without_history(built: Path) -> None:
    tracked = git(built, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    expected = _final_files()
    assert sorted(tracked) == sorted(expected)
    assert not any(p.startswith("_history") for p in tracked)
    for rel, content in expected.items():
        blob = subprocess.run(
            ["git", "-C", str(built), "show", f"HEAD:{rel}"], check=True, capture_output=True
        ).stdout
        assert blob == content, rel
    assert git(built, "status", "--porcelain") == ""


def test_history_versions_are_committed_on_their_day(built: Path) -> None:
    history = WORKSPACE / "_history"
    for day_dir in sorted(p for p in history.iterdir() if p.is_dir()):
        commit = git(
            built, "log", "-1", "--format=%H", f"--until={day_dir.name}T23:59:59+00:00"
        ).strip()
        for path in day_dir.rglob("*"):
            if path.is_file():
                rel = path.relative_to(day_dir).as_posix()
                blob = subprocess.run(
                    ["git", "-C", str(built), "show", f"{commit}:{rel}"],
                    check=True,
                    capture_output=True,
                ).stdout
                assert blob == path.read_bytes(), f"{day_dir.name}/{rel}"
    for rel in ("MEMORY.md", "bank/opinions.md"):
        assert len(git(built, "log", "--format=%H", "--", rel).split()) >= 3, rel


def test_every_daily_note_has_a_retain_section() -> None:
    for note in _daily_notes():
        text = note.read_text(encoding="utf-8")
        lines = text.splitlines()
        assert 10 <= len(lines) <= 40, note.name
        heading = RETAIN_HEADING_RE.search(text)
        assert heading is not None, note.name
        section = text[heading.end() :]
        nxt = re.search(rf"^#{{1,{len(heading.group(1))}}}[ \t]", section, re.MULTILINE)
        section = section[: nxt.start()] if nxt else section
        assert ENTRY_RE.search(section), note.name


def test_spec_examples_are_verbatim_in_2025_11_27_or_13() -> None:
    corpus = {
        p.relative_to(WORKSPACE).as_posix(): p.read_text(encoding="utf-8").splitlines()
        for p in _daily_notes()
    }
    for example in SPEC_EXAMPLES:
        hits = [rel for rel, lines in corpus.items() if example in lines]
        assert hits, example
    day27 = corpus["memory/2025-11-27.md"]
    # Same lines the SPEC's own examples cite (§5 evidence #L12, §8 JSON #L14).
    assert day27[11] == SPEC_EXAMPLES[2]
    assert day27[13] == SPEC_EXAMPLES[3]


@pytest.mark.parametrize(("rel", "token"), REQUIRED_TOKENS)
def test_required_tokens_present(rel: str, token: str) -> None:
    assert token in (WORKSPACE / rel).read_text(encoding="utf-8")


def test_languages_present() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in _daily_notes())
    assert "ё" in text and "Пётр" in text
    assert all(ch in text for ch in "æøå")
    assert re.search(r"[\u3040-\u30ff]", text)  # kana
    jp_days = [p for p in _daily_notes() if re.search(r"[\u3040-\u30ff]", p.read_text("utf-8"))]
    assert len(jp_days) >= 2


def test_build_is_deterministic(built: Path, tmp_path: Path) -> None:
    again = builder.build_fixture(tmp_path / "again")
    assert git(again, "rev-parse", "HEAD") == git(built, "rev-parse", "HEAD")


def test_refuses_non_empty_destination(tmp_path: Path) -> None:
    (tmp_path / "x").write_text("x", encoding="utf-8")
    with pytest.raises(FileExistsError):
        builder.build_fixture(tmp_path)


def test_command_line_prints_destination(tmp_path: Path) -> None:
    dest = tmp_path / "cli"
    result = subprocess.run(
        [sys.executable, str(REPO_ROOT / "fixtures" / "build_fixture.py"), str(dest)],
        check=True,
        capture_output=True,
        text=True,
    )
    assert result.stdout.strip() == str(dest)
    assert (dest / ".git").is_dir()
