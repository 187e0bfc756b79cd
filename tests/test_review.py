"""``gitmem review`` on real git repositories with dated commits: exactly the changes a
range made to opinions (with the evidence that moved them), facts per entity, superseded facts and
entity pages; the range forms; a range without memory changes; located warnings; the JSON shape;
the Markdown comment."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import threading
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from gitmem import lifetime
from gitmem.domain import Citation
from gitmem.errors import GitmemError
from gitmem.git import GrepJob
from gitmem.parse.retain import fact_id
from gitmem.review import snapshot, supersede
from gitmem.review.review import review
from gitmem.review.review_markdown import MARKER, render
from gitmem.review.review_model import ReviewFact
from gitmem.workspace import classifier, open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem, gitmem_json
from testing.repo import commit_all, git, make_repo, write

NOV10, NOV12 = date(2025, 11, 10), date(2025, 11, 12)
SHORT = fact_id("opinion", "Prefers short replies.", ("Peter",), NOV10)
LONG_OK = fact_id("opinion", "Long replies are fine today.", ("Peter",), NOV12)
NUC = fact_id("world", "The gateway host is the old NUC under the desk.", ("Peter",), NOV10)
OSLO = fact_id("world", "Peter flies to Oslo on Friday.", ("Peter",), NOV10)
CASTLE = fact_id("world", "Moved the gateway host from the NUC to The Castle.", ("Peter", "The-Castle"), NOV12)
UPS = fact_id("world", "The Castle has a UPS now.", ("The-Castle",), NOV12)
TEA = fact_id("experience", "Made tea for @Peter.", ("Peter",), NOV12)


def daily(day: str, *facts: str) -> str:
    return f"# {day}\n\n## Retain\n" + "".join(f"- {f}\n" for f in facts) + "\n## Notes\nQuiet.\n"


def opinion(title: str, oid: str, confidence: str, updated: str, *evidence: str) -> str:
    lines = [f"## {title}", f"<!-- opinion: {oid} -->", f"- confidence: {confidence}",
             f"- updated: {updated}", "- evidence:", *(f"  - {e}" for e in evidence), ""]
    return "\n".join(lines) + "\n"


PAGE = ("# Peter\n\nOwner of the gateway.\n\n<!-- gitmem:begin digest -->\n- {digest}\n"
        "<!-- gitmem:end -->\n")


def two_commits(tmp_path: Path) -> tuple[Path, str, str]:
    """base: a daily note, two opinions, Peter's page. head: a new daily note that contradicts
    the opinion and moves the gateway host, the opinion moved with that evidence, one opinion
    removed and one added, a fact removed, the page's generated block rewritten."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-10.md", daily(
        "2025-11-10", "O(c=0.90) @Peter: Prefers short replies.",
        "W @Peter: The gateway host is the old NUC under the desk.",
        "W @Peter: Peter flies to Oslo on Friday."))
    write(repo, "bank/opinions.md", "# Opinions\n\n"
          + opinion("@Peter prefers concise replies", "o-3fa9c2e1", "0.90", "2025-11-10",
                    f"for {SHORT} memory/2025-11-10.md#L4 (c=0.90)")
          + opinion("@warelay is stable", "o-0badc0de", "0.50", "2025-11-10"))
    write(repo, "bank/entities/Peter.md", PAGE.format(digest="old digest"))
    write(repo, "MEMORY.md", "# Memory\n\nNothing curated yet.\n")
    base = commit_all(repo, "base", "2025-11-10T20:00:00+00:00")
    write(repo, "memory/2025-11-10.md", daily(
        "2025-11-10", "O(c=0.90) @Peter: Prefers short replies.",
        "W @Peter: The gateway host is the old NUC under the desk."))
    write(repo, "memory/2025-11-12.md", daily(
        "2025-11-12", "O(c=0.20) @Peter: Long replies are fine today.",
        "W @Peter @The-Castle: Moved the gateway host from the NUC to The Castle.",
        "W @The-Castle: The Castle has a UPS now.", "B: Made tea for @Peter."))
    write(repo, "bank/opinions.md", "# Opinions\n\n"
          + opinion("@Peter prefers concise replies", "o-3fa9c2e1", "0.75", "2025-11-12",
                    f"for {SHORT} memory/2025-11-10.md#L4 (c=0.90)",
                    f"against {LONG_OK} memory/2025-11-12.md#L4 (c=0.20)")
          + opinion("@The-Castle is a good home for the gateway", "o-c0ffee00", "0.60",
                    "2025-11-12"))
    write(repo, "bank/entities/Peter.md", PAGE.format(digest="new digest"))
    head = commit_all(repo, "head", "2025-11-12T20:00:00+00:00")
    return repo, base, head


