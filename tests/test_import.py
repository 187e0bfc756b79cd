"""``gitmem import`` (issue 42): other tools' memory as Retain entries, one commit, nothing twice.

The samples in tests/import_samples/ follow each project's own code or documentation
(tests/import_samples/README.md says which file each one follows):

- mcp-memory: modelcontextprotocol/servers src/memory/index.ts (saveGraph, loadGraph)
- mem0: mem0ai/mem0 mem0/memory/main.py (get_all, MemoryItem) and docs.mem0.ai's
  cookbooks/essentials/exporting-memories
- hermes: NousResearch/hermes-agent tools/memory_tool.py (ENTRY_DELIMITER "\\n§\\n")
- codex: openai/codex codex-rs/core/src/memories/storage.rs (raw_memories.md) and README.md
- claude-code: code.claude.com/docs/en/memory (CLAUDE.md, auto memory MEMORY.md + topic files)
- openclaw: OpenClaw 2026.9.6 docs/concepts/memory.md (memory/imports/<tool>/)
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.domain import MemoryFile
from gitmem.errors import UsageError
from gitmem.parse.markdown import parse_file
from gitmem.reflect.importers import read_source, slug
from testing.cli import gitmem, gitmem_json, recall_json
from testing.repo import commit_all, git, write

SAMPLES = Path(__file__).parent / "import_samples"
MTIME = datetime(2025, 11, 25, 12, 0, tzinfo=UTC).timestamp()  # files without dates: this day


@pytest.fixture
def repo(memory_repo: Path) -> Path:
    return memory_repo


def sample(tmp_path: Path, name: str) -> Path:
    """A copy of a sample whose files all carry the same modification time."""
    target = tmp_path / "samples" / name
    shutil.copytree(SAMPLES / name, target)
    for path in [target, *target.rglob("*")]:
        os.utime(path, (MTIME, MTIME))
    return target


def facts(repo: Path) -> list[tuple[str, str, tuple[str, ...], str]]:
    """(file, first line of the fact's text, subjects, its source line) for every imported
    fact at HEAD."""
    out = []
    for rel in sorted(git(repo, "ls-tree", "-r", "--name-only", "HEAD", "memory").split()):
        data = git(repo, "show", f"HEAD:{rel}").encode()
        parsed = parse_file(MemoryFile(rel, "0" * 40, "daily", None), data, chunks=False)
        assert parsed.warnings == (), parsed.warnings
        for f in parsed.facts:
            lines = f.text.splitlines()
            out.append((rel, lines[0], f.subjects, lines[-1]))
    return out


def run_import(repo: Path, *args: str) -> dict[str, object]:
    return gitmem_json("-C", str(repo), "import", *args, "--json")


def test_mcp_memory_entities_relations_and_observations(repo: Path, tmp_path: Path) -> None:
    src = sample(tmp_path, "mcp-memory") / "memory.json"
    out = run_import(repo, "mcp-memory", str(src))
    assert (out["read"], out["added"]) == (5, 5)
    note = "memory/2025-11-25-import-mcp-memory.md"
    assert facts(repo) == [
        (note, "Speaks fluent Spanish", ("John_Smith",),
         "- source: MCP memory server memory.json line 1, entity John_Smith (person) (file "
         "dated 2025-11-25)"),
        (note, "Graduated in 2019", ("John_Smith",),
         "- source: MCP memory server memory.json line 1, entity John_Smith (person) (file "
         "dated 2025-11-25)"),
        (note, "Prefers morning meetings", ("John_Smith",),
         "- source: MCP memory server memory.json line 1, entity John_Smith (person) (file "
         "dated 2025-11-25)"),
        (note, "Founded in 2021", ("Anthropic",),
         "- source: MCP memory server memory.json line 2, entity Anthropic (organization) "
         "(file dated 2025-11-25)"),
        (note, "John_Smith works at Anthropic.", ("John_Smith", "Anthropic"),
         "- source: MCP memory server memory.json line 3, relation (file dated 2025-11-25)"),
    ]
    entity = gitmem_json("-C", str(repo), "entity", "John Smith", "--json")
    assert "Speaks fluent Spanish" in json.dumps(entity)


def test_mem0_export_dated_by_created_at_about_its_user(repo: Path, tmp_path: Path) -> None:
    src = sample(tmp_path, "mem0") / "memories.json"
    run_import(repo, "mem0", str(src))
    got = facts(repo)
    assert [(f[0], f[1], f[2]) for f in got] == [
        ("memory/2025-11-20-import-mem0.md", "Dev works at TechCorp as a senior engineer",
         ("dev",)),
        ("memory/2025-11-21-import-mem0.md", "Arjun prefers morning meetings and async "
         "communication", ("arjun",)),
        ("memory/2025-11-21-import-mem0.md", "Carl is leading the API redesign project, "
         "targeting Q2 launch", ("carl",)),
    ]
    assert got[0][3] == ("- source: mem0 memories.json, memory "
                         "892db2ae-06d9-49e5-8b3e-585ef9b85b8e (created 2025-11-20)")
    # the daily note's date is the fact's: a time filter finds it
    found = recall_json(repo, "TechCorp", "--since", "2025-11-20", "--until", "2025-11-20")
    assert [r["path"] for r in found["results"]] == ["memory/2025-11-20-import-mem0.md"]


def test_hermes_entries_split_on_the_section_sign(repo: Path, tmp_path: Path) -> None:
    run_import(repo, "hermes", str(sample(tmp_path, "hermes")))
    got = facts(repo)
    assert [f[1] for f in got] == [
        "The deploy host is gw-2 (Ubuntu 24.04); restart with systemctl restart gateway.",
        "The user's calendar lives in Fastmail, not Google.",
        "Project Atlas is frozen until January.",
        "Name: Dana. Timezone Europe/Copenhagen.",
        "Prefers short answers; long content goes to a file.",
    ]
    assert got[1][3] == "- source: Hermes MEMORY.md entry 2 (file dated 2025-11-25)"
    text = (repo / "memory/2025-11-25-import-hermes.md").read_text(encoding="utf-8")
    assert "- W: The user's calendar lives in Fastmail, not Google.\n  Use CalDAV" in text


def test_codex_memories_and_raw_memories_by_thread(repo: Path, tmp_path: Path) -> None:
    folder = sample(tmp_path, "codex")
    run_import(repo, "codex", str(folder))
    run_import(repo, "codex", str(folder / "raw_memories.md"))
    got = [(f[0], f[1]) for f in facts(repo)]
    assert got == [
        ("memory/2025-11-23-import-codex.md", "The user prefers ripgrep over grep for code "
         "search."),
        ("memory/2025-11-24-import-codex.md", "The flaky test in payments is caused by a "
         "timezone assumption in the fixture."),
        ("memory/2025-11-24-import-codex.md", "Fixed by pinning TZ=UTC in the test runner."),
        ("memory/2025-11-25-import-codex.md", "Run `cargo nextest run` instead of `cargo test` "
         "in codex-rs."),
        ("memory/2025-11-25-import-codex.md", "Snapshot tests use insta; accept new snapshots "
         "with `cargo insta accept`."),
        ("memory/2025-11-25-import-codex.md", "The user wants commit messages in the "
         "imperative mood."),
        ("memory/2025-11-25-import-codex.md", "The user works on the billing service; the "
         "staging database is read-only on Fridays."),
    ]


def test_claude_code_project_file_and_auto_memory(repo: Path, tmp_path: Path) -> None:
    folder = sample(tmp_path, "claude-code")
    run_import(repo, "claude-code", str(folder / "project" / "CLAUDE.md"))
    run_import(repo, "claude-code", str(folder / "auto-memory"))
    got = [(f[1], f[3]) for f in facts(repo)]
    assert got == [
        ("Run `pnpm install` then `pnpm test`; never use npm in this repository.",
         "- source: Claude Code CLAUDE.md#L4 (file dated 2025-11-25)"),
        ("The API lives in `services/api`; the web app in `apps/web`.",
         "- source: Claude Code CLAUDE.md#L7 (file dated 2025-11-25)"),
        ("Feature flags are read from `config/flags.yaml` at start-up.",
         "- source: Claude Code CLAUDE.md#L8 (file dated 2025-11-25)"),
        ("[Debugging](debugging.md): recurring issues and fixes",
         "- source: Claude Code MEMORY.md#L3 (file dated 2025-11-25)"),
        ("The user prefers pnpm over npm.",
         "- source: Claude Code MEMORY.md#L4 (file dated 2025-11-25)"),
        ("The dev server needs `NODE_OPTIONS=--max-old-space-size=4096` on this machine.",
         "- source: Claude Code debugging.md#L8 (file dated 2025-11-25)"),
        ("Redis must be running before the integration tests (`docker compose up redis`).",
         "- source: Claude Code debugging.md#L9 (file dated 2025-11-25)"),
    ]


def test_openclaw_imports_folder_keeps_annotations_and_meets_direct_imports(
        repo: Path, tmp_path: Path) -> None:
    run_import(repo, "hermes", str(sample(tmp_path, "hermes") / "USER.md"))
    out = run_import(repo, "openclaw", str(sample(tmp_path, "openclaw")))
    assert (out["read"], out["added"], out["already_imported"]) == (4, 2, 2)
    codex = (repo / "memory/2025-11-25-import-codex.md").read_text(encoding="utf-8")
    assert ("- W: Keep the gateway on loopback. <!-- trigger: gateway setup, network safety "
            "--> <!-- importance: 9 -->\n  - source: Codex memory/imports/codex/MEMORY.md#L3, "
            "copied by OpenClaw (file dated 2025-11-25)\n") in codex


@pytest.mark.parametrize("fmt, name", [
    ("mcp-memory", "mcp-memory/memory.json"), ("mem0", "mem0/memories.json"),
    ("hermes", "hermes"), ("codex", "codex"), ("claude-code", "claude-code/auto-memory"),
    ("openclaw", "openclaw")])
def test_one_commit_then_a_second_import_adds_nothing(repo: Path, tmp_path: Path, fmt: str,
                                                       name: str) -> None:
    src = sample(tmp_path, name.split("/")[0]) / "/".join(name.split("/")[1:])
    head = git(repo, "rev-parse", "HEAD")
    dry = run_import(repo, fmt, str(src), "--dry-run")
    assert dry["commit"] is None and dry["added"] and git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain").strip() == ""
    first = run_import(repo, fmt, str(src))
    assert first["added"] == dry["added"] and first["refused"] == []
    assert git(repo, "rev-list", "--count", f"{head.strip()}..HEAD").strip() == "1"
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert changed == [f["path"] for f in first["files"]]  # type: ignore[union-attr]
    second = run_import(repo, fmt, str(src))
    assert (second["added"], second["commit"]) == (0, None)
    assert second["already_imported"] == first["read"]
    code, out, _ = gitmem("-C", str(repo), "review", "HEAD~1..HEAD")
    assert code == 0 and f"facts +{first['added']} " in out


def test_uncommitted_edits_of_an_import_note_stay_uncommitted(repo: Path, tmp_path: Path) -> None:
    write(repo, "memory/2025-11-20-import-mem0.md", "# 2025-11-20\n\n## Retain\n- W: Kept.\n")
    commit_all(repo, "earlier")
    with (repo / "memory/2025-11-20-import-mem0.md").open("a", encoding="utf-8") as f:
        f.write("- W: Not committed yet.\n")
    run_import(repo, "mem0", str(sample(tmp_path, "mem0") / "memories.json"))
    committed = git(repo, "show", "HEAD:memory/2025-11-20-import-mem0.md")
    assert "TechCorp" in committed and "Not committed" not in committed
    on_disk = (repo / "memory/2025-11-20-import-mem0.md").read_text(encoding="utf-8")
    assert "TechCorp" in on_disk and "Not committed yet" in on_disk


def test_bad_sources_say_what_was_expected(tmp_path: Path) -> None:
    bad = tmp_path / "memory.json"
    bad.write_text('{"type":"entity","name":"A","entityType":"x","observations":[]}\nnot json\n',
                   encoding="utf-8")
    with pytest.raises(UsageError, match=r"memory.json#L2: not a JSON line"):
        read_source("mcp-memory", bad)
    (tmp_path / "mem0.json").write_text('{"nothing": 1}', encoding="utf-8")
    with pytest.raises(UsageError, match="mem0's get_all"):
        read_source("mem0", tmp_path / "mem0.json")
    with pytest.raises(UsageError, match=r"no MEMORY\.md or USER\.md"):
        read_source("hermes", tmp_path)
    assert slug("John Smith") == "John-Smith" and slug("  ") is None and slug("-x") == "x"
