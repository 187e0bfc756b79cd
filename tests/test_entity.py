"""``gitmem entity`` and knowledge updates (docs/memory-format.md; issue 8) on real git repositories with
dated commits: the page's human text, facts by kind with the facts they replaced, opinions,
mentions, timeline, related entities, slugs and aliases, --as-of by record time; and recall's
``superseded_by``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.errors import GitmemError
from gitmem.index.session import Session
from gitmem.recall.answer import RecallRequest, answer
from gitmem.recall.entity import EntityView, entity_view, list_entities
from gitmem.workspace import open_workspace
from testing.cli import gitmem, gitmem_json, recall_json
from testing.repo import commit_all, git, make_repo, write

NOW = datetime(2025, 12, 10, tzinfo=UTC)

CASTLE_PAGE = """---
title: The Castle
aliases: [castle, Schloss]
---
# The Castle

The home server in the attic. Written by hand.

<!-- gitmem:begin digest -->
- 3 facts (generated)
<!-- gitmem:end -->

Keep the fan clean.
"""

OPINIONS_V1 = """# Opinions

## @Peter prefers concise WhatsApp replies
<!-- opinion: o-3fa9c2e1 -->
- confidence: 0.90
- updated: 2025-11-20
- evidence:
  - for f-3fa9c2e11aa0 memory/2025-11-20.md#L5 (c=0.90)
"""


def daily(day: str, *entries: str) -> str:
    return (f"# {day}\n\n## Retain\n" + "".join(f"- {e}\n" for e in entries)
            + "\n## Notes\nTalked with @Andy about the week.\n")


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    """Four dated commits: the gateway host moves from the NUC to The Castle, Peter travels,
    an opinion is reinforced, the entity page and the opinions file appear and change."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-20.md", daily(
        "2025-11-20",
        "W @Peter: The gateway host for warelay is the old NUC.",
        "O(c=0.9) @Peter: Prefers concise WhatsApp replies.",
        "W @ピーター: ゲートウェイのホストは古いNUC。",
        "W @Пётр: Живёт в Москве.",
    ))
    write(repo, "bank/opinions.md", OPINIONS_V1)
    commit_all(repo, "day 1", "2025-11-20T21:00:00+00:00")
    write(repo, "memory/2025-11-27.md", daily(
        "2025-11-27",
        "W @Peter @The-Castle: Moved the gateway host from the NUC to The Castle.",
        "W @Peter: Currently in Marrakech for Andy's birthday.",
        "B @Peter: Fixed the Baileys WS crash in warelay.",
        "W @ピーター @キャッスル: ゲートウェイのホストをNUCからキャッスルに移した。",
        "W @Пётр: Теперь живёт в Берлине.",
    ))
    write(repo, "bank/entities/The Castle.md", CASTLE_PAGE)
    commit_all(repo, "day 2", "2025-11-27T21:00:00+00:00")
    write(repo, "memory/2025-12-02.md", daily(
        "2025-12-02",
        "O(c=0.8) @Peter: Likes short replies on WhatsApp.",
        "B @Peter: Fixed the Baileys WS crash in warelay again.",
    ))
    write(repo, "bank/opinions.md", OPINIONS_V1.replace("0.90\n- updated: 2025-11-20",
                                                        "0.75\n- updated: 2025-12-02"))
    commit_all(repo, "day 3", "2025-12-02T21:00:00+00:00")
    return repo


def view(repo: Path, name: str, **kw: object) -> EntityView:
    ws, cfg = open_workspace(repo)
    return entity_view(Session(ws, cfg), name, now=NOW, **kw)  # type: ignore[arg-type]


def test_facts_by_kind_newest_first_with_the_facts_they_replaced(memory: Path) -> None:
    v = view(memory, "Peter")
    world = v.facts["world"]
    assert [f.content for f in world] == [
        "Currently in Marrakech for Andy's birthday.",  # same day; line order, newest first
        "Moved the gateway host from the NUC to The Castle.",
    ]
    moved = world[1]
    assert moved.source == "memory/2025-11-27.md#L4"
    [old] = moved.history
    assert (old.content, old.source, old.until) == (
        "The gateway host for warelay is the old NUC.", "memory/2025-11-20.md#L4",
        "2025-11-27")
    assert world[0].history == ()  # about Peter too, but another claim: never merged
    # Experience entries are events: the second fix does not replace the first.
    assert [f.content for f in v.facts["experience"]] == [
        "Fixed the Baileys WS crash in warelay again.", "Fixed the Baileys WS crash in warelay."]
    # O entries are evidence of opinions (bank/opinions.md evolves them, docs/opinions-file.md):
    # the rule of knowledge updates replaces states, not judgements
    assert [f.content for f in v.facts["opinion"]] == [
        "Likes short replies on WhatsApp.", "Prefers concise WhatsApp replies."]
    # 7 facts, and the text chunks of the 3 daily notes that mention Peter; bank/opinions.md
    # restates O entries and counts for nothing (generated text is not a source).
    assert v.counts == {"mentions": 10, "facts": 7, "world": 3, "experience": 2, "opinion": 2,
                        "observation": 0}


