"""The confidence rule (docs/opinions-file.md) as pure functions: one opinion, its new
evidence, the move.

A new ``O`` entry about the same claim moves the confidence toward its stated ``c`` by
``step × (c_observed − c)``, one entry at a time in chronological order (record time, then file
and line). The move is capped **per record day** of the evidence: each day's entries start from
the confidence as stored (two decimals), their total move is at most ``max_move ×
min(max_evidence, n)`` for the day's ``n`` new, distinct entries, and the result is rounded to
two decimals before the next day's entries. So the result depends only on the memory's history,
never on when or how often reflect ran. An entry without ``c`` counts as agreement:
``c_observed = min(1, c + agreement)``. An entry against the opinion (it states the opposite,
or words an end of it) observes ``min(c_stated, 1 − c_stated)``, without ``c``
``max(0, c − agreement)``, and never raises it. So one report nudges, and a big swing needs
repeated or strong contradicting evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from itertools import groupby


@dataclass(frozen=True)
class RuleParams:
    """The rule's constants (``[reflect]`` in config; these are docs/opinions-file.md's
    defaults)."""

    step: float = 0.3  # the share of the gap to the observed c that one entry closes
    max_move: float = 0.15  # per new distinct entry, the most a run may move an opinion
    max_evidence: int = 3  # ... counting at most this many entries
    agreement: float = 0.1  # an entry without c observes c + agreement
    default_confidence: float = 0.5  # a new opinion from an entry without c


SPEC_RULE = RuleParams()


@dataclass(frozen=True)
class Observation:
    """One new ``O`` entry as evidence: its stated confidence (None: none stated) and where it
    sits in time (record time, path, line) for the chronological order."""

    fact_id: str
    confidence: float | None
    recorded_at: str
    path: str
    line: int
    against: bool = False  # the opposite, or a worded end: observes min(c, 1 - c), never raises

    @property
    def order(self) -> tuple[str, str, int]:
        return (self.recorded_at, self.path, self.line)


@dataclass(frozen=True)
class Step:
    """One entry applied: the confidence before, the c it observed, the confidence after."""

    observation: Observation
    before: float
    observed: float
    after: float


@dataclass(frozen=True)
class Move:
    """What new evidence does to one opinion's confidence, one record day after another."""

    start: float
    end: float  # rounded to two decimals, as stored
    unrounded: float  # the last record day's result before its cap and rounding
    cap: float  # the last record day's cap
    capped_days: tuple[str, ...]  # the record days whose move the cap cut short
    steps: tuple[Step, ...]

    @property
    def capped(self) -> bool:
        return bool(self.capped_days)

    @property
    def changed(self) -> bool:
        return self.end != self.start


def record_day(recorded_at: str) -> str:
    """The day (as the record time states it) an entry was recorded: what the cap is per."""
    return datetime.fromisoformat(recorded_at).date().isoformat()


def round2(value: float) -> float:
    """Two decimals, halves away from zero (0.385 → 0.39, whatever its binary form)."""
    return float(Decimal(repr(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _clamp01(value: float) -> float:
    return min(1.0, max(0.0, value))


def distinct_new(observations: Sequence[Observation],
                 known: frozenset[str] = frozenset()) -> list[Observation]:
    """Observations in chronological order, each fact once, leaving out facts already cited."""
    seen = set(known)
    out: list[Observation] = []
    for obs in sorted(observations, key=lambda o: (*o.order, o.fact_id)):
        if obs.fact_id not in seen:
            seen.add(obs.fact_id)
            out.append(obs)
    return out


def apply_evidence(confidence: float, observations: Sequence[Observation],
                   params: RuleParams = SPEC_RULE, *,
                   known: frozenset[str] = frozenset()) -> Move:
    """Move ``confidence`` by the new, distinct ``observations`` (facts in ``known`` are already
    evidence and count for nothing)."""
    todo = distinct_new(observations, known)
    c, unrounded, cap = confidence, confidence, 0.0
    steps: list[Step] = []
    capped: list[str] = []
    for day, group in groupby(todo, key=lambda o: record_day(o.recorded_at)):
        entries = list(group)
        x = c
        for obs in entries:
            observed = observe(obs, x, params)
            after = x + params.step * (observed - x)
            if obs.against:
                after = min(x, after)  # evidence against never raises the opinion
            steps.append(Step(obs, x, observed, after))
            x = after
        cap = params.max_move * min(params.max_evidence, len(entries))
        bounded = min(c + cap, max(c - cap, x))
        if abs(bounded - x) > 1e-12:
            capped.append(day)
        unrounded, c = x, round2(_clamp01(bounded))
    return Move(confidence, c, unrounded, cap, tuple(capped), tuple(steps))


def observe(obs: Observation, confidence: float, params: RuleParams = SPEC_RULE) -> float:
    """The confidence an entry observes. One for the opinion: its ``c`` (an entry without one
    agrees: ``confidence + agreement``). One against it (the opposite, or a worded end) holds
    the opinion at most ``min(c, 1 − c)``: its ``c`` may say how sure it is of the opposite
    ("not good enough", c=0.9: 0.1) or how much of the opinion is left ("stopped using them",
    c=0.3: 0.3); either way the opinion holds no more than that (without ``c``:
    ``confidence − agreement``). :func:`apply_evidence` never lets it raise the opinion."""
    if obs.confidence is None:
        shift = -params.agreement if obs.against else params.agreement
        return _clamp01(confidence + shift)
    c = _clamp01(obs.confidence)
    return min(c, 1.0 - c) if obs.against else c


def initial_confidence(stated: float | None, params: RuleParams = SPEC_RULE) -> float:
    """The confidence of a new opinion: the entry's stated c, else the default."""
    return round2(_clamp01(params.default_confidence if stated is None else stated))
