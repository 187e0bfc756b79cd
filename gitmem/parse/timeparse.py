"""Time (docs/memory-format.md): the ``--since/--until/--as-of/--around`` syntax and the windows
built from it, event periods stated inside Retain entries, and date phrases inside recall queries.

Everything is UTC; a naive date-time is taken as UTC.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from typing import NamedTuple

from gitmem.domain import TimeWindow
from gitmem.errors import UsageError

Period = tuple[datetime, datetime]
DayRange = tuple[date, date]

ACCEPTED_FORMS = (
    "a duration (12h, 30d, 2w, 6m, 1y), a date (2025, 2025-11, 2025-11-27), "
    "an ISO date-time, 'today' or 'yesterday', or a date phrase ('last week', "
    "'March 6, 2025', '3月6日')"
)

# --- query syntax (whole-value, ASCII only) -------------------------------------------------

_DURATION_RE = re.compile(r"(\d+)\s*([hdwmy])", re.ASCII)
_YEAR_RE = re.compile(r"(\d{4})", re.ASCII)
_MONTH_RE = re.compile(r"(\d{4})-(\d{1,2})", re.ASCII)
_DAY_RE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})", re.ASCII)
_DATETIME_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:z|[+-]\d{2}(?::?\d{2})?)?",
    re.ASCII,
)

# --- dates inside text ----------------------------------------------------------------------

_MONTH_ABBRS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_NUMBERS = {name: number for number, name in enumerate(_MONTH_ABBRS, 1)}
_MONTH_NAME = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_SEP = r"\s*(?:[-–—‐−~〜～]|\.\.|\bto\b|\bthrough\b|\buntil\b)\s*"
_CJK_SEP = r"\s*(?:[-–—‐−~〜～]|\.\.|から|至|到)\s*"
_ISO_START = r"(?<![A-Za-z0-9_/.\-])"
# An ISO date that is part of a file name or path (memory/2025-11-27.md) is not an event date.
_ISO_END = r"(?=$|[^A-Za-z0-9_/.]|\.(?![A-Za-z0-9_])|[Tt]\d)"


def _mon(name: str) -> str:
    return rf"\b(?P<{name}>{_MONTH_NAME})\b\.?"


def _day(name: str) -> str:
    return rf"(?P<{name}>[0-3]?\d)(?!\d)(?:st|nd|rd|th)?\b"


def _year(name: str) -> str:
    return rf"(?P<{name}>\d{{4}})(?!\d)"


def _cjk_day(year: str, month: str, day: str) -> str:
    return (
        rf"(?:{_year(year)}\s*年\s*)?(?P<{month}>\d{{1,2}})\s*月\s*"
        rf"(?P<{day}>\d{{1,2}})\s*[日号號]"
    )


@functools.cache
def _event_patterns() -> tuple[re.Pattern[str], ...]:
    """Event periods inside entries: ISO, English month-day and day-month, Chinese/Japanese.
    Compiled on first use (tens of milliseconds of regex compilation that recall never needs)."""
    _ISO_EVENT_RE = re.compile(
        rf"{_ISO_START}{_year('y1')}-(?P<m1>\d{{1,2}})-(?P<d1>\d{{1,2}})"
        rf"(?:{_SEP}(?:{_year('y2')}-)?(?P<m2>\d{{1,2}})-(?P<d2>\d{{1,2}}){_ISO_END})?{_ISO_END}",
        re.IGNORECASE,
    )
    _EN_MDY_RE = re.compile(
        rf"{_mon('m1')}\s*{_day('d1')}(?:,?\s*{_year('y1')})?"
        rf"(?:{_SEP}(?:{_mon('m2')}\s*)?{_day('d2')}(?:,?\s*{_year('y2')})?)?",
        re.IGNORECASE,
    )
    _EN_DMY_RE = re.compile(
        rf"\b{_day('d1')}(?:\s+{_mon('m1')}(?:,?\s+{_year('y1')})?)?(?:{_SEP}{_day('d2')})?"
        rf"\s+{_mon('m2')}(?:,?\s+{_year('y2')})?",
        re.IGNORECASE,
    )
    _CJK_EVENT_RE = re.compile(
        rf"(?<!\d){_cjk_day('y1', 'm1', 'd1')}"
        rf"(?:{_CJK_SEP}(?:(?:{_year('y2')}\s*年\s*)?(?P<m2>\d{{1,2}})\s*月\s*)?(?P<d2>\d{{1,2}})\s*[日号號])?"
    )
    return (_ISO_EVENT_RE, _EN_MDY_RE, _EN_DMY_RE, _CJK_EVENT_RE)


# --- date phrases inside a recall query -----------------------------------------------------


def _phrases(prefix: str) -> tuple[re.Pattern[str], ...]:
    """``prefix`` followed by one day: ISO, ``Nov 27[, 2025]`` or ``27 Nov [2025]``."""
    iso = rf"{_ISO_START}{_year('y')}-(?P<m>\d{{1,2}})-(?P<d>\d{{1,2}}){_ISO_END}"
    mdy = rf"{_mon('m')}\s*{_day('d')}(?:,?\s*{_year('y')})?"
    dmy = rf"{_day('d')}\s+{_mon('m')}(?:,?\s+{_year('y')})?"
    return tuple(re.compile(rf"\b{prefix}\s+{body}", re.IGNORECASE) for body in (iso, mdy, dmy))


# Every query rule needs a digit, a CJK character, or one of these words: queries without
# any skip the rules (and compiling them) entirely.
# (Matched against the lower-cased query: IGNORECASE with these ranges costs ms to compile.)
_MAYBE_DATE = re.compile(
    r"\d|[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7a3]|\b(?:week|month|yesterday|today|ago|jan"
    r"|fortnight|other\s+day|forleden"
    r"|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|i\s+g|i\s+forg|i\s+dag|uge|måned|вчера"
    r"|позавчера|сегодня|недел|месяц|назад|siden)"
)

# --- small date helpers ---------------------------------------------------------------------


def _utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def _days(first: date, last: date) -> Period:
    """The UTC period covering the inclusive days [first, last]."""
    return _midnight(first), _midnight(last + timedelta(days=1))


def _first_of_month(year: int, month: int, shift: int = 0) -> date:
    index = year * 12 + (month - 1) + shift
    return date(index // 12, index % 12 + 1, 1)


def _month_days(year: int, month: int) -> DayRange:
    return date(year, month, 1), _first_of_month(year, month, 1) - timedelta(days=1)


def _shift_months(moment: datetime, months: int) -> datetime:
    """``moment`` moved by whole calendar months, clamping the day (Mar 31 − 1m = Feb 28)."""
    first = _first_of_month(moment.year, moment.month, months)
    last_day = (_first_of_month(first.year, first.month, 1) - timedelta(days=1)).day
    return moment.replace(year=first.year, month=first.month, day=min(moment.day, last_day))


# --- query syntax ---------------------------------------------------------------------------


def _invalid(value: str, argument: str | None = None) -> UsageError:
    if argument is None:
        return UsageError(f"invalid time {value.strip()!r}: use {ACCEPTED_FORMS}")
    return UsageError.naming("invalid time {value!r} for {" + argument + "}: use {forms}",
                             value=value.strip(), forms=ACCEPTED_FORMS)


def _duration_start(text: str, now: datetime) -> datetime | None:
    match = _DURATION_RE.fullmatch(text)
    if match is None:
        return None
    count, unit = int(match.group(1)), match.group(2)
    if unit == "m":
        return _shift_months(now, -count)
    if unit == "y":
        return _shift_months(now, -12 * count)
    hours = {"h": 1, "d": 24, "w": 24 * 7}[unit]
    return now - timedelta(hours=hours * count)


def _keyword_period(text: str, now: datetime) -> Period | None:
    back = {"today": 0, "yesterday": 1}.get(text)
    if back is None:
        return None
    day = now.date() - timedelta(days=back)
    return _days(day, day)


def _calendar_period(text: str) -> Period | None:
    if match := _YEAR_RE.fullmatch(text):
        year = int(match.group(1))
        return _days(date(year, 1, 1), date(year, 12, 31))
    if match := _MONTH_RE.fullmatch(text):
        return _days(*_month_days(int(match.group(1)), int(match.group(2))))
    if match := _DAY_RE.fullmatch(text):
        day = date(int(match.group(1)), int(match.group(2)), int(match.group(3)))
        return _days(day, day)
    return None


def _datetime_instant(text: str) -> datetime | None:
    if _DATETIME_RE.fullmatch(text) is None:
        return None
    iso = text.upper()
    if iso.endswith("Z"):
        iso = iso[:-1] + "+00:00"
    return _utc(datetime.fromisoformat(iso))


def _parse(value: str, now: datetime, *, durations_as_instants: bool) -> Period:
    """Parse one spec; durations are (now − d, now), or the instant now − d when asked."""
    text = value.strip().lower()
    now = _utc(now)
    try:
        start = _duration_start(text, now)
        if start is not None:
            return (start, start) if durations_as_instants else (start, now)
        period = _keyword_period(text, now) or _calendar_period(text)
        if period is not None:
            return period
        instant = _datetime_instant(text)
    except (ValueError, OverflowError):
        raise _invalid(value) from None
    if instant is None:
        period = _phrase_period(text, now)
        if period is None:
            raise _invalid(value)
        return period
    return instant, instant


def _phrase_period(text: str, now: datetime) -> Period | None:
    """A date phrase as queries take them ('last week', 'around Nov 27', '3月6日'), or a bare
    day ('March 6, 2025'), when it is the whole value: the flags accept what queries do."""
    for candidate in (text, f"on {text}"):
        found = find_query_window(candidate, now, around_days=0)
        if found is not None and found[1].casefold() == candidate.casefold():
            window = found[0]
            if window.start is not None and window.end is not None:
                return window.start, window.end
    return None


def parse_time_spec(value: str, now: datetime) -> tuple[datetime, datetime]:
    """The half-open UTC period ``[start, end)`` named by a query time spec (docs/memory-format.md).

    ``12h``/``30d``/``2w``/``6m``/``1y`` → ``(now − duration, now)`` (``m`` is calendar
    months, ``y`` is twelve of them, days clamped to the month's end); ``2025``,
    ``2025-11``, ``2025-11-27`` → the whole year, month or day; an ISO date-time → ``(t, t)``;
    ``today``/``yesterday`` → that UTC day. Case and surrounding whitespace are ignored.
    Raises :class:`UsageError` naming the value and the accepted forms otherwise.
    """
    return _parse(value, now, durations_as_instants=False)


def build_window(
    *,
    since: str | None,
    until: str | None,
    around: str | None,
    now: datetime,
    around_days: int = 3,
) -> TimeWindow | None:
    """The window for ``--since``/``--until``/``--around``, or None when none is given.

    ``since`` opens at the start of its period and ``until`` closes at the end of its period
    (``--until 2025-11`` keeps all of November). A duration is read as the instant it points
    back to: ``--until 30d`` ends 30 days ago and ``--around 2w`` centres on two weeks ago.
    ``--around D`` is ``[D.start − around_days, D.end + around_days)``.
    """
    if around is not None:
        if since is not None or until is not None:
            raise UsageError.naming("{around} cannot be combined with {since} or {until}")
        start, end = _argument("around", around, now)
        try:
            return TimeWindow(start - timedelta(around_days), end + timedelta(around_days))
        except OverflowError:
            raise _invalid(around, "around") from None
    if since is None and until is None:
        return None
    opens = _argument("since", since, now)[0] if since is not None else None
    closes = _argument("until", until, now)[1] if until is not None else None
    if opens is not None and closes is not None and opens >= closes:
        raise UsageError.naming("{since} {opens!r} is not before {until} {closes!r}: the window "
                                "is empty", opens=since, closes=until)
    return TimeWindow(opens, closes)


def _argument(name: str, value: str, now: datetime) -> Period:
    """``value`` of the argument ``name`` (since, until, around) read as a period; a bad value
    is an error that names the argument."""
    try:
        return _parse(value, now, durations_as_instants=True)
    except UsageError:
        raise _invalid(value, name) from None


def as_of_instant(value: str, now: datetime) -> datetime:
    """The instant ``--as-of value`` names: the exclusive END of its period.

    ``2025-11`` → 2025-12-01T00:00Z; a date-time → itself; ``30d`` → now − 30 days;
    ``today`` → tomorrow's midnight (everything recorded today counts).
    """
    return _parse(value, now, durations_as_instants=True)[1]


def show_time(t: datetime | None) -> str | None:
    """One format for times in JSON: a day as YYYY-MM-DD, an instant as ISO 8601 UTC seconds
    (like ``recorded_at``)."""
    if t is None:
        return None
    t = t.astimezone(UTC)
    if t.time() == datetime.min.time():
        return t.date().isoformat()
    return t.isoformat(timespec="seconds")


def as_of_bounds(value: str, now: datetime) -> tuple[datetime, str]:
    """(the last instant included, the last event day included) for --as-of."""
    instant = as_of_instant(value, now)
    if instant.time() == datetime.min.time() and instant != now:
        instant -= timedelta(microseconds=1)  # a date, month or year: up to its very end
    return instant, instant.date().isoformat()


# --- event periods inside text --------------------------------------------------------------


def _number(token: str | None) -> int | None:
    if token is None:
        return None
    prefix = token[:3].lower()
    return _MONTH_NUMBERS[prefix] if prefix in _MONTH_NUMBERS else int(token)


def _range_years(
    y1: int | None, y2: int | None, start: tuple[int, int], end: tuple[int, int], default: int
) -> tuple[int, int]:
    """Years for a range; a missing year is inferred so the range runs forwards."""
    if y1 is not None and y2 is not None:
        return y1, y2
    backwards = end < start
    if y2 is not None:  # the stated year belongs to the END date
        return (y2 - 1 if backwards else y2), y2
    return default, (default + 1 if backwards else default)


def _period_from_groups(groups: dict[str, str | None], default_year: int | None) -> DayRange | None:
    y1, y2 = _number(groups.get("y1")), _number(groups.get("y2"))
    m1, m2 = _number(groups.get("m1")), _number(groups.get("m2"))
    d1, d2 = _number(groups.get("d1")), _number(groups.get("d2"))
    start_month, end_month = m1 or m2, m2 or m1
    if d1 is None or start_month is None or end_month is None:
        return None
    if d2 is not None and m2 is None and d2 < d1:
        d2 = None  # "Nov 27 - 3 people": not a range
    base = y1 if y1 is not None else (y2 if y2 is not None else default_year)
    if base is None:
        return None
    try:
        if d2 is None:
            day = date(base, start_month, d1)
            return day, day
        ys, ye = _range_years(y1, y2, (start_month, d1), (end_month, d2), base)
        first, last = date(ys, start_month, d1), date(ye, end_month, d2)
    except (ValueError, OverflowError):
        return None
    return min(first, last), max(first, last)


def _ordered_matches(patterns: tuple[re.Pattern[str], ...], text: str) -> list[re.Match[str]]:
    """All matches, earliest first; at the same position the longest first."""
    found = [match for pattern in patterns for match in pattern.finditer(text)]
    return sorted(found, key=lambda match: (match.start(), match.start() - match.end()))


def find_event_period(text: str, *, default_year: int | None = None) -> tuple[date, date] | None:
    """The event period stated in a Retain entry's text: inclusive (first, last) days, or None.

    Recognised: ISO dates and ranges (``2025-11-27 – 2025-12-01``, ``2025-11-27..12-01``;
    separators ``– — - to .. ~ 〜 ～``), English month names (``Nov 27–Dec 1, 2025``,
    ``Nov 27-30, 2025``, ``November 27, 2025``, ``27 November 2025``, ``27–30 Nov 2025``,
    ``Nov 27 2025``) and Japanese/Chinese dates (``2025年11月27日〜12月1日``, ``11月27号``).

    Only the FIRST expression counts (leftmost; the longest at the same place); the result
    spans its earliest to its latest day. An expression that is no real date (Feb 30), or
    has no year while ``default_year`` is None, is skipped and the search goes on. A year
    stated on one side only belongs to that side, and the other side's year is chosen so the
    range runs forwards: ``Dec 30 – Jan 2, 2025`` is 2024-12-30..2025-01-02,
    ``2025年12月30日〜1月2日`` is 2025-12-30..2026-01-02; with no year, ``default_year`` is
    the start's. ``Nov 27-3`` (no second month, day goes back) is just Nov 27. ISO dates
    inside a path or file name (``memory/2025-11-27.md``) are ignored. Never raises.
    """
    for match in _ordered_matches(_event_patterns(), text):
        period = _period_from_groups(match.groupdict(), default_year)
        if period is not None:
            return period
    return None


# --- date phrases inside a recall query -----------------------------------------------------

_Handler = Callable[[re.Match[str], date, int], DayRange | None]


def _recent_day(month: int, day: int, today: date) -> date | None:
    """The most recent ``month``/``day`` not after ``today`` (Feb 29 looks back to a leap year)."""
    for year in range(today.year, today.year - 8, -1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate <= today:
            return candidate
    return None


def _stated_day(match: re.Match[str], today: date) -> date | None:
    month, day, year = _number(match["m"]), _number(match["d"]), _number(match["y"])
    assert month is not None and day is not None
    if year is None:
        return _recent_day(month, day, today)
    return date(year, month, day)


def _around(match: re.Match[str], today: date, margin: int) -> DayRange | None:
    day = _stated_day(match, today)
    if day is None:
        return None
    return day - timedelta(days=margin), day + timedelta(days=margin)


def _on(match: re.Match[str], today: date, margin: int) -> DayRange | None:
    day = _stated_day(match, today)
    return None if day is None else (day, day)


def _in_month(match: re.Match[str], today: date, margin: int) -> DayRange | None:
    month, year = _number(match["m"]), _number(match["y"])
    assert month is not None
    if year is None:
        year = today.year if month <= today.month else today.year - 1
    return _month_days(year, month)


# Counts written as words in "N days/weeks/months ago", by language; any other count is digits.
_COUNT_WORDS_BY_LANGUAGE: dict[str, dict[str, int]] = {
    "en": {"a": 1, "an": 1, "one": 1, "two": 2, "a couple of": 2, "couple of": 2, "three": 3,
           "a few": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
           "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
           "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
           "twenty": 20, "thirty": 30, "several": 5},
    "da": {"en": 1, "et": 1, "et par": 2, "to": 2, "tre": 3, "fire": 4, "fem": 5, "seks": 6,
           "syv": 7, "otte": 8, "ni": 9, "ti": 10, "elleve": 11, "tolv": 12, "tretten": 13,
           "fjorten": 14, "femten": 15, "seksten": 16, "sytten": 17, "atten": 18,
           "nitten": 19, "tyve": 20, "flere": 5},
    "ru": {"два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5, "шесть": 6, "семь": 7,
           "восемь": 8, "девять": 9, "десять": 10, "несколько": 5},
    "cjk": {"一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
            "八": 8, "九": 9, "十": 10, "数": 5, "數": 5},
    "ko": {"한": 1, "두": 2, "세": 3, "네": 4},
}
_COUNT_WORDS = {w: n for words in _COUNT_WORDS_BY_LANGUAGE.values() for w, n in words.items()}
# Counts that are no number ("a few days ago", "several days ago"): the day they name widens by
# this many days either side ("several" is 3 to 7).
_VAGUE_COUNTS = {"a few": 1, "a couple of": 1, "couple of": 1, "et par": 1, "several": 2,
                 "flere": 2, "несколько": 2, "数": 2, "數": 2}
_UNIT_DAYS = {"d": 1, "w": 7, "f": 14}  # "m": calendar months; "f" a fortnight


def _ago_unit(word: str) -> str:
    """'d', 'w' or 'm' of a unit as written (days, uger, недели, 週間, 个月, 주, ...)."""
    w = word.casefold()
    if w.startswith("fortnight"):
        return "f"
    if w.startswith(("day", "dag", "ден", "дн", "дён")) or w in ("日", "天", "일"):
        return "d"
    if w.startswith(("week", "uge", "недел", "週", "周", "个星期", "個星期", "星期", "礼拜", "주")):
        return "w"
    return "m"


def _ago(match: re.Match[str], today: date, margin: int) -> DayRange:
    """``N days/weeks/months ago``: that day; a week, a fortnight or a month back is said
    loosely, so it widens by ``margin`` days (a month by twice that); a day is exact, but "a
    few days ago" is the day 3 days back and the days either side of it, "several days ago"
    5 days back ± 2. "A week and a half ago" is 10 days back (± ``margin``), "a month and a
    half ago" a month and 15 days."""
    groups = match.groupdict()
    count = next((g for name, g in groups.items() if name.startswith("n") and g), "1")
    unit = _ago_unit(next(g for name, g in groups.items() if name.startswith("u") and g))
    folded = re.sub(r"\s+", " ", count.casefold())  # "неделю назад": one week
    n = int(folded) if folded.isdigit() else _COUNT_WORDS.get(folded) or _cjk_number(folded)
    half = bool(groups.get("half"))
    if unit == "m":
        day = _shift_months(_midnight(today), -n).date() - timedelta(days=15 * half)
        spread = 2 * margin
    elif unit == "d":
        day = today - timedelta(days=n)
        spread = _VAGUE_COUNTS.get(folded, 0)
        if half:  # "two days and a half ago": 2 to 3 days back
            return day - timedelta(days=spread + 1), day + timedelta(days=spread)
    else:
        day = today - timedelta(days=n * _UNIT_DAYS[unit] + _UNIT_DAYS[unit] // 2 * half)
        spread = margin
    return day - timedelta(days=spread), day + timedelta(days=spread)


_CJK_DIGITS = {"一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
               "八": 8, "九": 9}


def _cjk_number(text: str) -> int:
    """A Chinese/Japanese numeral below 100 written with 十: 十五 15, 二十 20, 二十一 21."""
    tens, _, ones = text.partition("十")
    return _CJK_DIGITS.get(tens, 1) * 10 + _CJK_DIGITS.get(ones, 0)


def _fixed(offset_days: int) -> _Handler:
    def handler(match: re.Match[str], today: date, margin: int) -> DayRange:
        day = today - timedelta(days=offset_days)
        return day, day

    return handler


def _week(offset_weeks: int) -> _Handler:
    def handler(match: re.Match[str], today: date, margin: int) -> DayRange:
        monday = today - timedelta(days=today.weekday(), weeks=offset_weeks)
        return monday, monday + timedelta(days=6)

    return handler


def _days_back(first: int, last: int) -> _Handler:
    """Days ``last`` .. ``first`` before today: "the other day" is 2 to 7 days back."""
    def handler(match: re.Match[str], today: date, margin: int) -> DayRange:
        return today - timedelta(days=last), today - timedelta(days=first)

    return handler


def _earlier_this(unit: str) -> _Handler:
    """"earlier this week" (this month): its first day to yesterday, or today on that day."""
    def handler(match: re.Match[str], today: date, margin: int) -> DayRange:
        first = (today - timedelta(days=today.weekday()) if unit == "week"
                 else today.replace(day=1))
        return first, max(first, today - timedelta(days=1))

    return handler


def _month(offset_months: int) -> _Handler:
    def handler(match: re.Match[str], today: date, margin: int) -> DayRange:
        first = _first_of_month(today.year, today.month, -offset_months)
        return _month_days(first.year, first.month)

    return handler


def _ago_pattern() -> re.Pattern[str]:
    """``N days/weeks/months ago`` in English, Danish, Russian, Japanese, Chinese and Korean,
    the count in digits or words (groups ``n*`` the count, ``u*`` the unit)."""
    def count(language: str) -> str:
        words = sorted(_COUNT_WORDS_BY_LANGUAGE[language], key=len, reverse=True)
        return "|".join([r"\d{1,6}", *(re.escape(w).replace(r"\ ", r"\s+") for w in words)])
    cjk = "|".join([r"\d{1,6}", "[一二两兩三四五六七八九]?十[一二三四五六七八九]?",
                    *_COUNT_WORDS_BY_LANGUAGE["cjk"]])
    return re.compile(
        rf"\b(?P<nen>{count('en')})\s+(?P<uen>days?|weeks?|fortnights?|months?)"
        r"(?P<half>\s+and\s+a\s+half)?\s+ago\b"
        rf"|\bfor\s+(?P<nda>{count('da')})\s+(?P<uda>dage?|uger?|måned(?:er)?)\s+siden\b"
        # a plural without a count ("дней назад") is no day; a singular is one
        rf"|(?:\b(?P<nru>{count('ru')})\s+(?P<uru>день|дня|дней|недел[юиь]|месяц(?:а|ев)?)"
        r"|\b(?P<uru1>день|неделю|месяц))\s+назад\b"
        # not the end of a longer numeral ("二十一天前" is 21 days, not 1)
        rf"|(?<![\d一二两兩三四五六七八九十百千数數几幾])(?P<ncjk>{cjk})\s*"
        r"(?P<ucjk>日|天|週間|周|週|个星期|個星期|星期|礼拜|か月|ヶ月|カ月|ケ月|个月|個月)(?:前|以前)"
        r"(?![端台提置缀綴倒面排])"
        rf"|(?P<nko>{count('ko')})\s*(?P<uko>일|주|달|개월)\s*전(?:에)?",
        re.IGNORECASE)


class _Rule(NamedTuple):
    """A date phrase counted from the day it is said: its pattern, how it becomes days, whether
    those days lie before that day (what a note's line can count back to), words one of
    which a text holds (lower-cased) wherever the pattern matches (its last word: a line and
    the one before it are read, so a phrase wrapped onto the next line is read whole), and
    whether its window fades (``fade_days``): not when it names its span ("earlier this
    month")."""

    pattern: re.Pattern[str]
    handler: _Handler
    back: bool
    needles: tuple[str, ...]
    fades: bool = True


@functools.cache
def _relative_rules() -> tuple[_Rule, ...]:
    """Date phrases counted from the day they are said ("yesterday", "last week", "3 days
    ago") and how each becomes days; compiled on first use."""
    # English, Japanese, Chinese; Danish ("i går", "i sidste uge", "for 3 dage siden"),
    # Russian ("вчера", "на прошлой неделе", "3 дня назад"), Korean ("어제", "지난주에", "3일 전").
    last_week_re = re.compile(r"\blast\s+week\b|先週|上周|上週"
                              r"|\b(?:i\s+)?(?:sidste|forrige)\s+uge\b"
                              r"|\bна\s+прошлой\s+неделе\b|\bпрошлая\s+неделя\b|지난\s?주(?:에)?",
                              re.IGNORECASE)
    this_week_re = re.compile(r"\bthis\s+week\b|今週|本周|本週|这周|這週|\b(?:i\s+)?denne\s+uge\b"
                            r"|\bна\s+этой\s+неделе\b|이번\s?주(?:에)?", re.IGNORECASE)
    last_month_re = re.compile(r"\blast\s+month\b|先月|上个月|上個月|上月"
                             r"|\b(?:i\s+)?(?:sidste|forrige)\s+måned\b"
                             r"|\bв\s+прошлом\s+месяце\b|지난\s?달(?:에)?", re.IGNORECASE)
    this_month_re = re.compile(r"\bthis\s+month\b|今月|本月|这个月|這個月"
                               r"|\b(?:i\s+)?denne\s+måned\b"
                               r"|\bв\s+этом\s+месяце\b|이번\s?달(?:에)?", re.IGNORECASE)
    # 前天 not inside 之前天气 / 三年前天; 그제 not 그제야 ("only then")
    day_before_re = re.compile(r"\b(?:the\s+)?day\s+before\s+yesterday\b|一昨日|おととい"
                               r"|(?<![之年以])前天|\bi\s+forgårs\b|\bпозавчера\b|그저께"
                               r"|그제(?!야|서야)", re.IGNORECASE)
    # Danish "I går" with a capital I inside a sentence is "you go" ("Når I går hjem")
    yesterday_re = re.compile(r"\byesterday\b|昨日|昨天|(?:(?-i:\bi)|(?-i:(?:^|(?<=[\n.!?:\"“„(-])"
                              r"|(?<=[\n.!?:\"“„(-]\s))I))\s+går\b|\bвчера\b|어제", re.IGNORECASE)
    # "the other day": a few days back, said loosely (先日, 前几天, forleden); not "on the other
    # day" (of two), 首先日志 (first, the log), 优先日期, 先日付 (post-dated), 提前几天 (a few
    # days ahead), 之前几天 (a few days before). Korean 며칠 전 is also "how many days ago" and
    # "a few days before (a thing)": not read.
    other_day_re = re.compile(r"(?<!\bon\s)(?<!\bfor\s)\bthe\s+other\s+day(?![-\w])"
                              r"|(?<![\u4e00-\u9fff])先日(?![付期志程])"
                              r"|(?<![之提以目这這])(?:前几天|前幾天|前些天|前些日子)"
                              r"|\bforleden(?:\s+dag)?\b", re.IGNORECASE)
    earlier_week_re = re.compile(r"\bearlier\s+this\s+week\b|\btidligere\s+(?:i\s+)?denne\s+uge\b",
                                 re.IGNORECASE)
    earlier_month_re = re.compile(r"\bearlier\s+this\s+month\b"
                                  r"|\btidligere\s+(?:i\s+)?denne\s+måned\b", re.IGNORECASE)
    today_re = re.compile(r"\btoday\b|今日|今天|\bi\s+dag\b|\bсегодня\b|오늘", re.IGNORECASE)
    week_before_last_re = re.compile(r"\b(?:the\s+)?week\s+before\s+last\b|先々週|先先週"
                                     r"|上上(?:周|週|星期|个星期|個星期)"
                                     r"|\bна\s+позапрошлой\s+неделе\b|지지난\s?주(?:에)?",
                                     re.IGNORECASE)
    return (
        _Rule(week_before_last_re, _week(2), True,
              ("last", "先々週", "先先週", "上上", "позапрошл", "지지난")),
        _Rule(_ago_pattern(), _ago, True, ("ago", "siden", "назад", "前", "전")),
        _Rule(last_week_re, _week(1), True,
              ("week", "uge", "недел", "先週", "上周", "上週", "지난")),
        _Rule(this_week_re, _week(0), False, ()),
        _Rule(last_month_re, _month(1), True,
              ("month", "måned", "месяц", "先月", "上个月", "上個月", "上月", "지난")),
        _Rule(this_month_re, _month(0), False, ()),
        _Rule(day_before_re, _fixed(2), True,
              ("yesterday", "一昨日", "おととい", "前天", "forgårs", "позавчера", "그저께",
               "그제")),
        _Rule(yesterday_re, _fixed(1), True,
              ("yesterday", "昨日", "昨天", "går", "вчера", "어제")),
        _Rule(today_re, _fixed(0), False, ()),
        _Rule(other_day_re, _days_back(2, 7), True,
              ("day", "先日", "前几天", "前幾天", "前些", "forleden")),
        # they count back, but name their span: its first day is an edge (no fade)
        _Rule(earlier_week_re, _earlier_this("week"), True, ("week", "uge"), False),
        _Rule(earlier_month_re, _earlier_this("month"), True, ("month", "måned"), False),
    )


@functools.cache
def _query_rules() -> dict[re.Pattern[str], _Handler]:
    """Date phrases in queries and how each becomes a window; compiled on first use."""
    around_res = _phrases("around")
    on_res = _phrases("on")
    in_month_re = re.compile(rf"\bin\s+{_mon('m')}(?:,?\s+{_year('y')})?", re.IGNORECASE)
    cjk_around_re = re.compile(rf"(?<!\d){_cjk_day('y', 'm', 'd')}\s*(?:ごろ|頃|前後|左右)")
    cjk_on_re = re.compile(rf"(?<!\d){_cjk_day('y', 'm', 'd')}")
    rules: tuple[tuple[re.Pattern[str], _Handler], ...] = (
        *((pattern, _around) for pattern in around_res),
        (cjk_around_re, _around),
        (cjk_on_re, _on),
        *((pattern, _on) for pattern in on_res),
        (in_month_re, _in_month),
        *((rule.pattern, rule.handler) for rule in _relative_rules()),
    )
    return {pattern: handler for pattern, handler in rules}


@functools.cache
def _may_count_back() -> re.Pattern[str]:
    """Where a text may count back to a day: a needle of a rule that does (lower-cased text)."""
    needles = sorted({w for rule in _relative_rules() if rule.back for w in rule.needles},
                     key=len, reverse=True)
    return re.compile("|".join(map(re.escape, needles)))


def counted_back(text: str, day: date, *, around_days: int = 3) -> list[tuple[int, DayRange]]:
    """(line number from 0, inclusive (first, last) days) of each phrase in a text of the note
    of ``day`` that counts back from that day: "yesterday" in the note of March 17 is March 16;
    "two days ago", "the day before yesterday", "last week", "last month", "i går", "вчера",
    "昨日", "二十一天前" are read as a query's phrases are ("a week ago" ± ``around_days``). A
    phrase wrapped onto the next line is read whole, and counts for each line it spans. Words
    that name the note's own day or a span holding it ("today", "this week") add nothing to
    what the note's date says, and dates a line states are searched as words: neither is
    read. Never raises."""
    lower = text.lower()  # may differ in length ("İ"), never in its line breaks
    hits = [m.start() for m in _may_count_back().finditer(lower)]
    if not hits:
        return []
    lines = text.split("\n")
    starts = list(itertools.accumulate((len(line) + 1 for line in lower.split("\n")), initial=0))
    hit_lines = sorted({bisect.bisect_right(starts, at) - 1 for at in hits})
    found: list[tuple[int, DayRange]] = []
    for first, last in _blocks(hit_lines):  # each hit line with the line before it
        block = "\n".join(lines[first:last + 1])
        ends = list(itertools.accumulate((len(line) + 1 for line in lines[first:last + 1]),
                                         initial=0))
        for start, end, days in _read_back(block, day, around_days):
            top = bisect.bisect_right(ends, start) - 1
            bottom = bisect.bisect_right(ends, max(start, end - 1)) - 1
            found.extend((first + n, days) for n in range(top, bottom + 1))
    return found


def _blocks(hit_lines: list[int]) -> list[tuple[int, int]]:
    """Runs of lines to read: each hit line and the one before it, touching runs joined."""
    out: list[tuple[int, int]] = []
    for n in hit_lines:
        first = max(0, n - 1)
        if out and first <= out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((first, n))
    return out


def _read_back(text: str, day: date, around_days: int) -> list[tuple[int, int, DayRange]]:
    """(start, end, days) of each phrase of ``text`` that counts back from ``day``, the longest
    at the leftmost place ("the day before yesterday" is not also "yesterday")."""
    lower = text.lower()
    rules = {rule.pattern: rule.handler for rule in _relative_rules()
             if rule.back and any(w in lower for w in rule.needles)}
    found: list[tuple[int, int, DayRange]] = []
    end = 0
    for match in _ordered_matches(tuple(rules), text):
        if match.start() < end:  # a shorter reading inside a phrase already read
            continue
        try:
            days = rules[match.re](match, day, around_days)
        except (ValueError, OverflowError):
            continue
        if days is not None:
            found.append((match.start(), match.end(), days))
            end = match.end()
    return found


def _counting_back(phrase: str) -> _Rule | None:
    """The rule of a date phrase that counts back from the day it is said, or None."""
    return next((rule for rule in _relative_rules()
                 if rule.back and rule.pattern.fullmatch(phrase.strip())), None)


def counts_back(phrase: str) -> bool:
    """Whether a date phrase counts back from the day it is said ("two weeks ago", "last
    week", "i går", "先週"), as against one that names its dates ("on March 6", "in June")
    or the present ("today", "this week")."""
    return _counting_back(phrase) is not None


def fade_days(phrase: str, window: TimeWindow, now: datetime) -> int:
    """How many days outside a query's window its preference fades out over: as many as the
    phrase counts back, from the window's middle day to today ("two weeks ago" 14, "last week"
    8 on a Friday, "yesterday" 1), when it does; else 0 (a date or span the phrase names, "on
    March 6", "in June", "earlier this month", has an edge). Whole days: the same at any
    hour."""
    rule = _counting_back(phrase)
    if rule is None or not rule.fades or window.start is None or window.end is None:
        return 0
    first = window.start.date()
    last = (window.end - timedelta(microseconds=1)).date()
    middle = first + (last - first) / 2
    return max(1, (_utc(now).date() - middle).days)


def find_query_window(
    query: str, now: datetime, *, around_days: int = 3
) -> tuple[TimeWindow, str] | None:
    """A date phrase in a recall query as a UTC window, with the phrase as written; or None.

    English: ``around Nov 27``/``around 2025-11-27`` (± ``around_days``), ``on Nov 27``,
    ``in November 2025``/``in Nov``, ``last week``, ``this week``, ``last month``,
    ``this month``, ``yesterday``, ``today``, ``N days/weeks/months ago`` (the count in digits
    or words, in every supported language: ``for to uger siden``, ``две недели назад``,
    ``2週間前``, ``两个月前``, ``2주 전``), said loosely: ``several days ago`` (5 days back ± 2;
    ``数日前``), ``a fortnight ago``, ``a week and a half ago``, ``the other day``
    (2 to 7 days back; ``先日``, ``前几天``, ``forleden``), ``earlier this week``/``month``
    (its first day to yesterday, or that day on it). Japanese/Chinese:
    ``11月27日ごろ``/``頃``/``前後``/``左右`` (± ``around_days``), ``先週``, ``今週``, ``先月``,
    ``今月``, ``昨日``, ``一昨日``, ``今日``, ``N日前`` and Chinese equivalents.

    Choices: a date without a year is the most recent such date not after ``now`` (a month
    likewise); weeks are ISO weeks (Monday..Sunday) and ``this week``/``this month`` cover the
    whole week/month; the leftmost phrase wins (the longest at the same place); a word that
    bounds the phrase ("before today", "since last week", "今日まで") leaves the window open on
    one side (``_bounded``). Never raises.
    """
    if not _MAYBE_DATE.search(query.lower()):
        return None
    today = _utc(now).date()
    handlers = _query_rules()
    for match in _ordered_matches(tuple(handlers), query):
        try:
            days = handlers[match.re](match, today, around_days)
            if days is not None:
                return _bounded(query, match, *_days(*days))
        except (ValueError, OverflowError):
            continue
    return None


# A word that makes a date phrase one side of a window ("before today", "since last week",
# "今日まで", "上周以来"): before the phrase, or right after it in Japanese and Chinese.
_BOUND_BEFORE = re.compile(
    # not "the night before yesterday", "not until yesterday" (it happened then), "lede efter"
    # (look for) or "på siden" (on the page)
    r"(?<!night\s)(?<!evening\s)(?<!morning\s)(?<!\bday\s)(?<!\bnot\s)"
    r"(?:\b(?P<before>before|prior\s+to|earlier\s+than|før)"
    r"|\b(?P<until>until|till|up\s+until|indtil)"
    r"|(?<!\bpå\s)(?<!\bden\s)(?<!denne\s)\b(?P<since>since|siden)"
    r"|\b(?P<after>after|later\s+than))\s+$", re.IGNORECASE)
_BOUND_AFTER = re.compile(r"^\s*(?:(?P<before>より前|以前|之前)|(?P<until>までに?)"
                          r"|(?P<since>から|以来|以降|以後|以后)|(?P<after>之后|之後))")
# The phrase names a thing's date ("before yesterday's meeting"), or "since" gives a reason
# ("since yesterday was a holiday"): no bound.
_NOT_BOUND_AFTER = re.compile(r"^(?:['’]s\b|\s+(?:was|were|is|had|has)\b)", re.IGNORECASE)


def _bounded(query: str, match: re.Match[str], start: datetime, end: datetime
             ) -> tuple[TimeWindow, str]:
    """The window of a phrase, or one side of it with the word that bounds it: "before
    today" is all before today, "until yesterday" all to yesterday's end, "since last week"
    all from its Monday, "after last week" all from the Monday after it; the phrase returned
    holds the word, as written."""
    first, last = match.start(), match.end()
    before_it = query[max(0, first - 20):first]
    ahead = (None if _NOT_BOUND_AFTER.match(query[last:])
             else _BOUND_BEFORE.search(before_it))
    behind = None if ahead else _BOUND_AFTER.match(query[last:])
    bound = ahead or behind
    if bound is None:
        return TimeWindow(start, end), match.group(0).strip()
    window = {"before": TimeWindow(None, start), "until": TimeWindow(None, end),
              "since": TimeWindow(start, None), "after": TimeWindow(end, None)}[
        str(bound.lastgroup)]
    if ahead is not None:
        first -= len(before_it) - ahead.start()
    else:
        last += bound.end()
    return window, query[first:last].strip()
