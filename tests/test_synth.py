"""The synthetic-workspace generator used by the benchmarks and tests (testing/synth.py)."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta
from pathlib import Path

from testing import synth
from testing.cli import gitmem
from testing.index import dump, records
from testing.repo import git

ENTRY = re.compile(r"^- (W|B|S|O(\(c=(0\.\d\d|1\.00)\))?) (@\S+ )*@\S+: \S")


def test_thirty_days(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    res = synth.generate(ws, days=30, seed=7)
    end = date(2026, 11, 29)
    days = [end - timedelta(days=29 - i) for i in range(30)]

    log = git(ws, "log", "--reverse", "--format=%H %cd", "--date=format:%Y-%m-%d").split("\n")
    commits = [line.split() for line in log if line]
    assert len(commits) == 30
    assert [c[1] for c in commits] == [d.isoformat() for d in days]
    assert commits[-1][0] == res.head
    for (sha, _), day in zip(commits, days, strict=True):
        changed = git(ws, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", sha)
        assert f"memory/{day.isoformat()}.md" in changed.split("\n")

    assert git(ws, "status", "--porcelain") == ""  # the work tree is checked out
    notes = sorted((ws / "memory").glob("*.md"))
    assert [n.name for n in notes] == [f"{d.isoformat()}.md" for d in days]
    for note in notes:
        lines = note.read_text(encoding="utf-8").split("\n")
        assert "## Retain" in lines, note.name
        retain = lines[lines.index("## Retain") + 1 :]
        retain = retain[: next((i for i, x in enumerate(retain) if x.startswith("#")),
                               len(retain))]
        entries = [x for x in retain if x.startswith("- ")]
        assert 3 <= len(entries) <= 8, note.name
        for entry in entries:
            assert ENTRY.match(entry), f"{note.name}: {entry}"
    for path in ("MEMORY.md", "USER.md", "bank/opinions.md"):
        assert (ws / path).is_file()
    assert len(list((ws / "bank" / "entities").glob("*.md"))) == 30


def test_deterministic(tmp_path: Path) -> None:
    a = synth.generate(tmp_path / "a", days=30, seed=7)
    b = synth.generate(tmp_path / "b", days=30, seed=7)
    c = synth.generate(tmp_path / "c", days=30, seed=8)
    assert a.head == b.head
    assert a.head != c.head


def test_queries() -> None:
    queries = synth.queries()
    assert queries == synth.QUERIES
    assert len(queries) == 50
    assert len(set(queries)) == 50
    assert any(re.fullmatch(r"[0-9a-f]{7}", q) for q in queries)
    assert any(re.fullmatch(r"\w+(\.\w+){2}", q) for q in queries)
    assert any(q.startswith('"') and q.endswith('"') for q in queries)
    assert any(re.search(r"[\u3040-\u30ff]", q) for q in queries)
    assert any(re.search(r"[æøå]", q) for q in queries)
    assert any(len(q.split()) >= 5 for q in queries)


EVIDENCE = re.compile(r"^  - (?:for|against) (f-[0-9a-f]{12}) memory/", re.M)


def test_opinion_evidence_cites_facts_the_index_has(tmp_path: Path) -> None:
    """Every fact id cited as evidence in bank/opinions.md (at every commit that changed it)
    is the id gitmem's index gives that fact."""
    ws = tmp_path / "ws"
    synth.generate(ws, days=45, seed=3)
    code, _, err = gitmem("-C", str(ws), "index")
    assert code == 0, err
    rows = dump(ws)
    facts = {item["fact_id"] for item in records(rows, "item") if item["fact_id"]}
    cited = {
        evidence["fact_id"]
        for opinion in records(rows, "opinion")
        for evidence in json.loads(opinion["evidence"])
    }
    in_file = set(EVIDENCE.findall((ws / "bank" / "opinions.md").read_text(encoding="utf-8")))
    assert len(in_file) >= 10
    assert in_file <= cited  # the index read every evidence line of the final page
    assert cited - facts == set()