def run_review(repo: Path, spec: str) -> dict[str, Any]:
    ws, cfg = open_workspace(repo)
    data: dict[str, Any] = review(ws, cfg, spec).to_json()
    return data


# -- exactly the changes made ------------------------------------------------------------------


def test_review_lists_exactly_the_changes_made(tmp_path: Path) -> None:
    repo, base, head = two_commits(tmp_path)
    data = run_review(repo, f"{base}..{head}")
    h = head[:7]

    changed = data["opinions"]["changed"]
    assert [o["opinion_id"] for o in changed] == ["o-3fa9c2e1"]
    moved = changed[0]
    assert (moved["confidence_before"], moved["confidence_after"], moved["delta"]) == \
        (0.9, 0.75, -0.15)
    assert (moved["updated_before"], moved["updated_after"]) == ("2025-11-10", "2025-11-12")
    assert moved["source"] == f"bank/opinions.md#L3@{h}"
    assert moved["evidence_added"] == [{
        "stance": "against", "fact_id": LONG_OK, "cited_as": "memory/2025-11-12.md#L4",
        "confidence": 0.2, "source": f"memory/2025-11-12.md#L4@{h}",
        "text": "Long replies are fine today."}]
    assert moved["evidence_removed"] == []
    assert [(o["opinion_id"], o["confidence_after"]) for o in data["opinions"]["added"]] == \
        [("o-c0ffee00", 0.6)]
    assert [(o["opinion_id"], o["confidence_before"], o["source"])
            for o in data["opinions"]["removed"]] == [("o-0badc0de", 0.5,
                                                       f"bank/opinions.md#L10@{base[:7]}")]

    added = {f["fact_id"]: f["source"] for f in data["facts"]["added"]}
    assert added == {LONG_OK: f"memory/2025-11-12.md#L4@{h}",
                     CASTLE: f"memory/2025-11-12.md#L5@{h}",
                     UPS: f"memory/2025-11-12.md#L6@{h}", TEA: f"memory/2025-11-12.md#L7@{h}"}
    assert [(f["fact_id"], f["source"]) for f in data["facts"]["removed"]] == \
        [(OSLO, f"memory/2025-11-10.md#L6@{base[:7]}")]
    by_entity = {e["entity"]: (sorted(e["added"]), e["removed"]) for e in data["entities"]}
    assert by_entity == {
        "Peter": (sorted([LONG_OK, CASTLE, TEA]), [OSLO]),
        "The-Castle": (sorted([CASTLE, UPS]), []),
    }

    assert [(s["old"]["fact_id"], s["old"]["source"], s["new"]["fact_id"])
            for s in data["superseded"]] == [(NUC, f"memory/2025-11-10.md#L5@{h}", CASTLE)]
    assert data["pages"] == [{"path": "bank/entities/Peter.md", "class": "entity",
                              "status": "modified", "lines_added": 1, "lines_removed": 1,
                              "where": "generated"}]
    assert [(f["path"], f["status"]) for f in data["files"]] == [
        ("bank/entities/Peter.md", "modified"), ("bank/opinions.md", "modified"),
        ("memory/2025-11-10.md", "modified"), ("memory/2025-11-12.md", "added")]
    assert data["warnings"] == []
    assert data["memory_changed"] is True
    assert data["range"]["commits"] == 1


def test_unrelated_fact_about_the_same_entity_is_not_superseded(tmp_path: Path) -> None:
    repo, base, _ = two_commits(tmp_path)
    write(repo, "memory/2025-11-14.md", daily("2025-11-14", "W @Peter: Peter adopted a cat.",
                                              "W @Peter: Peter flies to Oslo on Monday."))
    head = commit_all(repo, "more", "2025-11-14T20:00:00+00:00")
    data = run_review(repo, f"{head}~1..{head}")
    assert data["superseded"] == []  # Oslo on Friday was removed before this range
    data = run_review(repo, f"{base}..{head}")
    assert [(s["old"]["fact_id"], s["new"]["fact_id"]) for s in data["superseded"]] == \
        [(NUC, CASTLE)]  # the cat and Oslo replace nothing at the head


def test_events_are_not_superseded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-20.md", daily(
        "2025-11-20", "W @Peter: Currently in Boston for a conference (2025-11-24 – 2025-11-30).",
        "B @warelay: Fixed the reconnect crash in the gateway."))
    base = commit_all(repo, "base", "2025-11-20T20:00:00+00:00")
    write(repo, "memory/2025-12-10.md", daily(
        "2025-12-10", "W @Peter: Currently in Oslo for a conference (2025-12-21 – 2025-12-26).",
        "B @warelay: Fixed the reconnect crash in the gateway again."))
    commit_all(repo, "trip", "2025-12-10T20:00:00+00:00")
    assert run_review(repo, base)["superseded"] == []


