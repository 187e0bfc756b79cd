"""One belief, one opinion (docs/opinions-file.md, issue 39): reflect on real git repositories
with dated commits makes a reworded judgement evidence for its opinion, the opposite or a worded
end evidence against it, a different judgement a new opinion, and does what a person's
``- same as:`` line says."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from gitmem.reflect.opinionfile import read_opinions
from gitmem.reflect.reflect import ReflectReport, reflect
from gitmem.reflect.rule import Observation, apply_evidence
from gitmem.workspace import open_workspace
from testing.cli import gitmem
from testing.repo import commit_all, make_repo, write


def add_day(repo: Path, day: str, *entries: str) -> None:
    body = "".join(f"- {e}\n" for e in entries)
    write(repo, f"memory/{day}.md", f"# {day}\n\n## Retain\n{body}")
    commit_all(repo, f"memory: {day}", f"{day}T21:00:00+00:00")


def run(repo: Path, since: str = "2026-10-01", **kwargs: Any) -> ReflectReport:
    ws, cfg = open_workspace(repo)
    return reflect(ws, cfg, since=since, **kwargs)


def opinions(repo: Path) -> Any:
    return read_opinions((repo / "bank/opinions.md").read_bytes())


THREAD = (
    ("2026-10-01", "O(c=0.7) @Ollama: Local summaries with Ollama are good enough."),
    ("2026-10-03", "O(c=0.8) @Ollama: Ollama summaries still fine for the digest."),
    ("2026-10-05", "O(c=0.6) @Ollama: Ollama summaries are not good enough for long threads."),
    ("2026-10-08", "O(c=0.9) @Ollama: Stopped using Ollama for summaries."),
    ("2026-10-09", "O(c=0.6) @Ollama: Ollama is slow on the laptop."),
)


def thread_repo(tmp_path: Path, name: str = "repo") -> Path:
    repo = make_repo(tmp_path, name)
    for day, entry in THREAD:
        add_day(repo, day, entry)
    return repo


def test_a_belief_in_other_words_its_opposite_and_its_end_are_one_opinion(
        tmp_path: Path) -> None:
    repo = thread_repo(tmp_path)
    report = run(repo, commit=True)
    doc = opinions(repo)
    assert [op.statement for op in doc.opinions] == [
        "@Ollama Local summaries with Ollama are good enough", "@Ollama is slow on the laptop"]
    summaries = doc.opinions[0]
    assert [e.stance for e in summaries.evidence] == ["for", "for", "against", "against"]
    # each line shows the entry's own words: a reviewer sees why the confidence moved
    assert summaries.evidence[3].words == "Stopped using Ollama for summaries"
    text = (repo / "bank/opinions.md").read_text()
    assert ("(c=0.60) — Ollama summaries are not good enough for long threads\n") in text
    # against holds it at most min(c, 1 - c): 0.70 -> 0.73 (c=0.8) -> 0.62 (0.4) -> 0.55 (0.1)
    assert summaries.confidence is not None and summaries.confidence < 0.7
    reason = next(o.reason for o in report.opinions if o.statement == summaries.statement)
    assert "stating it or against it" in reason and "against, c=0.90" in reason
    assert not run(repo).changed  # applied once


def test_against_evidence_holds_the_opinion_at_most_min_c_one_minus_c() -> None:
    """'Not good enough (c=0.9)' holds the opposite strongly: the opinion falls toward 0.1;
    'stopped using them (c=0.3)' leaves it at most 0.3; evidence against never raises it."""
    move = apply_evidence(0.7, [Observation("f-1", 0.9, "2026-10-05T21:00:00+00:00",
                                            "memory/2026-10-05.md", 4, against=True)])
    assert round(move.steps[0].observed, 2) == 0.1  # then 0.7 + 0.3 × (0.1 − 0.7) = 0.52
    assert move.end == 0.55  # capped: one entry moves it at most 0.15
    move = apply_evidence(0.7, [Observation("f-1", None, "2026-10-05T21:00:00+00:00",
                                            "memory/2026-10-05.md", 4, against=True)])
    assert round(move.steps[0].observed, 2) == 0.6  # no c: disagrees by the agreement step
    move = apply_evidence(0.7, [Observation("f-1", 0.3, "2026-10-05T21:00:00+00:00",
                                            "memory/2026-10-05.md", 4, against=True)])
    assert move.steps[0].observed == 0.3 and move.end == 0.58
    move = apply_evidence(0.2, [Observation("f-1", 0.4, "2026-10-05T21:00:00+00:00",
                                            "memory/2026-10-05.md", 4, against=True)])
    assert move.end == 0.2  # observes 0.4, above the opinion: against never raises it


def test_daily_runs_write_what_one_run_writes_with_evidence_against(tmp_path: Path) -> None:
    once = thread_repo(tmp_path, "once")
    run(once, commit=True)
    daily = make_repo(tmp_path, "daily")
    for day, entry in THREAD:
        add_day(daily, day, entry)
        run(daily, day, commit=True)
    assert (daily / "bank/opinions.md").read_bytes() == (once / "bank/opinions.md").read_bytes()


def test_unsure_opens_a_new_opinion_and_says_which_it_may_be(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    add_day(repo, "2026-10-01", "O(c=0.8) @Figma: Figma is fast for wireframes.")
    add_day(repo, "2026-10-03", "O(c=0.6) @Figma: Figma is slow on large boards.")
    report = run(repo, commit=True)
    doc = opinions(repo)
    assert len(doc.opinions) == 2  # never merged on a guess
    first = doc.opinions[0].opinion_id
    [second] = [o for o in report.opinions if o.statement.endswith("slow on large boards")]
    assert second.possibly == (first,)
    assert f"possibly the same as {first}: merge by editing the file" in second.reason
    assert f"possibly the same as {first}" in "\n".join(report.lines())
    assert report.to_json()["opinions"][1]["possibly_same_as"] == [first]


def test_same_as_in_the_file_merges_one_opinion_into_another(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    add_day(repo, "2026-10-01", "O(c=0.8) @Anna: Anna is a great mentor.")
    add_day(repo, "2026-10-03", "O(c=0.9) @Anna: Anna coaches the new hires wonderfully.")
    run(repo, commit=True)
    doc = opinions(repo)
    assert len(doc.opinions) == 2  # no shared words: the rule cannot tell
    mentor, coach = doc.opinions
    path = repo / "bank/opinions.md"
    text = path.read_text()
    marker = f"<!-- opinion: {coach.opinion_id} -->\n"
    path.write_text(text.replace(marker, f"{marker}- same as: {mentor.opinion_id}\n"))
    commit_all(repo, "opinions: the coaching one is the mentoring one", "2026-10-04T09:00:00Z")
    report = run(repo, commit=True)
    merged = opinions(repo).section(mentor.opinion_id)
    assert merged is not None
    assert [e.fact_id for e in merged.opinion.evidence] == [
        mentor.evidence[0].fact_id, coach.evidence[0].fact_id]
    assert merged.opinion.confidence == 0.83  # 0.8 + 0.3 × (0.9 − 0.8)
    [change] = report.opinions
    assert change.merged_from == (coach.opinion_id,)
    assert f"merged by hand from {coach.opinion_id}" in change.reason
    kept = opinions(repo).section(coach.opinion_id)
    assert kept is not None and kept.same_as == mentor.opinion_id  # reflect keeps the line
    # a later entry that matches the merged opinion's words goes to the one it was merged into
    add_day(repo, "2026-10-06", "O(c=0.9) @Anna: Anna coaches the new hires wonderfully, "
                                "again.")
    run(repo, commit=True)
    merged = opinions(repo).section(mentor.opinion_id)
    assert merged is not None and len(merged.opinion.evidence) == 3
    assert not run(repo).changed


def test_same_as_naming_no_opinion_is_a_located_warning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    add_day(repo, "2026-10-01", "O(c=0.8) @Anna: Anna is a great mentor.")
    run(repo, commit=True)
    path = repo / "bank/opinions.md"
    lines = path.read_text().splitlines(keepends=True)
    at = next(n for n, ln in enumerate(lines) if ln.startswith("<!-- opinion:")) + 1
    lines.insert(at, "- same as: o-0000dead\n")
    path.write_text("".join(lines))
    commit_all(repo, "a typo", "2026-10-02T09:00:00Z")
    add_day(repo, "2026-10-03", "O(c=0.9) @Anna: Anna is still a great mentor.")
    report = run(repo)
    [warn] = [w for w in report.warnings if w.code == "opinion-same-as"]
    assert (warn.path, warn.line) == ("bank/opinions.md", at + 1)
    assert "names no opinion of this file" in warn.message
    lines[at] = "- same as: nonsense\n"
    path.write_text("".join(lines))
    commit_all(repo, "another typo", "2026-10-04T09:00:00Z")
    assert gitmem("-C", str(repo), "index")[0] == 0
    _, out, err = gitmem("-C", str(repo), "status")
    assert f"bank/opinions.md#L{at + 1}" in out + err and "names no opinion id" in out + err


def test_same_as_under_a_note_entry_picks_the_opinion_or_opens_its_own(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    add_day(repo, "2026-10-01", "O(c=0.8) @Anna: Anna is a great mentor.")
    run(repo, commit=True)
    [mentor] = opinions(repo).opinions
    add_day(repo, "2026-10-03",
            f"O(c=0.9) @Anna: Anna coaches the new hires wonderfully.\n  - same as: "
            f"{mentor.opinion_id}",
            "O(c=0.6) @Anna: Anna is a great mentor for seniors too.\n  - same as: new")
    report = run(repo, commit=True)
    doc = opinions(repo)
    assert [op.statement for op in doc.opinions] == [
        "@Anna is a great mentor", "@Anna is a great mentor for seniors too"]
    assert doc.opinions[0].evidence[1].words == "Anna coaches the new hires wonderfully"
    assert "same as" not in (repo / "bank/opinions.md").read_text()
    assert len(report.opinions) == 2


def test_evidence_lines_with_words_parse_and_old_ones_still_do() -> None:
    doc = read_opinions(b"# Opinions\n\n## @X is good\n<!-- opinion: o-1234abcd -->\n"
                        b"- confidence: 0.50\n- evidence:\n"
                        b"  - for f-000000000001 memory/2026-10-01.md#L4 (c=0.50)\n"
                        b"  - against f-000000000002 memory/2026-10-02.md#L4 (c=0.40) \xe2\x80\x94 "
                        b"X is not good (at all)\n"
                        b"  - for f-000000000003 memory/2026-10-03.md#L4 \xe2\x80\x94 no c here\n")
    [section] = doc.sections
    assert not section.malformed
    assert [(e.stance, e.confidence, e.words) for e in section.opinion.evidence] == [
        ("for", 0.5, ""), ("against", 0.4, "X is not good (at all)"), ("for", None, "no c here")]


def test_a_sixty_day_thread_stays_one_opinion(tmp_path: Path) -> None:
    """The issue's five weeks: a belief reworded every few days climbs as one opinion."""
    repo = make_repo(tmp_path)
    said = ("Tailscale is reliable enough for the office VPN.", "Tailscale has been reliable "
            "this week.", "Tailscale keeps working fine.", "Tailscale is reliable; zero drops.",
            "Tailscale still fine after the switch swap.")
    first = date(2026, 10, 1)
    for n, text in enumerate(said):
        add_day(repo, (first + timedelta(days=3 * n)).isoformat(),
                f"O(c={(0.6, 0.7, 0.8, 0.85, 0.9)[n]}) @Tailscale: {text}")
    run(repo, commit=True)
    [op] = opinions(repo).opinions
    assert op.statement == "@Tailscale is reliable enough for the office VPN"
    assert len(op.evidence) == 5 and op.confidence is not None and op.confidence > 0.6


