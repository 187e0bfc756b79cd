"""A phrase that counts back is said loosely: "two weeks ago" of a day 17 days ago. Just outside
the phrase's window a result keeps part of the window's preference, fading as far out as the
phrase counts back (``timing.fade_days``, ``search._nearness``); a line inside the window still
ranks above one as relevant outside it. Cases of our own; bench/bench_reldates.py measures 34."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import cast

import apsw
import pytest

from gitmem.domain import TimeWindow
from gitmem.index.queries import Row, days_outside, window_clause
from gitmem.index.session import Session
from gitmem.parse.timeparse import counts_back, fade_days, find_query_window
from gitmem.recall.answer import RecallRequest, RecallResponse, answer
from gitmem.recall.ranking import FADE_EDGE, PREFER_BOOST, Ranking
from gitmem.recall.search import RecallQuery, _boost, _nearness
from gitmem.recall.timing import time_filters
from gitmem.workspace import open_workspace
from testing.repo import commit_all, make_repo, write

NOW = datetime(2025, 6, 20, 12, tzinfo=UTC)  # a Friday; "two weeks ago" is June 3..9
NOTES = {
    "2025-04-22": "- Planted the tulip bulbs in the front garden.\n",
    "2025-05-31": "- Planted the tomato seedlings in the garden bed by the fence.\n"
                  "- Called the bank about the card.\n",
    "2025-06-04": "- Walked past the community garden on the way to the dentist.\n",
    "2025-06-06": "- Bought a new garden hose at the hardware store.\n",
    "2025-06-08": "- Read an article on garden pests over breakfast.\n",
    "2025-06-02": "- Lunch with Priya: noodles.\n",
    "2025-06-05": "- Lunch with Priya at the taco place near the office on Main Street.\n",
    "2025-06-20": "- Booked a flight with KLM to Lisbon for July.\n",
    "2025-06-01": "- Flew home from Oslo with SAS, a delayed flight.\n",
}


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("loose"))
    for day, text in NOTES.items():
        write(repo, f"memory/{day}.md", f"# {day}\n\n{text}")
    commit_all(repo, "notes", "2025-06-19T21:00:00+00:00")
    return repo


def _ask(repo: Path, query: str, ranking: Ranking | None = None) -> RecallResponse:
    ws, cfg = open_workspace(repo)
    return answer(Session(ws, cfg), RecallRequest(query=query, mode="lexical", k=5),
                  now=NOW, ranking=ranking or Ranking())


def _first(response: RecallResponse) -> str:
    return response.results[0].content.strip()


PLANT = "What did I plant in the garden two weeks ago?"
LUNCH = "Where did I have lunch with Priya two weeks ago?"


def test_an_answer_a_few_days_outside_the_window_is_found(notes: Path) -> None:
    """May 31 is three days before June 3: the tomato seedlings outrank the tulips of April
    and the window's lines that only name the garden."""
    response = _ask(notes, PLANT)
    assert response.time_window is not None and response.time_window.applied_as == "boost"
    assert "tomato seedlings" in _first(response), [r.content for r in response.results]


def test_without_the_fade_the_answer_is_not_first(notes: Path) -> None:
    assert "tomato seedlings" not in _first(_ask(notes, PLANT, Ranking(fade=False)))


