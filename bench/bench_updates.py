"""Knowledge updates ("what is true now?", issue 17): does recall put the newer statement first,
mark the older one replaced, leave statements that are both true alone, in every language?

    python bench/bench_updates.py [--mode lexical|hybrid|both] [--model PATH.gguf ...]
        [--only LANG[,LANG]] [--set original|fresh|heldout|all | --data RECORDS.json |
        --data-module NAME] [--k-max N] [--json OUT] [--misses] [--compare BEFORE.json]

The records (``--set``: ``original``, ``bench/updates_data.py``, the default; ``fresh``,
``bench/updates_fresh.py``, issue 38's tuning set; ``heldout``, ``bench/updates_heldout.py``,
run but never read by the rule's authors; ``all``; or ``--data``: a JSON list of the same shape;
or ``--data-module``: a module's ``RECORDS``) are written
as daily notes (``memory/YYYY-MM-DD.md``, one commit per day, 21:00 UTC) into a real git
repository per language: the two statements of a pair weeks apart, the record's distractors
(other statements about the same subject) between them and one after the newer. Facts go in
``## Retain``, prose lines in a notes section of the same day. Each workspace is indexed with
gitmem's library, each question asked through ``recall.answer`` and each subject through
``recall.entity`` (their ``to_json()``, the CLI's ``recall --json`` and ``entity --json``),
``now`` fixed after the last note, no user configuration. Metrics, per language and overall:

- **first & top 3**: the newer statement is in the first 3 results and above the older (facts;
  prose); updates declared with ``replaces:`` are left out (they are measured on their own);
- **older marked**: of the questions whose results show the older statement, the share where every
  result showing it carries ``superseded_by`` citing the newer one;
- **entity**: ``entity <subject> --json`` lists the older fact in the ``history`` of the newer
  one, or in ``replaced`` with ``replaced_by`` citing it (fact pairs; and, as "entity: older
  replaced by a line", updates whose older statement is an entry and newer one a note line or
  a chat turn);
- **controls marked**: control pairs where either statement is shown as replaced (in the
  question's results, unless the mark is another pair's update inside the same text result, or
  in the subject's entity view);
- **current marked**: newer statements and distractors (of updates) shown as replaced, the same
  way; they must stay current;
- **declared**: ``replaces:`` pairs whose older fact the entity view shows replaced by the newer
  and which, when recall shows it, carries ``superseded_basis: "declared"``;
- **CJK top 5**: Japanese and Chinese questions whose target (the newer statement) is among the
  first 5 results;
- **as-of before**: each update's question asked ``--as-of`` the day before the newer statement:
  of the answers that show the older one, the share where it is not marked (not replaced yet).

Issue 38 ("what is true now, precision first"), a second table; each set's records go in a
workspace of their own, so a set's figures are the same run alone or with the others:

- **hard-mark precision**: of the distinct marks the rule made (a result's ``superseded_by``
  whose ``superseded_basis`` is not ``declared``, in any question's results, and a past fact in
  an entity view's ``history``), the share that an update's older statement inside the result
  earns, citing its own newer one; also split into recall and entity marks in the JSON;
- **hard-mark recall**: of the updates whose older statement is shown, the share where every
  result showing it is marked by the newer one (the rule's updates: ``older marked``);
- **hint recall**: of those shown and not marked, the share where every result showing the older
  one carries ``newer`` (``{"source", "date"}``, or a list of them) citing the newer one;
- **controls hard-marked** (the old ``controls marked``) and **controls hinted**: control pairs
  with a statement shown marked, or shown with a ``newer`` hint;
- **first & top 3, mixed / chat**: as above, for updates stated in a note line after a Retain
  entry, and in chat turns (``- Maria: we moved to Denver``) in a conversation section;
- **k = 1..10 agree**: each question asked at every k up to ``--k-max``: each answer must be a
  prefix of the next and every result's marks (``superseded_*``, ``newer``) the same at every k;
  violations are counted and listed with ``--misses``.

Per failure class (a record's ``case``), controls hard-marked and older marked are printed below.

``--misses`` prints every record that missed something, with what marks it; ``--compare
BEFORE.json`` every record whose outcome differs from an earlier ``--json`` report (what a rule
change fixed and broke).

Hybrid needs a real GGUF embedding model (``bash bench/build_model.sh``; multilingual-e5-small:
``python -m gitmem.embed.convert_e5 OUT.gguf``), run with one llama.cpp thread.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

from gitmem.domain import RecallMode

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from gitmem.config import Config  # noqa: E402
from gitmem.index.run import index_and_embed  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.parse.retain import EntryLines, parse_entry  # noqa: E402
from gitmem.recall.answer import RecallRequest, answer  # noqa: E402
from gitmem.recall.entity import entity_view  # noqa: E402
from gitmem.workspace import Workspace, open_workspace  # noqa: E402
from testing.fastimport import FastImportStream, import_history  # noqa: E402
from testing.gitenv import Identity  # noqa: E402

IDENTITY = Identity("gitmem bench", "bench@example.invalid")
START = date(2025, 6, 30)  # the first older statements are written in the 11 weeks after it
NOW = datetime(2025, 12, 1, 12, 0, tzinfo=UTC)
K = 8  # results asked per question: recall's default
LANGS = ("en", "ja", "ru", "da", "zh")
CJK_LANGS = ("ja", "zh")
DEFAULT_MODEL = BENCH_DIR / "models" / "all-MiniLM-L6-v2-q8_0.gguf"
_ENTRY = re.compile(r"^[WBOS](\(c=[0-9.]+\))?( @[^\s:]+)+:")
_CITATION = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L(?P<end>\d+))?(?:@\w+)?$")
_NOTES_HEADINGS = ("## Notes", "## Log", "## Today")
_CHAT_HEADINGS = ("## Conversation", "## Chat log")
_CHAT_TURN = re.compile(r"^[\w][\w .'-]{0,30}: \S")
FORMS = ("fact", "prose", "mixed", "chat")
SETS = {"original": "bench.updates_data", "fresh": "bench.updates_fresh",
        "heldout": "bench.updates_heldout"}


# ------------------------------------------------------------------------------------ records

@dataclass(frozen=True)
class Statement:
    """One line of the workspace: what a record says, where it was written."""

    record: str
    role: str  # older | newer | distractor
    text: str
    day: date
    update: bool = True  # of an update (else of a control: both statements stay true)
    path: str = ""
    line: int = 0
    chat: bool = False  # a chat turn (``Speaker: text``) in a conversation section

    @property
    def entry(self) -> bool:
        return is_entry(self.text)

    @property
    def current(self) -> bool:
        """Still true at the end: everything but an update's older statement."""
        return self.role != "older" or not self.update


