"""OpenClaw's inline annotations (issue 42): ``<!-- importance: N -->`` scales an entry's score
by OpenClaw's own factor (memory-core ``importanceMultiplier``: 0.75 + 0.05 N, none = 1), and
``<!-- trigger: ... -->`` phrases are indexed for OpenClaw's trigger recall (the plugin side is
tests/test_openclaw.py's node tests, which run OpenClaw's own selection on them)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.parse.annotations import line_notes, without_notes
from gitmem.parse.retain import EntryLines, parse_entry
from gitmem.recall.ranking import importance_factor as factor
from testing.cli import gitmem, gitmem_json, recall_json
from testing.repo import commit_all, git, make_repo, write

# Two entries about as relevant to QUERY (each holds one of its words, as long as the other),
# in two undated notes (no decay, no merged neighbours).
ENTRIES = {"Ann": "- W @Ann: Likes green tea with honey every morning.",
           "Bob": "- W @Bob: Collects old maps of the northern coast."}
QUERY = "honey maps"


def ranked(tmp_path: Path, notes: dict[str, int]) -> list[tuple[str, float]]:
    """(entity, score) of the results when the entries carry these importances."""
    repo = make_repo(tmp_path / f"r{len(list(tmp_path.iterdir()))}")
    for name, entry in ENTRIES.items():
        level = f" <!-- importance: {notes[name]} -->" if name in notes else ""
        write(repo, f"memory/{name}.md", f"# {name}\n\n## Retain\n{entry}{level}\n")
    commit_all(repo, "notes")
    return [(r["entities"][0], r["score"]) for r in recall_json(repo, QUERY)["results"]]


def test_importance_lifts_an_entry_above_an_equal_one(tmp_path: Path) -> None:
    (top, a), (low, b) = ranked(tmp_path, {})
    assert b > 0.95 * a  # about equal without annotations
    assert ranked(tmp_path, {low: 9})[0][0] == low
    assert ranked(tmp_path, {low: 2, top: 1})[0][0] == low  # 2 lifts it above an equal 1
    # OpenClaw's scale: 5 is neutral, so 2 ranks an entry below an equal one without any
    assert ranked(tmp_path, {top: 2})[0][0] == low
    assert ranked(tmp_path, {top: 5, low: 5})[0][0] == top


def test_importance_on_a_note_line_lifts_its_passage(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    filler = "\n".join(f"Line {n} of the notes about nothing much." for n in range(60))
    write(repo, "MEMORY.md", "# Memory\n\nThe spare key hangs behind the boiler.\n\n" + filler
          + "\n\nThe spare key hangs behind the boiler. <!-- importance: 10 -->\n")
    commit_all(repo, "notes")
    top = recall_json(repo, "spare key boiler")["results"][0]
    assert top["importance"] == 10 and 3 < top["start_line"] <= 66 <= top["end_line"]


def test_annotations_are_read_like_openclaw_and_are_not_the_facts_text() -> None:
    notes = line_notes("- x <!-- trigger: gateway setup; network safety, ports --> "
                       "<!-- importance: 9 -->")
    assert notes is not None and notes.importance == 9
    assert notes.triggers == ("gateway setup", "network safety", "ports")
    assert line_notes("- x <!-- importance: 11 -->") is None  # out of range: ignored
    assert line_notes("- x <!-- importance: 7 --> and more") is None  # not trailing
    assert line_notes("- x <!-- importance: 3 -->").importance == 3  # type: ignore[union-attr]
    assert (factor(None), factor(1), factor(5), factor(10)) == (1.0, 0.8, 1.0, 1.25)
    assert without_notes("keep <!-- trigger: a --> <!-- importance: 2 -->") == "keep"
    plain, _ = parse_entry(EntryLines(4, ("- W @P: Same text.",)), "MEMORY.md", None)
    noted, _ = parse_entry(EntryLines(4, ("- W @P: Same text. <!-- importance: 8 -->",)),
                           "MEMORY.md", None)
    assert plain is not None and noted is not None
    assert (noted.text, noted.fact_id, noted.importance) == ("Same text.", plain.fact_id, 8)


@pytest.fixture
def repo(memory_repo: Path) -> Path:
    return memory_repo


def test_retain_importance_writes_the_annotation(repo: Path) -> None:
    out = gitmem_json("-C", str(repo), "retain", "W @Peter: The NAS lives in the attic.",
                      "--importance", "8", "--json")
    text = (repo / out["path"]).read_text(encoding="utf-8")
    assert "- W @Peter: The NAS lives in the attic. <!-- importance: 8 -->\n" in text
    assert out["text"] == "The NAS lives in the attic."
    found = recall_json(repo, "NAS attic")["results"][0]
    assert (found["importance"], found["fact_id"]) == (8, out["fact_id"])
    code, _, err = gitmem("-C", str(repo), "retain", "W: x", "--importance", "11")
    assert code == 2 and "--importance" in err


def test_memory_retain_sets_importance(repo: Path) -> None:
    import asyncio

    from testing.mcp import json_of, mcp_session

    async def scenario() -> dict[str, object]:
        async with mcp_session(repo) as session:
            return json_of(await session.call_tool(
                "memory_retain", {"entry": "W @Peter: The router reboots at 4am.",
                                  "importance": 3}))

    out = asyncio.run(scenario())
    assert "<!-- importance: 3 -->" in (repo / str(out["path"])).read_text(encoding="utf-8")


def test_triggers_lists_curated_entries_only(repo: Path) -> None:
    write(repo, "MEMORY.md", "# Memory\n\n- Keep the gateway on loopback. <!-- trigger: "
          "gateway setup, network safety --> <!-- importance: 9 -->\n\n## Retain\n"
          "- W @Peter: Backups run at 02:00. <!-- trigger: backup window -->\n")
    write(repo, "memory/2025-11-27.md", "# Day\n\n- Printer in the hall. <!-- trigger: printer "
          "-->\n")
    commit_all(repo, "notes")
    found = gitmem_json("-C", str(repo), "triggers", "--json")["entries"]
    assert [(e["source"], e["triggers"], e["importance"], e["text"]) for e in found] == [
        ("MEMORY.md#L3", ["gateway setup", "network safety"], 9,
         "- Keep the gateway on loopback."),
        ("MEMORY.md#L6", ["backup window"], None, "Backups run at 02:00."),
    ]


def test_an_index_holding_annotations_as_text_is_rebuilt(repo: Path) -> None:
    """An index made before annotations were read (schema 10) holds them in its facts' text:
    m011 rebuilds it rather than keep fact ids that differ from a rebuild's."""
    from gitmem.index.store import open_store
    from gitmem.workspace import open_workspace

    write(repo, "memory/2025-11-27.md", "# D\n\n## Retain\n- W @P: Noted. <!-- importance: 9 "
          "-->\n")
    commit_all(repo, "day")
    assert gitmem("-C", str(repo), "index")[0] == 0
    ws, _ = open_workspace(repo)
    store = open_store(ws.index_path)
    with store.conn:  # as schema 10 left it: the comment in the text, no annotations table
        store.conn.execute("UPDATE items SET content = content || ' <!-- importance: 9 -->' "
                           "WHERE type = 'fact'")
        store.conn.execute("DROP TABLE item_annotations")
        store.conn.execute("DELETE FROM migrations WHERE version = 11")
    store.close()
    found = recall_json(repo, "Noted")["results"][0]
    assert (found["content"], found["importance"]) == ("Noted.", 9)
    assert git(repo, "status", "--porcelain").strip() == ""


def test_trigger_phrases_are_searchable(repo: Path) -> None:
    write(repo, "memory/2025-11-27.md", "# D\n\n## Retain\n- W @Peter: Keep it on loopback. "
          "<!-- trigger: gateway setup -->\n")
    commit_all(repo, "day")
    found = recall_json(repo, "gateway setup")["results"]
    assert found and found[0]["triggers"] == ["gateway setup"]
    assert not found[0]["weak"]  # the phrase it was found by is its own
    assert "Keep it on loopback." in found[0]["snippet"]
    fact = recall_json(repo, "gateway setup", "--kind", "W")["results"][0]
    assert (fact["content"], fact["triggers"]) == ("Keep it on loopback.", ["gateway setup"])
