"""Hostile input, generated (docs/memory-format.md; issue 10): hypothesis drives the Markdown, Retain, front
matter, opinion and time parsers and the command line with random and adversarial input.

Every input must finish within a hard bound on its CPU time (a SIGPROF timer interrupts a hang;
a SIGALRM one, much later, a hang that uses no CPU), never raise anything but the documented
usage error, never reach the parser's last-resort "parse-error" fallback, and drop nothing
silently: every non-blank line is in a chunk, and a Retain item that is not a fact carries a
warning at its line.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.domain import MemoryFile
from gitmem.errors import UsageError
from gitmem.front.cli import run
from gitmem.index.items import item_versions
from gitmem.parse.markdown import decode, front_matter, parse_file, split_lines
from gitmem.parse.opinions import OPINIONS_PATH, parse_opinions
from gitmem.parse.retain import EntryLines, entity_key, fact_id, find_entities, parse_entry
from gitmem.parse.textfold import build_match, fold, query_terms
from gitmem.parse.timeparse import (
    _relative_rules,
    as_of_instant,
    build_window,
    counted_back,
    find_event_period,
    find_query_window,
    parse_time_spec,
)
from testing.cli import gitmem
from testing.contract import GOOD_DAILY, GOOD_TEXT
from testing.repo import commit_all, make_repo, write

SECONDS_PER_INPUT = 5.0  # a hard bound on the CPU time one input may use
WALL_SECONDS = 120.0  # and on its wall-clock time (a hang that uses no CPU); failures only
NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
# GITMEM_FUZZ_EXAMPLES=5000 (and GITMEM_FUZZ_RANDOM=1 for new inputs each run) hunts longer.
EXAMPLES = int(os.environ.get("GITMEM_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                derandomize=not os.environ.get("GITMEM_FUZZ_RANDOM"),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])


class Hang(Exception):
    pass


@contextmanager
def bounded(seconds: float = SECONDS_PER_INPUT) -> Iterator[None]:
    """Fail (instead of hanging) when the body uses more than ``seconds`` of CPU time (the
    work it does, which other load on the machine does not change), or hangs for
    ``WALL_SECONDS``."""
    def alarm(signum: int, frame: object) -> None:
        what = "CPU" if signum == signal.SIGPROF else "wall-clock"
        raise Hang(f"input took longer than {seconds if what == 'CPU' else WALL_SECONDS} s "
                   f"of {what} time")

    previous = {sig: signal.signal(sig, alarm) for sig in (signal.SIGPROF, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, WALL_SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)


# -- strategies -----------------------------------------------------------------------------

NASTY_CHARS = ("\u202e", "\u202d", "\u2066", "\u2069", "\u200b", "\ufeff", "\x00", "\x1b[31m",
               "\r", "\t", "\x7f", "\ud7ff", "\U0001f600", "ﬁ", "İ", "ß", "\u0301", "日本")
FRAGMENTS = (
    "# Title", "## Retain", "## retain:", "### Retain", "- ", "* ", "1. ", "  - ", "    - ",
    "- W @Peter: moved the gateway", "- O(c=0.9) @Andy @Mara: likes tea", "- O(c=1.5): x",
    "- B: ", "- X @a: y", "- w: lower", "- S @: empty", "---", "...", "title: x", "aliases: [a",
    "```", "~~~", "> quote", "| a | b |", "<div>", "[ref]: http://x", "@", "@@x", "a@b.c",
    "on Nov 27", "2025-11-27", "around 2025-02-30", "11月27日ごろ", "last week", "3 days ago",
    "<!-- opinion: o-1234abcd -->", "- confidence: 0.5", "- evidence:", "  - for f-abc x#L1",
    "- updated: 2025-13-45", "&a [*a]", "{{", "]]", "\\", "`", "*" * 40, "#" * 7,
)
line = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.text(max_size=60),
    st.builds(lambda a, b: a + b, st.sampled_from(FRAGMENTS),
              st.lists(st.sampled_from(NASTY_CHARS + tuple("ab @:()-.")), max_size=20)
              .map("".join)),
    st.builds(lambda n, s: " " * n + s, st.integers(0, 40), st.sampled_from(FRAGMENTS)),
)
markdown_text = st.lists(line, max_size=60).map("\n".join)
newline = st.sampled_from(["\n", "\r\n", "\r"])
markdown_bytes = st.one_of(
    st.binary(max_size=3000),
    st.builds(lambda text, nl, enc: text.replace("\n", nl).encode(enc, "replace"),
              markdown_text, newline, st.sampled_from(["utf-8", "latin-1", "utf-16"])),
)
paths = st.sampled_from(["memory/2025-11-27.md", "MEMORY.md", "bank/entities/Peter.md",
                         OPINIONS_PATH, "memory/notes/x.md", "memory/2025-02-30.md"])


def memory_file(path: str) -> MemoryFile:
    cls = {"MEMORY.md": "core", OPINIONS_PATH: "bank", "bank/entities/Peter.md": "entity"}
    day = date(2025, 11, 27) if path == "memory/2025-11-27.md" else None
    return MemoryFile(path, "0" * 40, cls.get(path, "daily" if day else "note"), day)


# -- the Markdown parser ---------------------------------------------------------------------


def check_nothing_dropped(data: bytes, path: str) -> None:
    mf = memory_file(path)
    with bounded():
        parsed = parse_file(mf, data)
        versions = item_versions(parsed)
    codes = {w.code for w in parsed.warnings}
    assert "parse-error" not in codes, parsed.warnings  # the last-resort fallback is a bug
    assert all(w.path == path and w.line >= 0 for w in parsed.warnings)
    text, _ = decode(data, path)
    if text is None:
        assert "binary" in codes
        return
    lines = split_lines(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    _, fm_lines, _ = front_matter(lines, path)
    # A chunk of nothing but headings and rules is dropped (issue 9): those lines may go.
    from gitmem.parse.chunking import _RULE
    from gitmem.parse.markdown import _parse_blocks, sections_from

    body = [""] * fm_lines + lines[fm_lines:]
    headings = {s.start_line for s in sections_from(_parse_blocks(body, path, []), len(lines))}
    for number, content in enumerate(lines, 1):
        if number <= fm_lines or not content.strip():
            continue
        if number in headings or _RULE.match(content):
            continue
        holders = [c for c in parsed.chunks if c.start_line <= number <= c.end_line]
        assert holders, f"line {number} {content!r} is in no chunk"
        assert any(content in c.text for c in holders), f"line {number} {content!r} lost"
    for fact in parsed.facts:
        assert 1 <= fact.start_line <= fact.end_line <= len(lines)
        assert fact.fact_id.startswith("f-")
    assert len({v.vkey for v in versions}) == len(versions)
    assert parse_file(mf, data) == parsed  # deterministic


@FUZZ
@given(data=markdown_bytes, path=paths)
def test_markdown_parser_drops_nothing(data: bytes, path: str) -> None:
    check_nothing_dropped(data, path)


@FUZZ
@given(text=markdown_text, depth=st.integers(0, 400))
def test_deeply_nested_markdown(text: str, depth: int) -> None:
    nested = "".join("  " * n + "- x\n" for n in range(depth)) + "> " * depth + "q\n"
    check_nothing_dropped(("## Retain\n" + nested + text).encode(), "memory/2025-11-27.md")


# -- Retain entries, entities, front matter, opinions ----------------------------------------


@FUZZ
@given(lines=st.lists(st.text(max_size=80), min_size=1, max_size=6), start=st.integers(1, 10**6))
def test_a_retain_item_is_a_fact_or_a_warning(lines: list[str], start: int) -> None:
    with bounded():
        fact, warns = parse_entry(EntryLines(start, tuple(lines)), "m.md", date(2025, 1, 1))
        entities = find_entities(" ".join(lines))
        keys = [entity_key(e) for e in entities]
        fact_id("world", " ".join(lines), tuple(entities), None)
    if fact is None:
        assert any(w.line == start for w in warns), "a dropped item must say so at its line"
    else:
        assert fact.start_line == start and fact.kind in ("world", "experience", "opinion",
                                                          "observation")
    assert all(k == entity_key(k) for k in keys)  # the key of a key is itself


@FUZZ
@given(body=st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=40)), max_size=30))
def test_front_matter_never_raises_and_stays_json(body: list[str]) -> None:
    lines = ["---", *body, "---", "text"]
    with bounded():
        data, span, warns = front_matter(lines, "bank/entities/Peter.md")
    json.dumps(data)
    assert 0 <= span <= len(lines)
    assert span or warns or data == {}  # front matter that is not used says why


@FUZZ
@given(text=markdown_text)
def test_opinions_never_raise(text: str) -> None:
    with bounded():
        opinions, warns = parse_opinions(split_lines(text), OPINIONS_PATH)
    assert all(w.path == OPINIONS_PATH for w in warns)
    assert all(1 <= o.start_line <= o.end_line for o in opinions)


# -- time ------------------------------------------------------------------------------------

time_spec = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["30d", "99999999999d", "0w", "12h", "6m", "1y", "10000y", "2025",
                     "0000", "9999-12-31", "2025-13", "2025-02-30", "today", " TODAY ",
                     "2025-11-27T25:00", "2025-11-27T10:00:00+99:00", "-1d", "1e9d", "٣٠d"]),
    st.builds(lambda n, u: f"{n}{u}", st.integers(-10**12, 10**12), st.sampled_from("hdwmy")),
)


@FUZZ
@given(since=st.none() | time_spec, until=st.none() | time_spec, around=st.none() | time_spec,
       days=st.integers(0, 365))
def test_time_flags_are_a_window_or_a_usage_error(since: str | None, until: str | None,
                                                  around: str | None, days: int) -> None:
    with bounded():
        for spec in (since, until, around):
            if spec is not None:
                try:
                    start, end = parse_time_spec(spec, NOW)
                    assert start <= end
                    as_of_instant(spec, NOW)
                except UsageError as exc:
                    assert "invalid time" in str(exc)
        try:
            window = build_window(since=since, until=until, around=around, now=NOW,
                                  around_days=days)
        except UsageError:
            return
    if window is not None and window.start and window.end:
        assert window.start <= window.end


@FUZZ
@given(text=st.one_of(markdown_text, st.text(max_size=300)), year=st.none() | st.integers(1, 9999))
def test_date_phrases_never_raise(text: str, year: int | None) -> None:
    with bounded():
        find_event_period(text, default_year=year)
        found = find_query_window(text, NOW, around_days=3)
        back = counted_back(text, date(year or 2025, 6, 15))
        terms = query_terms(text)
        build_match(terms)
        fold(text)
    if found is not None:
        window, phrase = found
        assert phrase and phrase.lower() in text.lower()
        assert window.start is None or window.end is None or window.start < window.end
    assert all(first <= last and 0 <= n <= text.count("\n") for n, (first, last) in back)


# Pieces of date phrases of every language, to be strung together with other text: random text
# alone almost never holds one.
_DAY_PIECES = ("yesterday", "Yesterday", "the day before", "day", "before", "ago", "two", "days",
               "weeks", "last", "week", "month", "i", "I", "går", "forgårs", "for", "to", "dage",
               "siden", "sidste", "uge", "måned", "вчера", "Позавчера", "два", "дня", "дней",
               "назад", "на", "прошлой", "неделе", "в", "прошлом", "месяце", "昨日", "一昨日",
               "おととい", "前天", "昨天", "十", "二", "五", "天", "日", "前", "以前", "週間", "先週",
               "上周", "上个月", "先月", "어제", "그저께", "그제", "지난", "주", "달", "2", "일",
               "전", "한", ".", "\n", "-", "\"")


@FUZZ
@given(pieces=st.lists(st.sampled_from(_DAY_PIECES) | st.text(max_size=3), max_size=12),
       spaces=st.sampled_from(["", " ", "  "]))
def test_every_phrase_that_counts_back_holds_a_needle(pieces: list[str], spaces: str) -> None:
    """The first pass over a note (a rule's needles) hides no phrase its pattern reads."""
    text = spaces.join(pieces)
    for rule in _relative_rules():
        if rule.back:
            for match in rule.pattern.finditer(text):
                assert any(w in match.group(0).lower() for w in rule.needles), match


@FUZZ
@given(n=st.integers(1, 40_000))
def test_long_inputs_do_not_backtrack(n: int) -> None:
    """Regex-heavy paths on long, repetitive input finish in bounded time."""
    for text in ("around " * n, "11月" * n, "@" * n + "x", "(c=" * n, "- W @" + "a" * n + ":"):
        with bounded():
            find_event_period(text)
            find_query_window(text, NOW)
            find_entities(text)
            query_terms(text[:5000])
            parse_entry(EntryLines(1, (text,)), "m.md", None)


# -- the command line ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def cli_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("fuzz-cli"))
    write(repo, GOOD_DAILY, GOOD_TEXT)
    commit_all(repo, "one note")
    assert gitmem("-C", str(repo), "index")[0] == 0
    return repo


option_value = st.one_of(time_spec, st.text(max_size=30), st.sampled_from(["", "-", "--", "0"]))
recall_args = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["--since", "--until", "--around", "--as-of", "--entity",
                                   "--kind", "--k", "--mode"]), option_value),
        st.tuples(st.sampled_from(["--json", "--help", "-h"])),
    ),
    max_size=4,
).map(lambda parts: [word for part in parts for word in part])


