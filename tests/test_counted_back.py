"""A line is of the day it speaks of: "yesterday I went bowling" in the note of March 17 answers
a question about March 16 (``timeparse.counted_back``, ``search._boost``). Cases of our
own, not LoCoMo's: each language's answer line has distractors on other days, and lines whose
"yesterday" or "last week" is not that day."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path
from typing import cast

import pytest

from gitmem.index.queries import Row
from gitmem.index.session import Session
from gitmem.index.store import open_store
from gitmem.parse.timeparse import counted_back
from gitmem.recall.answer import RecallRequest, RecallResponse, answer
from gitmem.recall.ranking import PREFER_BOOST, SHOWN_PLAIN, Ranking
from gitmem.recall.search import RecallQuery, _boost
from gitmem.workspace import open_workspace
from testing.cli import gitmem
from testing.repo import commit_all, make_repo, write

NOTE_DAY = date(2022, 3, 17)  # a Thursday
D16, D15 = ("2022-03-16", "2022-03-16"), ("2022-03-15", "2022-03-15")
LAST_WEEK = ("2022-03-07", "2022-03-13")
LAST_MONTH = ("2022-02-01", "2022-02-28")


# Each rule that counts back, in each language it reads; and words that look alike but do not
@pytest.mark.parametrize(("line", "days"), [
    # yesterday
    ("By the way, yesterday I went bowling.", [D16]),
    ("I går spillede jeg badminton med Mette.", [D16]),
    ("Vi var i byen i går.", [D16]),
    ("Вчера играл в шахматы с Олегом.", [D16]),
    ("昨日は健とテニスをした。", [D16]),
    ("昨天我们去看电影了", [D16]),
    ("어제 친구를 만났다", [D16]),
    # the day before yesterday
    ("The day before yesterday: a long walk", [D15]),
    ("Day before yesterday I rested", [D15]),
    ("I forgårs var vi i Aarhus", [D15]),
    ("Позавчера был в театре.", [D15]),
    ("一昨日は雨だった", [D15]),
    ("おととい映画を見た", [D15]),
    ("前天下雨了", [D15]),
    ("그저께 만났다", [D15]),
    ("그제 만났다", [D15]),
    # N days / weeks / months ago
    ("Two days ago I wanted to be alone with nature.", [D15]),
    ("For to dage siden var jeg i Aarhus.", [D15]),
    ("Два дня назад я был дома.", [D15]),
    ("День назад я был дома.", [D16]),
    ("2日前に会った", [D15]),
    ("两天前我们见面了", [D15]),
    ("十五天前", [("2022-03-02", "2022-03-02")]),
    ("二十一天前我去了北京", [("2022-02-24", "2022-02-24")]),
    ("2일 전에 만났다", [D15]),
    ("A week ago we met.", [("2022-03-07", "2022-03-13")]),  # a week is said loosely: ± 3
    # last week / last month
    ("Last week I went to Canada.", [LAST_WEEK]),
    ("I sidste uge var vi i Rom.", [LAST_WEEK]),
    ("На прошлой неделе я болел.", [LAST_WEEK]),
    ("先週は忙しかった", [LAST_WEEK]),
    ("上周我们去了上海", [LAST_WEEK]),
    ("지난주에 이사했다", [LAST_WEEK]),
    ("Last month I moved.", [LAST_MONTH]),
    ("Sidste måned flyttede vi.", [LAST_MONTH]),
    ("В прошлом месяце я переехал.", [LAST_MONTH]),
    ("先月引っ越した", [LAST_MONTH]),
    ("上个月搬家了", [LAST_MONTH]),
    ("지난달에 이사했다", [LAST_MONTH]),
    # the week before last; a few days, said loosely
    ("The week before last I was ill.", [("2022-02-28", "2022-03-06")]),
    ("先々週は忙しかった", [("2022-02-28", "2022-03-06")]),
    ("A few days ago I rested.", [("2022-03-13", "2022-03-15")]),
    # the note's own day, or a span holding it, adds nothing; a stated date is searched as words
    ("This week was calm, today too; i dag, сегодня, 今日, 今週, 이번 주.", []),
    ("The recital is on March 20; we met on 2021-12-01.", []),
    ("3月20日に発表する", []),
    # look-alikes
    ("Når I går hjem, så ring.", []),  # Danish: "when you go home"
    ("之前天气很冷", []),  # "before, the weather…"
    ("그제야 알았다", []),  # Korean: "only then"
    ("On the other day-care list.", []),
    ("首先日志要清理。", []),  # "first, clean the log": no 先日
    ("納期を数日前倒しする。", []),  # "bring the deadline a few days forward"
    ("The other\nday Ana called.", [("2022-03-10", "2022-03-15")] * 2),  # wrapped: read whole
    ("The week before\nlast was calm.", [("2022-02-28", "2022-03-06")] * 2),
    ("数十日前のこと", []),  # some tens of days: not 10
    ("几十天前的事", []),
    ("Дней назад", []),  # a plural without a count is no day
    # said loosely
    ("Несколько дней назад", [("2022-03-10", "2022-03-14")]),  # several: 5 days ± 2
    ("The other day Ana called.", [("2022-03-10", "2022-03-15")]),
    ("Earlier this week the build broke.", [("2022-03-14", "2022-03-16")]),
    ("先日、田中さんに会った。", [("2022-03-10", "2022-03-15")]),
    ("A fortnight ago: the dentist.", [("2022-02-28", "2022-03-06")]),
    ("A quiet evening with tea at 3:47 pm, a huge dagger.", []),
])
def test_a_line_counts_back_from_its_note(line: str, days: list[tuple[str, str]]) -> None:
    found = [(a.isoformat(), b.isoformat()) for _, (a, b) in counted_back(line, NOTE_DAY)]
    assert found == days


def test_a_phrase_wrapped_onto_the_next_line_is_read_whole() -> None:
    text = "- Went to the cinema with Zoe the day before\n  yesterday, a great film.\n- Tea."
    assert counted_back(text, NOTE_DAY) == [(0, (date(2022, 3, 15),) * 2),
                                            (1, (date(2022, 3, 15),) * 2)]
    assert counted_back("- İİİİ long\n- Tea yesterday", NOTE_DAY) == [(1, (date(2022, 3, 16),) * 2)]


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
    """The questions above can fail: the note of March 17 is outside the window (and, for
    "5 days ago", not preferred for being a day off it either)."""
    response = _ask(notes, query, now, Ranking(counted_back=False, fade=False))
    assert who not in response.results[0].content
    assert _boosted(response) == []


def _row(preferred: bool = False) -> Row:
    return cast(Row, {"id": 1, "path": "memory/2022-03-17.md", "preferred": preferred,
                      "start_line": 3, "end_line": 7, "counted_back": {5}})


def test_only_the_unit_holding_the_line_is_preferred_and_only_once() -> None:
    q = RecallQuery("bowling")
    assert [_boost(q, _row(), lines) for lines in ((3, 3), (4, 6), (7, 7), None)] == [
        0.0, PREFER_BOOST, 0.0, 0.0]
    assert _boost(q, _row(preferred=True), (5, 5)) == PREFER_BOOST


def test_an_index_of_schema_12_reads_its_notes_days_in_place(notes: Path) -> None:
    """m013 fills ``item_days`` from the items an index already holds: no rebuild."""
    ws, _ = open_workspace(notes)
    assert gitmem("-C", str(notes), "index")[0] == 0
    store = open_store(ws.index_path)
    query = ("SELECT i.path, d.line, d.first_day, d.last_day FROM item_days d "
             "JOIN items i ON i.id = d.item_id ORDER BY 1, 2, 3")
    before = store.conn.execute(query).fetchall()
    items = store.conn.execute("SELECT count(*) FROM items").fetchone()
    with store.conn:  # as schema 12 left it
        store.conn.execute("DROP TABLE item_days")
        store.conn.execute("DELETE FROM migrations WHERE version >= 13")
    store.close()
    store = open_store(ws.index_path)
    assert store.conn.execute(query).fetchall() == before
    assert ("memory/2022-03-17.md", 4, "2022-03-16", "2022-03-16") in before
    assert store.conn.execute("SELECT count(*) FROM items").fetchone() == items
    store.close()


@pytest.mark.parametrize(("version", "line", "days"), [
    (14, "A few days ago I went bowling.", ("2022-03-17", "2022-03-19")),  # m014, m015
    (15, "The other day I went bowling.", ("2022-03-14", "2022-03-19")),  # m015
])
def test_an_older_index_reads_the_new_phrases_in_place(tmp_path: Path, version: int, line: str,
                                                       days: tuple[str, str]) -> None:
    """Each migration that reads the days again makes a line of a phrase its schema did not
    read count back: "a few days ago" (schema 13), "the other day" (schema 14)."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2022-03-21.md", f"# 2022-03-21\n\n- {line}\n")
    commit_all(repo, "notes", "2022-03-21T21:00:00+00:00")
    ws, _ = open_workspace(repo)
    assert gitmem("-C", str(repo), "index")[0] == 0
    query = "SELECT d.line, d.first_day, d.last_day FROM item_days d"
    store = open_store(ws.index_path)
    assert store.conn.execute(query).fetchall() == [(3, *days)]
    with store.conn:  # as the schema before it left it: the line not read
        store.conn.execute("DELETE FROM item_days")
        store.conn.execute("DELETE FROM migrations WHERE version >= ?", (version,))
    store.close()
    store = open_store(ws.index_path)
    assert store.conn.execute(query).fetchall() == [(3, *days)]
    store.close()