def test_a_later_fact_in_the_range_supersedes_an_earlier_one_in_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# Memory\n")
    base = commit_all(repo, "base", "2025-11-01T20:00:00+00:00")
    write(repo, "memory/2025-11-02.md", daily("2025-11-02", "W @warelay: The warelay gateway "
                                              "listens on port 8080."))
    commit_all(repo, "a", "2025-11-02T20:00:00+00:00")
    write(repo, "memory/2025-11-05.md", daily("2025-11-05", "W @warelay: The warelay gateway "
                                              "listens on port 9090 now."))
    commit_all(repo, "b", "2025-11-05T20:00:00+00:00")
    data = run_review(repo, base)  # BASE means BASE..HEAD
    assert [(s["old"]["source"].split("@")[0], s["new"]["source"].split("@")[0])
            for s in data["superseded"]] == [("memory/2025-11-02.md#L4", "memory/2025-11-05.md#L4")]


def test_a_claim_current_for_long_is_found_behind_many_later_facts(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-01-05.md", daily("2025-01-05", "W @Peter: The gateway host is the "
                                              "old NUC under the desk."))
    for day in range(1, 29):  # four weeks of other world facts about Peter
        write(repo, f"memory/2025-02-{day:02d}.md",
              daily(f"2025-02-{day:02d}", f"W @Peter: Peter ran {day} km along the harbour.",
                    f"W @Peter: Peter read chapter {day} of the novel."))
    base = commit_all(repo, "history", "2025-02-28T20:00:00+00:00")
    write(repo, "memory/2025-03-01.md", daily(
        "2025-03-01", "W @Peter @The-Castle: Moved the gateway host from the NUC to The Castle."))
    commit_all(repo, "move", "2025-03-01T20:00:00+00:00")
    (pair,) = run_review(repo, base)["superseded"]
    assert pair["old"]["source"].split("@")[0] == "memory/2025-01-05.md#L4"
    assert pair["new"]["text"] == "Moved the gateway host from the NUC to The Castle."


def test_entity_page_changes_say_where(tmp_path: Path) -> None:
    repo, _, head = two_commits(tmp_path)
    write(repo, "bank/entities/Peter.md",
          PAGE.format(digest="new digest").replace("Owner of", "Still owner of"))
    write(repo, "bank/entities/The-Castle.md", "# The Castle\n\nA house.\n")
    commit_all(repo, "pages", "2025-11-13T20:00:00+00:00")
    pages = {p["path"]: (p["status"], p["where"]) for p in run_review(repo, head)["pages"]}
    assert pages == {"bank/entities/Peter.md": ("modified", "human"),
                     "bank/entities/The-Castle.md": ("added", None)}
    write(repo, "bank/entities/Peter.md", PAGE.format(digest="newest").replace("Owner", "Boss"))
    commit_all(repo, "both", "2025-11-14T20:00:00+00:00")
    pages = {p["path"]: p["where"] for p in run_review(repo, "HEAD~1..HEAD")["pages"]}
    assert pages == {"bank/entities/Peter.md": "both"}


def test_hand_edited_confidence_has_no_evidence(tmp_path: Path) -> None:
    repo, _, _ = two_commits(tmp_path)
    text = (repo / "bank/opinions.md").read_text(encoding="utf-8")
    write(repo, "bank/opinions.md", text.replace("confidence: 0.60", "confidence: 0.40"))
    commit_all(repo, "hand edit", "2025-11-13T20:00:00+00:00")
    ws, cfg = open_workspace(repo)
    result = review(ws, cfg, "HEAD~1..HEAD")
    (op,) = result.opinions
    assert (op.opinion_id, op.status, op.delta, op.evidence_added) == \
        ("o-c0ffee00", "changed", -0.2, ())
    assert "- no new evidence: the confidence was edited by hand" in render(result)