def is_entry(text: str) -> bool:
    """Written as a Retain entry (``W @Alice: ...``), else as a plain note line."""
    return bool(_ENTRY.match(text))


def is_chat(rec: Mapping[str, Any], text: str) -> bool:
    """A chat turn: a plain line of a ``chat`` record, ``Speaker: text``."""
    return rec.get("form") == "chat" and not is_entry(text) and bool(_CHAT_TURN.match(text))


def load_records(path: Path | None) -> list[dict[str, Any]]:
    if path is None:
        return load_module(SETS["original"])
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise SystemExit(f"{path}: want a JSON list of records")
    return data


def load_module(name: str, tag: str | None = None) -> list[dict[str, Any]]:
    """The ``RECORDS`` of a module (``bench.updates_fresh``), each tagged with its ``set``."""
    import importlib

    try:
        records = importlib.import_module(name).RECORDS
    except (ImportError, AttributeError) as exc:
        raise SystemExit(f"--data-module {name}: no RECORDS list there ({exc})") from exc
    tag = tag or name.rsplit(".", 1)[-1].removeprefix("updates_")
    return [{"set": tag, **r} for r in records]


def load_set(which: str) -> list[dict[str, Any]]:
    """``original``, ``fresh``, ``heldout`` or ``all`` (the three together)."""
    names = list(SETS) if which == "all" else [which]
    return [r for name in names for r in load_module(SETS[name], name)]


def check_records(records: Sequence[Mapping[str, Any]]) -> None:
    """Each record complete and consistent: its form matches how its statements are written,
    fact statements parse as Retain entries with a subject, every statement is unique."""
    problems: list[str] = []
    seen: dict[str, str] = {}
    for rec in records:
        rid = str(rec.get("id"))
        missing = {"id", "lang", "kind", "form", "question", "older", "newer"} - set(rec)
        if missing:
            problems.append(f"{rid}: missing {sorted(missing)}")
            continue
        if rec["lang"] not in LANGS or rec["kind"] not in ("update", "control") or \
                rec["form"] not in FORMS:
            problems.append(f"{rid}: lang, kind or form not one of {LANGS}, update|control, "
                            f"{'|'.join(FORMS)}")
        if rec.get("replaces") not in (None, "citation", "fact_id") or \
                (rec.get("replaces") and (rec["kind"], rec["form"]) != ("update", "fact")):
            problems.append(f"{rid}: replaces is citation|fact_id, on fact updates only")
        if not _written_as(rec):
            problems.append(f"{rid}: {rec['older']!r} / {rec['newer']!r} are not written as a "
                            f"{rec['form']} (fact: two entries; prose: two note lines; mixed: "
                            "an entry, then a note line; chat: an entry or a turn, then a turn)")
        for text in (rec["older"], rec["newer"], *rec.get("distractors", ())):
            if text in seen:
                problems.append(f"{rid}: {text!r} repeats {seen[text]}")
            seen[text] = rid
            if is_entry(text) and not _subjects(text):
                problems.append(f"{rid}: {text!r} does not parse as a Retain entry")
        if sum(1 for r in records if r.get("id") == rid) > 1:
            problems.append(f"{rid}: id repeats")
    if problems:
        raise SystemExit("bad records:\n  " + "\n  ".join(dict.fromkeys(problems)))


def _written_as(rec: Mapping[str, Any]) -> bool:
    older, newer = rec["older"], rec["newer"]
    form = rec["form"]
    if form == "fact":
        return is_entry(older) and is_entry(newer)
    if form == "prose":
        return not is_entry(older) and not is_entry(newer)
    if form == "mixed":
        return is_entry(older) and not is_entry(newer)
    return (is_entry(older) or is_chat(rec, older)) and is_chat(rec, newer)


def _subjects(text: str) -> tuple[str, ...]:
    fact, _ = parse_entry(EntryLines(1, (f"- {text}",)), "memory/x.md", None)
    return () if fact is None else fact.subjects


def subject(rec: Mapping[str, Any]) -> str | None:
    """The entity ``entity`` is asked about: the older fact's first subject (the older
    statement is a Retain entry)."""
    if not is_entry(rec["older"]):
        return None
    return _subjects(rec["older"])[0]


