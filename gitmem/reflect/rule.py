"""The confidence rule of SPEC §5, as pure functions: one opinion, its new evidence, the move.

A new ``O`` entry about the same claim moves the confidence toward its stated ``c`` by
``step × (c_observed − c)``, one entry at a time in chronological order (record time, then file
and line); the run's total move is capped at ``max_move × min(max_evidence, n)`` for ``n`` new,
distinct entries. An entry without ``c`` counts as agreement: ``c_observed = min(1, c +
agreement)``. The result is stored rounded to two decimals. So one report nudges, and a big
swing needs repeated or strong contradicting evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal


@dataclass(frozen=True)
class RuleParams:
    """The rule's constants (``[reflect]`` in config; these are SPEC §5's defaults)."""

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

    @property
    def stance(self) -> str:
        """'for' when the entry holds the opinion more likely than not (or restates it without
        a c: agreement), else 'against'."""
        agrees = self.observation.confidence is None or self.observed >= 0.5
        return "for" if agrees else "against"


@dataclass(frozen=True)
class Move:
    """What one run does to one opinion's confidence."""

    start: float
    end: float  # rounded to two decimals, as stored
    unrounded: float
    cap: float
    capped: bool
    steps: tuple[Step, ...]

    @property
    def changed(self) -> bool:
        return self.end != self.start


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
    c = confidence
    steps: list[Step] = []
    for obs in todo:
        observed = (min(1.0, c + params.agreement) if obs.confidence is None
                    else _clamp01(obs.confidence))
        after = c + params.step * (observed - c)
        steps.append(Step(obs, c, observed, after))
        c = after
    cap = params.max_move * min(params.max_evidence, len(todo))
    bounded = min(confidence + cap, max(confidence - cap, c))
    capped = abs(bounded - c) > 1e-12
    end = round2(_clamp01(bounded))
    return Move(confidence, end, c, cap, capped, tuple(steps))


def initial_confidence(stated: float | None, params: RuleParams = SPEC_RULE) -> float:
    """The confidence of a new opinion: the entry's stated c, else the default."""
    return round2(_clamp01(params.default_confidence if stated is None else stated))
