"""Tests for gitmem.parse.timeparse (docs/memory-format.md)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.domain import TimeWindow
from gitmem.errors import UsageError
from gitmem.parse.timeparse import (
    as_of_instant,
    build_window,
    counts_back,
    fade_days,
    find_event_period,
    find_query_window,
    parse_time_spec,
)

NOW = datetime(2025, 12, 10, 15, 30, tzinfo=UTC)  # a Wednesday


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


# --- parse_time_spec ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "start"),
    [
        ("12h", NOW - timedelta(hours=12)),
        ("30d", NOW - timedelta(days=30)),
        ("2w", NOW - timedelta(weeks=2)),
        ("6m", utc(2025, 6, 10, 15, 30)),
        ("1y", utc(2024, 12, 10, 15, 30)),
        ("  30D ", NOW - timedelta(days=30)),
    ],
)
def test_durations_count_back_from_now(spec: str, start: datetime) -> None:
    assert parse_time_spec(spec, NOW) == (start, NOW)


def test_month_duration_clamps_to_month_end() -> None:
    now = utc(2025, 3, 31, 12)
    assert parse_time_spec("1m", now) == (utc(2025, 2, 28, 12), now)
    assert parse_time_spec("1y", utc(2024, 2, 29))[0] == utc(2023, 2, 28)


@pytest.mark.parametrize(
    ("spec", "period"),
    [
        ("2025", (utc(2025, 1, 1), utc(2026, 1, 1))),
        ("2025-11", (utc(2025, 11, 1), utc(2025, 12, 1))),
        ("2025-12", (utc(2025, 12, 1), utc(2026, 1, 1))),
        ("2025-11-27", (utc(2025, 11, 27), utc(2025, 11, 28))),
        ("2024-02-29", (utc(2024, 2, 29), utc(2024, 3, 1))),
        ("today", (utc(2025, 12, 10), utc(2025, 12, 11))),
        ("YESTERDAY", (utc(2025, 12, 9), utc(2025, 12, 10))),
        (" Today\n", (utc(2025, 12, 10), utc(2025, 12, 11))),
    ],
)
def test_calendar_periods(spec: str, period: tuple[datetime, datetime]) -> None:
    assert parse_time_spec(spec, NOW) == period


@pytest.mark.parametrize(
    ("spec", "instant"),
    [
        ("2025-11-27T10:00", utc(2025, 11, 27, 10)),
        ("2025-11-27 10:00", utc(2025, 11, 27, 10)),
        ("2025-11-27T10:00:00Z", utc(2025, 11, 27, 10)),
        ("2025-11-27t10:00z", utc(2025, 11, 27, 10)),
        ("2025-11-27T10:00:00+01:00", utc(2025, 11, 27, 9)),
        ("2025-11-27T10:00:30.5-0200", datetime(2025, 11, 27, 12, 0, 30, 500000, tzinfo=UTC)),
    ],
)
def test_iso_datetime_is_an_instant(spec: str, instant: datetime) -> None:
    start, end = parse_time_spec(spec, NOW)
    assert start == end == instant
    assert start.tzinfo is not None and start.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "spec",
    [
        "lastweek",
        "",
        "  ",
        "30",
        "30 days",
        "-3d",
        "2025-02-30",
        "2025-13",
        "2025-00",
        "2025-11-27T25:00",
        "0000",
        "99999999999999999999d",
        "2025/11/27",
        "20251127",
        "１２h",
    ],
)
def test_bad_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_time_spec(spec, NOW)
    assert caught.value.exit_code == 2
    message = str(caught.value)
    assert f"invalid time {spec.strip()!r}" in message
    assert "12h, 30d, 2w, 6m, 1y" in message and "2025-11-27" in message
    assert "'today' or 'yesterday'" in message


def test_error_message_is_exact() -> None:
    with pytest.raises(UsageError, match=r"^invalid time 'lastweek': use a duration") as caught:
        parse_time_spec("lastweek", NOW)
    assert str(caught.value) == (
        "invalid time 'lastweek': use a duration (12h, 30d, 2w, 6m, 1y), a date (2025, 2025-11, "
        "2025-11-27), an ISO date-time, 'today' or 'yesterday', or a date phrase ('last week', "
        "'March 6, 2025', '3月6日')"
    )


# --- build_window / as_of_instant -----------------------------------------------------------


def test_no_flags_no_window() -> None:
    assert build_window(since=None, until=None, around=None, now=NOW) is None


def test_until_month_includes_whole_month() -> None:
    window = build_window(since=None, until="2025-11", around=None, now=NOW)
    assert window == TimeWindow(None, utc(2025, 12, 1))
    assert window.end is not None
    assert datetime(2025, 11, 30, 23, 59, 59, tzinfo=UTC) < window.end


def test_since_and_until() -> None:
    window = build_window(since="2025-11", until="2025-11-27", around=None, now=NOW)
    assert window == TimeWindow(utc(2025, 11, 1), utc(2025, 11, 28))
    assert build_window(since="30d", until=None, around=None, now=NOW) == TimeWindow(
        NOW - timedelta(days=30), None
    )


def test_until_duration_is_the_instant_it_points_to() -> None:
    window = build_window(since="30d", until="7d", around=None, now=NOW)
    assert window == TimeWindow(NOW - timedelta(days=30), NOW - timedelta(days=7))


def test_around_widens_the_period() -> None:
    window = build_window(since=None, until=None, around="2025-11-27", now=NOW)
    assert window == TimeWindow(utc(2025, 11, 24), utc(2025, 12, 1))
    wide = build_window(since=None, until=None, around="2025-11", now=NOW, around_days=5)
    assert wide == TimeWindow(utc(2025, 10, 27), utc(2025, 12, 6))
    instant = build_window(since=None, until=None, around="2025-11-27T10:00Z", now=NOW)
    assert instant == TimeWindow(utc(2025, 11, 24, 10), utc(2025, 11, 30, 10))


@pytest.mark.parametrize(("since", "until"), [("2025-11", None), (None, "2025-12"), ("1d", "0d")])
def test_around_cannot_be_combined(since: str | None, until: str | None) -> None:
    with pytest.raises(UsageError, match="--around") as caught:
        build_window(since=since, until=until, around="2025-11-27", now=NOW)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(
    ("since", "until"), [("2025-12", "2025-11"), ("2025-11-27T10:00", "2025-11-27T10:00")]
)
def test_since_after_until_is_an_error(since: str, until: str) -> None:
    with pytest.raises(UsageError, match="--since") as caught:
        build_window(since=since, until=until, around=None, now=NOW)
    assert caught.value.exit_code == 2


def test_around_at_the_end_of_time_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="9999-12-30"):
        build_window(since=None, until=None, around="9999-12-30", now=NOW)


def test_naive_now_is_utc() -> None:
    naive = datetime(2025, 12, 10, 15, 30)
    assert parse_time_spec("12h", naive) == parse_time_spec("12h", NOW)
    assert find_query_window("today", naive) == find_query_window("today", NOW)


def test_bad_value_in_window_names_it() -> None:
    with pytest.raises(UsageError, match="invalid time 'soon'"):
        build_window(since="soon", until=None, around=None, now=NOW)


@pytest.mark.parametrize(
    ("spec", "instant"),
    [
        ("2025-11", utc(2025, 12, 1)),
        ("2025", utc(2026, 1, 1)),
        ("2025-11-27", utc(2025, 11, 28)),
        ("2025-11-27T10:00:00+01:00", utc(2025, 11, 27, 9)),
        ("30d", NOW - timedelta(days=30)),
        ("6m", utc(2025, 6, 10, 15, 30)),
        ("today", utc(2025, 12, 11)),
        ("yesterday", utc(2025, 12, 10)),
    ],
)
def test_as_of_is_the_end_of_the_period(spec: str, instant: datetime) -> None:
    assert as_of_instant(spec, NOW) == instant


def test_as_of_rejects_bad_values() -> None:
    with pytest.raises(UsageError):
        as_of_instant("2025-02-30", NOW)


# --- find_event_period ----------------------------------------------------------------------

NOV27_DEC1 = (date(2025, 11, 27), date(2025, 12, 1))


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("Currently in Marrakech for Andy's birthday (2025-11-27 – 2025-12-01).", NOV27_DEC1),
        ("Trip 2025-11-27 — 2025-12-01", NOV27_DEC1),
        ("Trip 2025-11-27 - 2025-12-01", NOV27_DEC1),
        ("Trip 2025-11-27-2025-12-01", NOV27_DEC1),
        ("Trip 2025-11-27 to 2025-12-01", NOV27_DEC1),
        ("Trip 2025-11-27..2025-12-01", NOV27_DEC1),
        ("Trip 2025-11-27~2025-12-01", NOV27_DEC1),
        ("Trip 2025-11-27〜2025-12-01", NOV27_DEC1),
        ("Trip 2025-11-27 to 12-01", NOV27_DEC1),
        ("Released on 2025-11-27.", (date(2025, 11, 27), date(2025, 11, 27))),
        ("Meeting 2025-11-27T10:00 in Lisbon", (date(2025, 11, 27), date(2025, 11, 27))),
        ("Reversed 2025-12-01 – 2025-11-27", NOV27_DEC1),
        ("In Marrakech Nov 27–Dec 1, 2025.", NOV27_DEC1),
        ("In Marrakech Nov 27 - Dec 1, 2025.", NOV27_DEC1),
        ("In Marrakech November 27 to December 1, 2025.", NOV27_DEC1),
        ("Nov 27-30, 2025", (date(2025, 11, 27), date(2025, 11, 30))),
        ("November 27, 2025", (date(2025, 11, 27), date(2025, 11, 27))),
        ("Sept. 3rd, 2024", (date(2024, 9, 3), date(2024, 9, 3))),
        ("27 November 2025", (date(2025, 11, 27), date(2025, 11, 27))),
        ("27–30 Nov 2025", (date(2025, 11, 27), date(2025, 11, 30))),
        ("27 Nov – 1 Dec 2025", NOV27_DEC1),
        ("Nov 27 2025", (date(2025, 11, 27), date(2025, 11, 27))),
        ("nov 27 2025", (date(2025, 11, 27), date(2025, 11, 27))),
        ("Dec 30 – Jan 2, 2025", (date(2024, 12, 30), date(2025, 1, 2))),
        ("マラケシュに滞在（2025年11月27日〜12月1日）。", NOV27_DEC1),
        ("2025年11月27日～2025年12月1日", NOV27_DEC1),
        ("2025年11月27日から12月1日まで", NOV27_DEC1),
        ("2025年11月27日", (date(2025, 11, 27), date(2025, 11, 27))),
        ("2025年11月27号到12月1号", NOV27_DEC1),
        ("２０２５年１１月２７日", (date(2025, 11, 27), date(2025, 11, 27))),
        ("2025年12月30日〜1月2日", (date(2025, 12, 30), date(2026, 1, 2))),
    ],
)
def test_event_periods(text: str, period: tuple[date, date]) -> None:
    assert find_event_period(text) == period
    assert find_event_period(text, default_year=1999) == period  # a stated year wins


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("Nov 27", (date(2025, 11, 27), date(2025, 11, 27))),
        ("Nov 27–Dec 1", NOV27_DEC1),
        ("27–30 Nov", (date(2025, 11, 27), date(2025, 11, 30))),
        ("11月27日", (date(2025, 11, 27), date(2025, 11, 27))),
        ("11月27日〜12月1日", NOV27_DEC1),
        ("12月30日〜1月2日", (date(2025, 12, 30), date(2026, 1, 2))),
    ],
)
def test_event_periods_without_year_use_default(text: str, period: tuple[date, date]) -> None:
    assert find_event_period(text, default_year=2025) == period
    assert find_event_period(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Prefers concise WhatsApp replies (under 1500 chars).",
        "Fixed the crash (see memory/2025-11-27.md).",
        "Tagged v2025-11-27",
        "Feb 30, 2025",
        "2025-02-30",
        "2025年2月30日",
        "2025-13-01",
        "May be late.",
    ],
)
def test_no_event_period(text: str) -> None:
    assert find_event_period(text) is None


def test_invalid_date_is_skipped_and_search_continues() -> None:
    assert find_event_period("Feb 30, 2025 then 2025-03-01") == (date(2025, 3, 1), date(2025, 3, 1))


def test_only_the_first_expression_counts() -> None:
    text = "Booked 2025-11-27, flight back 2025-12-05 and 2026-01-01"
    assert find_event_period(text) == (date(2025, 11, 27), date(2025, 11, 27))
    assert find_event_period("Nov 27, 2025 and 2024-01-01") == (date(2025, 11, 27),) * 2


def test_day_range_that_runs_backwards_in_one_month_is_a_single_day() -> None:
    assert find_event_period("Nov 27 - 3 people, 2025", default_year=2025) == (
        date(2025, 11, 27),
        date(2025, 11, 27),
    )


@settings(max_examples=300)
@given(st.text(), st.one_of(st.none(), st.integers(min_value=-10**6, max_value=10**6)))
def test_find_event_period_never_raises(text: str, default_year: int | None) -> None:
    result = find_event_period(text, default_year=default_year)
    if result is not None:
        assert result[0] <= result[1]


_DATEY = st.text(
    alphabet=st.sampled_from(list("0123456789-–~〜 ,.年月日号頃ごろNovDecJanFebtoaround先週昨日")),
)


@settings(max_examples=300)
@given(_DATEY, st.integers(min_value=1, max_value=9999))
def test_find_event_period_never_raises_on_date_like_text(text: str, year: int) -> None:
    find_event_period(text, default_year=year)


# --- find_query_window ----------------------------------------------------------------------


def day_window(first: date, last: date) -> TimeWindow:
    return TimeWindow(
        datetime.combine(first, datetime.min.time(), tzinfo=UTC),
        datetime.combine(last + timedelta(days=1), datetime.min.time(), tzinfo=UTC),
    )


AROUND_NOV27 = day_window(date(2025, 11, 24), date(2025, 11, 30))


@pytest.mark.parametrize(
    ("query", "window", "phrase"),
    [
        ("what happened around Nov 27", AROUND_NOV27, "around Nov 27"),
        ("what happened around Nov 27?", AROUND_NOV27, "around Nov 27"),
        ("around 2025-11-27 in Marrakech", AROUND_NOV27, "around 2025-11-27"),
        ("Around 27 November 2025", AROUND_NOV27, "Around 27 November 2025"),
        ("around Dec 25", day_window(date(2024, 12, 22), date(2024, 12, 28)), "around Dec 25"),
        ("around Dec 10", day_window(date(2025, 12, 7), date(2025, 12, 13)), "around Dec 10"),
        ("did I on Nov 27", day_window(date(2025, 11, 27), date(2025, 11, 27)), "on Nov 27"),
        ("on 2024-05-01", day_window(date(2024, 5, 1), date(2024, 5, 1)), "on 2024-05-01"),
        ("in November 2025", day_window(date(2025, 11, 1), date(2025, 11, 30)), "in November 2025"),
        ("trips in Nov", day_window(date(2025, 11, 1), date(2025, 11, 30)), "in Nov"),
        ("in Dec", day_window(date(2025, 12, 1), date(2025, 12, 31)), "in Dec"),
        ("in Feb", day_window(date(2025, 2, 1), date(2025, 2, 28)), "in Feb"),
        ("what broke last week", day_window(date(2025, 12, 1), date(2025, 12, 7)), "last week"),
        ("this week", day_window(date(2025, 12, 8), date(2025, 12, 14)), "this week"),
        ("yesterday's deploy", day_window(date(2025, 12, 9), date(2025, 12, 9)), "yesterday"),
        ("the day before yesterday", day_window(date(2025, 12, 8), date(2025, 12, 8)),
         "the day before yesterday"),
        ("Today", day_window(date(2025, 12, 10), date(2025, 12, 10)), "Today"),
        ("last month", day_window(date(2025, 11, 1), date(2025, 11, 30)), "last month"),
        ("3 days ago", day_window(date(2025, 12, 7), date(2025, 12, 7)), "3 days ago"),
        ("1 day ago", day_window(date(2025, 12, 9), date(2025, 12, 9)), "1 day ago"),
        ("11月27日ごろ何があった", AROUND_NOV27, "11月27日ごろ"),
        ("11月27日頃", AROUND_NOV27, "11月27日頃"),
        ("2025年11月27日頃", AROUND_NOV27, "2025年11月27日頃"),
        ("先週のこと", day_window(date(2025, 12, 1), date(2025, 12, 7)), "先週"),
        ("今週", day_window(date(2025, 12, 8), date(2025, 12, 14)), "今週"),
        ("昨日", day_window(date(2025, 12, 9), date(2025, 12, 9)), "昨日"),
        ("今日は", day_window(date(2025, 12, 10), date(2025, 12, 10)), "今日"),
        ("先月", day_window(date(2025, 11, 1), date(2025, 11, 30)), "先月"),
        ("上周", day_window(date(2025, 12, 1), date(2025, 12, 7)), "上周"),
        ("一昨日", day_window(date(2025, 12, 8), date(2025, 12, 8)), "一昨日"),
    ],
)
def test_query_windows(query: str, window: TimeWindow, phrase: str) -> None:
    assert find_query_window(query, NOW) == (window, phrase)


# Weeks and months ago, in words or digits, in every supported language: the day that far back,
# widened by the phrase's looseness (weeks ± 3 days, months ± 6; days stay exact).
TWO_WEEKS = day_window(date(2025, 11, 23), date(2025, 11, 29))  # Nov 26 ± 3
ONE_WEEK = day_window(date(2025, 11, 30), date(2025, 12, 6))  # Dec 3 ± 3
ONE_MONTH = day_window(date(2025, 11, 4), date(2025, 11, 16))  # Nov 10 ± 6
TWO_MONTHS = day_window(date(2025, 10, 4), date(2025, 10, 16))  # Oct 10 ± 6


@pytest.mark.parametrize(
    ("query", "window", "phrase"),
    [
        ("what did I plant two weeks ago", TWO_WEEKS, "two weeks ago"),
        ("the event 2 weeks ago", TWO_WEEKS, "2 weeks ago"),
        ("a couple of weeks ago", TWO_WEEKS, "a couple of weeks ago"),
        ("the wedding a week ago", ONE_WEEK, "a week ago"),
        ("one week ago", ONE_WEEK, "one week ago"),
        ("a charity run a month ago", ONE_MONTH, "a month ago"),
        ("the museum two months ago", TWO_MONTHS, "two months ago"),
        ("ten days ago", day_window(date(2025, 11, 30), date(2025, 11, 30)), "ten days ago"),
        ("hvad købte jeg for to uger siden", TWO_WEEKS, "for to uger siden"),
        ("for en uge siden", ONE_WEEK, "for en uge siden"),
        ("for en måned siden", ONE_MONTH, "for en måned siden"),
        ("for 2 måneder siden", TWO_MONTHS, "for 2 måneder siden"),
        ("что было две недели назад", TWO_WEEKS, "две недели назад"),
        ("неделю назад", ONE_WEEK, "неделю назад"),
        ("месяц назад", ONE_MONTH, "месяц назад"),
        ("2 месяца назад", TWO_MONTHS, "2 месяца назад"),
        ("2週間前に何を植えた", TWO_WEEKS, "2週間前"),
        ("二週間前", TWO_WEEKS, "二週間前"),
        ("1か月前", ONE_MONTH, "1か月前"),
        ("2ヶ月前", TWO_MONTHS, "2ヶ月前"),
        ("两周前", TWO_WEEKS, "两周前"),
        ("两个星期前", TWO_WEEKS, "两个星期前"),
        ("一个月前", ONE_MONTH, "一个月前"),
        ("2주 전에", TWO_WEEKS, "2주 전에"),
        ("한 달 전", ONE_MONTH, "한 달 전"),
        ("2개월 전", TWO_MONTHS, "2개월 전"),
    ],
)
def test_weeks_and_months_ago(query: str, window: TimeWindow, phrase: str) -> None:
    assert find_query_window(query, NOW) == (window, phrase)


# The week before last, vague counts of days, counts in words past twelve; said loosely: the
# other day, several days, a fortnight, a week and a half, earlier this week (NOW: Wednesday,
# December 10, 2025)
WEEK_BEFORE_LAST = day_window(date(2025, 11, 24), date(2025, 11, 30))
OTHER_DAY = day_window(date(2025, 12, 3), date(2025, 12, 8))  # 2 to 7 days back
SEVERAL_DAYS = day_window(date(2025, 12, 3), date(2025, 12, 7))  # 5 days back ± 2


@pytest.mark.parametrize(
    ("query", "window", "phrase"),
    [
        ("the week before last", WEEK_BEFORE_LAST, "the week before last"),
        ("先々週の会議", WEEK_BEFORE_LAST, "先々週"),
        ("上上周", WEEK_BEFORE_LAST, "上上周"),
        ("на позапрошлой неделе", WEEK_BEFORE_LAST, "на позапрошлой неделе"),
        ("지지난주", WEEK_BEFORE_LAST, "지지난주"),
        ("the dentist a few days ago", day_window(date(2025, 12, 6), date(2025, 12, 8)),
         "a few days ago"),
        ("for et par dage siden", day_window(date(2025, 12, 7), date(2025, 12, 9)),
         "for et par dage siden"),
        ("fifteen days ago", day_window(date(2025, 11, 25), date(2025, 11, 25)),
         "fifteen days ago"),
        ("who did I meet the other day", OTHER_DAY, "the other day"),
        ("the other day's meeting", OTHER_DAY, "the other day"),
        ("先日の会議", OTHER_DAY, "先日"),
        ("前几天我去了哪里", OTHER_DAY, "前几天"),
        ("hvem mødte jeg forleden dag", OTHER_DAY, "forleden dag"),
        ("what did I buy several days ago", SEVERAL_DAYS, "several days ago"),
        ("for flere dage siden", SEVERAL_DAYS, "for flere dage siden"),
        ("что я купил несколько дней назад", SEVERAL_DAYS, "несколько дней назад"),
        ("数日前に買った本", SEVERAL_DAYS, "数日前"),
        ("a day and a half ago", day_window(date(2025, 12, 8), date(2025, 12, 9)),
         "a day and a half ago"),
        ("what did I cook a fortnight ago", day_window(date(2025, 11, 23), date(2025, 11, 29)),
         "a fortnight ago"),
        ("for fjorten dage siden", day_window(date(2025, 11, 26), date(2025, 11, 26)),
         "for fjorten dage siden"),
        ("a week and a half ago", day_window(date(2025, 11, 27), date(2025, 12, 3)),
         "a week and a half ago"),
        ("a month and a half ago", day_window(date(2025, 10, 20), date(2025, 11, 1)),
         "a month and a half ago"),
        ("what broke earlier this week", day_window(date(2025, 12, 8), date(2025, 12, 9)),
         "earlier this week"),
        ("tidligere i denne måned", day_window(date(2025, 12, 1), date(2025, 12, 9)),
         "tidligere i denne måned"),
    ],
)
def test_phrases_said_loosely(query: str, window: TimeWindow, phrase: str) -> None:
    assert find_query_window(query, NOW) == (window, phrase)
    assert counts_back(phrase)


def test_a_phrase_that_names_its_span_does_not_fade() -> None:
    """"earlier this month" counts back but its month begins on the 1st: no fade past it."""
    window, phrase = find_query_window("the car service earlier this month", NOW) or (None, "")
    assert window is not None and fade_days(phrase, window, NOW) == 0
    window, phrase = find_query_window("the car service the other day", NOW) or (None, "")
    assert window is not None and fade_days(phrase, window, NOW) == 5


def test_earlier_this_week_on_a_monday_is_that_day() -> None:
    monday = utc(2025, 12, 8, 9)
    assert find_query_window("earlier this week", monday) == (
        day_window(date(2025, 12, 8), date(2025, 12, 8)), "earlier this week")


# A word that bounds a phrase makes it one side of a window (NOW: Wednesday, December 10, 2025)
YESTERDAY = day_window(date(2025, 12, 9), date(2025, 12, 9))


def _open(start: date | None, end: date | None) -> TimeWindow:
    return TimeWindow(*(None if d is None else datetime.combine(d, datetime.min.time(), tzinfo=UTC)
                        for d in (start, end)))


@pytest.mark.parametrize(
    ("query", "window", "phrase"),
    [
        ("airlines I flew with before today", _open(None, date(2025, 12, 10)), "before today"),
        ("what changed since last week", _open(date(2025, 12, 1), None), "since last week"),
        ("notes until yesterday", _open(None, date(2025, 12, 10)), "until yesterday"),
        ("up until last month", _open(None, date(2025, 12, 1)), "up until last month"),
        ("gateway after 2025-11-27", None, ""),  # a bare date is no phrase in a query
        ("the deploy after last week", _open(date(2025, 12, 8), None), "after last week"),
        ("hvad er sket siden i går", _open(date(2025, 12, 9), None), "siden i går"),
        ("今日までに何をした", _open(None, date(2025, 12, 11)), "今日までに"),
        ("上周以来的变化", _open(date(2025, 12, 1), None), "上周以来"),
        ("今天之前的航班", _open(None, date(2025, 12, 10)), "今天之前"),
        ("上周之后", _open(date(2025, 12, 8), None), "上周之后"),  # after: as "after last week"
        ("before  today", _open(None, date(2025, 12, 10)), "before  today"),  # as written
        ("今天 之前", _open(None, date(2025, 12, 10)), "今天 之前"),
        # not bounds: inside a phrase, "up to" (doing), a thing's date, a reason, Danish verbs
        ("what did I change before yesterday's meeting", YESTERDAY, "yesterday"),
        ("the night before yesterday", YESTERDAY, "yesterday"),
        ("not until yesterday did it work", YESTERDAY, "yesterday"),
        ("since yesterday was a holiday, what did I cook", YESTERDAY, "yesterday"),
        ("hvad ledte jeg efter i går", YESTERDAY, "i går"),  # looked for
        ("hvad ændrede jeg på siden i går", YESTERDAY, "i går"),  # on the page
        ("the day before yesterday", day_window(date(2025, 12, 8), date(2025, 12, 8)),
         "the day before yesterday"),
        ("what was I up to last week", day_window(date(2025, 12, 1), date(2025, 12, 7)),
         "last week"),
        ("for to dage siden", day_window(date(2025, 12, 8), date(2025, 12, 8)),
         "for to dage siden"),
    ],
)
def test_a_bound_makes_one_side_of_a_window(query: str, window: TimeWindow | None,
                                            phrase: str) -> None:
    found = find_query_window(query, NOW)
    assert (found is None and window is None) or found == (window, phrase)


def test_weeks_ago_as_a_flag_is_the_day_itself() -> None:
    """A flag's value has no looseness: --since '2 weeks ago' starts that day."""
    start, end = parse_time_spec("2 weeks ago", NOW)
    assert (start, end) == (utc(2025, 11, 26), utc(2025, 11, 27))