# ------------------------------------------------------------------------------------- layout

def _hash(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def plan(rec: Mapping[str, Any]) -> list[Statement]:
    """The record's statements and their days: the older one in the 11 weeks after START, the
    newer ``weeks`` later (2-9 weeks, from the id), distractors spread between them and, with
    three or more, the last one a week after the newer."""
    rid = str(rec["id"])
    h = _hash(rid)
    older = START + timedelta(days=h % 77)
    weeks = int(rec.get("weeks") or 2 + (h >> 8) % 8)
    newer = older + timedelta(weeks=weeks)
    update = rec["kind"] == "update"

    def st(role: str, text: str, day: date) -> Statement:
        return Statement(rid, role, text, day, update, chat=is_chat(rec, text))

    out = [st("older", rec["older"], older), st("newer", rec["newer"], newer)]
    distractors = list(rec.get("distractors", ()))
    after = distractors.pop() if len(distractors) >= 3 else None
    for n, text in enumerate(distractors, 1):
        days = max(1, round(weeks * 7 * n / (len(distractors) + 1)))
        out.append(st("distractor", text, older + timedelta(days=days)))
    if after is not None:
        out.append(st("distractor", after, newer + timedelta(days=7)))
    return out


@dataclass(frozen=True)
class Layout:
    days: dict[date, str]  # day -> the daily note's text
    statements: list[Statement]  # with path and line


def lay_out(records: Sequence[Mapping[str, Any]]) -> Layout:
    """Daily notes holding every record's statements: per day a notes section (bullets or
    paragraphs, by the day) and a Retain section; statements in a stable, mixed order. An
    update declared with ``replaces`` gets its nested ``- replaces: <ref>`` item."""
    by_day: dict[date, list[Statement]] = {}
    for rec in records:
        for st in plan(rec):
            by_day.setdefault(st.day, []).append(st)
    declared = {str(r["id"]): str(r["replaces"]) for r in records if r.get("replaces")}
    placed: dict[tuple[str, str], Statement] = {}
    days: dict[date, str] = {}
    for day in sorted(by_day):
        path = f"memory/{day.isoformat()}.md"
        todays = sorted(by_day[day], key=lambda s: _hash(s.text))
        lines = [f"# {day.isoformat()}", ""]
        prose = [s for s in todays if not s.entry and not s.chat]
        if prose:
            bullets = _hash(path) % 3 != 0
            lines += [_NOTES_HEADINGS[_hash(path) % len(_NOTES_HEADINGS)], ""]
            for st in prose:
                placed[(st.record, st.text)] = replace(st, path=path, line=len(lines) + 1)
                lines += [f"- {st.text}"] if bullets else [st.text, ""]
            if bullets:
                lines.append("")
        chat = [s for s in todays if s.chat]
        if chat:
            lines += [_CHAT_HEADINGS[_hash(path) % len(_CHAT_HEADINGS)], ""]
            for st in chat:
                placed[(st.record, st.text)] = replace(st, path=path, line=len(lines) + 1)
                lines.append(f"- {st.text}")
            lines.append("")
        facts = [s for s in todays if s.entry]
        if facts:
            lines += ["## Retain", ""]
            for st in facts:
                placed[(st.record, st.text)] = replace(st, path=path, line=len(lines) + 1)
                lines.append(f"- {st.text}")
                if st.role == "newer" and st.record in declared:
                    older = next(p for p in placed.values()
                                 if p.record == st.record and p.role == "older")
                    lines.append(f"  - replaces: {_reference(older, declared[st.record])}")
        days[day] = "\n".join(lines).rstrip("\n") + "\n"
    return Layout(days, list(placed.values()))


def _reference(older: Statement, how: str) -> str:
    """How the newer fact names the one it replaces: its citation or its fact id."""
    if how == "citation":
        return f"{older.path}#L{older.line}"
    fact, _ = parse_entry(EntryLines(older.line, (f"- {older.text}",)), older.path, older.day)
    assert fact is not None
    return fact.fact_id


def build_workspace(dest: Path, layout: Layout) -> Path:
    """A git repository with one commit per day (21:00 UTC) adding that day's note."""
    stream = FastImportStream(IDENTITY)
    for day, text in sorted(layout.days.items()):
        when = datetime(day.year, day.month, day.day, 21, 0, tzinfo=UTC)
        stream.commit(when, f"notes {day.isoformat()}", [(f"memory/{day.isoformat()}.md", text)])
    import_history(dest, stream)
    return dest


# ------------------------------------------------------------------------------------ scoring

def cited(source: str | None) -> tuple[str, int, int] | None:
    """``path#Lx[-Ly][@commit]`` -> (path, first line, last line)."""
    m = _CITATION.match(source or "")
    if m is None:
        return None
    start = int(m["start"])
    return m["path"], start, int(m["end"] or start)


def _covers(span: tuple[str, int, int] | None, st: Statement) -> bool:
    return span is not None and span[0] == st.path and span[1] <= st.line <= span[2]


def shows(result: Mapping[str, Any], st: Statement) -> bool:
    """The result's lines include the statement's line."""
    return _covers((result["path"], int(result["start_line"]), int(result["end_line"])), st)


def rank(results: Sequence[Mapping[str, Any]], st: Statement) -> int | None:
    """1-based position of the first result showing the statement."""
    return next((n for n, r in enumerate(results, 1) if shows(r, st)), None)


@dataclass(frozen=True)
class Index:
    """Every placed statement, to tell which statements a result or a citation holds."""

    statements: Sequence[Statement]

    def of(self, record: str, role: str) -> list[Statement]:
        return [s for s in self.statements if s.record == record and s.role == role]

    def newer_of(self, st: Statement) -> Statement:
        return self.of(st.record, "newer")[0]

    def inside(self, result: Mapping[str, Any]) -> list[Statement]:
        return [s for s in self.statements if shows(result, s)]

    def at(self, source: str) -> Statement | None:
        span = cited(source)
        return next((s for s in self.statements if _covers(span, s)), None)


def justified(result: Mapping[str, Any], idx: Index) -> bool:
    """A ``superseded_by`` mark that some older statement in the result earns: it cites that
    statement's own newer one."""
    span = cited(result.get("superseded_by"))
    return any(not s.current and _covers(span, idx.newer_of(s)) for s in idx.inside(result))


def hint_sources(result: Mapping[str, Any]) -> list[str]:
    """The citations a result's ``newer`` hint names: ``{"source", "date"}``, a list of them,
    or null (none yet: before issue 38 no result carries one)."""
    hint = result.get("newer")
    hints = hint if isinstance(hint, list) else [hint]
    return [str(h["source"]) for h in hints if isinstance(h, Mapping) and h.get("source")]


def hard(result: Mapping[str, Any]) -> bool:
    """The result carries a mark the rule made (a declared one is not the rule's)."""
    return bool(result.get("superseded_by")) and result.get("superseded_basis") != "declared"


def recall_marks(results: Sequence[Mapping[str, Any]], idx: Index) -> list[list[Any]]:
    """Every hard mark the rule put on these results: ``[source, superseded_by, right]``, right
    when some older statement inside the result is the one its mark's newer replaces."""
    return [[str(r.get("source") or f"{r['path']}#L{r['start_line']}"),
             str(r["superseded_by"]), justified(r, idx)] for r in results if hard(r)]


MARK_FIELDS = ("superseded_by", "superseded_basis", "superseded_attribute",
               "superseded_reason", "newer")


def k_violations(answers: Mapping[int, Sequence[Mapping[str, Any]]]) -> list[str]:
    """Answers to one question at k = 1, 2, ... must agree: each a prefix of the next (shorter
    than k only when nothing more exists), and every result's marks the same at every k."""
    out: list[str] = []

    def key(r: Mapping[str, Any]) -> str:
        return str(r.get("source") or f"{r.get('path')}#L{r.get('start_line')}")

    marks: dict[str, tuple[int, Any]] = {}
    ks = sorted(answers)
    for k in ks:
        for r in answers[k]:
            mine = [r.get(f) for f in MARK_FIELDS]
            first = marks.setdefault(key(r), (k, mine))
            if first[1] != mine:
                out.append(f"k={first[0]} vs k={k}: {key(r)} marks {first[1]} -> {mine}")
                marks[key(r)] = (k, mine)
    for a, b in pairwise(ks):
        small, big = [key(r) for r in answers[a]], [key(r) for r in answers[b]]
        if big[:len(small)] != small:
            out.append(f"k={a} {small} is not a prefix of k={b} {big}")
        elif len(small) < a and len(big) != len(small):
            out.append(f"k={a} gave {len(small)} results, k={b} {len(big)}")
    return out


def false_marks(results: Sequence[Mapping[str, Any]], idx: Index,
                own: Sequence[Statement]) -> dict[Statement, str]:
    """The record's statements that should be current yet are shown marked (by a result whose
    mark no older statement inside it earns), each with the citation that marks it and, when
    the result says, why (``[basis attribute: reason]``)."""
    out: dict[Statement, str] = {}
    for r in results:
        if r.get("superseded_by") and not justified(r, idx):
            out |= {s: str(r["superseded_by"]) + why(r) for s in own
                    if s.current and shows(r, s)}
    return out


def why(result: Mapping[str, Any]) -> str:
    """`` [rule residence: moved to]``: the mark's basis, attribute and reason, when given
    (``superseded_attribute`` and ``superseded_reason`` come with issue 38)."""
    attribute, reason = result.get("superseded_attribute"), result.get("superseded_reason")
    if not (attribute or reason):
        return ""
    return f" [{result.get('superseded_basis')} {attribute or '?'}: {reason or '?'}]"


def _label(st: Statement) -> str:
    return f"{st.role}: {st.text}"


def _by(source: str | None, idx: Index) -> str:
    """A marking citation (maybe followed by `` [why]``), with the statement it cites when it
    is one of the records'."""
    cite, _, reason = (source or "").partition(" [")
    st = idx.at(cite) if cite else None
    tail = f" [{reason}" if reason else ""
    return f"{cite} ({st.text}){tail}" if st is not None else str(source)


def score_recall(results: Sequence[Mapping[str, Any]], rec: Mapping[str, Any],
                 idx: Index) -> dict[str, Any]:
    """One question's results, scored."""
    rid = str(rec["id"])
    older, newer = idx.of(rid, "older")[0], idx.of(rid, "newer")[0]
    own = [s for s in idx.statements if s.record == rid]
    r_new, r_old = rank(results, newer), rank(results, older)
    showing_older = [r for r in results if shows(r, older)]
    wrong = false_marks(results, idx, own)
    marked = bool(showing_older) and all(_covers(cited(r.get("superseded_by")), newer)
                                         for r in showing_older)
    basis = sorted({str(r.get("superseded_basis")) for r in showing_older
                    if r.get("superseded_by")})
    hinted = bool(showing_older) and all(
        any(_covers(cited(h), newer) for h in hint_sources(r)) for r in showing_older)
    hints_on_own = sorted({_label(st) for r in results if hint_sources(r)
                           for st in own if st.current and shows(r, st)})
    return {
        "newer_rank": r_new, "older_rank": r_old,
        "first_top3": r_new is not None and r_new <= 3 and (r_old is None or r_new < r_old),
        "top5": r_new is not None and r_new <= 5,
        "older_shown": bool(showing_older), "older_marked": marked,
        "older_marked_wrong": any(r.get("superseded_by") and not _covers(
            cited(r.get("superseded_by")), newer) for r in showing_older),
        "basis": basis,
        "false_marks": sorted(_label(s) for s in wrong),
        "false_marks_by": {_label(s): _by(by, idx) for s, by in sorted(
            wrong.items(), key=lambda kv: _label(kv[0]))},
        "older_hinted": hinted,
        "hinted": hints_on_own,
        "marks": recall_marks(results, idx),
    }


def score_as_of(results: Sequence[Mapping[str, Any]], rec: Mapping[str, Any],
                idx: Index) -> dict[str, Any]:
    """The question asked as of before the newer statement was written: the older one, when
    shown, must not be marked (nothing has replaced it yet)."""
    older = idx.of(str(rec["id"]), "older")[0]
    showing = [r for r in results if shows(r, older)]
    marks = sorted({_by(r["superseded_by"], idx) for r in showing if r.get("superseded_by")})
    return {"older_shown": bool(showing), "older_marked": bool(marks), "marked_by": marks}


def past_facts(view: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], str]]:
    """Every replaced fact an entity view shows, with the citation of what replaced it: in a
    current fact's ``history``, or (issue 38) in ``replaced``, the ones replaced by a statement
    that is not one of the entity's facts shown (a note line, a chat turn)."""
    out: list[tuple[Mapping[str, Any], str]] = []
    for fact in (f for facts in view.get("facts", {}).values() for f in facts):
        out += [(past, str(fact["source"])) for past in fact.get("history", ())]
    out += [(past, str(past.get("replaced_by"))) for past in view.get("replaced", ())]
    return out


