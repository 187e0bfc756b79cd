"""What a new user's ten days of notes (testing/newuser.py) look like after reflect, through the
views a person reads: entity pages, ``gitmem entity``, ``gitmem opinions`` (issue 18)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from gitmem.reflect.reflect import ReflectReport, reflect
from gitmem.workspace import open_workspace
from testing import newuser
from testing.cli import gitmem


@pytest.fixture(scope="session")
def ten_days_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return newuser.build(tmp_path_factory.mktemp("ten-days"))


@pytest.fixture
def ten_days(ten_days_built: Path, tmp_path: Path) -> Path:
    """A private copy of the ten days, not reflected yet."""
    dest = tmp_path / "ten-days"
    shutil.copytree(ten_days_built, dest, symlinks=True)
    return dest


def run(repo: Path, since: str = "2026-11-01", **kwargs: Any) -> ReflectReport:
    ws, cfg = open_workspace(repo)
    return reflect(ws, cfg, since=since, **kwargs)


def cli_json(repo: Path, *args: str) -> Any:
    code, out, err = gitmem("-C", str(repo), *args, "--json")
    assert code == 0, err
    return json.loads(out)


def block(repo: Path, name: str) -> str:
    page = (repo / f"bank/entities/{name}.md").read_text(encoding="utf-8")
    return page[page.index("<!-- gitmem:begin"):]


# -- item 1: dates come from when notes were written --------------------------------------------


def test_a_digest_dates_facts_by_the_note_not_by_a_future_event(ten_days: Path) -> None:
    run(ten_days, commit=True)
    alice = block(ten_days, "Alice")
    # the Berlin meetup is on 2026-12-08, written on 2026-11-09: the last note is 2026-11-30
    assert "first mentioned 2026-11-03, last 2026-11-30." in alice, alice
    assert "2026-12-08:" not in alice and "- 2026-12:" not in alice, alice
    assert ("- 2026-11-09: Alice presents the ingest rewrite at the Berlin meetup on 2026-12-08. "
            "(memory/2026-11-09.md#L6)") in alice
    # newest first by the day each note was written (the holiday was noted on 11-17)
    world = alice[alice.index("**World**"):alice.index("**Experience**")]
    assert [ln[2:12] for ln in world.splitlines()[1:] if ln.startswith("- ")] == [
        "2026-11-30", "2026-11-17", "2026-11-09", "2026-11-03"]
    assert "**Timeline**\n- 2026-11: 6 facts (4 world, 1 experience, 1 opinion)\n" in alice


# -- item 2: counts and dates agree -------------------------------------------------------------


def test_the_entity_list_and_each_entity_agree_on_mentions_and_last_mention(
        ten_days: Path) -> None:
    run(ten_days, commit=True)
    # a person adds to Alice's page: her alias and Bob, by name
    page = ten_days / "bank/entities/Alice.md"
    page.write_text(page.read_text(encoding="utf-8").replace(
        "over meetings.\n", "over meetings.\nBadge says @Alice-Meyer; pairs with @Bob.\n"),
        encoding="utf-8")
    from testing.repo import commit_all

    commit_all(ten_days, "alice's page", "2026-12-02T09:00:00+00:00")
    listed = {e["key"]: e for e in cli_json(ten_days, "entity")["entities"]}
    assert set(listed) == {"alice", "bob", "nadia", "ingest", "rust", "田中", "redpanda"}
    for key, entry in listed.items():
        view = cli_json(ten_days, "entity", key)
        assert view["counts"]["mentions"] == entry["mentions"], key
        assert view["counts"]["facts"] == entry["facts"], key
        assert view["last_mention"]["date"] == entry["last_mention"], key
        assert view["last_mention"]["source"].startswith(
            "bank/entities/Alice.md" if key == "bob" else "memory/"), (key, view["last_mention"])
    assert cli_json(ten_days, "entity", "田中")["last_mention"]["source"] == \
        "memory/2026-11-23.md#L6"


# -- item 3: related entities are the ones a fact or a line names together ----------------------


def test_related_entities_are_named_together_in_a_fact_or_a_line(ten_days: Path) -> None:
    related = cli_json(ten_days, "entity", "Alice")["related"]
    # the notes of her days name Bob, Nadia, Rust and 田中, but no fact or line links them
    assert [(r["entity"], r["mentions"]) for r in related] == [("ingest", 1)]
    assert cli_json(ten_days, "entity", "田中")["related"] == []
    from testing.repo import commit_all, write

    write(ten_days, "memory/2026-12-01.md", "# 2026-12-01\n\nLunch with @Alice and @Nadia.\n"
          "@Bob joined later.\n\n## Retain\n- W @Alice @Bob: Planned the December release.\n")
    commit_all(ten_days, "memory: 2026-12-01", "2026-12-01T21:00:00+00:00")
    related = cli_json(ten_days, "entity", "Alice")["related"]
    assert [(r["entity"], r["mentions"]) for r in related] == [
        ("Bob", 1), ("ingest", 1), ("Nadia", 1)]
    text = gitmem("-C", str(ten_days), "entity", "Alice")[1]
    assert "related: Bob (1), ingest (1), Nadia (1)" in text


# -- item 4: aliases as written, a page's text without reflect's own comments -------------------


def test_aliases_as_written_and_page_text_without_reflects_comments(ten_days: Path) -> None:
    run(ten_days, commit=True)
    alice = cli_json(ten_days, "entity", "Alice Meyer")
    assert alice["aliases"] == ["Alice Meyer"]
    assert "(aliases: Alice Meyer)" in gitmem("-C", str(ten_days), "entity", "Alice")[1]
    listed = {e["key"]: e for e in cli_json(ten_days, "entity")["entities"]}
    assert listed["alice"]["aliases"] == ["Alice Meyer"]
    for key in listed.keys() - {"redpanda"}:  # one fact: no page
        page = cli_json(ten_days, "entity", key)["page"]
        assert "<!--" not in page["text"] and "gitmem" not in page["text"], (key, page)
    nadia = cli_json(ten_days, "entity", "Nadia")["page"]
    assert (nadia["text"], nadia["source"]) == ("# Nadia", "bank/entities/Nadia.md#L4")
    code, out, err = gitmem("-C", str(ten_days), "recall", "Nadia notes", "--json")
    assert code == 0, err
    assert not any("<!--" in r["snippet"] for r in json.loads(out)["results"])


# -- item 5: opinions --history shows the evidence over time ------------------------------------

RUST = "@Nadia Thinks @Rust is the right choice for the ingest workers"


def test_opinion_history_shows_each_evidence_entry_by_day(ten_days: Path) -> None:
    run(ten_days, commit=True)  # one reflect commit: one confidence point only
    [rust] = [o for o in cli_json(ten_days, "opinions", "--history")["opinions"]
              if o["statement"] == RUST]
    assert len(rust["history"]) == 1
    assert [(e["date"], e["confidence"]) for e in rust["evidence_history"]] == [
        ("2026-11-03", 0.7), ("2026-11-05", 0.4), ("2026-11-11", 0.3), ("2026-11-17", 0.9),
        ("2026-11-23", 0.5), ("2026-11-30", 0.85)]
    assert rust["evidence_history"][2] == {
        "date": "2026-11-11", "stance": "for", "fact_id": rust["evidence"][2]["fact_id"],
        "source": "memory/2026-11-11.md#L11", "confidence": 0.3,
        "content": "Thinks @Rust is the right choice for the ingest workers; not sure any more."}
    code, out, err = gitmem("-C", str(ten_days), "opinions", "--history", "--entity", "Nadia")
    assert code == 0, err
    assert ("        2026-11-11  for     c=0.30  memory/2026-11-11.md#L11  Thinks @Rust is the "
            "right choice for the ingest workers; not sure any more.") in out, out
    assert "2026-11-17  for     c=0.90  memory/2026-11-17.md#L6" in out
    assert "evidence over time" in out and "confidence by commit" in out


# -- item 7: a failed --commit is resumable ---------------------------------------------------

FAIL_ONCE = """#!/bin/sh
# refuses the first commit only
if [ ! -e "$(git rev-parse --git-dir)/refused-once" ]; then
    touch "$(git rev-parse --git-dir)/refused-once"
    echo "pre-commit: refusing this once" >&2
    exit 1
