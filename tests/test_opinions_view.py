"""``gitmem opinions`` and ``recall --kind O`` (docs/opinions-file.md, issue 8) on a real git repository whose
bank/opinions.md changes over dated commits: confidence, updated date and cited evidence; the
confidence as it stood at a time; how it moved commit by commit, with a chart on a terminal."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.errors import GitmemError
from gitmem.index.session import Session
from gitmem.recall.opinions_view import list_opinions
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem, gitmem_json, recall_json
from testing.repo import commit_all, make_repo, write

NOW = datetime(2025, 12, 10, tzinfo=UTC)


def opinions_file(concise: str, updated: str, *against: str, vim: str = "0.40") -> str:
    lines = [
        "# Opinions", "", "Hand-written intro.", "",
        "## @Peter prefers concise WhatsApp replies (under 1500 chars)",
        "<!-- opinion: o-3fa9c2e1 -->",
        f"- confidence: {concise}",
        f"- updated: {updated}",
        "- evidence:",
        "  - for f-3fa9c2e11aa0 memory/2025-11-20.md#L4 (c=0.95)",
        *[f"  - against {a}" for a in against],
        "",
        "## @Andy @Peter think Vim beats Emacs",
        "<!-- opinion: o-77aa00bb -->",
        f"- confidence: {vim}",
        "- updated: 2025-11-20",
        "- evidence:",
        "  - for f-0000000000aa memory/2025-11-20.md#L5 (c=0.40)",
        "",
    ]
    return "\n".join(lines)


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    """bank/opinions.md over four commits: 0.90, then 0.75 and 0.60 after evidence against,
    then a commit that only adds a line above (no move)."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-20.md", "# 2025-11-20\n\n## Retain\n"
          "- O(c=0.95) @Peter: Prefers concise WhatsApp replies.\n"
          "- O(c=0.4) @Andy @Peter: Vim beats Emacs.\n")
    write(repo, "bank/entities/Peter.md", "---\naliases: [Pete]\n---\n# Peter\n")
    write(repo, "bank/opinions.md", opinions_file("0.90", "2025-11-20"))
    commit_all(repo, "day 1", "2025-11-20T21:00:00+00:00")
    write(repo, "bank/opinions.md", opinions_file(
        "0.75", "2025-11-27", "f-91bc0d2e4a10 memory/2025-11-27.md#L4 (c=0.20)"))
    commit_all(repo, "reflect", "2025-11-27T21:00:00+00:00")
    write(repo, "bank/opinions.md", opinions_file(
        "0.60", "2025-12-02", "f-91bc0d2e4a10 memory/2025-11-27.md#L4 (c=0.20)",
        "f-12bc0d2e4a10 memory/2025-12-02.md#L4 (c=0.20)"))
    commit_all(repo, "reflect", "2025-12-02T21:00:00+00:00")
    text = (repo / "bank/opinions.md").read_text(encoding="utf-8")
    write(repo, "bank/opinions.md", text.replace("Hand-written intro.", "Hand-written intro.\n"))
    commit_all(repo, "edit by hand", "2025-12-03T09:00:00+00:00")
    return repo


def test_opinions_now_with_evidence_strongest_first(memory: Path) -> None:
    ws, cfg = open_workspace(memory)
    res = list_opinions(Session(ws, cfg), now=NOW)
    assert [o.opinion_id for o in res.opinions] == ["o-3fa9c2e1", "o-77aa00bb"]
    concise = res.opinions[0]
    assert (concise.confidence, concise.updated) == (0.6, "2025-12-02")
    assert concise.source == "bank/opinions.md#L6-L13"
    assert concise.entities == ("Peter",)
    assert [(e.stance, e.source, e.confidence) for e in concise.evidence] == [
        ("for", "memory/2025-11-20.md#L4", 0.95),
        ("against", "memory/2025-11-27.md#L4", 0.2),
        ("against", "memory/2025-12-02.md#L4", 0.2),
    ]
    assert concise.history is None


def test_filters_by_entity_alias_and_confidence(memory: Path) -> None:
    ws, cfg = open_workspace(memory)
    andy = list_opinions(Session(ws, cfg), entity="@andy", now=NOW)
    assert [o.opinion_id for o in andy.opinions] == ["o-77aa00bb"]
    pete = list_opinions(Session(ws, cfg), entity="Pete", now=NOW)  # an alias from Peter's page
    assert len(pete.opinions) == 2
    strong = list_opinions(Session(ws, cfg), min_confidence=0.5, now=NOW)
    assert [o.opinion_id for o in strong.opinions] == ["o-3fa9c2e1"]
    with pytest.raises(GitmemError, match="no entity 'Petra'"):
        list_opinions(Session(ws, cfg), entity="Petra", now=NOW)