def score_entity(view: Mapping[str, Any], rec: Mapping[str, Any], idx: Index) -> dict[str, Any]:
    """The subject's entity view, scored: is the older fact replaced by the newer one (in its
    history, or listed as replaced by it), and is any statement that should be current shown
    as replaced?"""
    rid = str(rec["id"])
    older, newer = idx.of(rid, "older")[0], idx.of(rid, "newer")[0]
    replaced_by: dict[Statement, tuple[Statement | None, str]] = {}  # by what, its citation
    for past, head in past_facts(view):
        st = idx.at(past["source"])
        if st is not None:
            replaced_by[st] = (idx.at(head), head)
    wrong = sorted(((s, by) for s, by in replaced_by.items() if s.record == rid and s.current),
                   key=lambda kv: _label(kv[0]))
    return {"older_replaced": replaced_by.get(older, (None, ""))[0] == newer,
            "marks": entity_marks(view, idx),
            "false_marks": [_label(s) for s, _ in wrong],
            "false_marks_by": {_label(s): _by(head, idx) for s, (_, head) in wrong}}


def entity_marks(view: Mapping[str, Any], idx: Index) -> list[list[Any]]:
    """Every rule-made "replaced" an entity view shows: ``[past source, replacing citation,
    right]``, right when the past fact is an update's older statement and the citation its
    newer one."""
    out: list[list[Any]] = []
    for past, head in past_facts(view):
        if past.get("basis") == "declared":
            continue
        st = idx.at(past["source"])
        right = st is not None and not st.current and idx.at(head) == idx.newer_of(st)
        out.append([str(past["source"]), head, right])
    return out


