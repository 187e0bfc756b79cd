"""Time in a recall request (docs/memory-format.md): the window from the time flags or from a date
phrase in the query, and how a result's times are shown."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from gitmem.domain import TimeWindow, WindowSource, WindowUse
from gitmem.parse.textfold import query_terms
from gitmem.parse.timeparse import (
    build_window,
    counts_back,
    fade_days,
    find_query_window,
    show_time,
)
from gitmem.parse.topics import asks_what_happened, topical_terms
from gitmem.recall.search import Result
from gitmem.workspace import classify


@dataclass(frozen=True)
class WindowUsed:
    """The time window a recall applied (the JSON ``time_window``): from the flags or from a
    date phrase in the query, as a filter or as a preference."""

    source: WindowSource
    phrase: str | None  # the date phrase found in the query
    since: str | None
    until: str | None  # the last day included
    applied_as: WindowUse

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "phrase": self.phrase, "since": self.since,
                "until": self.until, "applied_as": self.applied_as}


def shown_dates(r: Result) -> str:
    """A result's time for plain output: the event period, and the note's own date (the daily
    note's day, else the day it was recorded) when that differs (docs/memory-format.md)."""
    start, end = r.event_start, r.event_end
    period = start if start is None or end in (None, start) else f"{start} .. {end}"
    found = classify(r.path)
    noted = (found[1].isoformat() if found and found[1] else None) or (r.recorded_at or "")[:10]
    if period is None:
        return noted or r.timestamp or "-"
    return period if not noted or noted == period else f"{period} (noted {noted})"


@dataclass(frozen=True)
class TimeFilters:
    """What a recall request's time flags and date phrase make of it (``time_filters``)."""

    window: TimeWindow | None  # results must fall in it
    prefer: TimeWindow | None  # results in it rank first; nothing is dropped
    fade_days: int  # how far outside ``prefer`` its preference fades out (0: at its edge)
    text: str  # the words to search
    used: WindowUsed | None  # the JSON ``time_window``


def time_filters(query: str, since: str | None, until: str | None, around: str | None,
                 now: datetime, around_days: int) -> TimeFilters:
    """The filter window, the preferred window and the words to search, from the time flags,
    else from a date phrase in the query, whose own words are then not searched ("6" of
    "around March 6" is no topic). A question of no topic with a window ("what happened last
    week", "先週何があった": ``topics.topical_terms``) searches no words (""): it lists what was
    written in the window, newest first; without a window, one that asks what happened
    (``topics.asks_what_happened``) lists the newest notes."""
    window = build_window(since=since, until=until, around=around, now=now,
                          around_days=around_days)
    if window is not None:
        text = query if topical_terms(query) or not query_terms(query) else ""
        return TimeFilters(window, None, 0, text,
                           _window_json(window, "flags", None, "filter"))
    found = find_query_window(query, now, around_days=around_days)
    if found is None:
        return TimeFilters(None, None, 0, "" if asks_what_happened(query) else query, None)
    found_window, phrase = found
    rest = query.replace(phrase, " ").strip()
    # Words besides the date phrase: the window ranks matching results first but drops
    # nothing (a phrase read loosely must not hide the answer). Only a date phrase and words
    # such as "what happened": the window selects what to list.
    if topical_terms(rest):
        closed = found_window.start is not None and found_window.end is not None
        text = f'{rest} "{stated}"' if closed and (stated := _stated_date(phrase)) else rest
        return TimeFilters(None, found_window, fade_days(phrase, found_window, now), text,
                           _window_json(found_window, "query", phrase, "boost"))
    return TimeFilters(found_window, None, 0, "",
                       _window_json(found_window, "query", phrase, "filter"))


_PHRASE_FRAME = re.compile(r"^(?:around|about|on|in|during)\s+|\s*(?:ごろ|頃|前後|左右)$",
                         re.IGNORECASE)
_NAMES_A_DATE = re.compile(r"\d{4}|月|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)",
                         re.IGNORECASE)


def _stated_date(phrase: str) -> str | None:
    """The date a phrase states, as text may write it ("March 6, 2025" of "around March 6,
    2025"; none for "last week"). Searched as one quoted phrase: a note that says "in June"
    is found, a line with a lone "6" is not."""
    if counts_back(phrase):  # "先月", "两个月前": no month named
        return None
    stated = _PHRASE_FRAME.sub("", phrase).strip()
    # Relative phrases (last week, 3 days ago, 先週) name no month or year: nothing to search.
    return stated if _NAMES_A_DATE.search(stated) and '"' not in stated else None


def _window_json(window: TimeWindow, source: WindowSource, phrase: str | None,
                 applied: WindowUse) -> WindowUsed:
    return WindowUsed(source, phrase, show_time(window.start), last_day(window.end), applied)


def last_day(end: datetime | None) -> str | None:
    """The last instant a half-open window includes, as a date when it ends at midnight."""
    if end is None:
        return None
    if end.time() == datetime.min.time():
        return (end - timedelta(days=1)).date().isoformat()
    return show_time(end)
