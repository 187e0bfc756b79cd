"""The command line: help, exit statuses, init, reset, get, and the JSON contract."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from gitmem import __version__
from gitmem.front.cli import cli
from testing.cli import gitmem, gitmem_subprocess, recall_json
from testing.contract import (
    FILTER_KEYS,
    GOOD_DAILY,
    GOOD_TEXT,
    PROVIDER_KEYS,
    RESULT_KEYS,
    TOP_KEYS,
    TOP_KEYS_ADDED,
)
from testing.repo import commit_all, git, make_repo, write

FIRST_DATE = "2025-11-27T21:00:00+00:00"
SECOND_DATE = "2025-11-28T10:00:00+00:00"
FACT_LINE = "- W @Peter: Moved the gateway host to The Castle."
SECOND_LINE = "- B @Peter: Then slept at the castle."

@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Two commits: the good note, then a second fact appended; plus a non-memory file."""
    repo = make_repo(tmp_path)
    write(repo, GOOD_DAILY, GOOD_TEXT)
    write(repo, "README.md", "# Project\n")
    write(repo, "src/x.py", "print('hi')\n")
    commit_all(repo, "first", FIRST_DATE)
    write(repo, GOOD_DAILY, GOOD_TEXT + SECOND_LINE + "\n")
    commit_all(repo, "second", SECOND_DATE)
    return repo


# -- help -----------------------------------------------------------------------------------------


COMMANDS = cli.list_commands(click.Context(cli))


