"""A line is of the day it speaks of: "yesterday I went bowling" in the note of March 17 answers
a question about March 16 (``timeparse.stated_days``, ``ranking.prefer_stated``). Cases of our
own, not LoCoMo's: each language's answer line has distractors on other days, and lines whose
"yesterday" or "last week" is not that day."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from gitmem.index.session import Session
from gitmem.parse.timeparse import day_lines, stated_days
from gitmem.recall.answer import RecallRequest, RecallResponse, answer
from gitmem.recall.ranking import SHOWN_PLAIN, Ranking
from gitmem.workspace import open_workspace
from testing.repo import commit_all, make_repo, write

NOTE_DAY = date(2022, 3, 17)  # a Thursday


@pytest.mark.parametrize(("line", "days"), [
    ("By the way, yesterday I went bowling.", [("2022-03-16", "2022-03-16")]),
    ("Two days ago I wanted to be alone with nature.", [("2022-03-15", "2022-03-15")]),
    ("The day before yesterday: a long walk", [("2022-03-15", "2022-03-15")]),
    ("Last week I went to Canada.", [("2022-03-07", "2022-03-13")]),
    ("I går spillede jeg badminton med Mette.", [("2022-03-16", "2022-03-16")]),
    ("For to dage siden var jeg i Aarhus.", [("2022-03-15", "2022-03-15")]),
    ("Вчера играл в шахматы с Олегом.", [("2022-03-16", "2022-03-16")]),
    ("Позавчера был в театре.", [("2022-03-15", "2022-03-15")]),
    ("昨日は健とテニスをした。", [("2022-03-16", "2022-03-16")]),
    ("The recital is on March 20; we met on 2021-12-01.", []),  # searched as words
    ("3月20日に発表する", []),
    ("This week was calm, today too.", [("2022-03-14", "2022-03-20"),
                                         ("2022-03-17", "2022-03-17")]),
    ("Last month I moved; в этом месяце тоже.", [("2022-02-01", "2022-02-28"),
                                                ("2022-03-01", "2022-03-31")]),
    ("I dag regnede det, 上周 too, 어제 또.", [("2022-03-17", "2022-03-17"),
                                        ("2022-03-07", "2022-03-13"),
                                        ("2022-03-16", "2022-03-16")]),
    ("A quiet evening with tea at 3:47 pm, a huge dagger.", []),
])
def test_a_line_speaks_of_days_counted_from_its_note(line: str,
                                                     days: list[tuple[str, str]]) -> None:
    found = [(a.isoformat(), b.isoformat()) for _, (a, b) in stated_days(line, NOTE_DAY)]
    assert found == days
    assert day_lines(line) == ([0] if days else [])  # the first pass misses no phrase


def test_only_the_lines_that_may_name_a_day_are_read() -> None:
    text = "- [3:47 pm] İstanbul was long.\n- Yesterday I went bowling.\n\n- A week ago we met.\n"
    assert day_lines(text) == [1, 3]


NOTES = {
    "2022-03-12": "- Went bowling with Bob, two strikes.\n",
    "2022-03-17": "- Work was long.\n- Yesterday I went bowling with Ana.\n",
    "2022-03-20": "- Yesterday I went bowling with Carl.\n",
    "2022-03-24": "- Last week I went bowling with Dana.\n",
    "2022-03-25": "- Bowling night with the team, Erik won.\n",
}
DA = {
    "2022-03-10": "- Spillede badminton med Jens.\n",
    "2022-03-17": "- I går spillede jeg badminton med Mette.\n",
    "2022-03-19": "- Badminton med Lars i hallen.\n",
}
RU = {
    "2022-03-10": "- Играл в шахматы с Иваном.\n",
    "2022-03-17": "- Вчера играл в шахматы с Олегом.\n",
    "2022-03-19": "- Шахматы с Петром в клубе.\n",
}
JA = {
    "2022-03-05": "- 翔太とテニスをした。\n",
    "2022-03-17": "- 昨日は健とテニスをした。\n",
    "2022-03-19": "- 美咲とテニスをした。\n",
}


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("stated"))
    days: dict[str, list[str]] = {}
    for lang in (NOTES, DA, RU, JA):
        for day, text in lang.items():
            days.setdefault(day, []).append(text)
    for day, texts in days.items():
        write(repo, f"memory/{day}.md", f"# {day}\n\n" + "\n".join(texts))
    commit_all(repo, "notes", "2022-03-25T21:00:00+00:00")
    return repo


def _ask(repo: Path, query: str, now: datetime, ranking: Ranking | None = None
         ) -> RecallResponse:
    ws, cfg = open_workspace(repo)
    return answer(Session(ws, cfg), RecallRequest(query=query, mode="lexical", k=10),
                  now=now, ranking=ranking or Ranking())


def _boosted(response: RecallResponse) -> list[str]:
    """The results the window put first (shown above the plain scores)."""
    return [r.content.strip() for r in response.results if r.score > SHOWN_PLAIN]


LATER = datetime(2022, 3, 28, 12, tzinfo=UTC)
QUESTIONS = [
    ("Who did I go bowling with on March 16, 2022?", LATER, "Ana"),
    ("Hvem spillede jeg badminton med for 5 dage siden?",
     datetime(2022, 3, 21, 12, tzinfo=UTC), "Mette"),
    ("С кем я играл в шахматы 5 дней назад?", datetime(2022, 3, 21, 12, tzinfo=UTC), "Олегом"),
    ("3月16日に誰とテニスをした?", LATER, "健と"),
]


@pytest.mark.parametrize(("query", "now", "who"), QUESTIONS)
def test_the_line_that_says_yesterday_answers_for_that_day(notes: Path, query: str,
                                                           now: datetime, who: str) -> None:
    response = _ask(notes, query, now)
    assert response.time_window is not None and response.time_window.applied_as == "boost"
    assert who in response.results[0].content, [r.content for r in response.results]
    # one line is of that day: not Carl's "yesterday" (March 19), nor Dana's "last week"
    # (March 14..20 holds the day but is not it), nor the lines of other days
    assert len(_boosted(response)) == 1 and who in _boosted(response)[0]


@pytest.mark.parametrize(("query", "now", "who"), QUESTIONS)
def test_without_the_rule_the_answer_is_not_first(notes: Path, query: str, now: datetime,
                                                  who: str) -> None:
    """The questions above can fail: the note of March 17 is outside the window."""
    response = _ask(notes, query, now, Ranking(stated_days=False))
    assert who not in response.results[0].content
    assert _boosted(response) == []
