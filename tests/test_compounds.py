"""Danish compounds in recall (issue 17, prose updates): Danish writes a compound as one word
with its head last, so "bestyrelsesmøderne" shares no word with "Bestyrelsen mødes" and
"kolonihaven" none with "Kolonihavenøglen". A Danish query's compounds are split against the
memory's own words (corpus-based, no dictionary), and its long words also find the compounds
they begin; English queries are searched as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.parse.stemming import compound_candidates, compound_parts, compound_prefix
from gitmem.parse.textfold import build_match
from testing.cli import recall_json
from testing.repo import daily_notes_repo


def test_a_compound_splits_where_the_memory_holds_both_parts() -> None:
    # bestyrelse-s-møderne: the linking -s- is not part of the modifier
    assert compound_parts("bestyrelsesmøderne", {"bestyr", "mod"}) == ["bestyr", "mod"]
    # a known head alone, or a known modifier before a real head (not an ending)
    assert compound_parts("internetudbyder", {"udbyd"}) == ["udbyd"]
    assert compound_parts("avisabonnementet", {"avis"}) == ["avis"]
    # nothing known: no split, whatever the word looks like
    assert compound_parts("bestyrelsesmøderne", set()) == []


def test_words_too_short_stop_words_and_other_scripts_do_not_split() -> None:
    assert compound_candidates("hvornår") == []  # seven letters
    assert compound_candidates("переехали") == []
    # "over" is a preposition, not a modifier: overtaget is no "over" + "taget" compound
    assert all("over" not in modifiers for modifiers, _, _ in compound_candidates("overtaget"))
    assert compound_prefix("hvornår?") is None  # a question word
    assert compound_prefix("nøglen") is None  # its stem is too short to begin compounds
    assert compound_prefix("kolonihaven?") == "kolonihav"


def test_a_word_s_stem_is_searched_as_the_start_of_compounds() -> None:
    match = build_match([["kolonihaven"]], {"kolonihaven": ["kolonihav"]},
                        {"kolonihaven": "kolonihav"})
    assert match.endswith('stems : "kolonihav" *')
    assert "*" not in build_match([["kolonihaven"]], {"kolonihaven": ["kolonihav"]})


# Subjects named by two forms of a compound ("Klubkontingentet" / "Klubben", "Nøglen til
# cykelskuret" / "Cykelskursnøglen") are no surely shared subject: the rule marks neither
# (precision first, issue 38); they are found and ranked, not marked.
MISSED = pytest.mark.xfail(reason="precision first: no mark without a surely shared subject",
                           strict=False)


@pytest.mark.parametrize(("question", "older", "newer", "mention"), [
    # the question's compound, the newer line's two words (forældre-møde / forældrene mødes);
    # the minutes of the meeting answer it too, but name no time: they stay current
    ("hvornår er forældremøderne?", "Forældremøderne er den anden tirsdag i måneden.",
     "Forældrene mødes fremover den første onsdag i måneden.",
     "Referatet fra forældremødet lægges på intranettet."),
    # a known modifier (klub-kontingentet): the older line holds the part in its compound
    pytest.param("hvad koster klubkontingentet?", "Klubkontingentet er 600 kr. om året.",
                 "Klubben har hævet prisen til 750 kr.",
                 "Klubben holder generalforsamling i marts.", marks=MISSED),
    # the question's word begins the newer line's compound (cykelskur-nøglen)
    pytest.param("hvor er nøglen til cykelskuret?",
                 "Nøglen til cykelskuret hænger på krogen ved døren.",
                 "Cykelskursnøglen ligger nu i skuffen i køkkenet.",
                 "Cykelskuret skal males til foråret.", marks=MISSED),
])
def test_a_danish_compound_finds_the_update_worded_in_other_words(
        tmp_path: Path, question: str, older: str, newer: str, mention: str) -> None:
    repo = daily_notes_repo(tmp_path, [("2026-07-01", older), ("2026-07-20", mention),
                                        ("2026-08-12", newer)])
    shown = {r["source"].split("#")[0]: r for r in recall_json(repo, question)["results"]}
    assert next(iter(shown)) == "memory/2026-08-12.md", shown
    by = shown["memory/2026-07-01.md"]["superseded_by"] or ""
    assert by.split("#")[0] == "memory/2026-08-12.md", shown
    assert shown.get("memory/2026-07-20.md", {}).get("superseded_by") is None


def test_an_english_query_does_not_search_word_starts(tmp_path: Path) -> None:
    """English does not write compounds as one word: "market" must not find "marketplace"
    lines by their start, as a Danish word finds its compounds."""
    repo = daily_notes_repo(tmp_path, [("2026-07-01", "The marketplace listing went live."),
                             ("2026-07-02", "The farmers market opens at eight.")])
    shown = [r["source"].split("#")[0] for r in recall_json(repo, "which market?")["results"]]
    assert shown == ["memory/2026-07-02.md"]