@settings(FUZZ, max_examples=max(10, EXAMPLES // 2))
@given(query=st.text(max_size=60), args=recall_args)
def test_recall_arguments_never_crash(cli_repo: Path, query: str, args: list[str]) -> None:
    with bounded(20.0):
        code, _, err = gitmem("-C", str(cli_repo), "recall", query, *args)
    assert code in (0, 1, 2), err
    assert "internal error" not in err and "Traceback" not in err


@settings(FUZZ, max_examples=max(10, EXAMPLES // 2))
@given(target=st.one_of(st.text(max_size=60), st.builds(
    lambda p, a: p + a, st.sampled_from([GOOD_DAILY, "MEMORY.md", "../x.md", "/etc/passwd"]),
    st.sampled_from(["", "#L1", "#L0", "#L2-L1", "#Lx", "#L1@HEAD", "#L1@nonsense", "#L99999999999",
                     "@", "#", "#L1-"]))),
    args=st.lists(st.sampled_from(["--from", "--lines", "--at", "--json", "0", "-1", "HEAD",
                                   "99999999999999999999", "x"]), max_size=4))
def test_get_arguments_never_crash(cli_repo: Path, target: str, args: list[str]) -> None:
    with bounded(20.0):
        code = run(["-C", str(cli_repo), "get", target, *args])
    assert code in (0, 1, 2)