# ------------------------------------------------------------------------------------ running

def configure(cfg: Config, model: Path | None) -> Config:
    if model is None:
        return replace(cfg, embed_provider="none")
    return replace(cfg, embed_provider="local", embed_model=str(model.resolve()),
                   embed_threads=1)


def ask(ws: Workspace, cfg: Config, records: Sequence[Mapping[str, Any]], idx: Index,
        mode: RecallMode, k_max: int = 10) -> dict[str, dict[str, Any]]:
    """Every record's question asked in ``mode``, its results scored; asked again at k = 1 ..
    ``k_max`` (the answers must agree); for an update, asked again as of the day before the
    newer statement; and, per record with a subject, its entity view scored (the same in every
    mode)."""
    views: dict[str, dict[str, Any]] = {}
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        question = str(rec["question"])
        results = recall_results(ws, cfg, RecallRequest(query=question, k=K, mode=mode))
        scored = score_recall(results, rec, idx)
        if k_max:
            answers = {k: recall_results(ws, cfg, RecallRequest(query=question, k=k, mode=mode))
                       for k in range(1, k_max + 1)}
            scored["k_violations"] = k_violations(answers)
        if rec["kind"] == "update":
            newer = idx.of(str(rec["id"]), "newer")[0]
            before = (newer.day - timedelta(days=1)).isoformat()
            past = recall_results(ws, cfg, RecallRequest(query=question, k=K, mode=mode,
                                                         as_of=before))
            scored["as_of"] = score_as_of(past, rec, idx)
        name = subject(rec)
        if name is not None:
            if name not in views:
                views[name] = entity_view(Session(ws, cfg), name, now=NOW).to_json()
            scored["entity"] = score_entity(views[name], rec, idx)
        scored["top"] = [f"{r['source']} {r['snippet'][:60]}" for r in results[:3]]
        out[str(rec["id"])] = scored
    return out


