"""A query's neighbouring content words count again where a passage holds them side by side
(``recall.ranking.pair_scores``, ``parse.textfold.query_pairs``): "high school reunion" names
one thing, and a line about a family reunion in the school holidays' high season holds its
three words apart. A real repository and index, lexical recall through the library."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from gitmem.config import Config
from gitmem.index.run import index_and_embed
from gitmem.index.session import Session
from gitmem.parse.textfold import query_pairs
from gitmem.recall.answer import RecallRequest, answer
from gitmem.recall.ranking import Ranking, bm25_pool, pair_scores, stems
from gitmem.workspace import Workspace, open_workspace
from testing.repo import commit_all, make_repo, write

NOW = datetime(2025, 6, 1, tzinfo=UTC)
NOTES = {
    "memory/2025-05-02.md": [
        "- Family reunion at grandma's once the school holidays start; high season prices.",
        "- Fixed the gutter on the shed.",
    ],
    "memory/2025-05-09.md": [
        "- Got the invitation: our high school reunion is on June 14, at the old gym in Aarhus,"
        " dinner afterwards.",
        "- Long run by the lake, 14 km.",
    ],
    "memory/2025-05-12.md": [
        "- Team offsite: lead time for the new venue is six weeks.",
        "- Ordered a bike lock.",
    ],
    "memory/2025-05-20.md": [
        "- From March Maja is our new team lead; she joined the company last year and knows"
        " the codebase well.",
        "- The dentist moved my appointment to Friday.",
    ],
}
# each question, a word of its answer line, a word of the line that holds its words apart
QUESTIONS = [("When is the high school reunion?", "Aarhus", "grandma"),
             ("Who is the new team lead?", "Maja", "offsite")]


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, Config]:
    repo = make_repo(tmp_path_factory.mktemp("pairs"))
    for path, lines in NOTES.items():
        write(repo, path, "# Log\n\n" + "\n".join(lines) + "\n")
    commit_all(repo, "notes")
    ws, cfg = open_workspace(repo)
    cfg = replace(cfg, embed_provider="none")
    index_and_embed(ws, cfg, force=True, embed=False)
    return ws, cfg


def _first(notes: tuple[Workspace, Config], query: str, ranking: Ranking) -> str:
    ws, cfg = notes
    response = answer(Session(ws, cfg), RecallRequest(query=query, k=3, mode="lexical"),
                      now=NOW, ranking=ranking)
    return response.results[0].snippet


@pytest.mark.parametrize(("query", "answer_word", "apart_word"), QUESTIONS)
def test_words_side_by_side_outrank_the_same_words_apart(
        notes: tuple[Workspace, Config], query: str, answer_word: str, apart_word: str) -> None:
    assert answer_word in _first(notes, query, Ranking())
    # without the pairs, the shorter line that holds the words apart comes first
    assert apart_word in _first(notes, query, Ranking(pairs=0.0))


def test_query_pairs_are_neighbouring_content_words() -> None:
    assert query_pairs("Do you think I should attend my high school reunion?") == [
        ("high", "school"), ("school", "reunion")]
    assert query_pairs("Who is the new team lead?") == [("new", "team"), ("team", "lead")]
    # a Danish question's function words are no content words ("hvornår", "er", "min")
    assert query_pairs("Hvornår er min gamle skoles jubilæum?") == [
        ("gamle", "skoles"), ("skoles", "jubilaeum")]
    assert query_pairs("what is it") == []
    # CJK is searched as bigrams: a pair is two searched ones side by side, no particle's
    assert query_pairs("太田さんはどこに住んでいる？") == [("太田", "田さ")]


def test_pair_scores_count_neighbours_only() -> None:
    docs = [stems("our high school reunion is in June"),
            stems("family reunion when school holidays start, high season"),
            stems("the high schools of the region")]
    scores = pair_scores([("high", "school"), ("school", "reunion")], docs)
    assert scores[1] == 0.0  # every word, none beside its neighbour
    assert scores[0] > scores[2] > 0.0  # two pairs beat one; "schools" is "school" by its stem
    assert pair_scores([], docs) == [0.0, 0.0, 0.0]


def test_bm25_lengths_given_are_the_documents() -> None:
    # the pair held once in a short passage and in a long one: told apart by their lengths alone
    short, long = stems("our high school reunion"), stems("our high school " + "word " * 60)
    near, far = pair_scores([("high", "school")], [short, long])
    assert near > far > 0.0
    assert bm25_pool(["a b"], [["a b"], ["a b"]], lengths=[4, 40]) == bm25_pool(
        ["a b"], [["a b", "x", "y", "z"], ["a b", *["x"] * 39]])


def test_a_pasted_log_line_is_scored_as_bm25_max_length() -> None:
    pair = stems("high school")
    long_doc, short_doc = pair + ["x"] * 50_000, pair + ["x"] * 998
    scores = pair_scores([("high", "school")], [long_doc, short_doc])
    assert scores[0] == pytest.approx(scores[1])
    assert scores[0] > 0.0


def test_stop_words_make_no_pair_even_inside_a_term() -> None:
    assert query_pairs("high and school") == []
    # a term of several words ("state-of-the-art" is a phrase of its parts) pairs its own words,
    # and its stop words pair with no word outside it
    assert query_pairs("state-of-the-art the company") == [
        ("state", "of"), ("of", "the"), ("the", "art")]
    assert query_pairs('enjoy the song "The Four Seasons"') == [
        ("four", "seasons"), ("the", "four")]
    assert ("art", "company") in query_pairs("state-of-the-art company")