def test_review_shows_evidence_against_and_a_merge_by_hand(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    add_day(repo, "2026-10-01", "O(c=0.8) @Anna: Anna is a great mentor.")
    add_day(repo, "2026-10-02", "O(c=0.9) @Anna: Anna coaches the new hires wonderfully.")
    run(repo, commit=True)
    base = git_head(repo)
    add_day(repo, "2026-10-03", "O(c=0.8) @Anna: Anna is not a great mentor any more.")
    run(repo, commit=True)
    code, out, err = gitmem("-C", str(repo), "review", f"{base}..HEAD", "--format", "json")
    assert code == 0, err
    [changed] = json.loads(out)["opinions"]["changed"]
    assert [e["stance"] for e in changed["evidence_added"]] == ["against"]
    mentor, coach = opinions(repo).opinions
    path = repo / "bank/opinions.md"
    marker = f"<!-- opinion: {coach.opinion_id} -->\n"
    path.write_text(path.read_text().replace(marker, f"{marker}- same as: {mentor.opinion_id}\n"))
    commit_all(repo, "opinions: one belief", "2026-10-04T09:00:00Z")
    base = git_head(repo, "HEAD~1")
    code, md, err = gitmem("-C", str(repo), "review", f"{base}..HEAD")
    assert code == 0, err
    assert f"merged by hand into `{mentor.opinion_id}`" in md
    assert f"a person marked it the same as `{mentor.opinion_id}`" in md
    code, out, _ = gitmem("-C", str(repo), "review", f"{base}..HEAD", "--format", "json")
    [hand] = json.loads(out)["opinions"]["changed"]
    assert (hand["opinion_id"], hand["same_as"]) == (coach.opinion_id, mentor.opinion_id)


def git_head(repo: Path, rev: str = "HEAD") -> str:
    from testing.repo import git

    return git(repo, "rev-parse", rev).strip()


def test_the_merge_driver_keeps_a_same_as_line_from_either_side() -> None:
    from gitmem.merge.driver import merge_text

    def section(c: str, *extra: str) -> str:
        return "\n".join(["## @Anna coaches the new hires", "<!-- opinion: o-22222222 -->",
                          f"- confidence: {c}", "- updated: 2026-10-02", *extra, "- evidence:",
                          "  - for f-bbbbbbbbbbbb memory/2026-10-02.md#L4 (c=0.90) — Anna coaches",
                          ]) + "\n\n"

    base = "# Opinions\n\n" + section("0.90")
    ours = "# Opinions\n\n" + section("0.90", "- same as: o-11111111")  # a person's merge
    theirs = "# Opinions\n\n" + section("0.92").replace(
        "— Anna coaches\n", "— Anna coaches\n  - for f-cccccccccccc memory/2026-10-03.md#L4 "
        "(c=0.95) — Anna coaches again\n")  # the other machine's reflect
    for a, b in ((ours, theirs), (theirs, ours)):
        merged, conflicts, stale = merge_text(base, a, b, "bank/opinions.md")
        assert (conflicts, stale) == (0, 1)
        assert "- same as: o-11111111\n" in merged and "f-cccccccccccc" in merged
        doc = read_opinions(merged.encode())
        assert doc.sections[0].same_as == "o-11111111" and not doc.sections[0].malformed


def test_a_merge_of_two_machines_recomputes_evidence_against_as_against() -> None:
    """The merge driver's stale line: reflect recomputes from the ancestor with both sides'
    evidence, each with the stance its line states."""
    from gitmem.index.reflect_queries import FactRow
    from gitmem.parse.stale import stale_opinion_line
    from gitmem.reflect.opinion_update import plan_opinions

    def row(fid: str, day: str, c: float) -> FactRow:
        return FactRow(1, fid, "opinion", "Caddy is reliable.", f"memory/{day}.md", 4, 4, c,
                       f"{day}T21:00:00+00:00", None, None, (("caddy", "Caddy", "subject"),),
                       day)

    text = "\n".join([
        "# Opinions", "", "## @Caddy is reliable", "<!-- opinion: o-1234abcd -->",
        stale_opinion_line(0.7, ["f-aaaaaaaaaaaa", "f-bbbbbbbbbbbb"]),
        "- confidence: 0.75", "- updated: 2026-10-03", "- evidence:",
        "  - for f-aaaaaaaaaaaa memory/2026-10-02.md#L4 (c=0.90)",
        "  - against f-bbbbbbbbbbbb memory/2026-10-03.md#L4 (c=0.90)", ""])
    doc = read_opinions(text.encode())
    rows = {"f-aaaaaaaaaaaa": row("f-aaaaaaaaaaaa", "2026-10-02", 0.9),
            "f-bbbbbbbbbbbb": row("f-bbbbbbbbbbbb", "2026-10-03", 0.9)}
    plan = plan_opinions(doc, [], lambda key: key, merged_evidence=rows)
    [edit] = plan.edits
    # 0.70 -> 0.76 (for, c=0.9) -> 0.56 (against: observes 0.1), capped at 0.15 a day: 0.61
    assert edit.confidence == 0.61
    [change] = plan.changes
    assert [e.stance for e in change.evidence] == ["for", "against"]