def test_the_files_evidence_cites_are_read_in_one_git_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two opinions move on evidence from two older daily notes: both notes are read by one
    ``git cat-file --batch`` (a git process per opinion cost ~40 ms on ten years' review)."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-10.md", daily("2025-11-10",
                                              "O(c=0.90) @Peter: Prefers short replies."))
    write(repo, "memory/2025-11-12.md", daily("2025-11-12",
                                              "O(c=0.20) @Peter: Long replies are fine today."))
    write(repo, "bank/opinions.md", "# Opinions\n\n"
          + opinion("@Peter prefers concise replies", "o-3fa9c2e1", "0.90", "2025-11-10")
          + opinion("@Peter dislikes long replies", "o-0badc0de", "0.50", "2025-11-10"))
    commit_all(repo, "base", "2025-11-12T20:00:00+00:00")
    write(repo, "bank/opinions.md", "# Opinions\n\n"
          + opinion("@Peter prefers concise replies", "o-3fa9c2e1", "0.90", "2025-11-13",
                    f"for {SHORT} memory/2025-11-10.md#L4 (c=0.90)")
          + opinion("@Peter dislikes long replies", "o-0badc0de", "0.40", "2025-11-13",
                    f"against {LONG_OK} memory/2025-11-12.md#L4 (c=0.20)"))
    commit_all(repo, "evidence", "2025-11-13T20:00:00+00:00")
    calls: list[list[str]] = []
    real = snapshot.read_objects

    def read_objects(root: Path, names: list[str]) -> list[bytes | None]:
        calls.append([n.split(":", 1)[1] for n in names])
        return real(root, names)

    monkeypatch.setattr(snapshot, "read_objects", read_objects)
    result = run_review(repo, "HEAD~1..HEAD")
    texts = sorted(e["text"] for o in result["opinions"]["changed"] for e in o["evidence_added"])
    assert texts == ["Long replies are fine today.", "Prefers short replies."]
    assert calls == [["memory/2025-11-10.md", "memory/2025-11-12.md"]]


# -- range forms -------------------------------------------------------------------------------


def test_three_dots_compare_with_the_merge_base(tmp_path: Path) -> None:
    repo, _, head = two_commits(tmp_path)
    git(repo, "checkout", "-q", "-b", "feature")
    write(repo, "memory/2025-11-20.md", daily("2025-11-20", "W @Peter: Peter bought a bike."))
    commit_all(repo, "feature", "2025-11-20T20:00:00+00:00")
    git(repo, "checkout", "-q", "main")
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "W @warelay: warelay 2.0 shipped."))
    commit_all(repo, "main moves on", "2025-11-21T20:00:00+00:00")

    three = run_review(repo, "main...feature")
    assert three["range"]["base"] == head and three["range"]["mode"] == "three-dot"
    assert [f["text"] for f in three["facts"]["added"]] == ["Peter bought a bike."]
    assert three["facts"]["removed"] == []
    two = run_review(repo, "main..feature")  # the trees themselves: main's new note is gone
    assert [f["text"] for f in two["facts"]["removed"]] == ["warelay 2.0 shipped."]
    git(repo, "checkout", "-q", "feature")
    assert run_review(repo, "main...")["facts"] == three["facts"]  # an empty side is HEAD


def test_three_dots_without_a_merge_base_say_how_to_fix_it(tmp_path: Path) -> None:
    repo, _, _ = two_commits(tmp_path)
    git(repo, "checkout", "-q", "--orphan", "other")
    write(repo, "MEMORY.md", "# Another history\n")
    commit_all(repo, "unrelated", "2025-11-20T20:00:00+00:00")
    code, _, err = gitmem("-C", str(repo), "review", "main...other")
    assert code == 1 and "no merge base" in err and "fetch-depth: 0" in err
    assert gitmem("-C", str(repo), "review", "main..other")[0] == 0


@pytest.mark.parametrize("spec", ["a b", "...", "..", "a..b..c", "a...b...c", ""])
def test_an_invalid_range_is_a_usage_error_naming_the_forms(tmp_path: Path, spec: str) -> None:
    repo, _, _ = two_commits(tmp_path)
    code, out, err = gitmem("-C", str(repo), "review", spec)
    assert code == 2 and out == ""
    assert "BASE..HEAD" in err and "BASE...HEAD" in err and "short for BASE..HEAD" in err


def test_an_unknown_revision_is_a_usage_error(tmp_path: Path) -> None:
    repo, _, _ = two_commits(tmp_path)
    for spec in ("origin/main..HEAD", "main..nope", "-n1..HEAD"):  # '-n1' is no revision
        code, _, err = gitmem("-C", str(repo), "review", "--", spec)
        assert code == 2, spec
        assert "unknown revision" in err and "fetch-depth: 0" in err


def test_a_range_without_memory_changes_says_so_in_one_line(tmp_path: Path) -> None:
    repo, _, head = two_commits(tmp_path)
    write(repo, "README.md", "# notes repo\n")
    write(repo, "memory/notes.txt", "not memory: not Markdown\n")
    commit_all(repo, "docs", "2025-11-13T20:00:00+00:00")
    code, out, _ = gitmem("-C", str(repo), "review", f"{head}..HEAD")
    assert code == 0
    lines = out.splitlines()
    assert lines == [MARKER, f"No memory files changed in {head}..HEAD: 1 commit "
                     f"({head[:7]}..{git(repo, 'rev-parse', 'HEAD').strip()[:7]})."]
    data = gitmem_json("-C", str(repo), "review", f"{head}..HEAD", "--format", "json")
    assert data["memory_changed"] is False and data["files"] == []