fi
"""


def test_a_failed_commit_is_committed_by_the_next_run(ten_days: Path, tmp_path: Path) -> None:
    from testing.repo import git

    clean = tmp_path / "clean"
    shutil.copytree(ten_days, clean, symlinks=True)
    run(clean, commit=True)  # what one run that commits writes
    hook = ten_days / ".git/hooks/pre-commit"
    hook.write_text(FAIL_ONCE, encoding="utf-8")
    hook.chmod(0o755)
    head = git(ten_days, "rev-parse", "HEAD")
    code, out, err = gitmem("-C", str(ten_days), "reflect", "--since", "2026-11-01", "--commit")
    assert code == 1 and "pre-commit: refusing this once" in err, (out, err)
    assert "the next 'gitmem reflect --commit' commits them" in err, err
    assert git(ten_days, "rev-parse", "HEAD") == head
    written = (ten_days / "bank/opinions.md").read_bytes()  # the run's output is kept
    assert written == (clean / "bank/opinions.md").read_bytes()
    # the next cron run's window holds no new note: it still commits what the failed one wrote
    code, out, err = gitmem("-C", str(ten_days), "reflect", "--since", "2026-12-01", "--commit")
    assert code == 0, err
    assert "committed" in out and "4 new opinions" in git(ten_days, "log", "-1", "--format=%s")
    assert git(ten_days, "status", "--porcelain") == ""
    for rel in ("bank/opinions.md", "bank/entities/Alice.md", "bank/entities/Nadia.md"):
        assert git(ten_days, "show", f"HEAD:{rel}") == (clean / rel).read_text(encoding="utf-8")
    code, out, err = gitmem("-C", str(ten_days), "reflect", "--since", "2026-11-01", "--commit")
    assert (code, out, err) == (0, "", "")


def test_a_failed_commits_output_edited_by_hand_stays_the_persons(ten_days: Path,
                                                                  tmp_path: Path) -> None:
    from testing.repo import git

    clean = tmp_path / "clean"
    shutil.copytree(ten_days, clean, symlinks=True)
    run(clean, commit=True)
    hook = ten_days / ".git/hooks/pre-commit"
    hook.write_text(FAIL_ONCE, encoding="utf-8")
    hook.chmod(0o755)
    assert gitmem("-C", str(ten_days), "reflect", "--since", "2026-11-01", "--commit")[0] == 1
    opinions = ten_days / "bank/opinions.md"
    opinions.write_text(opinions.read_text(encoding="utf-8") + "\nMy own note.\n",
                        encoding="utf-8")
    code, _, err = gitmem("-C", str(ten_days), "reflect", "--since", "2026-12-01", "--commit")
    assert code == 0, err
    # reflect commits what it wrote; the person's line stays in the work tree, uncommitted
    assert git(ten_days, "show", "HEAD:bank/opinions.md") == \
        (clean / "bank/opinions.md").read_text(encoding="utf-8")
    assert opinions.read_text(encoding="utf-8").endswith("\nMy own note.\n")
    assert git(ten_days, "status", "--porcelain") == " M bank/opinions.md\n"


# -- item 6: pruning ------------------------------------------------------------------------------


def test_new_pages_only_for_entities_with_enough_facts(ten_days: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    report = run(ten_days, dry_run=True)
    # Redpanda is named by one fact: no page of its own (reflect.min_facts = 3)
    assert not any(p.entity == "Redpanda" for p in report.pages)
    assert report.sparse == ("Redpanda",)
    assert "no page yet for 1 entity with fewer than 3 facts: Redpanda" in report.lines()
    assert cli_json(ten_days, "reflect", "--since", "2026-11-01", "--dry-run")[
        "below_min_facts"] == ["Redpanda"]
    monkeypatch.setenv("GITMEM_REFLECT_MIN_FACTS", "1")
    report = run(ten_days, dry_run=True)
    assert any(p.entity == "Redpanda" and p.created for p in report.pages)
    assert report.sparse == ()
    # a page that exists is kept up to date, however few its facts
    monkeypatch.delenv("GITMEM_REFLECT_MIN_FACTS")
    from testing.repo import write

    write(ten_days, "bank/entities/Redpanda.md", "# Redpanda\n\nThe new queue.\n")
    run(ten_days)
    page = (ten_days / "bank/entities/Redpanda.md").read_text(encoding="utf-8")
    assert page.startswith("# Redpanda\n\nThe new queue.\n") and "1 fact about Redpanda" in page


def test_opinions_on_one_old_entry_are_listed_as_dormant(ten_days: Path) -> None:
    from datetime import UTC, datetime

    report = run(ten_days, dry_run=True, now=datetime(2026, 12, 2, tzinfo=UTC))
    assert report.dormant == ()
    ws, cfg = open_workspace(ten_days)
    report = reflect(ws, cfg, since="2026-11-01", commit=True,
                     now=datetime(2027, 3, 1, tzinfo=UTC))  # 90 days after 2026-12-01
    assert [(d.statement, d.updated) for d in report.dormant] == [
        ("@Alice Prefers written design docs over slide decks", "2026-11-13"),
        ("@Bob thinks the on-call handbook should live in the repository", "2026-11-26")]
    assert ("2 dormant opinions (one O entry each, none since 2026-12-01; kept, not deleted): "
            "o-") in "\n".join(report.lines())
    assert report.to_json()["dormant"][0]["opinion_id"].startswith("o-")
    text = (ten_days / "bank/opinions.md").read_text(encoding="utf-8")
    assert "@Alice Prefers written design docs" in text  # listed, never deleted


def test_old_evidence_folds_into_one_line_and_no_citation_is_lost(
        ten_days: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from testing.repo import git

    monkeypatch.setenv("GITMEM_REFLECT_EVIDENCE_SHOWN", "3")
    run(ten_days, commit=True)
    text = (ten_days / "bank/opinions.md").read_text(encoding="utf-8")
    rust = text[text.index(f"## {RUST}"):]
    rust = rust[:rust.index("\n\n")]
    ids = [e["fact_id"] for e in next(
        o for o in cli_json(ten_days, "opinions", "--history")["opinions"]
        if o["statement"] == RUST)["evidence_history"]]
    assert rust.splitlines()[4:] == [
        "- evidence:",
        "  - 3 earlier: memory/2026-11-03.md#L13 … memory/2026-11-11.md#L11 "
        f"<!-- folded: {' '.join(ids[:3])} -->",
        f"  - for {ids[3]} memory/2026-11-17.md#L6 (c=0.90) — Thinks @Rust is the right choice "
        "for the ingest workers after the benchmarks",
        f"  - for {ids[4]} memory/2026-11-23.md#L7 (c=0.50) — Thinks @Rust is the right choice "
        "for the ingest workers, with reservations",
        f"  - for {ids[5]} memory/2026-11-30.md#L7 (c=0.85) — Thinks @Rust is the right choice "
        "for the ingest workers"]
    assert not run(ten_days).changed  # folded entries are cited: never applied twice
    [view] = [o for o in cli_json(ten_days, "opinions", "--history")["opinions"]
              if o["statement"] == RUST]
    assert view["folded"] == {"count": 3, "first": "memory/2026-11-03.md#L13",
                              "last": "memory/2026-11-11.md#L11"}
    assert [e["source"] for e in view["evidence"]] == [
        "memory/2026-11-17.md#L6", "memory/2026-11-23.md#L7", "memory/2026-11-30.md#L7"]
    # every entry, folded ones with their citation and c (from the index)
    assert [(e["source"], e["confidence"]) for e in view["evidence_history"]] == [
        ("memory/2026-11-03.md#L13", 0.7), ("memory/2026-11-05.md#L9", 0.4),
        ("memory/2026-11-11.md#L11", 0.3), ("memory/2026-11-17.md#L6", 0.9),
        ("memory/2026-11-23.md#L7", 0.5), ("memory/2026-11-30.md#L7", 0.85)]
    out = gitmem("-C", str(ten_days), "opinions", "--entity", "Nadia")[1]
    assert "3 earlier: memory/2026-11-03.md#L13 … memory/2026-11-11.md#L11" in out
    # a later entry folds the oldest listed one in; review counts it added, none removed
    from testing.repo import commit_all, write

    write(ten_days, "memory/2026-12-03.md", "# 2026-12-03\n\n## Retain\n- O(c=0.9) @Nadia: "
          "Thinks @Rust is the right choice for the ingest workers, now more than ever.\n")
    commit_all(ten_days, "memory: 2026-12-03", "2026-12-03T21:00:00+00:00")
    run(ten_days, since="2026-12-03", commit=True)
    text = (ten_days / "bank/opinions.md").read_text(encoding="utf-8")
    assert "  - 4 earlier: memory/2026-11-03.md#L13 … memory/2026-11-17.md#L6 " in text
    code, md, err = gitmem("-C", str(ten_days), "review", "HEAD~2..HEAD")
    assert code == 0, err
    row = next(ln for ln in md.splitlines() if ln.startswith("| ") and "Rust" in ln)
    assert "+1 for" in row and "−" not in row.split("|")[-2], row
    assert git(ten_days, "status", "--porcelain") == ""


def test_a_malformed_section_warns_once_not_on_every_cron_run(ten_days: Path) -> None:
    from testing.repo import commit_all, write

    run(ten_days, commit=True)
    opinions = ten_days / "bank/opinions.md"
    broken = opinions.read_text(encoding="utf-8").replace("- confidence: 0.87", "- confidence: high")
    write(ten_days, "bank/opinions.md", broken)
    commit_all(ten_days, "a hand edit", "2026-12-01T10:00:00+00:00")
    write(ten_days, "memory/2026-12-01.md", "# 2026-12-01\n\n## Retain\n"
          "- O(c=0.9) @Bob: Prefers async updates, as always.\n")
    commit_all(ten_days, "memory: 2026-12-01", "2026-12-01T21:00:00+00:00")

    def cron() -> list[str]:  # the same window each day: the entry stays in it for a week
        code, _, err = gitmem("-C", str(ten_days), "reflect", "--since", "2026-12-01",
                              "--commit")
        assert code == 0, err
        return [ln for ln in err.splitlines() if ln.startswith("warning:")]

    first = cron()
    assert any("bank/opinions.md#L5" in w and "not a number" in w for w in first), first
    assert any("reflect-skipped" in w or "not applied until" in w for w in first), first
    assert cron() == [] and cron() == []  # said once
    # the person edits the section, still wrongly: said again, once
    write(ten_days, "bank/opinions.md", broken.replace("confidence: high", "confidence: 1.5"))
    commit_all(ten_days, "another hand edit", "2026-12-02T10:00:00+00:00")
    again = cron()
    assert any("'1.5'" in w for w in again), again
    assert cron() == []
    # fixed: the held-back entry is applied
    write(ten_days, "bank/opinions.md", broken.replace("confidence: high", "confidence: 0.87"))
    commit_all(ten_days, "fixed", "2026-12-02T11:00:00+00:00")
    assert cron() == []
    assert "memory/2026-12-01.md#L4" in opinions.read_text(encoding="utf-8")


# -- item 8: review tables -----------------------------------------------------------------------


def test_review_tables_say_what_changed_once(ten_days: Path) -> None:
    from testing.repo import commit_all, write

    run(ten_days, commit=True)  # Alice's page gets its block, after one blank line
    code, md, err = gitmem("-C", str(ten_days), "review", "HEAD~1..HEAD")
    assert code == 0, err
    rows = [ln for ln in md.splitlines() if ln.startswith("| `bank/entities/Alice.md`")]
    assert rows == ["| `bank/entities/Alice.md` | modified | +28 −0 | generated block |"], rows
    files = md[md.index("#### Memory files"):]
    assert "bank/entities/" not in files.split("<sub>")[0], files  # the pages table has them
    assert "| `bank/opinions.md` | bank | added |" in files
    # a person's sentence on the page is human text; a blank line alone is still said
    page = ten_days / "bank/entities/Alice.md"
    write(ten_days, "bank/entities/Alice.md", page.read_text(encoding="utf-8").replace(
        "over meetings.\n", "over meetings. Based in Lisbon.\n"))
    commit_all(ten_days, "alice", "2026-12-02T09:00:00+00:00")
    md = gitmem("-C", str(ten_days), "review", "HEAD~1..HEAD")[1]
    assert "| `bank/entities/Alice.md` | modified | +1 −1 | human text |" in md, md
    write(ten_days, "bank/entities/Alice.md", page.read_text(encoding="utf-8").replace(
        "# Alice\n", "# Alice\n\n"))
    commit_all(ten_days, "a blank line", "2026-12-02T10:00:00+00:00")
    md = gitmem("-C", str(ten_days), "review", "HEAD~1..HEAD")[1]
    assert "| `bank/entities/Alice.md` | modified | +1 −0 | human text (blank lines) |" in md, md
    assert "#### Memory files" not in md  # nothing but the page changed


# -- item 9: reflect's commit pushes no note out of recall's first three -----------------------


def test_recall_at_3_is_not_lower_after_reflect(ten_days: Path) -> None:
    from datetime import UTC, datetime

    from bench.bench_reflect import reviewer_row

    ten_days_indexed = ten_days.parent / "indexed"
    shutil.copytree(ten_days, ten_days_indexed, symlinks=True)
    cli_json(ten_days_indexed, "index")
    row = reviewer_row("ten days", ten_days_indexed, "2026-11-01", list(newuser.QUESTIONS),
                       datetime(2026, 12, 1, tzinfo=UTC), pruning=True)
    assert row["recall_at_3_after"] >= row["recall_at_3_before"] >= 0.9, row
    assert (row["pages_created"], row["below_min_facts"], row["opinions_created"]) == (5, 1, 4)
    assert row["evidence_lines_max"] <= 7


def test_no_fold_line_for_a_single_entry(ten_days: Path) -> None:
    from testing.repo import commit_all, write

    run(ten_days, commit=True)
    for n, day in enumerate(("2026-12-03", "2026-12-04"), start=7):
        write(ten_days, f"memory/{day}.md", f"# {day}\n\n## Retain\n- O(c=0.9) @Nadia: Thinks "
              f"@Rust is the right choice for the ingest workers (entry {n}).\n")
        commit_all(ten_days, f"memory: {day}", f"{day}T21:00:00+00:00")
        run(ten_days, since=day, commit=True)
        text = (ten_days / "bank/opinions.md").read_text(encoding="utf-8")
        rust = text[text.index(f"## {RUST}"):].split("\n\n")[0].splitlines()
        evidence = rust[rust.index("- evidence:") + 1:]
        # 7 entries: all listed (a fold line for one would save nothing); 8: 2 fold, 6 listed
        assert len(evidence) == 7, evidence
        assert ("earlier:" in evidence[0]) == (n == 8), evidence
    assert evidence[0].startswith("  - 2 earlier: memory/2026-11-03.md#L13 … "
                                  "memory/2026-11-05.md#L9 <!-- folded: ")