def no_user_settings(tmp: Path) -> None:
    """The same answers on every machine: no user configuration, no GITMEM_* settings."""
    os.environ["XDG_CONFIG_HOME"] = str(tmp / "config")
    for name in [n for n in os.environ if n.startswith("GITMEM_")]:
        del os.environ[name]


def recall_results(ws: Workspace, cfg: Config, req: RecallRequest,
                   now: datetime = NOW) -> list[dict[str, Any]]:
    resp = answer(Session(ws, cfg), req, now=now)
    if resp.mode != req.mode:
        raise SystemExit(f"{req.mode} answered as {resp.mode}: {resp.warnings}")
    return list(resp.to_json()["results"])


def _rate(flags: Iterable[bool]) -> dict[str, Any]:
    values = [bool(f) for f in flags]
    return {"rate": round(sum(values) / len(values), 3) if values else None,
            "hits": sum(values), "n": len(values)}


def summarise(records: Sequence[Mapping[str, Any]], scored: Mapping[str, Mapping[str, Any]],
              idx: Index) -> dict[str, Any]:
    """The metrics over these records."""
    rule = [r for r in records if r["kind"] == "update" and not r.get("replaces")]
    declared = [r for r in records if r.get("replaces")]
    controls = [r for r in records if r["kind"] == "control"]

    def s(r: Mapping[str, Any]) -> Mapping[str, Any]:
        return scored[str(r["id"])]

    def entity(r: Mapping[str, Any]) -> Mapping[str, Any]:
        return s(r).get("entity") or {"older_replaced": False, "false_marks": []}

    current = [(r, st) for r in rule for st in idx.statements if st.record == r["id"]
               and st.current]
    shown = [r for r in rule if s(r)["older_shown"]]
    # a mark is (workspace, marked, marking, right): counted once however many questions show it
    recall_marks_ = {(r.get("set"), r["lang"], *m) for r in records
                     for m in s(r).get("marks", ())}
    entity_marks_ = {(r.get("set"), r["lang"], "entity", *m) for r in records
                     for m in entity(r).get("marks", ())}
    marks = recall_marks_ | entity_marks_
    by_form = {f"first_top3_{form}": _rate(s(r)["first_top3"] for r in rule
                                           if r["form"] == form) for form in ("mixed", "chat")}
    return {
        **by_form,
        "first_top3_fact": _rate(s(r)["first_top3"] for r in rule if r["form"] == "fact"),
        "first_top3_prose": _rate(s(r)["first_top3"] for r in rule if r["form"] == "prose"),
        "older_marked_when_shown": _rate(s(r)["older_marked"] for r in rule
                                         if s(r)["older_shown"]),
        "older_marked_when_shown_fact": _rate(s(r)["older_marked"] for r in rule
                                              if s(r)["older_shown"] and r["form"] == "fact"),
        "older_marked_when_shown_prose": _rate(s(r)["older_marked"] for r in rule
                                               if s(r)["older_shown"] and r["form"] == "prose"),
        "older_shown": _rate(s(r)["older_shown"] for r in rule),
        "as_of_older_unmarked": _rate(not s(r)["as_of"]["older_marked"] for r in rule
                                      if s(r)["as_of"]["older_shown"]),
        "entity_older_replaced": _rate(entity(r)["older_replaced"] for r in rule
                                       if r["form"] == "fact"),
        "entity_older_replaced_by_line": _rate(entity(r)["older_replaced"] for r in rule
                                               if r["form"] != "fact" and "entity" in s(r)),
        "controls_falsely_marked": _rate(bool(s(r)["false_marks"] or entity(r)["false_marks"])
                                         for r in controls),
        "controls_answered_top3": _rate(s(r)["newer_rank"] is not None and
                                        s(r)["newer_rank"] <= 3 for r in controls),
        "current_falsely_marked": _rate(
            f"{st.role}: {st.text}" in (*s(r)["false_marks"], *entity(r)["false_marks"])
            for r, st in current),
        "declared": _rate(entity(r)["older_replaced"] and
                          (not s(r)["older_shown"] or s(r)["basis"] == ["declared"])
                          for r in declared),
        "cjk_top5": _rate(s(r)["top5"] for r in records if r["lang"] in CJK_LANGS),
        # issue 38: hard marks and hints, each on its own
        "hard_mark_precision": _rate(bool(m[-1]) for m in sorted(marks, key=str)),
        "hard_mark_precision_recall": _rate(bool(m[-1]) for m in sorted(recall_marks_, key=str)),
        "hard_mark_precision_entity": _rate(bool(m[-1]) for m in sorted(entity_marks_, key=str)),
        "hard_mark_recall": _rate(s(r)["older_marked"] for r in shown),
        "hint_recall": _rate(s(r).get("older_hinted", False) for r in shown
                             if not s(r)["older_marked"]),
        "controls_hinted": _rate(bool(s(r).get("hinted")) for r in controls),
        "k_invariant": _rate(not s(r)["k_violations"] for r in records
                             if "k_violations" in s(r)),
        "k_violations": sum(len(s(r).get("k_violations", ())) for r in records),
        "controls_falsely_marked_by_case": {
            case: _rate(bool(s(r)["false_marks"] or entity(r)["false_marks"])
                        for r in controls if r.get("case") == case)
            for case in sorted({str(r["case"]) for r in controls if r.get("case")})},
        "older_marked_by_case": {
            case: _rate(s(r)["older_marked"] for r in shown if r.get("case") == case)
            for case in sorted({str(r["case"]) for r in shown if r.get("case")})},
    }