# -- warnings ----------------------------------------------------------------------------------


def test_malformed_opinion_sections_warn_with_their_line(tmp_path: Path) -> None:
    repo, _, head = two_commits(tmp_path)
    text = (repo / "bank/opinions.md").read_text(encoding="utf-8")
    text += ("## @Peter likes tea\n- confidence: high\n\n"  # no id marker, bad confidence
             "## @Peter is punctual\n<!-- opinion: o-c0ffee00 -->\n- confidence: 0.3\n"  # dup id
             "- evidence:\n  - for f-0123456789ab memory/2025-11-12.md#L9 (c=0.80)\n")
    write(repo, "bank/opinions.md", text)
    commit_all(repo, "bad opinions", "2025-11-13T20:00:00+00:00")
    data = run_review(repo, f"{head}..HEAD")
    found = {(w["location"], w["code"]) for w in data["warnings"]}
    lines = text.splitlines()
    assert found == {
        (f"bank/opinions.md#L{lines.index('## @Peter likes tea') + 1}", "opinion-id"),
        (f"bank/opinions.md#L{lines.index('- confidence: high') + 1}", "opinion-confidence"),
        (f"bank/opinions.md#L{lines.index('## @Peter is punctual') + 1}",
         "opinion-malformed"),  # its id is the first section's too
        (f"bank/opinions.md#L{len(lines)}", "evidence-missing"),
    }
    # A problem the base already had is not reported again by a later range.
    write(repo, "memory/2025-11-13.md", daily("2025-11-13", "W @Peter: Peter is back."))
    commit_all(repo, "unrelated", "2025-11-14T20:00:00+00:00")
    assert run_review(repo, "HEAD~1..HEAD")["warnings"] == []


def test_malformed_retain_items_in_the_range_warn(tmp_path: Path) -> None:
    repo, _, head = two_commits(tmp_path)
    write(repo, "memory/2025-11-13.md", daily("2025-11-13", "X not a kind", "W @Peter: fine."))
    commit_all(repo, "bad item", "2025-11-13T20:00:00+00:00")
    warns = run_review(repo, f"{head}..HEAD")["warnings"]
    assert [(w["location"], w["code"]) for w in warns] == \
        [("memory/2025-11-13.md#L4", "retain-malformed")]


# -- output ------------------------------------------------------------------------------------

RANGE_KEYS = {"spec", "mode", "base_rev", "head_rev", "base", "head", "commits"}
FACT_KEYS = {"fact_id", "kind", "text", "entities", "source", "day", "replaces", "keeps"}
EVIDENCE_KEYS = {"stance", "fact_id", "cited_as", "confidence", "source", "text"}
OPINION_KEYS = {"opinion_id", "status", "statement", "statement_before", "source",
                "confidence_before", "confidence_after", "delta", "updated_before",
                "updated_after", "evidence_added", "evidence_removed", "merge", "same_as",
                "same_as_before"}


def test_json_shape_is_stable(tmp_path: Path) -> None:
    repo, base, head = two_commits(tmp_path)
    data = gitmem_json("-C", str(repo), "review", f"{base}..{head}", "--json")
    assert data == gitmem_json("-C", str(repo), "review", f"{base}..{head}", "--format", "json")
    assert set(data) == {"range", "memory_changed", "summary", "files", "opinions", "facts",
                         "entities", "superseded", "pages", "warnings"}
    assert set(data["range"]) == RANGE_KEYS
    assert set(data["opinions"]) == {"changed", "added", "removed"}
    for group in data["opinions"].values():
        for op in group:
            assert set(op) == OPINION_KEYS
            for ev in op["evidence_added"] + op["evidence_removed"]:
                assert set(ev) == EVIDENCE_KEYS
    assert set(data["facts"]) == {"added", "removed"}
    for fact in data["facts"]["added"] + data["facts"]["removed"]:
        assert set(fact) == FACT_KEYS
    for entity in data["entities"]:
        assert set(entity) == {"entity", "key", "added", "removed"}
    for pair in data["superseded"]:
        assert set(pair) == {"old", "new", "basis", "attribute", "reason"} and set(pair["old"]) == FACT_KEYS
    for f in data["files"] + data["pages"]:
        assert set(f) == {"path", "class", "status", "lines_added", "lines_removed", "where"}
    assert data["summary"] == (
        f"{base}..{head}: 1 commit ({base[:7]}..{head[:7]}): 1 opinion changed, 1 opinion added, "
        "1 opinion removed, facts +4 −1 about 2 entities, 1 superseded, 1 entity page, "
        "4 memory files.")


