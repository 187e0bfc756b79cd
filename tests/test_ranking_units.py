"""Passage units (recall.ranking): BM25 among the candidates, and how ranked units become results
(merged when adjacent, dropped when already cited, facts kept whole)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from gitmem.index.items import PASSAGE_TOKENS, embedding_passages
from gitmem.parse.chunking import passage_lines
from gitmem.parse.textfold import query_terms
from gitmem.recall.ranking import (
    ANSWER_SHARE,
    ASKS_TAIL,
    PREFER_BOOST,
    TURN_SHARES,
    asks,
    bm25_pool,
    is_weak,
    lift_replies,
    pick_units,
    semantic_lift,
    shown_score,
    term_share,
)


def _row(path: str, start: int, lines: list[str], *, type_: str = "chunk", item: int = 1,
         valid_to: int | None = None, commit: str | None = "c1") -> dict[str, Any]:
    return {"id": item, "path": path, "type": type_, "start_line": start,
            "end_line": start + len(lines) - 1, "content": "\n".join(lines),
            "valid_to": valid_to, "commit_id": commit}


def test_bm25_prefers_rare_words_and_short_passages() -> None:
    docs = [["peter", "moved", "the", "gateway"], ["peter", "likes", "tea"],
            ["the", "gateway", "host", "is", "in", "the", "castle", "now", "and", "then"],
            ["nothing", "here"]]
    scores = bm25_pool(["gateway", "peter"], docs)
    assert scores[3] == 0.0
    assert scores[0] > scores[2] > 0  # both words beat one word in a longer passage
    assert scores[0] > scores[1] > 0
    assert bm25_pool(["x"], []) == []


def test_passages_are_the_embedded_ones() -> None:
    lines = [f"- [1:56 pm] Caroline: line {n} " + "word " * 20 for n in range(12)]
    content = "\n".join([*lines[:5], "", *lines[5:]])
    parts = passage_lines(content, PASSAGE_TOKENS)
    texts = embedding_passages("chunk", content, "")
    assert len(parts) == len(texts) > 1
    for offsets, text in zip(parts, texts, strict=True):
        assert text == "\n".join(content.split("\n")[o] for o in offsets)


def test_adjacent_passages_merge_and_cited_lines_are_not_repeated() -> None:
    lines = [f"line {n}" for n in range(10, 30)]
    chunk = _row("memory/a.md", 10, lines)
    other = _row("memory/b.md", 1, ["b1", "b2", "b3"], item=2)
    units = [(0.9, chunk, 12, 14), (0.8, other, 1, 2), (0.7, chunk, 15, 16),
             (0.6, chunk, 13, 14), (0.5, chunk, 25, 27)]
    picked = pick_units(units, k=5, diversity=True)
    assert [(p.row["path"], p.start, p.end) for p in picked] == [
        ("memory/a.md", 12, 16), ("memory/b.md", 1, 2), ("memory/a.md", 25, 27)]
    assert picked[0].lines == {n: f"line {n}" for n in range(12, 17)}
    assert picked[0].score == 0.9


def test_only_the_best_units_extend_a_result_and_k_counts_results() -> None:
    chunk = _row("memory/a.md", 1, [f"l{n}" for n in range(1, 21)])
    units = [(0.9, chunk, 1, 3), (0.8, chunk, 7, 9), (0.7, chunk, 4, 6), (0.6, chunk, 15, 16),
             (0.5, chunk, 10, 11), (0.4, chunk, 17, 17)]
    # 4-6 touches both 1-3 and 7-9: it joins the first; results never move forward
    picked = pick_units(units, k=3, diversity=True)
    assert [(p.start, p.end) for p in picked] == [(1, 6), (7, 11), (15, 17)]
    # past the merge window a touching unit is a result of its own, and k results end the list
    picked = pick_units(units, k=3, diversity=True, merge_window=3)
    assert [(p.start, p.end) for p in picked] == [(1, 6), (7, 9), (15, 16)]
    assert [(p.start, p.end) for p in pick_units(units, k=1, diversity=True)] == [(1, 6)]


def test_facts_stay_whole_and_inside_a_cited_range_they_are_dropped() -> None:
    chunk = _row("memory/a.md", 1, [f"l{n}" for n in range(1, 11)])
    fact = _row("memory/a.md", 11, ["- W @Peter: fact"], type_="fact", item=3)
    inner = _row("memory/a.md", 3, ["l3"], type_="fact", item=4)
    units = [(0.9, fact, 11, 11), (0.8, chunk, 9, 10), (0.7, chunk, 1, 4), (0.6, inner, 3, 3)]
    picked = pick_units(units, k=5, diversity=True)
    assert [(p.row["type"], p.start, p.end) for p in picked] == [
        ("fact", 11, 11), ("chunk", 9, 10), ("chunk", 1, 4)]


def test_versions_of_a_file_do_not_merge_and_copies_are_dropped() -> None:
    now = _row("memory/a.md", 1, ["alpha beta", "gamma delta"], item=1)
    old = _row("memory/a.md", 3, ["epsilon", "zeta"], item=2, valid_to=5, commit="c0")
    copy = _row("memory/c.md", 1, ["alpha beta", "gamma delta"], item=3)
    units = [(0.9, now, 1, 2), (0.8, old, 3, 4), (0.7, copy, 1, 2)]
    assert [(p.row["id"], p.start) for p in pick_units(units, 5, diversity=True)] == [
        (1, 1), (2, 3)]
    assert len(pick_units(units, 5, diversity=False)) == 3


def test_shown_scores_keep_the_ranking_order_within_0_and_1() -> None:
    """Issue 16: an entity page's name match scored 1.516. Every score a ranking can give
    (relevance × decay × importance in [0, 1], + 0.5 in a preferred window, + 1 for an exact
    file-name match) shows in [0, 1], in the same order (strictly: no ties made)."""
    relevance = [n / 400 for n in range(401)]
    raws = sorted({round(r + PREFER_BOOST * p + 1.0 * e, 6)
                   for r in relevance for p in (0, 1) for e in (0, 1)})
    shown = [shown_score(x) for x in raws]
    assert all(0.0 <= s < 1.0 for s in shown)
    assert all(a < b for a, b in itertools.pairwise(shown))
    assert shown_score(0.5) == 0.45 and shown_score(1.0) == 0.9  # plain results: 0.9 × raw
    assert 0.9 < shown_score(1.516) < shown_score(1.724) < 1.0


def test_term_share_counts_words_phrases_and_stems() -> None:
    text = "Moved the gateway host to The Castle; memorySearch.query.hybrid stays on."
    assert term_share(query_terms("gateway host"), text) == 1.0
    assert term_share(query_terms("gateway zeppelin"), text) == 0.5
    assert term_share(query_terms("memorySearch.query.hybrid"), text) == 1.0  # a phrase
    assert term_share(query_terms("query.memorySearch"), text) == 0.0  # words out of order
    assert term_share(query_terms("castles"), text) == 1.0  # "castl": the passage stem
    assert term_share(query_terms("xyzzy"), text) == 0.0
    assert term_share([], text) == 1.0  # no words asked (a time window): nothing to miss
    assert term_share(query_terms("猫"), "一只猫在花园里睡觉。") == 1.0  # Han characters alone
    assert term_share(query_terms("住む"), "田中さんは大阪に住んでいる。") == 1.0
    assert term_share(query_terms("東京"), "田中さんは大阪に住んでいる。") == 0.0


def test_weak_matches_lack_both_the_words_and_the_semantic_lift() -> None:
    # Cosines measured on the sample workspace (best result, the query's typical similarity):
    # all-MiniLM-L6-v2 "xyzzy" 0.234 over 0.054 and "gateway host" 0.555 over 0.081;
    # multilingual-e5-small "xyzzy" 0.818 over 0.775 and "gateway host" 0.877 over 0.783.
    assert is_weak(0.0, semantic_lift(0.234, 0.054))
    assert is_weak(0.0, semantic_lift(0.818, 0.775))
    assert not is_weak(0.0, semantic_lift(0.555, 0.081))
    assert not is_weak(0.0, semantic_lift(0.877, 0.783))
    assert semantic_lift(0.5, 0.6) == 0.0 and semantic_lift(0.9, 1.0) == 0.0
    assert not is_weak(0.5, None) and not is_weak(0.5, 0.0)  # half the words: a match
    assert is_weak(0.25, None)  # lexical only, one word of four


def test_a_word_is_held_by_its_stem_in_the_weak_share() -> None:
    assert term_share([["play"], ["emma"]], "Emma plays the cello.") == 1.0
    assert term_share([["call"], ["cat"]], "We adopted a cat and called her Miso.") == 1.0
    assert term_share([["idas"]], "Ida læser medicin.") == 1.0  # Snowball: idas -> ida
    assert term_share([["cello"], ["piano"]], "Emma plays the cello.") == 0.5


def test_a_merged_neighbour_keeps_its_own_score() -> None:
    """Lines merged into a better passage's range remember their own unit's score, so a range
    of Retain entries can answer as facts ranked each by its own (search._as_facts; with the
    real model: tests/test_crosslang_recall.py)."""
    chunk = _row("memory/a.md", 1, ["## Retain", "- W: bees", "- W: cello", "- W: clocks"])
    picked = pick_units([(0.9, chunk, 2, 2), (0.3, chunk, 3, 3), (0.2, chunk, 4, 4)], k=5,
                        diversity=False)
    assert [(p.start, p.end) for p in picked] == [(2, 4)]
    assert picked[0].line_scores == {2: 0.9, 3: 0.3, 4: 0.2}


def test_the_reply_to_a_line_that_asks_is_scored_with_it() -> None:
    """A question about what a reply says matches the line that asked for it: the reply (the
    next unit, one line, only blank lines between) scores at least ANSWER_SHARE of it, so it is
    read with it. Not lifted: by a lifted score, a reply of several lines, a line inside a list
    item, a line after one that does not ask or after a rule, a fact, another item's line.
    (The lines are chat turns; the turns' own shares, tested below, are off here.)"""
    chat = _row("memory/a.md", 1, [
        "- Sam: How did you get into watercolor painting?",   # 1 asks
        "- Evan: A friend gave me a kit. And you, Sam?",      # 2 reply, asks too
        "- Sam: Me? Oils.",                                   # 3 lifted by 2's own score
        "- Sam: Do you still play? (the guitar)",             # 4 asks
        "",
        "- Evan: Only on weekends.",                          # 6 reply after a blank line
        "- Sam: What do you play?",                           # 7 asks
        "- Evan: Folk songs,",                                # 8-9 a reply of two lines
        "  and some blues.",
        "- Sam: Where?",                                      # 10 asks
        "  - Which club?",                                    # 11 inside a list item
        "- Evan: The Anchor.",                                # 12 after an indented line
        "- Sam: Nice.",                                       # 13 does not ask
        "- Evan: Thanks!",                                    # 14
        "- Sam: Again?",                                      # 15 asks
        "---",                                                # 16 a rule, not a unit
        "- Evan: Sure.",                                      # 17
        "- Sam: And the fact?"])                              # 18 asks
    other = _row("memory/a.md", 19, ["- Evan: the next chunk"], item=2)
    fact = _row("memory/a.md", 19, ["- W @Evan: Paints on Sundays."], type_="fact", item=3)
    units = [(1.0, chat, 1, 1), (0.2, chat, 2, 2), (0.0, chat, 3, 3), (0.5, chat, 4, 4),
             (0.0, chat, 6, 6), (0.6, chat, 7, 7), (0.0, chat, 8, 9), (0.9, chat, 10, 10),
             (0.0, chat, 11, 11), (0.0, chat, 12, 12), (0.4, chat, 13, 13), (0.0, chat, 14, 14),
             (0.8, chat, 15, 15), (0.0, chat, 17, 17), (0.8, chat, 18, 18),
             (0.0, other, 19, 19), (0.0, fact, 19, 19)]
    lift_replies(units, turn_shares=(0.0, 0.0))
    assert [u[0] for u in units] == pytest.approx(
        [1.0, ANSWER_SHARE, 0.2 * ANSWER_SHARE, 0.5, 0.5 * ANSWER_SHARE, 0.6, 0.0, 0.9, 0.0,
         0.0, 0.4, 0.0, 0.8, 0.0, 0.8, 0.0, 0.0])
    assert [u[1]["id"] for u in units] == [1] * 15 + [2, 3]
    better = [(1.0, chat, 1, 1), (0.8, chat, 2, 2)]
    lift_replies(better, turn_shares=(0.0, 0.0))
    assert better[1][0] == 0.8
    unchanged = [(1.0, chat, 1, 1), (0.1, chat, 2, 2)]
    lift_replies(unchanged, share=0.0, turn_shares=(0.0, 0.0))
    assert unchanged[1][0] == 0.1
    # what the score adds to relevance (a preferred window) is the row's, not lifted with it
    boosted = [(0.5 + 1.0, chat, 1, 1), (0.5 + 0.1, chat, 2, 2)]
    lift_replies(boosted, turn_shares=(0.0, 0.0), boost=lambda row, lines: 0.5)
    assert boosted[1][0] == pytest.approx(0.5 + ANSWER_SHARE)
    # units whose lines are not the row's are left alone
    stray = [(1.0, chat, 1, 1), (0.0, chat, 40, 40)]
    lift_replies(stray)
    assert stray[1][0] == 0.0


def _lifted(lines: list[str], scores: list[float], **options: Any) -> list[float]:
    """The scores of one chunk's one-line units (blank lines are no units) after lifting."""
    row = _row("memory/a.md", 1, lines)
    units = [(score, row, n, n) for n, (line, score) in enumerate(zip(lines, scores, strict=True),
                                                                 start=1) if line.strip()]
    lift_replies(units, **options)
    return [u[0] for u in units]


def test_the_two_turns_after_a_turn_are_scored_with_it() -> None:
    """In a conversation the next turn replies to a turn and the one after goes on from it:
    they score at least TURN_SHARES of its relevance, by its own score, never a lifted one.
    Not lifted: a line that is no chat turn (a note's list item, a Retain entry, whose kind is
    no speaker), a turn after a line that is none, a turn two after one with a line that is no
    turn or an indented line between."""
    first, second = TURN_SHARES
    chat = _row("memory/a.md", 1, [
        "- [1:14 pm] Caroline: The agency approved me, I'm adopting!",  # 1
        "- [1:14 pm] Melanie: You'll be an awesome mom.",               # 2 next turn
        "- [1:15 pm] Caroline: Thanks, Mel.",                           # 3 two turns on
        "- [1:16 pm] Caroline: Pottery class tonight.",                 # 4
        "",
        "- Melanie: Cool.",                                             # 6 after a blank line
        "- Bought milk.",                                               # 7 no turn
        "- Melanie: Oat milk?",                                         # 8 after no turn
        "- W: The agency is in Boston.",                                # 9 a Retain entry
        "- B: Called the agency.",                                      # 10
        "- Sam: Where is it?",                                          # 11 asks
        "  - the second office",                                        # 12 indented
        "- Evan: In town.",                                             # 13
    ])
    units = [(1.0, chat, 1, 1), (0.0, chat, 2, 2), (0.0, chat, 3, 3), (0.1, chat, 4, 4),
             (0.0, chat, 6, 6), (0.9, chat, 7, 7), (0.0, chat, 8, 8), (0.9, chat, 9, 9),
             (0.0, chat, 10, 10), (0.8, chat, 11, 11), (0.0, chat, 12, 12),
             (0.0, chat, 13, 13)]
    lift_replies(units, share=0.0)
    assert [u[0] for u in units] == pytest.approx(
        [1.0, first, second, 0.1, first * 0.1, 0.9, 0.0, 0.9, 0.0, 0.8, 0.0, 0.0])
    # the larger share counts, never their sum: a turn that asks lifts its reply ANSWER_SHARE
    assert _lifted(["- Ann: Where to?", "- Bo: Lisbon.", "- Ann: Nice."], [1.0, 0.0, 0.0]) == \
        pytest.approx([1.0, ANSWER_SHARE, second])
    assert _lifted(["- Ann: x", "- Bo: y", "- Ann: z"], [0.5, 1.0, 0.0]) == \
        pytest.approx([0.5, 1.0, max(first * 1.0, second * 0.5)])
    off = _lifted(["- Ann: x", "- Bo: y", "- Ann: z"], [1.0, 0.0, 0.0], turn_shares=(0.0, 0.0))
    assert off == [1.0, 0.0, 0.0]


@pytest.mark.parametrize(("lines", "scores", "lifted"), [
    # blank lines between turns do not count: the turn after next is still two turns on
    (["- Ann: x", "", "- Bo: y", "", "- Ann: z"], [1.0, 0, 0.0, 0, 0.0],
     [1.0, TURN_SHARES[0], TURN_SHARES[1]]),
    # a line between that is no turn, or an indented one, parts them
    (["- Ann: x", "- Bought milk.", "- Bo: z", "- Ann: w"], [1.0, 0.0, 0.0, 0.0],
     [1.0, 0.0, 0.0, 0.0]),
    (["- Ann: x", "  - Bo: y", "- Ann: z", "- Bo: w"], [1.0, 0.0, 0.0, 0.0],
     [1.0, 0.0, 0.0, 0.0]),
    # a line that is no turn, before or after
    (["- Ann: x", "- Bought milk.", "- Ann: y"], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
    (["- Bought milk.", "- Ann: x", "- Bo: y", "- Ann: z"], [1.0, 0.0, 0.0, 0.0],
     [1.0, 0.0, 0.0, 0.0]),
    # labels are no conversation when none is said twice: a list of pros and cons, of days
    (["- Pros: cheap", "- Cons: slow", "- Budget: 40k"], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
    (["- Day 1: Lisbon", "- Day 2: Porto", "- Day 3: Faro"], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
    # nor one speaker alone
    (["- Ann: x", "- Ann: y", "- Ann: z"], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
])
def test_what_is_no_conversation_lifts_nothing(lines: list[str], scores: list[float],
                                               lifted: list[float]) -> None:
    assert _lifted(lines, scores, share=0.0) == pytest.approx(lifted)  # of the lines not blank


def test_a_units_own_boost_is_not_lifted_with_it() -> None:
    """What the score adds to a unit (a preferred window, a line counting back into it) is not
    relevance: the turns after it take their shares of the rest, plus their own boost."""
    lines = ["- Ann: yesterday we went bowling", "- Bo: fun", "- Ann: yes"]
    boost = {1: 0.5, 2: 0.0, 3: 0.0}
    assert _lifted(lines, [0.5 + 0.2, 0.0, 0.0], share=0.0,
                   boost=lambda row, span: boost[span[0]]) == pytest.approx(
        [0.7, TURN_SHARES[0] * 0.2, TURN_SHARES[1] * 0.2])


def test_a_long_line_is_read_for_a_question_at_its_end_only() -> None:
    """Every "?" of a line is tried against the end (a line of many "?<!--" cost seconds a
    hundred kilobytes): a line is read in its last ``ASKS_TAIL`` characters, after its trailing
    spaces, so a question that far from the end no longer asks, and one at the end does."""
    assert asks("- Where? " + "<!-- x -->" * 90) and asks("x" * 1_000_000 + " really?   ")
    assert not asks("- Where? " + "<!-- x -->" * (ASKS_TAIL // 10 + 1))
    assert not asks("- Alice: " + "?<!--" * 200_000)


def test_a_line_asks_with_a_question_mark_at_its_end() -> None:
    for line in ("- Is it done?  ", "- Done? (ask Tom)", "- 佐藤: 次のリリースはいつですか？",
                 '- She said "are you in?"', "- **Why not?**", "- Really?!",
                 "- Which port? <!-- importance: 4 -->"):
        assert asks(line), line
    for line in ("- Done (why?)", "- 佐藤: 12月の第2週です。", "- What now? No, later.", ""):
        assert not asks(line), line
    # a pasted line of spaces after a question mark: answered at once (the pattern backtracked
    # over every split of the spaces, minutes for a line of 100,000)
    assert asks("?" + " " * 100_000) and not asks("?" + " " * 100_000 + "x")