def test_mentions_timeline_related_and_opinions(memory: Path) -> None:
    v = view(memory, "@peter")
    assert v.name == "Peter"
    assert v.first_mention is not None and v.first_mention.date == "2025-11-20"
    assert v.first_mention.source.startswith("memory/2025-11-20.md#L")
    assert v.last_mention is not None and v.last_mention.date == "2025-12-02"
    assert v.timeline == [{"period": "2025-11", "mentions": 7, "facts": 5},
                          {"period": "2025-12", "mentions": 3, "facts": 2}]
    # Named with Peter: The Castle, in one fact. The others only share his notes (issue 18).
    assert v.related == [{"entity": "The Castle", "key": "the-castle", "mentions": 1}]
    [op] = v.opinions
    assert (op.confidence, op.updated, op.source) == (0.75, "2025-12-02", "bank/opinions.md#L3-L8")
    assert op.evidence[0].source == "memory/2025-11-20.md#L5"


def test_slugs_aliases_and_the_page_human_text(memory: Path) -> None:
    for name in ("@The-Castle", "the_castle", "The Castle", "THE castle", "castle", "@Schloss"):
        v = view(memory, name)
        assert (v.key, v.name) == ("the-castle", "The Castle"), name
    v = view(memory, "castle")
    assert v.aliases == ["castle", "Schloss"]  # as the page's front matter writes them
    assert v.page is not None
    assert v.page.text == ("# The Castle\n\nThe home server in the attic. Written by hand.\n\n"
                           "Keep the fan clean.")
    assert "generated" not in v.page.text and "aliases" not in v.page.text
    assert v.page.source == "bank/entities/The Castle.md#L5-L13"
    # An uncommitted edit of the page is what recall sees (the uncommitted layer).
    write(memory, "bank/entities/The Castle.md", CASTLE_PAGE.replace("attic", "cellar"))
    page = view(memory, "castle").page
    assert page is not None and "cellar" in page.text
    assert [f.content for f in v.facts["world"]] == ["Moved the gateway host from the NUC to The Castle."]


def test_non_latin_entities(memory: Path) -> None:
    ja = view(memory, "@ピーター")
    [moved] = ja.facts["world"]
    assert moved.content == "ゲートウェイのホストをNUCからキャッスルに移した。"
    assert [h.content for h in moved.history] == ["ゲートウェイのホストは古いNUC。"]
    ru = view(memory, "Пётр")
    [lives] = ru.facts["world"]
    assert lives.content == "Теперь живёт в Берлине."
    assert lives.history[0].source == "memory/2025-11-20.md#L7"


def test_as_of_answers_from_the_memory_as_it_stood(memory: Path) -> None:
    v = view(memory, "Peter", as_of="2025-11-25")
    assert v.as_of == "2025-11-25T23:59:59+00:00"
    assert [f.content for f in v.facts["world"]] == [
        "The gateway host for warelay is the old NUC."]
    assert v.facts["world"][0].history == ()
    [op] = v.opinions
    assert op.confidence == 0.9  # bank/opinions.md as it was then
    assert op.source == "bank/opinions.md#L3-L8@" + op.source.rsplit("@", 1)[1]
    with pytest.raises(GitmemError, match="no entity 'castle'"):
        view(memory, "castle", as_of="2025-11-25")  # its page came later
    with pytest.raises(GitmemError, match="no commit at or before"):
        view(memory, "Peter", as_of="2024")


def test_as_of_takes_a_commit_on_entity_and_opinions(memory: Path) -> None:
    """docs/memory-format.md: --as-of takes any revision git understands on every command that has it; an
    unknown one is a usage error (exit 2)."""
    day1 = git(memory, "rev-parse", "--short", "HEAD~2").strip()
    for as_of in ("HEAD~2", day1):
        data = gitmem_json("-C", str(memory), "entity", "Peter", "--as-of", as_of, "--json")
        assert [f["content"] for f in data["facts"]["world"]] == [
            "The gateway host for warelay is the old NUC."], as_of
        assert data["as_of"] == "2025-11-20T21:00:00+00:00"
        listed = gitmem_json("-C", str(memory), "opinions", "--as-of", as_of, "--json")
        assert [o["confidence"] for o in listed["opinions"]] == [0.9], as_of
        names = gitmem_json("-C", str(memory), "entity", "--as-of", as_of, "--json")
        assert "The Castle" not in [e["entity"] for e in names["entities"]]  # a later page
    day2 = gitmem_json("-C", str(memory), "entity", "Peter", "--as-of", "HEAD~1", "--json")
    assert "Moved the gateway host from the NUC to The Castle." in [
        f["content"] for f in day2["facts"]["world"]]
    for command in (("entity", "Peter"), ("entity",), ("opinions",)):
        code, out, err = gitmem("-C", str(memory), *command, "--as-of", "no-such-rev")
        assert code == 2 and out == "", (command, err)
        assert "invalid --as-of 'no-such-rev'" in err and "HEAD~2" in err