def run(records: Sequence[Mapping[str, Any]], workdir: Path, modes: Sequence[str],
        models: Sequence[Path], k_max: int = 10) -> dict[str, Any]:
    """Per language, build its workspace, index it (lexically, then with each model) and ask
    every question (also at k = 1 .. ``k_max``, 0: not): per run (``lexical``, ``hybrid
    <model>``) the metrics per language, per set (when the records come from several) and
    overall, and every record's scores."""
    check_records(records)
    runs: list[tuple[str, RecallMode, Path | None]] = []
    if "lexical" in modes:
        runs.append(("lexical", "lexical", None))
    if "hybrid" in modes:
        runs += [(f"hybrid {m.stem}", "hybrid", m) for m in models]
    langs = [lang for lang in LANGS if any(r["lang"] == lang for r in records)]
    sets = list(dict.fromkeys(str(r["set"]) for r in records if r.get("set")))
    scored: dict[str, dict[str, dict[str, Any]]] = {name: {} for name, _, _ in runs}
    statements: list[Statement] = []
    # one workspace per language and set: a set's figures are the same run alone or with others
    groups = list(dict.fromkeys(r.get("set") for r in records))
    for tag, lang in ((tag, lang) for tag in groups for lang in langs):
        mine = [r for r in records if r["lang"] == lang and r.get("set") == tag]
        if not mine:
            continue
        layout = lay_out(mine)
        statements += layout.statements
        ws, base = open_workspace(build_workspace(workdir / f"{tag or 'records'}-{lang}", layout))
        for name, mode, model in runs:
            cfg = configure(base, model)
            outcome = index_and_embed(ws, cfg, force=True)
            if outcome.embed_error:
                raise SystemExit(f"embedding with {model} failed: {outcome.embed_error}")
            scored[name] |= ask(ws, cfg, mine, Index(layout.statements), mode, k_max)
    idx = Index(statements)
    return {name: {"per_language": {lang: summarise([r for r in records if r["lang"] == lang],
                                                    scored[name], idx) for lang in langs},
                   "per_set": {tag: summarise([r for r in records if r.get("set") == tag],
                                              scored[name], idx)
                               for tag in sets} if len(sets) > 1 else {},
                   "overall": summarise(records, scored[name], idx),
                   "records": scored[name]}
            for name, _, _ in runs}


# ------------------------------------------------------------------------------------ reports

COLUMNS = (
    ("first_top3_fact", "first & top 3, facts"),
    ("first_top3_prose", "first & top 3, prose"),
    ("older_marked_when_shown", "older marked when shown"),
    ("entity_older_replaced", "entity: older replaced"),
    ("controls_falsely_marked", "controls marked"),
    ("current_falsely_marked", "current marked"),
    ("declared", "declared"),
    ("as_of_older_unmarked", "as-of before: older unmarked"),
    ("cjk_top5", "CJK top 5"),
)


# issue 38: "replaced" only when it is true; hints apart; no answer depends on --k
TRUTH_COLUMNS = (
    ("hard_mark_precision", "hard-mark precision"),
    ("hard_mark_recall", "hard-mark recall"),
    ("hint_recall", "hint recall"),
    ("controls_falsely_marked", "controls hard-marked"),
    ("controls_hinted", "controls hinted"),
    ("first_top3_mixed", "first & top 3, mixed"),
    ("first_top3_chat", "first & top 3, chat"),
    ("entity_older_replaced_by_line", "entity: older replaced by a line"),
    ("k_invariant", "k = 1..10 agree"),
)


def _cell(m: Mapping[str, Any]) -> str:
    return "–" if not m["n"] else f"{m['rate']:.2f} ({m['hits']}/{m['n']})"