def test_markdown_reads_as_a_pull_request_comment(tmp_path: Path) -> None:
    repo, base, head = two_commits(tmp_path)
    code, md, _ = gitmem("-C", str(repo), "review", f"{base}..{head}")
    assert code == 0
    assert md.splitlines()[:2] == [MARKER, f"### Memory review: `{base}..{head}`"]
    for heading in ("#### Opinions", "#### Facts by entity", "#### Superseded facts",
                    "#### Entity pages", "#### Memory files"):
        assert f"\n{heading}\n" in md
    assert "| 1 | `@Peter` prefers concise replies | 0.90 → 0.75 | ▼ −0.15 | +1 against |" in md
    assert (f"- \\+ against `{LONG_OK}` (c=0.20): Long replies are fine today. · "
            f"`memory/2025-11-12.md#L4@{head[:7]}`") in md
    chart = re.search(r"```mermaid\n(.*?)\n```", md, re.S)
    assert chart is not None
    assert chart.group(1).splitlines() == [
        "xychart-beta horizontal",
        '    title "Confidence before and after (by row)"',
        '    x-axis ["1 before", "1 after"]',
        '    y-axis "confidence" 0 --> 1',
        "    bar [0.90, 0.75]",
    ]
    # No bare @mention outside code: GitHub would notify a user called Peter.
    outside_code = re.sub(r"`[^`]*`", "", re.sub(r"```.*?```", "", md, flags=re.S))
    assert "@" not in outside_code.replace(MARKER, "")
    assert "| `bank/entities/Peter.md` | modified | +1 −1 | generated block |" in md


def test_markdown_escapes_memory_text(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# Memory\n")
    base = commit_all(repo, "base", "2025-11-01T20:00:00+00:00")
    write(repo, "memory/2025-11-02.md", daily(
        "2025-11-02", "W @Peter: Uses a | b <script>alert(1)</script> and @Andy's laptop."))
    commit_all(repo, "a", "2025-11-02T20:00:00+00:00")
    _, md, _ = gitmem("-C", str(repo), "review", base)
    row = next(line for line in md.splitlines() if "Uses a" in line)
    assert ("Uses a \\| b &lt;script&gt;alert(1)&lt;/script&gt; and `@Andy`'s laptop.") in row
    assert "<script>" not in md


def test_chart_labels_stay_short_with_many_opinions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    ops = [opinion(f'@Peter says "{n}"', f"o-{n:08x}", "0.50", "2025-11-01") for n in range(14)]
    write(repo, "bank/opinions.md", "# Opinions\n\n" + "".join(ops))
    base = commit_all(repo, "base", "2025-11-01T20:00:00+00:00")
    write(repo, "bank/opinions.md", "# Opinions\n\n" + "".join(
        op.replace("0.50", f"{0.5 + n / 100:.2f}") for n, op in enumerate(ops)))
    commit_all(repo, "moves", "2025-11-02T20:00:00+00:00")
    _, md, _ = gitmem("-C", str(repo), "review", base)
    chart = re.search(r"```mermaid\n(.*?)\n```", md, re.S)
    assert chart is not None
    axis = next(line for line in chart.group(1).splitlines() if "x-axis" in line)
    labels = re.findall(r'"([^"]*)"', axis)
    assert len(labels) == 20 and all(re.fullmatch(r"\d+ (before|after)", x) for x in labels)
    assert 'title "Confidence before and after: the 10 largest moves"' in chart.group(1)
    bars = re.search(r"bar \[(.*)\]", chart.group(1))
    assert bars is not None and len(bars.group(1).split(", ")) == 20


def test_review_of_a_workspace_in_a_subfolder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, ".gitmem.toml", '[workspace]\nroot = "agent"\n')
    write(repo, "agent/MEMORY.md", "# Memory\n")
    write(repo, "MEMORY.md", "# not memory: outside the workspace\n")
    base = commit_all(repo, "base", "2025-11-01T20:00:00+00:00")
    write(repo, "agent/memory/2025-11-02.md", daily("2025-11-02", "W @Peter: Peter is in Oslo."))
    write(repo, "MEMORY.md", "# still not memory\n")
    commit_all(repo, "a", "2025-11-02T20:00:00+00:00")
    data = run_review(repo / "agent", base)
    assert [f["path"] for f in data["files"]] == ["memory/2025-11-02.md"]
    assert [f["source"].split("@")[0] for f in data["facts"]["added"]] == \
        ["memory/2025-11-02.md#L4"]
    ws, cfg = open_workspace(repo / "agent")
    head = data["range"]["head"]
    assert (f"[`memory/2025-11-02.md#L4@{head[:7]}`](https://example.invalid/o/r/blob/{head}/"
            "agent/memory/2025-11-02.md#L4)") in \
        render(review(ws, cfg, base), "https://example.invalid/o/r/")


