"""The replacement graph (issue 38, docs/knowledge-updates.md): decided once, when statements are indexed, equal
to a rebuild's, read alike by recall, entity and review; precision first (a move does not end
one's duties, a group is not its member, a birthday is never replaced by news), every kind can
state a change, and ``- keeps:`` removes a mark. Real git repositories, real indexes."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from testing.cli import gitmem, gitmem_json, recall_json
from testing.index import dump, read_index
from testing.repo import commit_all, git, make_repo, write
from testing.rewrites import rebuilt_dump


def _day(day: str, *entries: str, notes: str = "") -> str:
    body = "\n".join(f"- {e}" for e in entries)
    log = f"## Log\n\n{notes}\n\n" if notes else ""
    return f"# {day}\n\n{log}## Retain\n{body}\n"


DAYS = [
    ("2026-09-01", ("W @Ivan: Ivan lives in Samara.", "W @Ivan: Ivan runs the on-call rota.",
                    "W @Sara: Sara lives in Bergen, near the fish market.",
                    "W @Sara: Sara's birthday is 3 May.",
                    "W @nas: The NAS is a Synology DS920 in the hall cupboard."), ""),
    ("2026-09-20", ("W @Ivan: Ivan moved to Kazan last week.",
                    "W @Sara: Sara's team moves to the Harbour office in March."),
     "- Maria: we live in Chicago, two blocks from the lake."),
    ("2026-10-05", ("B @nas: Replaced the Synology with a TrueNAS box.",
                    "W @Sara: Sara will plan a party for her birthday."),
     "- Maria: we moved to Denver last month."),
]


@pytest.fixture
def notes(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    for day, entries, log in DAYS:
        write(repo, f"memory/{day}.md", _day(day, *entries, notes=log))
        commit_all(repo, day, f"{day}T20:00:00+00:00")
    return repo


def _shown(repo: Path, question: str, *extra: str) -> dict[str, dict[str, Any]]:
    return {r["content"]: r for r in recall_json(repo, question, *extra)["results"]}


def test_a_move_replaces_where_someone_lives_and_nothing_else(notes: Path) -> None:
    shown = _shown(notes, "Ivan")
    assert shown["Ivan lives in Samara."]["superseded_by"] == "memory/2026-09-20.md#L8"
    assert shown["Ivan lives in Samara."]["superseded_attribute"] == "residence"
    assert shown["Ivan runs the on-call rota."]["superseded_by"] is None  # his duties stay
    view = gitmem_json("-C", str(notes), "entity", "Ivan", "--json")
    current = [f["content"] for f in view["facts"]["world"]]
    assert "Ivan runs the on-call rota." in current and "Ivan lives in Samara." not in current
    moved = next(f for f in view["facts"]["world"] if f["content"].startswith("Ivan moved"))
    assert [p["content"] for p in moved["history"]] == ["Ivan lives in Samara."]


def test_a_group_is_not_its_member_and_a_birthday_is_never_replaced(notes: Path) -> None:
    shown = _shown(notes, "Sara")
    assert shown["Sara lives in Bergen, near the fish market."]["superseded_by"] is None
    assert shown["Sara's birthday is 3 May."]["superseded_by"] is None
    view = gitmem_json("-C", str(notes), "entity", "Sara", "--json")
    assert len(view["facts"]["world"]) == 4 and not view["replaced"]


def test_a_change_written_as_experience_replaces_the_world_fact(notes: Path) -> None:
    shown = _shown(notes, "Synology NAS")
    old = shown["The NAS is a Synology DS920 in the hall cupboard."]
    assert old["superseded_by"] == "memory/2026-10-05.md#L8"
    assert old["superseded_reason"] == "replaced synology"
    order = list(shown)
    assert order.index("Replaced the Synology with a TrueNAS box.") < order.index(
        "The NAS is a Synology DS920 in the hall cupboard.")
    view = gitmem_json("-C", str(notes), "entity", "nas", "--json")
    assert "world" not in view["facts"]  # the Synology is history now
    replaced = view["facts"]["experience"][0]["history"]
    assert [p["content"] for p in replaced] == ["The NAS is a Synology DS920 in the hall cupboard."]


def test_a_chat_turn_states_a_change_of_its_speaker(notes: Path) -> None:
    shown = recall_json(notes, "where does Maria live")["results"]
    chicago = next(r for r in shown if "Chicago" in r["content"])
    assert chicago["superseded_by"] == "memory/2026-10-05.md#L5"
    assert shown.index(chicago) > next(i for i, r in enumerate(shown) if "Denver" in r["content"])


def test_text_says_why_a_mark_holds(notes: Path) -> None:
    code, out, _ = gitmem("-C", str(notes), "recall", "Ivan Samara")
    assert code == 0 and "replaced by memory/2026-09-20.md#L8 (2026-09-20; residence: moved" in out


def test_no_answer_changes_with_k(notes: Path) -> None:
    for question in ("Ivan", "Sara", "Synology NAS", "where does Maria live", "birthday"):
        answers = [recall_json(notes, question, "--k", str(k))["results"] for k in range(1, 11)]
        for k, (shorter, longer) in enumerate(itertools.pairwise(answers), 1):
            assert longer[:len(shorter)] == shorter, (question, k)


def test_the_graph_is_a_rebuild_s_after_every_commit_and_rewrite(notes: Path,
                                                                 tmp_path: Path) -> None:
    repo = make_repo(tmp_path, "grown")
    for day, entries, log in DAYS:
        write(repo, f"memory/{day}.md", _day(day, *entries, notes=log))
        commit_all(repo, day, f"{day}T20:00:00+00:00")
        gitmem("-C", str(repo), "index")
        assert dump(repo) == rebuilt_dump(repo, tmp_path / "scratch")
    with read_index(repo) as store:
        assert store.conn.execute("SELECT count(*) FROM edges WHERE strength = 'hard'"
                                  ).fetchone()[0] >= 3
    git(repo, "reset", "--hard", "HEAD~1")
    gitmem("-C", str(repo), "index")
    assert dump(repo) == rebuilt_dump(repo, tmp_path / "scratch")
    shown = _shown(repo, "Synology NAS")
    assert shown["The NAS is a Synology DS920 in the hall cupboard."]["superseded_by"] is None


def test_as_of_applies_the_edges_recorded_by_then(notes: Path) -> None:
    then = _shown(notes, "Ivan", "--as-of", "2026-09-10")
    assert then["Ivan lives in Samara."]["superseded_by"] is None
    now = _shown(notes, "Ivan")
    assert now["Ivan lives in Samara."]["superseded_by"] is not None


def test_keeps_removes_a_mark_and_retain_writes_it(notes: Path) -> None:
    """A person or an agent corrects a wrong mark: ``retain --keeps REF`` writes a nested
    '- keeps:' item, the mark goes, and review shows the item."""
    old = _shown(notes, "Ivan")["Ivan lives in Samara."]
    base = git(notes, "rev-parse", "HEAD").strip()
    out = gitmem_json("-C", str(notes), "retain", "W @Ivan: Ivan moved to Kazan last week.",
                      "--keeps", old["fact_id"], "--json")
    assert out["keeps"] == [old["fact_id"]]
    text = (notes / out["path"]).read_text()
    assert f"  - keeps: {old['fact_id']}" in text
    # the retained entry is a new statement of the same words, today: its keeps holds for it;
    # the older move statement still replaces Samara, so the mark moves to no one else
    review = gitmem_json("-C", str(notes), "review", f"{base}..HEAD", "--format", "json")
    added = review["facts"]["added"]
    assert any(old["fact_id"] in f["keeps"] for f in added)


def test_a_hint_is_shown_and_never_demotes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "memory/2026-09-01.md", _day(
        "2026-09-01", "W @warelay: The gateway host for warelay is the old NUC."))
    commit_all(repo, "nuc", "2026-09-01T20:00:00+00:00")
    write(repo, "memory/2026-09-20.md", _day(
        "2026-09-20", "W @Peter: Moved the gateway host to The Castle."))
    commit_all(repo, "castle", "2026-09-20T20:00:00+00:00")
    shown = recall_json(repo, "gateway host NUC")["results"]
    nuc = next(r for r in shown if "NUC" in r["content"])
    assert nuc["superseded_by"] is None
    assert nuc["newer"] == {"source": "memory/2026-09-20.md#L4", "date": "2026-09-20",
                            "about": None}
    assert shown[0] is nuc  # its place is its own score's
    _, out, _ = gitmem("-C", str(repo), "recall", "gateway host NUC")
    assert "newer: memory/2026-09-20.md#L4 (2026-09-20)" in out


def test_a_new_rule_version_re_derives_the_graph(notes: Path) -> None:
    import apsw

    gitmem("-C", str(notes), "index")
    conn = apsw.Connection(str(notes / ".memory" / "index.sqlite"))
    conn.execute("UPDATE meta SET value = 'an older rule' WHERE key = 'rule_version'")
    conn.execute("DELETE FROM edges")
    conn.close()
    code, _, err = gitmem("-C", str(notes), "index")
    assert code == 0 and "the rule of knowledge updates changed" in err
    assert _shown(notes, "Ivan")["Ivan lives in Samara."]["superseded_by"] is not None


def test_reflect_digests_show_replaced_facts_apart(notes: Path) -> None:
    """Reflect's entity pages read the graph: a replaced fact is 'was … until', never listed
    as a current one; a fact no hard edge reaches stays current (Ivan's duties)."""
    code, _, err = gitmem("-C", str(notes), "reflect", "--since", "2026-08-01", "--commit")
    assert code == 0, err
    page = (notes / "bank" / "entities" / "Ivan.md").read_text()
    current, _, replaced = page.partition("**Replaced**")
    assert "Ivan runs the on-call rota." in current
    assert "Ivan lives in Samara." not in current
    assert ("- was: Ivan lives in Samara. (memory/2026-09-01.md#L4), until 2026-09-20 "
            "(memory/2026-09-20.md#L8)") in replaced