def test_a_line_in_the_window_stays_above_as_relevant_a_line_outside(
        notes: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """June 5 is in the window, June 2 a day outside it and a shorter match of the words."""
    assert "taco place" in _first(_ask(notes, LUNCH))
    # the guard can fail: were the boost not lower outside, the day off would win
    monkeypatch.setattr("gitmem.recall.search.FADE_EDGE", 1.0)
    assert "noodles" in _first(_ask(notes, LUNCH))


def _row(**dates: str) -> Row:
    return cast(Row, {"id": 1, "path": "memory/x.md", "preferred": False, "start_line": 1,
                      "end_line": 1, **dates})


JUNE_3_TO_9 = TimeWindow(datetime(2025, 6, 3, tzinfo=UTC), datetime(2025, 6, 10, tzinfo=UTC))


@pytest.mark.parametrize(("dates", "apart"), [
    ({"day": "2025-06-05"}, 0),
    ({"day": "2025-05-31"}, 3),
    ({"day": "2025-06-12"}, 3),
    ({"event_start": "2025-05-20", "event_end": "2025-06-01", "day": "2025-04-01"}, 2),
    ({"event_start": "2025-06-01T10:00:00+00:00"}, 2),
    ({"recorded_at": "2025-06-11T23:00:00+00:00"}, 2),
    ({"day": "2025-06-01", "recorded_at": "2025-06-05T10:00:00+00:00"}, 2),  # the day rules
    ({}, None),
    ({"day": "June"}, None),
])
def test_days_outside_reads_the_window_rule(dates: dict[str, str], apart: int | None) -> None:
    assert days_outside(_row(**dates), JUNE_3_TO_9) == apart


def test_the_boost_fades_from_the_edge_to_as_far_as_the_phrase_counts_back() -> None:
    q = RecallQuery("garden", prefer=JUNE_3_TO_9, fade_days=14.0)
    shares = [_nearness(q, _row(day=day)) for day in
              ("2025-06-02", "2025-06-12", "2025-05-27", "2025-05-20", "2025-05-19")]
    assert shares == pytest.approx([FADE_EDGE * (1 - n / 14) for n in (0, 2, 6, 13)] + [0.0])
    assert _nearness(RecallQuery("garden", prefer=JUNE_3_TO_9), _row(day="2025-06-02")) == 0.0
    # the boost: the share ``rank`` read once for the row, the whole boost inside the window
    near = cast(Row, {**_row(day="2025-06-02"), "nearness": shares[0]})
    assert _boost(q, near) == pytest.approx(PREFER_BOOST * FADE_EDGE)
    assert _boost(q, _row(day="2025-06-02")) == 0.0  # nearness not read: none
    assert _boost(q, cast(Row, {**_row(day="2025-04-01"), "preferred": True})) == PREFER_BOOST


@pytest.mark.parametrize(("query", "fade"), [
    (PLANT, 14),
    ("what did I cook 5 days ago", 5),
    ("bowling yesterday", 1),
    ("hvem spillede jeg badminton med for to uger siden", 14),
    ("先週 gateway", 8),  # June 9..15, the week before: its middle is 8 days back
    ("garden the week before last", 15),
    ("garden on June 5", 0),  # a date it names has an edge
    ("garden in June", 0),
    ("garden this week", 0),
])
def test_how_far_a_phrase_fades(query: str, fade: int) -> None:
    found = find_query_window(query, NOW)
    assert found is not None
    assert counts_back(found[1]) == (fade > 0)
    assert fade_days(found[1], found[0], NOW) == fade
    # whole days: the same at any hour, and a time without a zone is UTC
    for hour in (0, 23):
        assert fade_days(found[1], found[0], NOW.replace(hour=hour)) == fade
    assert fade_days(found[1], found[0], NOW.replace(tzinfo=None)) == fade
    times = time_filters(query, None, None, None, NOW, 3)
    assert times.prefer == found[0] and times.fade_days == fade_days(found[1], found[0], NOW)


def test_a_window_given_by_flags_filters_and_fades_nothing() -> None:
    times = time_filters(PLANT, None, None, "2025-06-06", NOW, 3)
    assert times.window is not None and times.prefer is None and times.fade_days == 0.0


def test_days_outside_agrees_with_the_window_clause() -> None:
    """0 days outside exactly for the rows ``window_clause`` puts in the window (dates as the
    index stores them: days; record times as UTC date-times), over rows drawn at random."""
    rng = random.Random(7)

    def day() -> str | None:
        return None if rng.random() < 0.4 else (date(2025, 5, 20) + timedelta(
            days=rng.randrange(40))).isoformat()

    rows = []
    for _ in range(2000):
        start, end = day(), None
        if start is not None and rng.random() < 0.5:
            end = (date.fromisoformat(start) + timedelta(days=rng.randrange(10))).isoformat()
        recorded = f"{day() or '2025-06-01'}T{rng.randrange(24):02d}:30:00+00:00"
        rows.append((start, end, day(), recorded))
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, event_start, event_end, day, "
                 "recorded_at)")
    conn.executemany("INSERT INTO items (event_start, event_end, day, recorded_at) "
                     "VALUES (?, ?, ?, ?)", rows)
    clause, args = window_clause(JUNE_3_TO_9)
    inside = {int(r[0]) for r in conn.execute(f"SELECT id FROM items i WHERE {clause}", args)}
    for n, (start, end, noted, recorded) in enumerate(rows, start=1):
        dates = {"event_start": start, "event_end": end, "day": noted, "recorded_at": recorded}
        row = _row(**{k: v for k, v in dates.items() if v is not None})
        assert (days_outside(row, JUNE_3_TO_9) == 0) == (n in inside), dates
    assert 100 < len(inside) < 1900  # both sides drawn


def test_before_today_prefers_what_came_before_not_today(notes: Path) -> None:
    """"before today" is all before today (``timeparse._bounded``), not today's window."""
    response = _ask(notes, "Which airline was my flight with before today?")
    assert response.time_window is not None and response.time_window.phrase == "before today"
    assert (response.time_window.since, response.time_window.until) == (None, "2025-06-19")
    assert "SAS" in _first(response), [r.content for r in response.results]


def test_a_bounded_phrase_states_no_date_to_search() -> None:
    """"3月6日から" prefers all from March 6; "3月6日" is not searched as words (a note from
    then does not say it), nor is the bound word."""
    times = time_filters("3月6日から何を食べた", None, None, None, NOW, 3)
    assert times.prefer == TimeWindow(datetime(2025, 3, 6, tzinfo=UTC), None)
    assert "3月6日" not in times.text and "から" not in times.text
    assert '"June 6"' in time_filters("garden around June 6", None, None, None, NOW, 3).text


def test_the_other_day_prefers_a_few_days_back(tmp_path: Path) -> None:
    """"the other day" is 2 to 7 days back: the lunch of five days ago, not yesterday's."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-06-19.md", "# 2025-06-19\n\n- Lunch with Priya at the noodle bar.\n")
    write(repo, "memory/2025-06-15.md", "# 2025-06-15\n\n- Lunch with Priya at the ramen bar.\n")
    commit_all(repo, "notes", "2025-06-19T21:00:00+00:00")
    plain = _ask(repo, "where did I have lunch with Priya")
    assert "noodle" in _first(plain)
    response = _ask(repo, "where did I have lunch with Priya the other day")
    assert response.time_window is not None and response.time_window.phrase == "the other day"
    assert "ramen" in _first(response), [r.content for r in response.results]