def test_review_needs_no_index(tmp_path: Path) -> None:
    repo, base, head = two_commits(tmp_path)
    run_review(repo, f"{base}..{head}")
    assert not (repo / ".memory").exists()
    data = json.loads(gitmem("-C", str(repo), "review", base, "--json")[1])
    assert data["range"]["head"] == head


# -- the search for superseded facts, however it runs -------------------------------------------


def gateway_history(tmp_path: Path) -> tuple[Path, str]:
    """Four weeks of other facts about Peter between the gateway's old host and its move, and
    thirty new facts in the range (enough to split the search over two cores)."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-01-05.md", daily("2025-01-05", "W @Peter: The gateway host is the "
                                              "old NUC under the desk."))
    for day in range(1, 29):
        write(repo, f"memory/2025-02-{day:02d}.md",
              daily(f"2025-02-{day:02d}", f"W @Peter: Peter ran {day} km along the harbour.",
                    f"W @Peter: Peter lives in flat {day} on Elm Street."))
    base = commit_all(repo, "history", "2025-02-28T20:00:00+00:00")
    for day in range(1, 16):
        write(repo, f"memory/2025-03-{day:02d}.md", daily(
            f"2025-03-{day:02d}", f"W @Peter: Peter read chapter {day} of the novel.",
            f"W @Peter: Peter lives in flat {day + 40} on Oak Street now."))
    write(repo, "memory/2025-03-16.md", daily(
        "2025-03-16", "W @Peter @The-Castle: Moved the gateway host from the NUC to The Castle."))
    commit_all(repo, "march", "2025-03-16T20:00:00+00:00")
    return repo, base


def superseded_pairs(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(s["old"]["source"].split("@")[0], s["new"]["source"].split("@")[0])
            for s in data["superseded"]]


def test_a_declared_replacement_of_an_older_fact_by_its_id(tmp_path: Path) -> None:
    """'- replaces: <fact id>' of a fact from before the range: found though the two texts
    share nothing the rule reads (the id is the one gitmem shows: of its note's day)."""
    repo = make_repo(tmp_path)
    old_text = "Peter keeps the spare keys in the blue box."
    write(repo, "memory/2025-01-05.md", daily("2025-01-05", f"W @Peter: {old_text}"))
    base = commit_all(repo, "history", "2025-01-05T20:00:00+00:00")
    fid = fact_id("world", old_text, ("Peter",), date(2025, 1, 5))
    write(repo, "memory/2025-03-16.md", "# 2025-03-16\n\n## Retain\n"
          "- W @Peter: Nobody needs those anymore; the door has a code lock.\n"
          f"  - replaces: {fid}\n")
    commit_all(repo, "march", "2025-03-16T20:00:00+00:00")
    data = run_review(repo, f"{base}..HEAD")
    assert [(s["old"]["source"].split("@")[0], s["basis"]) for s in data["superseded"]] == [
        ("memory/2025-01-05.md#L4", "declared")]


AFTER_THE_ITEM = [  # what follows '- W @Peter: Peter lives in Oslo.', and is the item one line?
    ("- W @Peter: Peter likes tea.\n", True),
    ("## Notes\nQuiet.\n", True),
    ("\nLater text at the margin.\n", True),
    ("", True),
    ("\n\n", True),
    ("  since the spring.\n", False),  # indented: the item's text
    ("since the spring.\n", False),  # a lazy continuation: the item's text too
    ("\n  Since the spring.\n", False),  # a second paragraph of the item
    ("2. an ordered line\n", False),  # only '1.' interrupts a paragraph: text of the item
    ("---\n", False),  # (a rule here; not told apart without parsing)
]


@pytest.mark.parametrize(("after", "alone"), AFTER_THE_ITEM)
def test_a_line_read_without_its_file_parsed_is_the_fact_parsing_gives(
        tmp_path: Path, after: str, alone: bool) -> None:
    """Review skips parsing a candidate's file when the line can only be a one-line item; then
    the line read alone (with its period and id) is the fact the parse gives, or the parse gives
    none. Where the next lines may belong to the item, it parses."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-01-05.md",
          "# 2025-01-05\n\n## Retain\n- W @Peter: Peter lives in Oslo.\n" + after)
    commit = commit_all(repo, "one", "2025-01-05T20:00:00+00:00")
    ws, cfg = open_workspace(repo)
    head = snapshot.Snapshot(ws, commit, classifier(cfg))
    new = ReviewFact("f-new", "world", "Peter lives in Bergen now.", ("Peter",),
                     Citation("memory/2025-03-01.md", 4, 4, commit), "2025-03-01")
    lines = supersede._Lines(head, [new])
    lines.add([("memory/2025-01-05.md", 4, "- W @Peter: Peter lives in Oslo.")])
    (hit,) = lines.by_key["peter"]
    head.load([hit.path])
    found = lines._alone(hit)
    parsed = lines._confirm(hit)
    assert parsed is not None
    assert (found is not None) == alone
    if found is not None:
        assert found == parsed
    if parsed.text != "Peter lives in Oslo.":  # the item goes on: never read as one line
        assert found is None


def test_git_without_pcre_finds_the_same(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, base = gateway_history(tmp_path / "ws")
    expected = superseded_pairs(run_review(repo, base))
    assert ("memory/2025-01-05.md#L4", "memory/2025-03-16.md#L4") in expected
    shim = tmp_path / "bin"
    shim.mkdir()
    real = shutil.which("git")
    asked = tmp_path / "asked-for-pcre"
    (shim / "git").write_text(  # a git built without PCRE, as git says it
        "#!/bin/sh\n"
        'for a in "$@"; do if [ "$a" = "-P" ]; then\n'
        f'  touch {asked}\n'
        '  echo "fatal: cannot use Perl-compatible regexes when not compiled with USE_LIBPCRE"'
        " >&2\n  exit 128\nfi; done\n"
        f'exec {real} "$@"\n', encoding="utf-8")
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    assert superseded_pairs(run_review(repo, base)) == expected
    assert asked.exists()


def slow_git(tmp_path: Path, script: str) -> Path:
    """A folder whose ``git`` runs ``script`` (sh) for ``git grep`` and the real git else."""
    shim = tmp_path / "slow-bin"
    shim.mkdir()
    (shim / "git").write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do if [ "$a" = "grep" ]; then\n'
        f"{script}\nfi; done\n"
        f'exec {shutil.which("git")} "$@"\n', encoding="utf-8")
    (shim / "git").chmod(0o755)
    return shim


def test_grep_lines_arrive_while_git_still_searches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git writes a record, half of the next, then (once the test has the first) the rest:
    ``batches`` hands over the first before git is done, and never a torn record."""
    rev = "c0ffee"
    go = tmp_path / "go"  # git writes the rest once this exists: an event, not a time
    script = (f"printf '{rev}:memory/a.md\\0004\\0- W @Ann: one\\n{rev}:memory/b.md\\0'\n"
              f"i=0; while [ ! -e {shlex.quote(str(go))} ] && [ $i -lt {int(FAILURE_SECONDS * 100)} ]; do "
              "sleep 0.01; i=$((i + 1)); done\n"
              f"printf '007\\0- S @Ann: two\\n'\nexit 0")
    monkeypatch.setenv("PATH", f"{slow_git(tmp_path, script)}{os.pathsep}{os.environ['PATH']}")
    job = GrepJob(tmp_path, rev, ["ann"], ["memory"])
    seen: list[tuple[list[tuple[str, int, str]], bool]] = []
    for batch in job.batches():
        assert job._proc is not None
        seen.append((batch, job._proc.poll() is None))
        go.touch()
    assert [b for b, _ in seen] == [[("memory/a.md", 4, "- W @Ann: one")],
                                    [("memory/b.md", 7, "- S @Ann: two")]]
    assert seen[0][1]  # the first batch came while git was still running
    assert job._proc is None  # done: git reaped, its output dropped


def test_grep_failure_says_what_git_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = "echo 'fatal: bad revision deadbeef' >&2\nexit 2"
    monkeypatch.setenv("PATH", f"{slow_git(tmp_path, script)}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(GitmemError, match="cannot search deadbee: fatal: bad revision deadbeef"):
        GrepJob(tmp_path, "deadbeef", ["ann"], ["memory"]).lines()


def test_review_on_two_cores_finds_what_one_core_finds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, single_threaded: None) -> None:
    repo, base = gateway_history(tmp_path)
    monkeypatch.setattr(supersede, "SPLIT_AT", 10**9)
    monkeypatch.setattr(snapshot, "PARSE_SPLIT_AT", 10**9)
    one = run_review(repo, base)
    monkeypatch.setattr(supersede, "SPLIT_AT", 2)
    monkeypatch.setattr(snapshot, "PARSE_SPLIT_AT", 2)
    forks: list[int] = []
    real_fork = os.fork

    def fork() -> int:
        forks.append(1)
        return real_fork()

    monkeypatch.setattr(os, "fork", fork)
    assert lifetime._may_fork(), f"no second core or another thread: {threading.enumerate()}"
    two = run_review(repo, base)
    assert len(forks) == 2  # the second run parsed and searched on two cores
    assert len(one["superseded"]) >= 15  # Elm Street -> Oak Street, and the gateway host
    assert len(one["facts"]["added"]) == 31
    assert two == one