@pytest.mark.parametrize("query", ["weeks of work", "three weeks", "a weekday ago", "agony",
                                   "for to uger", "недели", "2週間", "两周",
                                   "the other day-care", "the other days", "other day",
                                   "what did I book on the other day",
                                   # Chinese and Japanese words that hold 先日, 前几天, N日前
                                   "首先日志要清理", "优先日期", "先日付小切手", "这几天前端一直报错",
                                   "提前几天通知", "在发布之前几天", "納期を数日前倒しする",
                                   # a question word: how many days ago; a few days before a trip
                                   "上次部署是几天前", "회의가 며칠 전이었지", "출발 며칠 전에 연락"])
def test_no_weeks_ago(query: str) -> None:
    assert find_query_window(query, NOW) is None


def test_last_week_on_a_monday_and_across_year_end() -> None:
    monday = utc(2026, 1, 5, 8)
    found = find_query_window("last week", monday)
    assert found == (day_window(date(2025, 12, 29), date(2026, 1, 4)), "last week")
    january = find_query_window("last month", utc(2026, 1, 15))
    assert january == (day_window(date(2025, 12, 1), date(2025, 12, 31)), "last month")


def test_around_feb_29_looks_back_to_a_leap_year() -> None:
    found = find_query_window("around Feb 29", NOW)
    assert found == (day_window(date(2024, 2, 26), date(2024, 3, 3)), "around Feb 29")


def test_leftmost_phrase_wins() -> None:
    found = find_query_window("yesterday or last week", NOW)
    assert found is not None and found[1] == "yesterday"


@pytest.mark.parametrize(
    "query", ["", "how does the gateway work", "around the castle", "on Feb 30", "todays"]
)
def test_no_query_window(query: str) -> None:
    assert find_query_window(query, NOW) is None


@settings(max_examples=300)
@given(st.text())
def test_find_query_window_never_raises(query: str) -> None:
    find_query_window(query, NOW)


@settings(max_examples=300)
@given(
    st.text(alphabet=st.sampled_from(list("0123456789 aroundonNovFebin年月日ごろ頃daysago先週"))),
    st.datetimes(
        min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
    ),
)
def test_find_query_window_never_raises_on_date_like_text(query: str, now: datetime) -> None:
    find_query_window(query, now)
