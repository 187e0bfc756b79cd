"""gitmem reflect (docs/opinions-file.md) on real git repositories with dated commits."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from gitmem.domain import Citation
from gitmem.hooks import install
from gitmem.index.reflect_queries import facts_recorded
from gitmem.locks import file_lock
from gitmem.parse.retain import KIND_NAMES, fact_id, find_entities
from gitmem.reflect.entity_summaries import BEGIN, END
from gitmem.reflect.opinionfile import read_opinions
from gitmem.reflect.proposals import PROPOSAL_PATH
from gitmem.reflect.reflect import ReflectReport, reflect
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem, gitmem_json
from testing.index import read_index
from testing.repo import commit_all, git, make_repo, write

OPINIONS = """# Opinions

Hand-written intro: these are the agent's beliefs.

## @Peter prefers concise WhatsApp replies (under 1500 chars)
<!-- opinion: o-3fa9c2e1 -->
- confidence: {c}
- updated: 2025-11-01
- evidence:
  - for f-000000000001 memory/2025-11-01.md#L5 (c=0.90)
"""
PAGE = """---
aliases: [Pete]
---
# Peter

The user. Lives in Copenhagen.

## How to work with Peter
- WhatsApp first.
"""
MEMORY = "# Memory\n\n## People\n- Peter is the user.\n"
AGREES = "Prefers concise WhatsApp replies (under 1500 chars)."


def seeded(tmp_path: Path, confidence: str = "0.90") -> Path:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", MEMORY)
    write(repo, "bank/opinions.md", OPINIONS.format(c=confidence))
    write(repo, "bank/entities/Peter.md", PAGE)
    write(repo, "memory/2025-11-01.md", "# 2025-11-01\n\n## Retain\n- W @Peter: Lives in "
          "Copenhagen.\n")
    commit_all(repo, "seed", "2025-11-01T21:00:00+00:00")
    return repo


def add_day(repo: Path, day: str, *entries: str) -> None:
    body = "".join(f"- {e}\n" for e in entries)
    write(repo, f"memory/{day}.md", f"# {day}\n\nA quiet day.\n\n## Retain\n{body}")
    commit_all(repo, f"memory: {day}", f"{day}T21:00:00+00:00")


def run(repo: Path, since: str, **kwargs: Any) -> ReflectReport:
    ws, cfg = open_workspace(repo)
    return reflect(ws, cfg, since=since, **kwargs)


def opinion(repo: Path, opinion_id: str = "o-3fa9c2e1") -> Any:
    doc = read_opinions((repo / "bank/opinions.md").read_bytes())
    section = doc.section(opinion_id)
    assert section is not None
    return section.opinion


def snapshot(repo: Path) -> dict[str, bytes]:
    """Every file of the work tree (not .git, not the derived index)."""
    return {p.relative_to(repo).as_posix(): p.read_bytes() for p in sorted(repo.rglob("*"))
            if p.is_file() and not {".git", ".memory"} & set(p.relative_to(repo).parts)}


def fid(day: str, text: str, subject: str = "Peter") -> str:
    subjects = (subject,)
    mentions = tuple(e for e in find_entities(text) if e not in subjects)
    return fact_id(KIND_NAMES["O"], text, subjects + mentions, date.fromisoformat(day))


# -- the rule, end to end ----------------------------------------------------------------------


def test_spec_worked_example_to_two_decimals(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    add_day(repo, "2025-12-02", f"O(c=0.2) @Peter: {AGREES}")
    report = run(repo, "2025-12-01")
    op = opinion(repo)
    assert (op.confidence, op.updated) == (0.75, "2025-12-02")
    assert op.evidence[-1].stance == "for"  # c=0.2 holds it weakly; it does not deny it
    assert op.evidence[-1].fact_id == fid("2025-12-02", AGREES)
    assert op.evidence[-1].source == "memory/2025-12-02.md#L6"
    assert op.evidence[-1].confidence == 0.2
    [change] = report.opinions
    assert (change.before, change.after, change.capped_days) == (0.90, 0.75, ("2025-12-02",))
    assert "cap" in change.reason and "c=0.20" in change.reason and "against" not in change.reason
    commit_all(repo, "reflect")
    # three entries recorded on one later day: 0.585, 0.4695, 0.38865, within the day's cap
    add_day(repo, "2025-12-03", *(f"O(c=0.2) @Peter: {AGREES[:-1]} ({n})." for n in range(3)))
    report = run(repo, "2025-12-03")
    assert opinion(repo).confidence == 0.39
    assert report.opinions[0].after == 0.39 and not report.opinions[0].capped
    assert [e.source for e in report.opinions[0].evidence] == [
        f"memory/2025-12-03.md#L{n}" for n in (6, 7, 8)]


def test_reinforced_three_times_moves_by_the_capped_steps(tmp_path: Path) -> None:
    repo = seeded(tmp_path, "0.30")
    seen = []
    for day in ("2025-12-02", "2025-12-03", "2025-12-04"):
        add_day(repo, day, "O(c=1.0) @Peter: Prefers short WhatsApp replies.")
        run(repo, day)
        seen.append(opinion(repo).confidence)
    assert seen == [0.45, 0.60, 0.72]
    assert [e.stance for e in opinion(repo).evidence] == ["for"] * 4


def test_one_contradiction_nudges_and_repeated_contradiction_flips(tmp_path: Path) -> None:
    repo = seeded(tmp_path, "0.85")
    add_day(repo, "2025-12-02", "O(c=0.05) @Peter: Prefers concise WhatsApp replies.")
    run(repo, "2025-12-02")
    assert opinion(repo).confidence == 0.70  # nudged, still held
    for n, day in enumerate(("2025-12-03", "2025-12-04", "2025-12-05")):
        add_day(repo, day, f"O(c=0.05) @Peter: Prefers concise WhatsApp replies ({n}).")
    run(repo, "2025-12-03")
    assert opinion(repo).confidence < 0.5  # three more contradictions flip it
    # one record day each: 0.70 -> 0.505 capped to 0.55, 0.55 -> 0.40, 0.40 -> 0.295 (0.30)
    assert opinion(repo).confidence == 0.30


def test_agreement_without_c_and_an_alias(tmp_path: Path) -> None:
    repo = seeded(tmp_path, "0.60")
    add_day(repo, "2025-12-02", "O @Pete: Prefers short WhatsApp replies.")
    run(repo, "2025-12-02")
    op = opinion(repo)
    assert op.confidence == 0.63  # c_observed = 0.70
    assert op.evidence[-1].confidence is None and op.evidence[-1].stance == "for"


def test_unrelated_statement_starts_a_new_opinion_and_leaves_the_old_one(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    before = (repo / "bank/opinions.md").read_bytes()
    add_day(repo, "2025-12-02", "O(c=0.7) @Peter: Thinks the Castle's Wi-Fi is too slow.",
            "O @Peter: Enjoys long walks on the beach.")
    report = run(repo, "2025-12-02")
    after = (repo / "bank/opinions.md").read_bytes()
    assert after.startswith(before)  # the old section byte for byte; new ones appended
    created = [c for c in report.opinions if c.created]
    assert [c.statement for c in created] == [
        "@Peter Thinks the Castle's Wi-Fi is too slow", "@Peter Enjoys long walks on the beach"]
    assert [c.after for c in created] == [0.7, 0.5]
    doc = read_opinions(after)
    assert [s.malformed for s in doc.sections] == [False, False, False]
    assert doc.sections[1].opinion.evidence[0].source == "memory/2025-12-02.md#L6"


def test_an_o_entry_whose_confidence_is_no_number_is_a_warning_and_no_evidence(
        tmp_path: Path) -> None:
    """docs/opinions-file.md: `O(c=high)` neither starts an opinion nor moves one (it used to start one at
    0.50, taken for an entry without c); `status` and `recall` still show the line."""
    repo = seeded(tmp_path, "0.60")
    before = (repo / "bank/opinions.md").read_bytes()
    add_day(repo, "2025-12-02", "O(c=high) @Tailscale: Still fine.",
            f"O(c=1.5) @Peter: {AGREES}", "O(c=) @Peter: Likes voice notes.")
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-12-02", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["opinions"] == [], report
    assert (repo / "bank/opinions.md").read_bytes() == before
    code, out, err = gitmem("-C", str(repo), "status", "--json")
    warned = {(w["line"], w["code"]) for w in json.loads(out)["warnings"]
              if w["path"] == "memory/2025-12-02.md"}
    assert warned == {(6, "retain-confidence"), (7, "retain-confidence"),
                      (8, "retain-confidence")}, warned
    hit = gitmem_json("-C", str(repo), "recall", "Tailscale still fine", "--json")["results"][0]
    assert hit["kind"] == "note" and "- O(c=high) @Tailscale: Still fine." in hit["content"], hit
    # the same entry with a number is an opinion
    add_day(repo, "2025-12-03", "O(c=0.9) @Tailscale: Still fine.")
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-12-02", "--json")
    assert [(c["statement"], c["after"]) for c in json.loads(out)["opinions"]] == [
        ("@Tailscale Still fine", 0.9)], out


# -- idempotence, dry run, hand edits -----------------------------------------------------------


def busy_week(tmp_path: Path) -> Path:
    repo = seeded(tmp_path)
    add_day(repo, "2025-12-02", f"O(c=1.0) @Peter: {AGREES}",
            "W @Peter @The-Castle: Moved the gateway host to The Castle.",
            "B @warelay: Restarted warelay on castle-gw.")
    add_day(repo, "2025-12-03", "O(c=0.95) @Peter: Prefers concise replies; long content goes "
            "to a file.", "S @The-Castle: No ECONNRESET since the move.",
            "O(c=0.9) @The-Castle: Is a more reliable gateway host than the old NUC.")
    return repo


def test_reflect_twice_changes_nothing_byte_for_byte(tmp_path: Path) -> None:
    repo = busy_week(tmp_path)
    first = run(repo, "2025-12-01")
    assert first.changed
    assert {f.path for f in first.files} == {  # warelay: one fact, no page (min_facts)
        "bank/opinions.md", "bank/entities/Peter.md", "bank/entities/The-Castle.md",
        PROPOSAL_PATH}
    written = snapshot(repo)
    second = run(repo, "2025-12-01")
    assert not second.changed and second.files == [] and second.opinions == []
    assert snapshot(repo) == written
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-12-01")
    assert (code, out, err) == (0, "", "")  # quiet under cron when nothing changed


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    repo = busy_week(tmp_path)
    before = snapshot(repo)
    report = run(repo, "2025-12-01", dry_run=True)
    assert report.changed and report.opinions and report.pages
    assert snapshot(repo) == before
    assert git(repo, "status", "--porcelain") == ""
    code, out, _ = gitmem("-C", str(repo), "reflect", "--since", "2025-12-01", "--dry-run")
    assert code == 0 and out.startswith("dry run: nothing was written")
    assert snapshot(repo) == before
    real = run(repo, "2025-12-01")
    assert [f.to_json() for f in real.files] == [f.to_json() for f in report.files]


def test_hand_edits_survive_reflect(tmp_path: Path) -> None:
    repo = busy_week(tmp_path)
    run(repo, "2025-12-01")
    # A person edits the opinions file (CRLF, a comment, an extra line, a new confidence) and
    # both sides of the generated block of Peter's page.
    ops = repo / "bank/opinions.md"
    edited = ops.read_bytes().replace(b"Hand-written intro", b"Edited intro <!-- keep -->")
    edited = edited.replace(b"- confidence: 0.94", b"- confidence: 0.80\n- note: checked by hand")
    ops.write_bytes(edited.replace(b"\n", b"\r\n"))
    page = repo / "bank/entities/Peter.md"
    text = page.read_text(encoding="utf-8")
    text = text.replace("The user.", "The user (edited by hand).")
    text = text.replace(BEGIN, "Written just above the block.\n\n" + BEGIN)
    text = text.replace(END, END + "\n\n## Added below\n- a person's line\n")
    text = text.replace("## Memory digest", "## Memory digest\nA line typed inside the block.")
    page.write_text(text, encoding="utf-8")
    commit_all(repo, "hand edits", "2025-12-03T22:00:00+00:00")
    add_day(repo, "2025-12-04", f"O(c=0.2) @Peter: {AGREES}", "W @Peter: Bought a new phone.")
    report = run(repo, "2025-12-04")
    assert [c.before for c in report.opinions] == [0.80]
    out = ops.read_bytes()
    assert b"Edited intro <!-- keep -->: these are the agent's beliefs.\r\n" in out and b"- note: checked by hand\r\n" in out
    assert b"- confidence: 0.65\r\n" in out and b"\n" not in out.replace(b"\r\n", b"")
    new_page = page.read_text(encoding="utf-8")
    head, rest = new_page.split(BEGIN)
    block, tail = rest.split(END)
    assert head == text.split(BEGIN)[0]  # byte for byte above the block
    assert tail == text.split(END)[1]  # and below it
    assert "Bought a new phone." in block and "typed inside" not in block


def test_malformed_opinion_is_warned_about_and_left_untouched(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    broken = OPINIONS.format(c="0.90").replace("- updated: 2025-11-01",
                                              "- updated: 2025-11-01\n- confidence: 0.5")
    write(repo, "bank/opinions.md", broken)
    commit_all(repo, "a typo", "2025-11-02T21:00:00+00:00")
    add_day(repo, "2025-12-02", f"O(c=0.2) @Peter: {AGREES}")
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-12-01")
    assert code == 0
    assert (repo / "bank/opinions.md").read_text(encoding="utf-8") == broken
    assert "warning: bank/opinions.md#L9: 'confidence' appears twice" in err
    assert "warning: bank/opinions.md#L5: memory/2025-12-02.md#L6 is evidence about" in err
    assert "bank/opinions.md" not in out  # no opinion changed; no duplicate opinion either


def test_unbalanced_markers_leave_the_page_alone(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    page = PAGE + f"\n{BEGIN}\nold generated text\n"
    write(repo, "bank/entities/Peter.md", page)
    commit_all(repo, "half a block", "2025-11-02T21:00:00+00:00")
    add_day(repo, "2025-12-02", "W @Peter: Bought a new phone.")
    report = run(repo, "2025-12-01")
    assert (repo / "bank/entities/Peter.md").read_text(encoding="utf-8") == page
    assert [w.location for w in report.warnings] == ["bank/entities/Peter.md#L11"]
    assert report.pages == []


def test_new_entity_page_and_block_contents(tmp_path: Path) -> None:
    repo = busy_week(tmp_path)
    run(repo, "2025-12-01")
    castle = (repo / "bank/entities/The-Castle.md").read_text(encoding="utf-8")
    assert castle.startswith("---\naliases: []\n---\n# The-Castle\n")
    assert castle.count(BEGIN) == 1 and castle.endswith(END + "\n")
    assert "- 2025-12-02: Moved the gateway host to The Castle. (memory/2025-12-02.md#L7)" \
        in castle
    assert "**Current opinions**" in castle and "the old NUC" in castle
    assert "**Related**\nPeter (1)" in castle
    peter = (repo / "bank/entities/Peter.md").read_text(encoding="utf-8")
    assert peter.startswith(PAGE)
    assert "- 0.94: @Peter prefers concise WhatsApp replies (under 1500 chars) (o-3fa9c2e1)" \
        in peter
    assert "**Timeline**\n- 2025-12: 3 facts (1 world, 2 opinion)\n- 2025-11: 1 fact" in peter
    # Nothing in a generated block reads as a Retain fact.
    commit_all(repo, "reflect", "2025-12-03T23:00:00+00:00")
    ws, cfg = open_workspace(repo)
    from gitmem.index.replay import index_workspace

    index_workspace(ws, cfg)
    with read_index(repo) as store:
        assert facts_recorded(store, "2025-12-03T22:00:00+00:00") == []


# -- MEMORY.md proposals ------------------------------------------------------------------------


def test_proposal_is_a_patch_that_applies_and_is_withdrawn_once_applied(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    add_day(repo, "2025-12-02", f"O(c=1.0) @Peter: {AGREES}")
    add_day(repo, "2025-12-03", f"O(c=1.0) @Peter: {AGREES}")
    report = run(repo, "2025-12-01")
    assert opinion(repo).confidence == 0.95
    [proposal] = report.proposals
    assert proposal.action == "add" and proposal.opinion_id == "o-3fa9c2e1"
    patch = (repo / PROPOSAL_PATH).read_text(encoding="utf-8")
    assert "git apply bank/proposals/MEMORY.md.patch" in patch
    assert (repo / "MEMORY.md").read_text(encoding="utf-8") == MEMORY  # never applied by itself
    git(repo, "apply", PROPOSAL_PATH)
    memory = (repo / "MEMORY.md").read_text(encoding="utf-8")
    assert memory == MEMORY + ("\n## Opinions\n\n- @Peter prefers concise WhatsApp replies "
                               "(under 1500 chars) (confidence 0.95; o-3fa9c2e1 in "
                               "bank/opinions.md)\n")
    again = run(repo, "2025-12-01")
    assert not (repo / PROPOSAL_PATH).exists()
    assert [(f.path, f.action) for f in again.files] == [(PROPOSAL_PATH, "delete")]


def test_a_collapsed_opinion_is_proposed_for_removal(tmp_path: Path) -> None:
    repo = seeded(tmp_path, "0.35")
    write(repo, "MEMORY.md", MEMORY + "- @Peter prefers concise WhatsApp replies (o-3fa9c2e1).\n")
    commit_all(repo, "memory", "2025-11-02T21:00:00+00:00")
    add_day(repo, "2025-12-02", f"O(c=0.0) @Peter: {AGREES}")
    report = run(repo, "2025-12-01")
    assert opinion(repo).confidence == 0.25
    [proposal] = report.proposals
    assert (proposal.action, proposal.line) == ("remove", 5)
    git(repo, "apply", "--check", PROPOSAL_PATH)


# -- commit, hooks, locks, processes ----------------------------------------------------------


def wait_for_index(repo: Path, commit: str) -> None:
    deadline = time.monotonic() + FAILURE_SECONDS
    log = repo / ".memory" / "hook.log"
    while time.monotonic() < deadline:
        if log.is_file() and f"indexed {commit}" in log.read_text(encoding="utf-8"):
            return
        time.sleep(0.1)
    raise AssertionError(f"the hook never indexed {commit}")


def test_commit_holds_only_reflects_files_is_indexed_and_does_not_retrigger(
        tmp_path: Path) -> None:
    repo = busy_week(tmp_path)
    install(repo)
    write(repo, "notes.txt", "staged, not reflect's\n")
    git(repo, "add", "notes.txt")
    write(repo, "MEMORY.md", MEMORY + "- An uncommitted edit.\n")
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-12-01", "--commit")
    assert code == 0, err
    head = git(repo, "rev-parse", "HEAD").strip()
    assert out.splitlines()[-1].startswith(f"committed {head[:7]}: gitmem reflect: ")
    files = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(files) == sorted(["bank/opinions.md", "bank/entities/Peter.md",
                                    "bank/entities/The-Castle.md", PROPOSAL_PATH])
    message = git(repo, "log", "-1", "--format=%B")
    assert message.startswith("gitmem reflect: 1 opinion updated, 1 new opinion, 2 entity "
                              "pages, 1 proposed MEMORY.md edit\n\n")
    assert "o-3fa9c2e1 0.90 -> 0.94" in message and "memory/2025-12-02.md#L6" in message
    # The committed proposal is a patch to the committed MEMORY.md, not to the uncommitted
    # edit (which it would otherwise carry into the commit as context); the one on disk applies
    # to MEMORY.md as it is on disk.
    assert "An uncommitted edit." not in git(repo, "show", f"HEAD:{PROPOSAL_PATH}")
    git(repo, "apply", "--check", PROPOSAL_PATH)
    assert git(repo, "status", "--porcelain").splitlines() == [
        " M MEMORY.md", f" M {PROPOSAL_PATH}", "A  notes.txt"]
    wait_for_index(repo, head)  # the post-commit hook indexed reflect's commit
    with read_index(repo) as store:
        assert store.get_meta("last_indexed_commit") == head
        assert facts_recorded(store, "2025-12-04") == []  # it holds no new facts ...
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-12-01", "--commit")
    assert (code, out, err) == (0, "", "")  # ... so the next run has nothing to do
    assert git(repo, "rev-parse", "HEAD").strip() == head


def added_lines(repo: Path, rel: str) -> list[str]:
    """The lines ``git diff`` shows changed in the work tree against HEAD for one file."""
    diff = git(repo, "diff", "-U0", "--", rel).splitlines()
    return [ln for ln in diff if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]


def test_commit_leaves_hand_edits_pending_in_reflects_files_uncommitted(tmp_path: Path) -> None:
    """A person's uncommitted edit of bank/opinions.md and of an entity page (outside its
    markers) is not swept into reflect's commit: the commit is HEAD's files plus reflect's
    changes; the work tree holds both, the hand edits still uncommitted."""
    repo = busy_week(tmp_path)
    intro = "Hand-written intro: these are the agent's beliefs."
    opinions = repo / "bank/opinions.md"
    opinions.write_text(opinions.read_text(encoding="utf-8").replace(
        intro, intro + "\nStill being written by a person."), encoding="utf-8")
    page = repo / "bank/entities/Peter.md"
    page.write_text(PAGE.replace("Lives in Copenhagen.", "Lives in Copenhagen. Has a cat."),
                    encoding="utf-8")
    report = run(repo, "2025-12-01", commit=True)
    assert report.commit == git(repo, "rev-parse", "HEAD").strip()
    committed = git(repo, "show", "HEAD:bank/opinions.md")
    assert "Still being written" not in committed and "confidence: 0.94" in committed
    committed_page = git(repo, "show", "HEAD:bank/entities/Peter.md")
    assert "Has a cat." not in committed_page and BEGIN in committed_page
    assert "confidence: 0.94" in opinions.read_text(encoding="utf-8")
    assert BEGIN in page.read_text(encoding="utf-8")
    assert added_lines(repo, "bank/opinions.md") == ["+Still being written by a person."]
    assert added_lines(repo, "bank/entities/Peter.md") == [
        "-The user. Lives in Copenhagen.", "+The user. Lives in Copenhagen. Has a cat."]
    assert not run(repo, "2025-12-01", commit=True).changed  # nothing left to do


def test_two_runs_at_once_do_not_corrupt_anything(tmp_path: Path) -> None:
    reference = busy_week(tmp_path / "a")
    run(reference, "2025-12-01")
    repo = busy_week(tmp_path / "b")
    cmd = [sys.executable, "-m", "gitmem", "-C", str(repo), "reflect", "--since", "2025-12-01",
           "--commit", "--json"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    results = [(p.wait(timeout=FAILURE_SECONDS), *p.communicate()) for p in procs]
    assert [code for code, _, _ in results] == [0, 0], results
    reports = [json.loads(out) for _, out, _ in results]
    assert sorted(r["changed"] for r in reports) == [False, True]  # one did it, one waited
    assert snapshot(repo) == snapshot(reference)
    assert git(repo, "log", "--format=%s").splitlines()[0].startswith("gitmem reflect: ")
    assert git(repo, "status", "--porcelain") == ""


def test_a_held_lock_is_exit_status_1_after_the_timeout(tmp_path: Path) -> None:
    repo = busy_week(tmp_path)
    write(repo, ".gitmem.toml", "[reflect]\nlock_timeout = 0.2\n")
    ws, _ = open_workspace(repo)
    with file_lock(ws.memory_dir / "reflect.lock", wait=False):
        code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-12-01")
    assert code == 1 and out == ""
    assert "another 'gitmem reflect' is running" in err
    assert git(repo, "status", "--porcelain") == "?? .gitmem.toml\n"


def test_bad_since_is_a_usage_error(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    code, _, err = gitmem("-C", str(repo), "reflect", "--since", "lately")
    assert code == 2 and "lately" in err


def test_json_report_cites_every_change(tmp_path: Path) -> None:
    repo = busy_week(tmp_path)
    code, out, _ = gitmem("-C", str(repo), "reflect", "--since", "2025-12-01", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) >= {"since", "dry_run", "changed", "facts_read", "files", "opinions",
                         "entity_pages", "proposals", "commit", "warnings"}
    assert data["facts_read"] == 6
    for change in data["opinions"]:
        assert change["reason"] and change["evidence"]
        for ev in change["evidence"]:
            assert ev["source"].startswith("memory/2025-12-0") and "#L" in ev["source"]
    for page in data["entity_pages"]:
        assert page["reason"] and all("#L" in cite for cite in page["evidence"])
    assert {f["kind"] for f in data["files"]} == {"opinions", "entity-page", "proposal"}
    assert str(Citation("memory/2025-12-02.md", 7, 7)) in json.dumps(data)


def test_config_rejects_a_bad_reflect_value(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    write(repo, ".gitmem.toml", "[reflect]\nstep = 2\n")
    code, _, err = gitmem("-C", str(repo), "reflect")
    assert code == 1 and "reflect.step" in err and "a number from 0 to 1" in err


def test_rule_constants_come_from_config(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    write(repo, ".gitmem.toml", "[reflect]\nstep = 0.1\nmax_move = 0.05\n")
    add_day(repo, "2025-12-02", f"O(c=0.2) @Peter: {AGREES}")
    run(repo, "2025-12-01")
    assert opinion(repo).confidence == 0.85


# -- the README's cron line, the synthetic workspace --------------------------------------------


def test_readme_cron_line_runs_reflect(tmp_path: Path, repo_root: Path) -> None:
    readme = (repo_root / "README.md").read_text(encoding="utf-8")
    found = re.search(r"```crontab\n(.*?)\n```", readme, flags=re.S)
    assert found is not None
    *when, command = found.group(1).split(None, 5)
    assert len(when) == 5 and "reflect" in command and "--commit" in command
    repo = seeded(tmp_path)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(microsecond=0)
    write(repo, f"memory/{yesterday.date()}.md", f"# day\n\n## Retain\n- O(c=0.2) @Peter: {AGREES}\n")
    commit_all(repo, "memory", yesterday.isoformat())
    shims = tmp_path / "bin"
    shims.mkdir()
    (shims / "gitmem").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m gitmem "
                                  '"$@"\n', encoding="utf-8")
    (shims / "gitmem").chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}
    line = command.replace("/path/to/memory", shlex.quote(str(repo)))
    proc = subprocess.run(["sh", "-c", line], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert git(repo, "log", "-1", "--format=%s").startswith("gitmem reflect: 1 opinion updated")
    assert opinion(repo).confidence == 0.75


def test_synthetic_workspace_reflects_with_cited_evidence(tmp_path: Path) -> None:
    from testing import synth

    made = synth.generate(tmp_path / "ws", days=45)
    since = made.start.isoformat()
    report = run(made.dest, since)
    assert report.changed and report.pages
    assert any(not c.created for c in report.opinions)
    with read_index(made.dest) as store:
        known = {f.fact_id: f for f in facts_recorded(store, None)}
    for change in report.opinions:
        for ev in change.evidence:
            fact = known[ev.fact_id]
            assert ev.source == str(Citation(fact.path, fact.start_line, fact.end_line))
            assert fact.recorded_at >= since
    assert not run(made.dest, since).changed


def test_workspace_in_a_subfolder_commits_and_proposes_repository_paths(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, ".gitmem.toml", '[workspace]\nroot = "mem"\n')
    write(repo, "mem/MEMORY.md", MEMORY)
    write(repo, "mem/bank/opinions.md", OPINIONS.format(c="0.90"))
    write(repo, "mem/memory/2025-12-02.md", f"# d\n\n## Retain\n- O(c=1.0) @Peter: {AGREES}\n"
          f"- O(c=1.0) @Peter: Prefers short WhatsApp replies.\n- W @Peter: Lives in Aarhus.\n")
    commit_all(repo, "seed", "2025-12-02T21:00:00+00:00")
    code, out, err = gitmem("-C", str(repo / "mem"), "reflect", "--since", "2025-12-01",
                            "--commit")
    assert code == 0, err
    assert "committed" in out
    files = sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split())
    assert files == ["mem/bank/entities/Peter.md", "mem/bank/opinions.md",
                     "mem/bank/proposals/MEMORY.md.patch"]
    git(repo, "apply", "mem/bank/proposals/MEMORY.md.patch")
    assert "o-3fa9c2e1 in bank/opinions.md" in (repo / "mem/MEMORY.md").read_text(
        encoding="utf-8")


def test_symbolic_links_are_neither_read_nor_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Peter.md").write_text("# not memory\n", encoding="utf-8")
    (outside / "opinions.md").write_text(OPINIONS.format(c="0.90"), encoding="utf-8")
    repo = seeded(tmp_path / "r")
    (repo / "bank/entities/Peter.md").unlink()
    (repo / "bank/entities/Peter.md").symlink_to(outside / "Peter.md")
    (repo / "bank/opinions.md").unlink()
    (repo / "bank/opinions.md").symlink_to(outside / "opinions.md")
    commit_all(repo, "links", "2025-11-02T21:00:00+00:00")
    add_day(repo, "2025-12-02", f"O(c=0.2) @Peter: {AGREES}")
    report = run(repo, "2025-12-01")
    assert {(w.path, w.code) for w in report.warnings} == {
        ("bank/opinions.md", "symlink"), ("bank/entities/Peter.md", "symlink")}
    assert (outside / "Peter.md").read_text(encoding="utf-8") == "# not memory\n"
    assert (outside / "opinions.md").read_text(encoding="utf-8") == OPINIONS.format(c="0.90")
    assert (repo / "bank/entities/Peter.md").is_symlink() and report.opinions == []


# -- what a reviewer reads: headings as written, evidence stance ------------------------------


def test_a_new_opinions_heading_is_its_statement_as_written(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    add_day(repo, "2025-12-02",
            "O(c=0.8) @Bob: Bob prefers async updates; he declined all optional meetings.",
            "O(c=0.7) @Nadia: Thinks Rust is worth the compile times. Her team agrees.",
            "O(c=0.9) @田中: 寿司が好き。毎週金曜日に食べる。",
            "O(c=0.6) @Пётр: Предпочитает короткие ответы (до 10 строк) — длинные в файл.")
    report = run(repo, "2025-12-02")
    assert [c.statement for c in report.opinions if c.created] == [
        "@Bob prefers async updates", "@Nadia Thinks Rust is worth the compile times",
        "@田中 寿司が好き", "@Пётр Предпочитает короткие ответы (до 10 строк)"]
    text = (repo / "bank/opinions.md").read_text()
    assert "\n## @Bob prefers async updates\n" in text and "declined" not in text
    # the heading still matches what later entries say
    add_day(repo, "2025-12-03", "O(c=0.9) @Bob: Prefers async updates over meetings.")
    [change] = run(repo, "2025-12-03").opinions
    assert (change.statement, change.created) == ("@Bob prefers async updates", False)


def test_evidence_that_holds_a_statement_weakly_is_for_it(tmp_path: Path) -> None:
    repo = seeded(tmp_path)
    add_day(repo, "2025-12-02", "O(c=0.3) @Bob: Prefers async updates.",
            "O(c=0.3) @Bob: Prefers async status updates.")
    run(repo, "2025-12-02", commit=True)
    add_day(repo, "2025-12-03", "O(c=0.2) @Bob: Prefers async updates, mostly.",
            f"O(c=0.2) @Peter: {AGREES}")
    report = run(repo, "2025-12-03", commit=True)
    assert {e.stance for c in report.opinions for e in c.evidence} == {"for"}
    bob = next(op for op in read_opinions((repo / "bank/opinions.md").read_bytes()).opinions
               if op.statement == "@Bob Prefers async updates")
    assert [(e.stance, e.confidence) for e in bob.evidence] == [("for", 0.3)] * 2 + [("for", 0.2)]
    code, md, err = gitmem("-C", str(repo), "review", "HEAD~2..HEAD")
    assert code == 0, err
    rows = [ln for ln in md.splitlines() if ln.startswith("| ") and "Bob" in ln]
    assert rows and all("against" not in ln for ln in rows), md
    peter = next(ln for ln in md.splitlines() if ln.startswith("| ") and "0.90 → 0.75" in ln)
    assert "+1 for" in peter and "against" not in peter


# -- a fold over history: daily runs write what one run writes ---------------------------------


def sixty_days(tmp_path: Path, name: str, daily: bool) -> dict[str, bytes]:
    """Sixty days of notes (several O entries on some days, about opinions that exist and ones
    that start on the way; the last twenty days decline faster than a day's cap lets them),
    reflected with --commit after every day, or once at the end."""
    repo = seeded(tmp_path / name)
    levels = (0.9, 0.2, 0.6, None, 0.1, 0.8, 0.35)
    first = date(2025, 11, 2)
    days = [(first + timedelta(days=n)).isoformat() for n in range(60)]
    for n, day in enumerate(days):
        entries = [f"W @Bob: Worked from the {('office', 'library', 'train')[n % 3]} on day {n}."]
        for k in range(n % 4):  # 0-3 entries a day about the same opinion
            c = levels[(n + k) % len(levels)] if n < 40 else 0.0  # then a steady decline
            entries.append(f"O{'' if c is None else f'(c={c})'} @Peter: "
                           f"{AGREES[:-1]} ({n}.{k}).")
        if n % 5 == 0:
            entries.append(f"O(c={levels[n % 7] or 0.5}) @Bob @Nadia: Prefers async updates "
                           f"(week {n // 5}).")
        if n == 30:
            entries.append("O(c=0.7) @Nadia: Thinks Rust is worth the compile times.")
        add_day(repo, day, *entries)
        if daily:
            run(repo, day, commit=True)
    if not daily:
        run(repo, days[0], commit=True)
    assert not run(repo, days[0]).changed
    return {rel: data for rel, data in snapshot(repo).items() if rel.startswith("bank/")
            or rel == PROPOSAL_PATH}


def test_daily_runs_over_sixty_days_write_what_one_run_writes(tmp_path: Path) -> None:
    once = sixty_days(tmp_path, "once", daily=False)
    daily = sixty_days(tmp_path, "daily", daily=True)
    assert sorted(daily) == sorted(once)
    for rel in once:
        assert daily[rel] == once[rel], rel
    concise = next(op for op in read_opinions(once["bank/opinions.md"]).opinions
                   if op.opinion_id == "o-3fa9c2e1")
    assert len(concise.cited) == 1 + sum(n % 4 for n in range(60))
    assert len(concise.evidence) == 6  # the newest; the others fold into one line
    assert concise.updated == "2025-12-31"
    assert concise.confidence is not None and concise.confidence < 0.1


# -- silence: say what to do --------------------------------------------------------------------


def test_opinions_before_any_reflect_run_say_to_run_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-03.md", "# 2025-11-03\n\n## Retain\n"
          "- O(c=0.8) @Bob: Prefers async updates.\n- O @Nadia: Thinks Rust is worth it.\n")
    commit_all(repo, "notes", "2025-11-03T21:00:00+00:00")
    code, out, err = gitmem("-C", str(repo), "opinions")
    assert code == 0, err
    assert "holds 2 O entries: run 'gitmem reflect --since 2025-11-03'" in out
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-11-03")
    assert code == 0 and "bank/opinions.md" in out, err
    commit_all(repo, "reflect")
    code, out, _ = gitmem("-C", str(repo), "opinions")
    assert "@Bob Prefers async updates" in out and "gitmem reflect" not in out


def test_a_dry_run_with_nothing_to_do_says_so(tmp_path: Path) -> None:
    repo = busy_week(tmp_path)
    run(repo, "2025-12-01")
    commit_all(repo, "reflect")
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-12-01", "--dry-run")
    assert (code, err) == (0, "")
    assert out.startswith("dry run: nothing to do: ") and "nothing to write" in out
    assert "recorded since 2025-12-01" in out, out
    assert gitmem("-C", str(repo), "reflect", "--since", "2025-12-01")[1:] == ("", "")


# -- generated text is not a source ---------------------------------------------------


def test_generated_blocks_are_not_results_nor_mentions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-03.md", "# 2025-11-03\n\n## Retain\n"
          "- W @Alice: Lives in Lisbon with @Bob.\n- O(c=0.8) @Alice: Prefers tea to coffee.\n")
    commit_all(repo, "day 1", "2025-11-03T21:00:00+00:00")
    write(repo, "memory/2025-11-05.md", "# 2025-11-05\n\nMet @Alice for lunch in Alfama.\n\n"
          "## Retain\n- B @Alice: Reviewed the gateway patch with me.\n")
    commit_all(repo, "day 2", "2025-11-05T21:00:00+00:00")
    write(repo, "memory/2025-11-09.md", "# 2025-11-09\n\n## Retain\n"
          "- O(c=0.9) @Alice: Prefers tea to coffee, green tea most.\n")
    commit_all(repo, "day 3", "2025-11-09T21:00:00+00:00")
    assert run(repo, "2025-11-01", commit=True).commit
    page = (repo / "bank/entities/Alice.md").read_text()
    assert BEGIN in page and "Lisbon" in page  # the digest is there to read
    lines = page.splitlines()
    block = set(range(lines.index(next(ln for ln in lines if ln.startswith(BEGIN))) + 1,
                      lines.index(END) + 2))
    for query in ("Alice", "Alice tea coffee", "Lisbon", "gateway patch"):
        code, out, err = gitmem("-C", str(repo), "recall", query, "--json")
        assert code == 0, err
        results = json.loads(out)["results"]
        assert results, query
        assert all("gitmem:" not in r["snippet"] and "gitmem:" not in r["content"]
                   for r in results), (query, results)
        assert not any(r["path"] == "bank/entities/Alice.md" and set(
            range(r["start_line"], r["end_line"] + 1)) & block for r in results), (query, results)
    code, out, err = gitmem("-C", str(repo), "entity", "Alice", "--json")
    assert code == 0, err
    view = json.loads(out)
    assert view["last_mention"]["source"].startswith("memory/2025-11-09.md"), view["last_mention"]
    code, out, err = gitmem("-C", str(repo), "entity", "--json")
    listed = next(e for e in json.loads(out)["entities"] if e["key"] == "alice")
    assert (listed["mentions"], listed["last_mention"]) == (view["counts"]["mentions"],
                                                           "2025-11-09")