def test_history_citations_of_edited_facts(memory: Path) -> None:
    text = (memory / "memory/2025-11-27.md").read_text(encoding="utf-8")
    write(memory, "memory/2025-11-27.md",
          text.replace("Currently in Marrakech", "Currently in Marrakesh"))
    commit_all(memory, "typo", "2025-12-05T10:00:00+00:00")
    before = view(memory, "Peter", as_of="2025-12-03")
    cited = [f.source for f in before.facts["world"]]
    assert any(s.startswith("memory/2025-11-27.md#L5@") for s in cited), cited
    now = view(memory, "Peter")
    assert "memory/2025-11-27.md#L5" in [f.source for f in now.facts["world"]]


def test_unknown_entity_lists_the_closest(memory: Path) -> None:
    with pytest.raises(GitmemError) as err:
        view(memory, "Petr")
    assert "no entity 'Petr'" in str(err.value) and "Peter" in str(err.value)
    code, out, stderr = gitmem("-C", str(memory), "entity", "Castel")
    assert code == 1 and out == ""
    assert "did you mean" in stderr and "The Castle" in stderr


def test_entity_list(memory: Path) -> None:
    ws, cfg = open_workspace(memory)
    listing = list_entities(Session(ws, cfg), now=NOW)
    by_key = {e.key: e for e in listing.entities}
    assert listing.entities[0].key == "peter"
    assert (by_key["peter"].mentions, by_key["peter"].facts) == (10, 7)
    assert by_key["the-castle"].page == "bank/entities/The Castle.md"
    assert by_key["the-castle"].aliases == ("castle", "Schloss")
    assert "castle" not in by_key  # an alias is not an entity of its own
    data = gitmem_json("-C", str(memory), "entity", "--json")
    assert data["entities"][0]["entity"] == "Peter"
    code, out, _ = gitmem("-C", str(memory), "entity")
    assert code == 0 and "Peter" in out and "bank/entities/The Castle.md" in out
    early = list_entities(Session(ws, cfg), as_of="2025-11-21", now=NOW)
    assert "the-castle" not in {e.key for e in early.entities}


def test_entity_cli_text_and_json(memory: Path) -> None:
    code, out, _ = gitmem("-C", str(memory), "entity", "@the_castle")
    assert code == 0
    assert "The home server in the attic." in out and "generated" not in out
    assert "Moved the gateway host from the NUC to The Castle." in out
    assert "memory/2025-11-27.md#L4" in out
    code, out, _ = gitmem("-C", str(memory), "entity", "Peter")
    assert "was: The gateway host for warelay is the old NUC.  (until 2025-11-27)" in out
    data = gitmem_json("-C", str(memory), "entity", "Peter", "--json")
    assert set(data) >= {"entity", "key", "aliases", "as_of", "page", "counts", "facts",
                         "opinions", "first_mention", "last_mention", "timeline", "related"}
    moved = data["facts"]["world"][1]
    assert moved["history"][0]["until"] == "2025-11-27"
    json.dumps(data)  # plain JSON all the way down


# -- recall: superseded_by ----------------------------------------------------------------------


def test_recall_marks_a_replaced_fact_and_ranks_the_current_one_above(memory: Path) -> None:
    data = recall_json(memory, "NUC gateway host")
    results = data["results"]
    sources = [r["source"] for r in results]
    old = sources.index("memory/2025-11-20.md#L4")
    new = sources.index("memory/2025-11-27.md#L4")
    assert new < old  # the current fact ranks above the one it replaced
    assert results[old]["superseded_by"] == "memory/2025-11-27.md#L4"
    assert results[new]["superseded_by"] is None
    code, out, _ = gitmem("-C", str(memory), "recall", "NUC")
    assert code == 0
    assert "replaced by memory/2025-11-27.md#L4 (2025-11-27; value: replaced nuc)" in out


