"""Small shared helpers for tests that use real parts: git repos, SQLite, the CLI.

Everything runs inside the hermetic environment of ``conftest.py`` (HOME, XDG dirs, git identity,
TZ=UTC). Repositories are made with the ``git`` command line with fixed commit dates, so commit
ids and record times are reproducible.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gitmem.cli import run

DEFAULT_DATE = "2025-11-27T21:00:00+00:00"
GOOD_DAILY = "memory/2025-11-27.md"
GOOD_TEXT = "## Retain\n- W @Peter: Moved the gateway host to The Castle.\n"


def git(repo: Path, *args: str, env_date: str | None = None) -> str:
    """Run ``git -C repo ARGS`` and return its stdout; ``env_date`` fixes both commit dates."""
    env = dict(os.environ)
    if env_date is not None:
        env["GIT_AUTHOR_DATE"] = env_date
        env["GIT_COMMITTER_DATE"] = env_date
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    )
    return result.stdout


def make_repo(tmp_path: Path, name: str = "repo") -> Path:
    """A new, empty git repository (branch ``main``) at ``tmp_path / name``."""
    repo = tmp_path / name
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    return repo


def write(repo: Path, rel: str, content: str | bytes) -> Path:
    """Write a file (text as UTF-8 with no newline translation, or raw bytes)."""
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_bytes(content.encode("utf-8"))
    return path


def commit_all(repo: Path, message: str, date: str = DEFAULT_DATE) -> str:
    """Stage everything and commit with a fixed date; returns the new commit id."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message, env_date=date)
    return git(repo, "rev-parse", "HEAD").strip()


def gitmem(*args: str) -> tuple[int, str, str]:
    """Run the CLI in-process via ``gitmem.cli.run``; returns (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(list(args))
    return code, out.getvalue(), err.getvalue()


def gitmem_subprocess(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m gitmem ARGS`` as a real process (inherits the hermetic environment)."""
    return subprocess.run(
        [sys.executable, "-m", "gitmem", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def recall_json(repo: Path, query: str, *extra: str) -> dict[str, Any]:
    """``gitmem -C repo recall QUERY --json EXTRA...``; asserts exit 0 and returns the JSON."""
    code, out, err = gitmem("-C", str(repo), "recall", query, "--json", *extra)
    assert code == 0, f"recall {query!r} exited {code}: {err}"
    data: dict[str, Any] = json.loads(out)
    return data


def status_json(repo: Path) -> dict[str, Any]:
    """``gitmem -C repo status --json``; asserts exit 0 and returns the JSON."""
    code, out, err = gitmem("-C", str(repo), "status", "--json")
    assert code == 0, f"status exited {code}: {err}"
    data: dict[str, Any] = json.loads(out)
    return data


def sources(data: dict[str, Any]) -> list[str]:
    """The ``source`` citations of a recall JSON answer, in rank order."""
    return [r["source"] for r in data["results"]]


def sorted_rows(rows: Any) -> list[Any]:
    """Sort rows that may hold NULLs next to values (repr order: stable and total)."""
    return sorted(rows, key=repr)


def dump(repo: Path) -> list[tuple[Any, ...]]:
    """A canonical dump of the whole index of ``repo``, without row ids (which differ between
    an incremental update and a rebuild): files, every item version with its history columns
    (valid_from/valid_to, recorded_at/ended_at, commit ids), item entities, the full-text rows,
    entities, aliases, opinions (with their history), warnings and the commit chain.
    """
    from gitmem.index.store import open_store
    from gitmem.workspace import open_workspace

    ws, _ = open_workspace(repo)
    store = open_store(ws.index_path, readonly=True)
    try:
        conn = store.conn
        item_cols = (
            "vkey, path, blob, class, day, type, kind, fact_id, confidence, start_line, end_line, "
            "heading, content, tokens, event_start, event_end, recorded_at, commit_id, "
            "valid_from, valid_to, ended_at, ended_commit"
        )
        ident = {
            int(r[0]): tuple(r[1:]) for r in conn.execute(f"SELECT id, {item_cols} FROM items")
        }

        def key(item_id: Any) -> tuple[Any, ...]:
            vkey, path, *_ = ident[int(item_id)]
            return (vkey, path, ident[int(item_id)][18])  # version key, path, valid_from

        rows: list[tuple[Any, ...]] = []
        rows.extend(sorted_rows(("item", *v) for v in ident.values()))
        rows.extend(
            sorted_rows(
                ("file", *r)
                for r in conn.execute(
                    "SELECT path, blob, class, day, title, front_matter FROM files"
                )
            )
        )
        rows.extend(
            sorted_rows(
                ("item_entity", *key(r[0]), *r[1:])
                for r in conn.execute("SELECT item_id, entity, name, role FROM item_entities")
            )
        )
        for term in ("gateway", "peter", "castle", "zed"):
            matched = sorted_rows(
                key(r[0])
                for r in conn.execute(
                    "SELECT rowid FROM items_fts WHERE items_fts MATCH ?", (term,)
                )
            )
            rows.append(("fts", term, tuple(matched)))
        fts_total = conn.execute("SELECT count(*) FROM items_fts").fetchone()
        rows.append(("fts_rows", fts_total[0] if fts_total else None))
        for table, sql in (
            ("entity", "SELECT key, name, page FROM entities"),
            ("alias", "SELECT alias, entity FROM aliases"),
            ("warning", "SELECT path, line, code, message FROM warnings"),
            (
                "opinion",
                "SELECT vkey, opinion_id, statement, entities, confidence, updated, evidence, "
                "path, start_line, end_line, recorded_at, commit_id, valid_from, valid_to, "
                "ended_at FROM opinions",
            ),
            ("commit", "SELECT seq, commit_id, committed_at FROM commits"),
        ):
            rows.extend(sorted_rows((table, *r) for r in conn.execute(sql)))
        for name in ("last_indexed_commit", "worktree", "chunking", "schema_version"):
            rows.append(("meta", name, store.get_meta(name)))
        return rows
    finally:
        store.close()


# SPEC §8: the keys of the example `recall --json` output. The contract only adds fields; the
# additions so far are listed here so that a new key is a deliberate, reviewed change.
TOP_KEYS = {"query", "mode", "filters", "provider", "results", "warnings"}
TOP_KEYS_ADDED = {"time_window"}  # SPEC §6: the window applied (from flags or the query)
FILTER_KEYS = {"since", "until", "as_of", "entity", "kind"}
PROVIDER_KEYS = {"name", "model", "fallback_used"}
RESULT_KEYS = {
    "kind",
    "content",
    "snippet",
    "path",
    "start_line",
    "end_line",
    "commit",
    "source",
    "timestamp",
    "event_start",
    "event_end",
    "recorded_at",
    "entities",
    "confidence",
    "fact_id",
    "score",
    "uncommitted",  # added (SPEC §8: add fields, never rename): from index --worktree
}