def _command(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None, name
    return command


def test_group_help_lists_every_command() -> None:
    code, out, _ = gitmem("--help")
    assert code == 0
    assert "Usage: gitmem" in out
    assert cli.help and len(cli.help.strip()) > 20
    assert len(COMMANDS) > 15 and "recall" in COMMANDS
    for name in COMMANDS:
        assert re.search(rf"^\s+{name}\s+\S", out, re.M), f"'{name}' missing from group help"


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help(name: str) -> None:
    command = _command(name)
    assert command.name == name  # the lazy group's table names the command it imports
    assert command.help and len(command.help.strip()) > 15, f"'{name}' has no help text"
    for param in command.params:
        if isinstance(param, click.Option):
            assert param.help, f"'{name} {param.opts[0]}' has no help text"
    code, out, err = gitmem(name, "--help")
    assert code == 0, err
    assert f"Usage: gitmem {name}" in out
    assert command.help.strip().splitlines()[0][:30] in out


def test_version_as_subprocess() -> None:
    proc = gitmem_subprocess("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"gitmem, version {__version__}"


def test_python_m_gitmem_runs_recall_and_maps_exit_codes(repo: Path) -> None:
    proc = gitmem_subprocess("-C", str(repo), "recall", "gateway host", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["results"][0]["source"] == "memory/2025-11-27.md#L2"
    usage = gitmem_subprocess("-C", str(repo), "recall", "x", "--since", "lastweek")
    assert usage.returncode == 2
    assert "lastweek" in usage.stderr
    assert "Traceback" not in usage.stderr


# -- exit statuses --------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--since", "--until", "--around"])
def test_bad_time_is_a_usage_error_naming_accepted_forms(repo: Path, option: str) -> None:
    code, out, err = gitmem("-C", str(repo), "recall", "gateway", option, "lastweek")
    assert code == 2
    assert out == ""
    assert "lastweek" in err
    for form in ("30d", "2025-11", "2025-11-27", "today", "yesterday"):
        assert form in err, f"accepted form {form!r} not named in: {err}"


@pytest.mark.parametrize(
    "args",
    [
        ["recall", "gateway", "--kind", "X"],
        ["recall", "gateway", "--kind", "world", "--kind", "Q"],
        ["recall", "gateway", "--k", "0"],
        ["recall", "gateway", "--mode", "psychic"],
        ["recall"],
        ["recall", "gateway", "--no-such-flag"],
        ["no-such-command"],
        ["get", "memory/2025-11-27.md#Lx"],
        ["get", "memory/2025-11-27.md#L3-L2"],
    ],
)
def test_usage_errors_exit_2(repo: Path, args: list[str]) -> None:
    code, _, err = gitmem("-C", str(repo), *args)
    assert code == 2, f"{args}: exit {code}, stderr {err!r}"
    assert err.strip()
    assert "internal error" not in err


def test_kind_error_lists_the_kinds(repo: Path) -> None:
    code, _, err = gitmem("-C", str(repo), "recall", "gateway", "--kind", "X")
    assert code == 2
    assert "'X'" in err
    assert all(k in err for k in ("W", "B", "O", "S"))


@pytest.mark.parametrize("command", [["status"], ["index"], ["recall", "x"], ["get", "MEMORY.md"]])
def test_not_a_git_repository_exits_1_with_a_fix(tmp_path: Path, command: list[str]) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    code, out, err = gitmem("-C", str(plain), *command)
    assert code == 1
    assert out == ""
    assert "not inside a git repository" in err
    assert "gitmem init" in err


def test_index_without_memory_files_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    plain = make_repo(tmp_path)
    write(plain, "README.md", "# Project\n")
    write(plain, "notes/todo.md", "- gateway\n")  # Markdown, but not memory
    commit_all(plain, "code only", FIRST_DATE)
    before = _snapshot(plain)
    code, out, err = gitmem("-C", str(plain), "index")
    assert code == 1
    assert out == ""
    assert "is not a memory workspace" in err and "gitmem init" in err
    assert _snapshot(plain) == before  # no .memory/, no line in .git/info/exclude
    write(plain, "MEMORY.md", "# Memory\n\n- The gateway host is the NUC.\n")  # on disk only
    assert gitmem("-C", str(plain), "index")[0] == 0


# -- init -----------------------------------------------------------------------------------------


def _snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder below root (outside .git), plus .git/info/exclude."""
    snap: dict[str, bytes | None] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel == ".git" or rel.startswith(".git/"):
            continue
        snap[rel] = path.read_bytes() if path.is_file() else None
    snap[".git/info/exclude"] = (root / ".git" / "info" / "exclude").read_bytes()
    return snap


def test_init_in_an_empty_folder(tmp_path: Path) -> None:
    target = tmp_path / "brain"
    code, out, err = gitmem("init", str(target))
    assert code == 0, err
    assert "created git repository" in out
    assert (target / ".git").is_dir()
    assert (target / "MEMORY.md").is_file()
    assert (target / "memory").is_dir()
    assert (target / "bank").is_dir()
    exclude = (target / ".git" / "info" / "exclude").read_text(encoding="utf-8").splitlines()
    assert exclude.count("/.memory/") == 1
    # .memory/ is never offered to git.
    assert ".memory" not in git(target, "status", "--porcelain", "--untracked-files=all")

    before = _snapshot(target)
    code, out, err = gitmem("init", str(target))
    assert code == 0, err
    assert "created" not in out
    assert _snapshot(target) == before


def test_init_keeps_an_existing_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# My own memory\n\nKeep me.\n")
    write(repo, GOOD_DAILY, GOOD_TEXT)
    write(repo, "bank/opinions.md", "# Mine\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "exclude").write_text("*.swp", encoding="utf-8")  # no final newline
    head = commit_all(repo, "existing")

    code, out, err = gitmem("-C", str(repo), "init")
    assert code == 0, err
    assert "created git repository" not in out
    assert (repo / "MEMORY.md").read_text(encoding="utf-8") == "# My own memory\n\nKeep me.\n"
    assert (repo / GOOD_DAILY).read_text(encoding="utf-8") == GOOD_TEXT
    assert (repo / "bank" / "opinions.md").read_text(encoding="utf-8") == "# Mine\n"
    assert git(repo, "rev-parse", "HEAD").strip() == head
    exclude = (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8").splitlines()
    assert "*.swp" in exclude
    assert exclude.count("/.memory/") == 1


def test_init_respects_lowercase_memory_md(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "memory.md", "# lower\n")
    assert gitmem("-C", str(repo), "init")[0] == 0
    assert sorted(p.name for p in repo.iterdir() if p.name.lower() == "memory.md") == ["memory.md"]


# -- reset ----------------------------------------------------------------------------------------


def test_reset_removes_the_index_and_recall_rebuilds_it(repo: Path) -> None:
    index = repo / ".memory" / "index.sqlite"
    assert gitmem("-C", str(repo), "index")[0] == 0
    assert index.is_file()

    code, out, err = gitmem("-C", str(repo), "reset")
    assert code == 0, err
    assert not index.exists()
    assert str(index) in out
    code, out, _ = gitmem("-C", str(repo), "reset")
    assert (code, out.strip()) == (0, "no index to remove")

    data = recall_json(repo, "gateway host")
    assert data["results"][0]["source"] == "memory/2025-11-27.md#L2"
    assert index.is_file()


# -- get ------------------------------------------------------------------------------------------


def test_get_prints_exact_lines(repo: Path) -> None:
    code, out, err = gitmem("-C", str(repo), "get", "memory/2025-11-27.md#L2")
    assert (code, out, err) == (0, FACT_LINE + "\n", "")
    code, out, _ = gitmem("-C", str(repo), "get", "memory/2025-11-27.md#L2-L3")
    assert (code, out) == (0, f"{FACT_LINE}\n{SECOND_LINE}\n")
    code, out, _ = gitmem("-C", str(repo), "get", "memory/2025-11-27.md", "--from", "3")
    assert (code, out) == (0, SECOND_LINE + "\n")
    code, out, _ = gitmem(
        "-C", str(repo), "get", "memory/2025-11-27.md", "--from", "1", "--lines", "2"
    )
    assert (code, out) == (0, f"## Retain\n{FACT_LINE}\n")
    code, out, _ = gitmem("-C", str(repo), "get", "memory/2025-11-27.md")
    assert (code, out) == (0, GOOD_TEXT + SECOND_LINE + "\n")
    # An absolute path inside the workspace is fine.
    code, out, _ = gitmem("-C", str(repo), "get", f"{repo / GOOD_DAILY}#L2")
    assert (code, out) == (0, FACT_LINE + "\n")


def test_get_at_a_revision_reads_history(repo: Path) -> None:
    code, out, err = gitmem("-C", str(repo), "get", "memory/2025-11-27.md", "--at", "HEAD~1")
    assert (code, out) == (0, GOOD_TEXT), err
    code, out, _ = gitmem("-C", str(repo), "get", "memory/2025-11-27.md#L3", "--at", "HEAD~1")
    assert code == 1
    code, out, _ = gitmem("-C", str(repo), "get", "memory/2025-11-27.md#L3", "--at", "HEAD")
    assert (code, out) == (0, SECOND_LINE + "\n")
    code, _, err = gitmem("-C", str(repo), "get", "memory/2025-11-27.md", "--at", "nosuchrev")
    assert code == 2  # a usage error, as for recall --as-of and review
    assert "nosuchrev" in err


def test_get_json(repo: Path) -> None:
    code, out, _ = gitmem("-C", str(repo), "get", "memory/2025-11-27.md#L2", "--json")
    assert code == 0
    assert json.loads(out) == {
        "path": "memory/2025-11-27.md",
        "start_line": 2,
        "end_line": 2,
        "revision": None,
        "text": FACT_LINE,
        "note": None,  # added (issue 9): lines asked for past the end of the file
        "warnings": [],  # added: the name every command's JSON uses
    }


@pytest.mark.parametrize("target", ["README.md", "src/x.py", "../outside.md", "ABSOLUTE"])
def test_get_refuses_non_memory_paths(repo: Path, target: str) -> None:
    outside = repo.parent / "outside.md"
    outside.write_text("## Retain\n- W: secret outside text\n", encoding="utf-8")
    if target == "ABSOLUTE":
        target = str(outside)
    code, out, err = gitmem("-C", str(repo), "get", target)
    assert code == 1
    assert out == ""
    assert f"refusing '{target}'" in err
    assert "secret" not in err
    reason = "outside the workspace" if "outside" in target else "not a memory file"
    assert reason in err


def test_get_refuses_symbolic_links(repo: Path, tmp_path: Path) -> None:
    os.symlink("2025-11-27.md", repo / "memory" / "link.md")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.md").write_text("secret through a linked folder\n", encoding="utf-8")
    os.symlink(str(elsewhere), repo / "memory" / "linked")
    commit_all(repo, "links", "2025-11-29T10:00:00+00:00")

    for target, at in [
        ("memory/link.md", None),
        ("memory/link.md#L2", None),
        ("memory/linked/x.md", None),
        ("memory/link.md", "HEAD"),
    ]:
        args = ["-C", str(repo), "get", target] + (["--at", at] if at else [])
        code, out, err = gitmem(*args)
        assert code == 1, f"{target} at {at}: exit {code}"
        assert out == ""
        assert "symbolic link" in err
        assert "secret" not in err


# -- recall --json contract -----------------------------------------------------------------------


def test_recall_json_has_the_spec_keys(repo: Path) -> None:
    data = recall_json(repo, "gateway host", "--since", "2025-11-01")
    assert TOP_KEYS <= set(data) <= TOP_KEYS | TOP_KEYS_ADDED
    assert set(data["filters"]) == FILTER_KEYS
    assert set(data["provider"]) == PROVIDER_KEYS
    assert data["query"] == "gateway host"
    assert data["mode"] in ("hybrid", "lexical", "semantic")
    assert data["filters"]["since"] == "2025-11-01"
    assert data["filters"]["until"] is None
    assert data["filters"]["entity"] == [] and data["filters"]["kind"] == []
    assert isinstance(data["warnings"], list)
    assert all(isinstance(w, str) for w in data["warnings"])

    assert data["results"]
    for result in data["results"]:
        assert set(result) == RESULT_KEYS
    top = data["results"][0]
    head = git(repo, "rev-parse", "HEAD~1").strip()  # the commit that introduced the fact
    assert top["source"] == "memory/2025-11-27.md#L2"
    assert top["path"] == "memory/2025-11-27.md"
    assert (top["start_line"], top["end_line"]) == (2, 2)
    assert top["kind"] == "world"
    assert top["content"] == top["snippet"] == "Moved the gateway host to The Castle."
    assert top["commit"] == head
    assert top["timestamp"] == "2025-11-27"
    assert top["event_start"] == top["event_end"] == "2025-11-27"
    assert top["recorded_at"] == FIRST_DATE
    assert top["entities"] == ["Peter"]
    assert top["confidence"] is None
    assert re.fullmatch(r"f-[0-9a-f]{12}", top["fact_id"])
    assert isinstance(top["score"], float) and top["score"] > 0


def test_recall_text_output_cites(repo: Path) -> None:
    code, out, _ = gitmem("-C", str(repo), "recall", "gateway host")
    assert code == 0
    assert "memory/2025-11-27.md#L2" in out
    assert "Moved the gateway host to The Castle." in out
    code, out, _ = gitmem("-C", str(repo), "recall", "xylophone")
    assert (code, out.strip()) == (0, "no results")


def test_status_and_index_json(repo: Path) -> None:
    code, out, err = gitmem("-C", str(repo), "index", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["commit"] == git(repo, "rev-parse", "HEAD").strip()
    assert report["files"] == 1
    code, out, _ = gitmem("-C", str(repo), "status", "--json")
    assert code == 0
    status = json.loads(out)
    assert status["up_to_date"] is True
    assert (status["files"], status["facts"]) == (1, 2)
    code, out, _ = gitmem("-C", str(repo), "status")
    assert code == 0
    assert "facts: 2" in out


# What a lexical recall on a current index may import: a new module on this path is a deliberate,
# reviewed change (every import is start-up time; see bench/bench_startup.py).
RECALL_MODULES = {
    "gitmem", "gitmem.front",  # the front ends' package (empty)
    "gitmem.front.cli", "gitmem.front.cli.recall", "gitmem.front.terminal",  # no other command's module
    "gitmem.config", "gitmem.domain", "gitmem.errors", "gitmem.git",
    *(f"gitmem.git.{m}" for m in ("branches", "commits", "discovery", "grep", "history",
                                  "process", "rewrite")),  # the git door's modules (issue 40)
    "gitmem.workspace", "gitmem.embed", "gitmem.embed.base",
    "gitmem.embed.selection", "gitmem.embed.download",  # auto: is the local model present?
    "gitmem.index", "gitmem.index.changes", "gitmem.index.items",
    "gitmem.index.queries", "gitmem.index.run", "gitmem.index.schema", "gitmem.index.store",
    "gitmem.parse", "gitmem.parse.chunking", "gitmem.parse.opinions", "gitmem.parse.retain",
    "gitmem.parse.textfold", "gitmem.parse.timeparse", "gitmem.recall", "gitmem.recall.answer",
    "gitmem.recall.ranking", "gitmem.recall.search",
    "gitmem.recall.update_marks", "gitmem.parse.similarity",  # knowledge updates (superseded_by)
    "gitmem.index.graph",  # the replacement graph's edges, stored by the indexer
    "gitmem.index.session",  # the session recall asks, cold or warm (issue 40)
    "gitmem.recall.present",  # --min-score, citations
    "gitmem.parse.stemming",  # the query's word stems (issue 9)
    "gitmem.parse.topics",  # the words naming a question's topic (issue 37: weak, listings)
    "gitmem.recall.timing",  # time flags, date phrases, --as-of (issue 9)
    "gitmem.recall.asof",  # --as-of: a time or a commit (issue 16)
    "gitmem.front.warm", "gitmem.front.warm.client",  # is a warm process serving? (one stat)
    "gitmem.parse.visible",  # text output shows control characters as escapes
    "gitmem.parse.pages",  # an entity page's aliases, as the store reads them (re only)
    "gitmem.parse.stale",  # the merge driver's stale lines in opinions.md (re only)
    "gitmem.userdirs",  # the user's folders
}
# Third-party and standard modules that only indexing, embedding or downloads need.
NOT_FOR_RECALL = ("pygit2", "markdown_it", "yaml", "httpx", "llama_cpp", "mcp", "pydantic",
                  "numpy", "sqlite_vec",
                  "multiprocessing", "concurrent", "ssl", "tomli_w",
                  "hashlib", "_hashlib", "struct")  # hashes and vectors: indexing, embedding


def _imported(repo: Path, *args: str) -> set[str]:
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "gitmem", "-C", str(repo),
                           *args], capture_output=True, text=True, check=True)
    return {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()
            if line.startswith("import time:") and "|" in line}


def test_fast_paths_do_not_import_the_indexer_stack(repo: Path) -> None:
    """recall on a current index imports only what it needs (no pygit2, markdown-it, YAML, HTTP,
    llama.cpp, process pools, nor gitmem's indexer, embedders or writers), and index after one
    new commit stays off pygit2: these start-up costs are the recall and hook latency budgets."""
    assert gitmem("-C", str(repo), "index")[0] == 0
    recall_imports = _imported(repo, "recall", "gateway")
    ours = {m for m in recall_imports if m == "gitmem" or m.startswith("gitmem.")}
    assert ours <= RECALL_MODULES, f"recall imports more than it needs: {ours - RECALL_MODULES}"
    assert {"gitmem.recall.search", "gitmem.index.store"} <= ours  # the test sees the path
    heavy = {m for m in recall_imports if m.split(".")[0] in NOT_FOR_RECALL}
    assert not heavy, f"recall imports {sorted(heavy)}"
    write(repo, "memory/2025-11-29.md", "## Retain\n- W @Peter: A third day.\n")
    commit_all(repo, "third day", "2025-11-29T21:00:00+00:00")
    index_imports = _imported(repo, "index")
    assert "pygit2" not in index_imports
    assert "markdown_it" in index_imports  # it did parse the new note


def test_progress_estimates_the_time_left_from_the_rate_so_far() -> None:
    from gitmem.front.cli.commands import _left

    assert _left((0.0, 0), 1.0, 10, 100) == ""  # too early to know the rate
    assert _left((0.0, 0), 10.0, 10, 100) == ", about 90 s left   "
    assert _left((0.0, 20), 10.0, 30, 1000) == ", about 16 min left   "
    assert _left((0.0, 0), 10.0, 10, None) == ""  # no total, no estimate
    assert _left((0.0, 0), 10.0, 100, 100) == ""  # done