def test_recall_brings_the_replacement_when_the_search_missed_it(memory: Path) -> None:
    """"NUC" is not in the newer fact: the search finds only the old one, and the fact that
    replaced it is placed right above it."""
    ws, cfg = open_workspace(memory)
    res = answer(Session(ws, cfg), RecallRequest("old NUC", kinds=("W",), entities=("Peter",)), now=NOW)
    sources = [r.source for r in res.results]
    assert sources[:2] == ["memory/2025-11-27.md#L4", "memory/2025-11-20.md#L4"]
    assert res.results[1].superseded_by == "memory/2025-11-27.md#L4"


def test_recall_as_of_before_the_update_is_not_superseded(memory: Path) -> None:
    data = recall_json(memory, "NUC", "--as-of", "2025-11-25")
    [hit] = [r for r in data["results"] if r["source"] == "memory/2025-11-20.md#L4"]
    assert hit["superseded_by"] is None


def test_unrelated_facts_about_the_same_entity_are_not_superseded(memory: Path) -> None:
    data = recall_json(memory, "Marrakech birthday")
    [hit] = [r for r in data["results"] if "Marrakech" in r["content"]]
    assert hit["superseded_by"] is None
    fixes = recall_json(memory, "Baileys crash")["results"]
    assert all(r["superseded_by"] is None for r in fixes)  # events are not updates


def test_templated_observations_merge_by_topic_not_by_frame(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    topics = ["sqlite WAL mode", "event sourcing", "BM25 tuning", "zone 2 training",
              "sourdough hydration", "Rust async", "sqlite WAL mode"]
    for n, topic in enumerate(topics):
        day = f"2025-11-{10 + n:02d}"
        write(repo, f"memory/{day}.md", daily(day, f"S @Mara: Mentioned {topic} {n} times this month."))
        commit_all(repo, day, f"{day}T21:00:00+00:00")
    v = view(repo, "Mara")
    shown = [(f.content, [h.content for h in f.history]) for f in v.facts["observation"]]
    # a shared frame ("Mentioned … times this month") makes no two of them one attribute, and
    # a count that no attribute family knows is left current (precision first, issue 38)
    assert shown[0] == ("Mentioned sqlite WAL mode 6 times this month.", [])
    assert all(history == [] for _, history in shown)
    assert len(shown) == 7


def test_a_note_holding_a_replaced_fact_says_so(tmp_path: Path) -> None:
    """Date words can lift a Retain section's text block above the facts in it; the block
    then stands for the fact (a near-duplicate), and must not show the old fact as current."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-03-06.md", daily(
        "2025-03-06",
        "W @warelay: The gateway host for warelay is the old NUC under Peter's desk.",
        "B @warelay: Ran the database migrations for warelay v2.",
        "W @warelay: Release planned on 2025-03-20.",
    ))
    commit_all(repo, "day 1", "2025-03-06T21:00:00+00:00")
    write(repo, "memory/2025-03-13.md", daily(
        "2025-03-13",
        "W @warelay @The-Castle: Moved the gateway host from the NUC to The Castle."))
    commit_all(repo, "day 2", "2025-03-13T21:00:00+00:00")
    results = recall_json(repo, "gateway host in March 2025")["results"]
    stale = [r for r in results if "old NUC" in r["content"]]
    assert stale, results
    assert all(r["superseded_by"] == "memory/2025-03-13.md#L4" for r in stale), stale
    sources = [r["source"] for r in results]
    assert sources.index("memory/2025-03-13.md#L4") < sources.index(stale[0]["source"])
    code, out, _ = gitmem("-C", str(repo), "recall", "gateway host in March 2025")
    assert code == 0 and "replaced by memory/2025-03-13.md#L4 (2025-03-13;" in out, out


def test_a_note_result_under_an_entity_filter_brings_no_other_entitys_facts(
        tmp_path: Path) -> None:
    """The replacement of a fact inside a text result is brought in only when that fact passes
    the answer's entity filter (a replacement keeps its entities, so it passes too)."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-03-06.md", daily(
        "2025-03-06",
        "W @warelay: The gateway host for warelay is the old NUC under Peter's desk.",
        "B @Peter: Ran the database migrations for warelay v2.",
        "W @warelay: Release planned on 2025-03-20.",
    ))
    commit_all(repo, "day 1", "2025-03-06T21:00:00+00:00")
    write(repo, "memory/2025-03-13.md", daily(
        "2025-03-13",
        "W @warelay @The-Castle: Moved the gateway host from the NUC to The Castle."))
    commit_all(repo, "day 2", "2025-03-13T21:00:00+00:00")
    results = recall_json(repo, "gateway host in March 2025", "--entity", "Peter")["results"]
    assert results, results
    assert all("Peter" in r["entities"] for r in results), results