def markdown(report: Mapping[str, Any],
             columns: Sequence[tuple[str, str]] = COLUMNS) -> str:
    lines = ["| run | lang | " + " | ".join(title for _, title in columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for name, result in report.items():
        rows = [*result["per_language"].items(), *result.get("per_set", {}).items(),
                ("all", result["overall"])]
        for lang, metrics in rows:
            cells = " | ".join(_cell(metrics[key]) for key, _ in columns)
            lines.append(f"| {name} | {lang} | {cells} |")
    return "\n".join(lines)


def by_case(report: Mapping[str, Any]) -> str:
    """Per run and set, controls hard-marked and older marked, by failure class."""
    out: list[str] = []
    for name, result in report.items():
        for tag, metrics in [*result.get("per_set", {}).items(), ("all", result["overall"])]:
            parts = [f"{case} {_cell(m)}" for case, m in
                     metrics["controls_falsely_marked_by_case"].items()]
            older = [f"{case} {_cell(m)}" for case, m in metrics["older_marked_by_case"].items()]
            out.append(f"- {name}, {tag}: controls hard-marked: {', '.join(parts) or '–'}; "
                       f"older marked: {', '.join(older) or '–'}; "
                       f"k violations: {metrics['k_violations']}")
    return "\n".join(out)


def misses(report: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> str:
    """Per run, the records that missed something, with the first results."""
    out: list[str] = []
    by_id = {str(r["id"]): r for r in records}
    for name, result in report.items():
        out.append(f"## {name}")
        for rid, s in result["records"].items():
            rec = by_id[rid]
            ent = s.get("entity", {})
            wrong = []
            if rec["kind"] == "update" and not s["first_top3"]:
                wrong.append(f"newer at {s['newer_rank']}, older at {s['older_rank']}")
            if rec["kind"] == "update" and s["older_shown"] and not s["older_marked"]:
                wrong.append("older shown unmarked")
            if rec["kind"] == "update" and ent and not ent["older_replaced"]:
                wrong.append("entity: older not replaced")
            wrong += [f"k: {v}" for v in s.get("k_violations", ())[:3]]
            if s.get("as_of", {}).get("older_marked"):
                wrong.append(f"as-of before the newer: older marked by {s['as_of']['marked_by']}")
            for where, marks in (("recall", s), ("entity", ent)):
                wrong += [f"{where} marks {what!r} replaced by {by}"
                          for what, by in marks.get("false_marks_by", {}).items()]
            if wrong:
                out.append(f"- {rid} ({rec['question']}): {'; '.join(wrong)}")
                out += [f"    {t}" for t in s["top"]]
    return "\n".join(out)


def outcomes(scored: Mapping[str, Any]) -> dict[str, Any]:
    """What one record's scores say, as the metrics count it."""
    ent = scored.get("entity") or {}
    return {
        "first & top 3": scored["first_top3"],
        "older marked": scored["older_marked"] if scored["older_shown"] else None,
        "entity: older replaced": ent.get("older_replaced"),
        "as-of: older marked": (scored.get("as_of") or {}).get("older_marked"),
        "false marks": sorted({*scored["false_marks"], *ent.get("false_marks", ())}),
    }


def compare(before: Mapping[str, Any], after: Mapping[str, Any]) -> str:
    """Per run found in both reports (``--json`` files), every record whose outcome changed:
    what a change to the rule fixed and what it broke."""
    out: list[str] = []
    for name in (n for n in after if n in before):
        old, new = before[name]["records"], after[name]["records"]
        changed = []
        for rid in (r for r in new if r in old):
            a, b = outcomes(old[rid]), outcomes(new[rid])
            changed += [f"- {rid}: {what} {a[what]} -> {b[what]}" for what in b
                        if a[what] != b[what]]
        out += [f"## {name}: {len(changed)} changes", *changed]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--mode", choices=("lexical", "hybrid", "both"), default=None,
                    help="default: both with --model (or a built bench model), else lexical")
    ap.add_argument("--model", action="append", type=Path, default=[], metavar="PATH.gguf",
                    help=f"embedding model for hybrid (repeatable; default {DEFAULT_MODEL.name})")
    ap.add_argument("--only", help="languages to run, comma-separated (en, ja, ru, da, zh)")
    ap.add_argument("--data", type=Path, help="records as a JSON list (default: updates_data)")
    ap.add_argument("--data-module", metavar="NAME",
                    help="records from a module's RECORDS (bench.updates_fresh)")
    ap.add_argument("--set", choices=(*SETS, "all"), dest="which",
                    help="a stored set: original (updates_data), fresh (updates_fresh), "
                         "heldout (updates_heldout) or all three (default: original)")
    ap.add_argument("--json", type=Path, dest="json_out", metavar="OUT",
                    help="write the report (metrics and every record's scores) here")
    ap.add_argument("--misses", action="store_true", help="print the records that missed")
    ap.add_argument("--k-max", type=int, default=10, metavar="N",
                    help="ask each question at k = 1..N too, to check the answers agree "
                         "(default 10; 0: not)")
    ap.add_argument("--compare", type=Path, metavar="BEFORE.json",
                    help="print the records whose outcome differs from an earlier --json report")
    args = ap.parse_args(argv)
    models = list(args.model) or ([DEFAULT_MODEL] if DEFAULT_MODEL.exists() else [])
    mode = args.mode or ("both" if models else "lexical")
    modes = ("lexical", "hybrid") if mode == "both" else (mode,)
    if "hybrid" in modes and not models:
        raise SystemExit(f"hybrid needs --model PATH.gguf (or {DEFAULT_MODEL}: "
                         "bash bench/build_model.sh)")
    if sum(x is not None for x in (args.data, args.data_module, args.which)) > 1:
        raise SystemExit("--data, --data-module and --set choose the records: give one")
    if args.data_module:
        records = load_module(args.data_module)
    elif args.which:
        records = load_set(args.which)
    else:
        records = load_records(args.data)
    if args.only:
        wanted = {lang.strip() for lang in args.only.split(",")}
        records = [r for r in records if r.get("lang") in wanted]
        if not records:
            raise SystemExit(f"no records in {sorted(wanted)}")
    with tempfile.TemporaryDirectory(prefix="gitmem-updates-") as tmp:
        no_user_settings(Path(tmp))
        report = run(records, Path(tmp), modes, models, args.k_max)
    print(markdown(report))
    print("\n" + markdown(report, TRUTH_COLUMNS))
    print("\n" + by_case(report))
    if args.misses:
        print("\n" + misses(report, records))
    if args.compare:
        earlier = json.loads(args.compare.read_text(encoding="utf-8"))["runs"]
        print("\n" + compare(earlier, report))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        payload = {"now": NOW.isoformat(), "k": K, "k_max": args.k_max,
                   "records": len(records), "runs": report}
        args.json_out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n",
                                 encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