def test_as_of_gives_the_confidence_as_it_stood(memory: Path) -> None:
    ws, cfg = open_workspace(memory)
    then = list_opinions(Session(ws, cfg), as_of="2025-11-30", now=NOW)
    concise = then.opinions[0]
    assert (concise.confidence, concise.updated) == (0.75, "2025-11-27")
    assert concise.source.startswith("bank/opinions.md#L5-L11@")  # a version from history
    first = list_opinions(Session(ws, cfg), as_of="2025-11-20", now=NOW).opinions[0]
    assert first.confidence == 0.9


def test_history_lists_each_move_commit_by_commit(memory: Path) -> None:
    ws, cfg = open_workspace(memory)
    res = list_opinions(Session(ws, cfg), history=True, now=NOW)
    concise = res.opinions[0]
    assert concise.history is not None
    # The hand edit of 2025-12-03 moved lines, not the confidence: not a move.
    assert [(p.date, p.confidence) for p in concise.history] == [
        ("2025-11-20", 0.9), ("2025-11-27", 0.75), ("2025-12-02", 0.6)]
    assert all(len(p.commit) == 40 for p in concise.history)
    vim = res.opinions[1]
    assert vim.history is not None and [p.confidence for p in vim.history] == [0.4]
    early = list_opinions(Session(ws, cfg), history=True, as_of="2025-11-28", now=NOW).opinions[0]
    assert early.history is not None and [p.confidence for p in early.history] == [0.9, 0.75]


def test_cli_text_json_and_the_chart_on_a_terminal(memory: Path) -> None:
    code, out, _ = gitmem("-C", str(memory), "opinions", "--history")
    assert code == 0
    assert "0.60  @Peter prefers concise WhatsApp replies (under 1500 chars)" in out
    assert "against c=0.20  memory/2025-12-02.md#L4" in out  # the evidence over time
    assert "2025-11-27" in out and "0.75" in out
    assert "▁" not in out and "█" not in out  # not a terminal: plain text
    data = gitmem_json("-C", str(memory), "opinions", "--history", "--json")
    assert data["opinions"][0]["history"][1]["confidence"] == 0.75
    assert data["filters"] == {"entity": None, "min_confidence": None, "as_of": None}
    # On a terminal, a sparkline of the moves.
    leader, follower = pty.openpty()
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(memory), "opinions",
                           "--history"], stdout=follower, stderr=subprocess.PIPE,
                          timeout=FAILURE_SECONDS,
                          check=True)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.returncode == 0
    assert "▇▆▅  0.90 → 0.60" in shown.decode("utf-8")


def test_bad_min_confidence_is_a_usage_error(memory: Path) -> None:
    code, _, err = gitmem("-C", str(memory), "opinions", "--min-confidence", "1.5")
    assert code == 2 and "1.5" in err


def test_recall_kind_o_returns_opinions_with_evidence(memory: Path) -> None:
    data = recall_json(memory, "concise WhatsApp", "--kind", "O")
    kinds = [(r["kind"], r["path"]) for r in data["results"]]
    assert ("opinion", "bank/opinions.md") in kinds
    assert ("opinion", "memory/2025-11-20.md") in kinds  # the O entry itself
    [op] = [r for r in data["results"] if r["path"] == "bank/opinions.md"]
    assert op["confidence"] == 0.6 and op["timestamp"] == "2025-12-02"
    assert op["source"] == "bank/opinions.md#L6-L13"
    assert op["opinion"]["opinion_id"] == "o-3fa9c2e1"
    assert [e["stance"] for e in op["opinion"]["evidence"]] == ["for", "against", "against"]
    fact = next(r for r in data["results"] if r["path"] == "memory/2025-11-20.md")
    assert fact["opinion"] is None
    then = recall_json(memory, "concise", "--kind", "O", "--as-of", "2025-11-30")
    [old] = [r for r in then["results"] if r["path"] == "bank/opinions.md"]
    assert old["confidence"] == 0.75 and "@" in old["source"]
    code, out, _ = gitmem("-C", str(memory), "recall", "Vim", "--kind", "O")
    assert code == 0 and "for     memory/2025-11-20.md#L5 (c=0.40)" in out
