"""A question's stop words are not searched, in every language with stop words: English always,
Danish in a Danish question, Russian always (no other language writes Cyrillic), and their
question words ("hvem", "hvorfor", "почему"). Before, only English ones were dropped, so a Danish
question's "jeg", "er", "i" matched every line that holds them, and in hybrid recall such a
line's weak match outweighed a strong semantic one."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.config import Config
from gitmem.index.run import index_and_embed
from gitmem.index.session import Session
from gitmem.parse.textfold import query_terms
from gitmem.recall.answer import RecallRequest
from gitmem.recall.answer import answer as recall
from gitmem.workspace import open_workspace
from testing.repo import commit_all, make_repo, write

NOW = datetime(2026, 3, 2, 12, tzinfo=UTC)


@pytest.mark.parametrize(("question", "terms"), [
    ("Hvorfor opsagde jeg mit abonnement på avisen?", ["opsagde", "abonnement", "avisen"]),
    ("Hvem er den nye formand i klubben?", ["nye", "formand", "klubben"]),
    ("Hvornår skal vi hente hende på stationen?", ["hente", "stationen"]),
    ("Почему она не пришла на собрание?", ["пришла", "собрание"]),
    ("Сколько стоит ремонт крыши?", ["стоит", "ремонт", "крыши"]),
    ("Когда мы купили три стула?", ["купили", "три", "стула"]),  # a number is asked about
    ("Когда лучше ехать на дачу?", ["лучше", "ехать", "дачу"]),
    # English: "men", "over", "man" are Danish stop words but English content words
    ("Why did the men walk over the bridge?", ["men", "walk", "bridge"]),
    ("Which man fixed the boiler?", ["man", "fixed", "boiler"]),
])
def test_stop_and_question_words_are_not_searched(question: str, terms: list[str]) -> None:
    assert query_terms(question) == [[t] for t in terms]


@pytest.mark.parametrize(("query", "terms"), [
    # One Danish function word is no Danish question: these are English or technical words
    ("OS version", ["os", "version"]),
    ("MIT license", ["mit", "license"]),
    ("vi keybindings", ["vi", "keybindings"]),
    ("var hoisting", ["var", "hoisting"]),
    ("Han Solo quotes", ["han", "solo", "quotes"]),
    ("en locale default", ["en", "locale", "default"]),
    # a Danish question word counts as Danish, and "hvad", "hvor" are dropped in any question
    ("Hvornår udløber mit pas?", ["udlober", "pas"]),
    ("Hvad laver Mette?", ["laver", "mette"]),
    ("Hvad er the deadline for the report?", ["er", "deadline", "report"]),  # English
])
def test_one_danish_word_does_not_make_a_query_danish(query: str, terms: list[str]) -> None:
    assert query_terms(query) == [[t] for t in terms]


@pytest.mark.parametrize("question", ["hvem er det", "кто это"])
def test_a_question_of_stop_words_alone_is_still_searched(question: str) -> None:
    assert [t for term in query_terms(question) for t in term] == question.split()


# One line per daily note (so that no two are merged into one result): the answers, in English
# and Japanese, and Danish and Russian lines of little but stop words.
LINES = (
    "Jeg er så glad for at jeg er hjemme igen, og jeg har det godt i dag.",
    "Det er ikke noget, vi har tid til i år, men det kan være, at vi får det.",
    "Cancelled the newspaper subscription because it got too expensive.",
    "The plumber fixed the leaking kitchen tap on Monday.",
    "Она сказала, что она не может, и мы не знаем, что она будет делать.",
    "Мы были там, и это было так, как мы все и думали.",
    "住民の集会は来週の木曜日に延期された。",
    "The dentist said my teeth are fine.",
    "Bought new running shoes for the spring.",
    "Hun har købt en ny cykel til sin datter.",
)


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory, e5: Path) -> tuple[Path, Config]:
    repo = make_repo(tmp_path_factory.mktemp("stop"))
    for n, line in enumerate(LINES):
        write(repo, f"memory/2026-02-{10 + n}.md", f"# 2026-02-{10 + n}\n\n## Log\n- {line}\n")
    commit_all(repo, "ten days", "2026-02-19T21:00:00+00:00")
    ws, cfg = open_workspace(repo)
    cfg = replace(cfg, embed_provider="local", embed_model=str(e5), embed_threads=1)
    index_and_embed(ws, cfg, force=True)
    return repo, cfg


@pytest.mark.parametrize(("question", "answer"), [
    ("Hvem har repareret den utætte vandhane i køkkenet?", 3),  # before: 4th (stop words)
    ("Когда будет собрание жильцов?", 6),  # before: 2nd
    ("Почему я отменил подписку на газету?", 2),  # first before too: guards that hybrid
    ("Hvad sagde tandlægen om mine tænder?", 7),  # stays with semantic where both were right
])
def test_stop_words_do_not_outweigh_a_strong_semantic_match(
        notes: tuple[Path, Config], question: str, answer: int) -> None:
    """In hybrid recall a line matching only the question's stop words took the words' full
    share of the score (a passage's BM25 is scaled by the best one's) and pushed a cross-language
    answer down; the answer is now first, as in semantic recall."""
    repo, cfg = notes
    ws, _ = open_workspace(repo)
    for mode in ("semantic", "hybrid"):
        response = recall(Session(ws, cfg), RecallRequest(query=question, mode=mode, k=5),
                          now=NOW)
        assert response.mode == mode
        assert response.results[0].path == f"memory/2026-02-{10 + answer}.md", (
            mode, [r.content for r in response.results])
