"""Reading LoCoMo: conversations, sessions, turns, observations and questions.

The dataset has known flaws; each is repaired or skipped here and counted in ``Skips`` (with a
few examples), so the build report says exactly what was left out: evidence strings holding
several ids, malformed ids (``"D:11:26"``), ids naming no turn, turns with line breaks or no text,
date keys for sessions that do not exist, questions without evidence or of category 5.

Data: ``../shared/bench/locomo-dev.json`` (LoCoMo, Maharana et al., ACL 2024, CC BY-NC 4.0;
research and benchmarking only).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
MONTHS = {m: n for n, m in enumerate(_MONTH_NAMES.split(), start=1)}
_DATE_TIME = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*"
)
_DIA_ID = re.compile(r"D(\d+):(\d+)")
_LOOSE_DIA_ID = re.compile(r"D\W*(\d+)\W+(\d+)")
_SESSION = re.compile(r"session_(\d+)")


class BenchError(Exception):
    """A problem the user can fix (bad input, missing build, unavailable method)."""


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None


@dataclass(frozen=True)
class Session:
    number: int
    date_time: str
    when: datetime
    turns: tuple[Turn, ...]
    observations: tuple[tuple[str, str, tuple[str, ...]], ...]  # (speaker, fact, dia_ids)


@dataclass(frozen=True)
class Question:
    index: int  # position in the conversation's qa list
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Skips:
    """What the dataset's flaws made us skip or repair, with a few examples of each."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, example: str) -> None:
        self.counts[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < 5:
            shown.append(example)

    def merge(self, other: Skips) -> None:
        for reason, n in other.counts.items():
            self.counts[reason] += n
            shown = self.examples.setdefault(reason, [])
            shown.extend(other.examples.get(reason, [])[: 5 - len(shown)])

    def to_json(self) -> dict[str, Any]:
        return {
            reason: {"count": n, "examples": self.examples.get(reason, [])}
            for reason, n in sorted(self.counts.items())
        }


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    skips: Skips


def parse_date_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as a UTC datetime (locale-independent)."""
    m = _DATE_TIME.fullmatch(text)
    month = MONTHS.get(m.group(5).lower()) if m else None
    if m is None or month is None:
        raise BenchError(f"unreadable session date and time: {text!r}")
    hour = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0)
    return datetime(int(m.group(6)), month, int(m.group(4)), hour, int(m.group(2)), tzinfo=UTC)


def one_line(text: str) -> str:
    return " ".join(text.split())


def clean_evidence(raw: Any, known: set[str], where: str, skips: Skips) -> list[str]:
    """Evidence ids as a clean, de-duplicated list of turn ids that exist.

    Repairs, each counted: several ids in one string (``"D8:6; D9:17"``, ``"D9:1 D4:4"``) are
    split; ``"D:11:26"`` becomes ``D11:26`` when that turn exists (the only reading). Skips, each
    counted: ids no reading of which names an existing turn.
    """
    values = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for value in values:
        pieces = [p for p in re.split(r"[;,\s]+", str(value)) if p]
        if len(pieces) > 1:
            skips.add("evidence string holding several ids (split)", f"{where}: {value!r}")
        for piece in pieces:
            dia = piece
            if not _DIA_ID.fullmatch(piece):
                m = _LOOSE_DIA_ID.fullmatch(piece)
                fixed = f"D{int(m.group(1))}:{int(m.group(2))}" if m else None
                if fixed is None or fixed not in known:
                    skips.add("malformed evidence id (dropped)", f"{where}: {piece!r}")
                    continue
                skips.add("malformed evidence id (normalised)", f"{where}: {piece!r} -> {fixed}")
                dia = fixed
            if dia not in known:
                skips.add("evidence id naming no turn (dropped)", f"{where}: {dia}")
                continue
            if dia not in out:
                out.append(dia)
    return out


def _read_turn(raw: dict[str, Any], where: str, skips: Skips) -> Turn | None:
    dia, speaker, text = raw.get("dia_id"), raw.get("speaker"), raw.get("text")
    if not isinstance(dia, str) or not _DIA_ID.fullmatch(dia) or not speaker:
        skips.add("turn without a usable dia_id or speaker (dropped)", f"{where}: {raw!r:.80}")
        return None
    if not isinstance(text, str):
        skips.add("turn without text (kept, empty)", f"{where}: {dia}")
        text = ""
    if "\n" in text.strip() or "\r" in text:
        skips.add("turn text with line breaks (folded into one line)", f"{where}: {dia}")
    caption = raw.get("blip_caption")
    caption = one_line(caption) if isinstance(caption, str) and caption.strip() else None
    return Turn(dia, str(speaker), one_line(text), caption)


def _read_observations(
    raw: Any, known: set[str], where: str, skips: Skips
) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    out: list[tuple[str, str, tuple[str, ...]]] = []
    if not isinstance(raw, dict):
        return ()
    for speaker, facts in raw.items():
        for item in facts if isinstance(facts, list) else []:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                reason = "observation not a [fact, dia_id] pair (dropped)"
                skips.add(reason, f"{where}: {item!r:.80}")
                continue
            ids = clean_evidence(item[1], known, f"{where} observation", skips)
            out.append((str(speaker), one_line(item[0]), tuple(ids)))
    return tuple(out)


def read_conversation(item: dict[str, Any], observations: bool = False) -> Conversation:
    """One LoCoMo sample, its flaws counted in ``skips`` (observations read only if asked)."""
    sample_id = str(item["sample_id"])
    conv = item["conversation"]
    skips = Skips()
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)))
    for key in conv:
        m = re.fullmatch(r"session_(\d+)_date_time", key)
        if m and int(m.group(1)) not in numbers:
            skips.add("session date_time without a session (ignored)", f"{sample_id}: {key}")
    raw_sessions: list[tuple[int, str, datetime, list[Turn]]] = []
    for n in numbers:
        stamp = conv.get(f"session_{n}_date_time")
        if not isinstance(stamp, str):
            skips.add("session without a date_time (dropped)", f"{sample_id}: session_{n}")
            continue
        where = f"{sample_id} session_{n}"
        turns = [t for raw in conv[f"session_{n}"] if (t := _read_turn(raw, where, skips))]
        if not turns:
            skips.add("session without turns (dropped)", where)
            continue
        raw_sessions.append((n, stamp, parse_date_time(stamp), turns))
    known = {t.dia_id for _, _, _, turns in raw_sessions for t in turns}
    observed = (item.get("observation") or {}) if observations else {}
    sessions = tuple(
        Session(
            n,
            stamp,
            when,
            tuple(turns),
            _read_observations(
                observed.get(f"session_{n}_observation"), known, f"{sample_id} session_{n}", skips
            ),
        )
        for n, stamp, when, turns in raw_sessions
    )
    questions = tuple(_read_questions(item.get("qa") or [], known, sample_id, skips))
    speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
    return Conversation(sample_id, speakers, sessions, questions, skips)


def _read_questions(
    qa: list[dict[str, Any]], known: set[str], sample_id: str, skips: Skips
) -> Iterable[Question]:
    for index, q in enumerate(qa):
        where = f"{sample_id} qa[{index}]"
        category = q.get("category")
        if category not in CATEGORIES:
            skips.add(f"question of category {category} (not evaluated)", where)
            continue
        answer = q.get("answer", q.get("adversarial_answer", ""))
        if not isinstance(answer, str):
            skips.add("answer not a string (converted)", f"{where}: {answer!r}")
            answer = str(answer)
        if not q.get("evidence"):
            skips.add("question without evidence (not evaluated)", where)
            continue
        evidence = clean_evidence(q["evidence"], known, where, skips)
        if not evidence:
            skips.add("question left without usable evidence (not evaluated)", where)
            continue
        yield Question(index, str(q.get("question", "")), answer, int(category), tuple(evidence))


def read_dataset(path: Path, observations: bool = False) -> list[Conversation]:
    """Every conversation of the LoCoMo JSON at ``path`` (see ``read_conversation``)."""
    items = json.loads(path.read_text(encoding="utf-8"))
    return [read_conversation(item, observations) for item in items]
