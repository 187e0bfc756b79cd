"""The docs/opinions-file.md confidence rule as a pure function."""

from __future__ import annotations

import pytest

from gitmem.reflect.rule import Observation, RuleParams, apply_evidence, initial_confidence, round2


def obs(n: int, c: float | None, day: int = 1) -> Observation:
    return Observation(f"f-{n:012x}", c, f"2025-12-{day:02d}T20:00:00+00:00",
                       f"memory/2025-12-{day:02d}.md", 10 + n)


def test_spec_worked_example_to_two_decimals() -> None:
    first = apply_evidence(0.90, [obs(1, 0.2)])
    assert first.unrounded == pytest.approx(0.69)
    assert first.capped and first.end == 0.75
    # three entries recorded on one later day: one cap for the day, 0.45
    second = apply_evidence(first.end, [obs(2, 0.2, 2), obs(3, 0.2, 2), obs(4, 0.2, 2)])
    assert [round(s.after, 5) for s in second.steps] == [0.585, 0.4695, 0.38865]
    assert not second.capped and second.cap == pytest.approx(0.45)
    assert second.end == 0.39
    # the same three on three separate days: each day from the stored value, capped, rounded
    apart = apply_evidence(first.end, [obs(2, 0.2, 2), obs(3, 0.2, 3), obs(4, 0.2, 4)])
    assert [round(s.before, 5) for s in apart.steps] == [0.75, 0.60, 0.48]
    assert apart.capped_days == ("2025-12-02",) and apart.end == 0.40


def test_per_day_caps_make_the_result_independent_of_how_runs_split_the_days() -> None:
    days = [obs(n, (0.1, 0.9, 0.3, None)[n % 4], 1 + n // 3) for n in range(24)]
    once = apply_evidence(0.62, days).end
    for size in (1, 2, 5):  # runs of one, two and five record days
        c = 0.62
        for first in range(1, 9, size):
            c = apply_evidence(c, [o for o in days if first <= int(o.recorded_at[8:10]) < first + size]).end
        assert c == once


def test_reinforced_three_times_moves_by_the_capped_steps() -> None:
    # Three agreeing entries in three runs: each run moves at most 0.15 (one entry each).
    c, path = 0.30, []
    for n in range(3):
        move = apply_evidence(c, [obs(n, 1.0, n + 1)])
        assert move.end - c == pytest.approx(min(0.15, 0.3 * (1.0 - c)), abs=0.006)
        c = move.end
        path.append(c)
    assert path == [0.45, 0.6, 0.72]
    # The same three entries in one run: applied in order, each record day capped on its own.
    apart = apply_evidence(0.30, [obs(2, 1.0, 3), obs(0, 1.0, 1), obs(1, 1.0, 2)])
    assert [s.observation.fact_id for s in apart.steps] == [obs(n, 1.0).fact_id
                                                           for n in range(3)]
    assert apart.end == path[-1]
    # Three recorded on one day: capped at 0.45 for the day.
    together = apply_evidence(0.30, [obs(2, 1.0), obs(0, 1.0), obs(1, 1.0)])
    assert together.unrounded == pytest.approx(1 - 0.7 * 0.7 ** 3)  # 0.7599: a move of 0.4599
    assert together.capped and together.end == 0.75


def test_one_contradiction_nudges_but_does_not_flip() -> None:
    move = apply_evidence(0.85, [obs(1, 0.05)])
    assert move.end == 0.70 and move.end > 0.5


def test_repeated_contradiction_flips() -> None:
    c = 0.85
    for run in range(3):
        c = apply_evidence(c, [obs(3 * run + k, 0.05, 3 * run + k + 1) for k in range(3)]).end
    assert c < 0.5
    assert apply_evidence(0.85, [obs(k, 0.05, k + 1) for k in range(3)]).end == 0.40  # capped


def test_agreement_without_c_and_known_evidence() -> None:
    move = apply_evidence(0.60, [obs(1, None)])
    assert move.steps[0].observed == pytest.approx(0.7)
    assert move.end == 0.63
    assert apply_evidence(0.95, [obs(1, None)]).steps[0].observed == 1.0
    weak = apply_evidence(0.20, [obs(1, None)])  # restating a weak opinion still agrees
    assert weak.end == 0.23 and weak.steps[0].observed == pytest.approx(0.3)
    # A fact already cited, or the same fact twice, is not new evidence.
    assert not apply_evidence(0.60, [obs(1, 0.1)], known=frozenset({obs(1, 0.1).fact_id})).steps
    assert len(apply_evidence(0.60, [obs(1, 0.1), obs(1, 0.1)]).steps) == 1


def test_parameters_and_new_opinions() -> None:
    gentle = RuleParams(step=0.1, max_move=0.05, max_evidence=2, agreement=0.2,
                        default_confidence=0.4)
    assert apply_evidence(0.90, [obs(1, 0.2)], gentle).end == 0.85
    assert apply_evidence(0.50, [obs(1, None)], gentle).steps[0].observed == pytest.approx(0.7)
    assert initial_confidence(None) == 0.5
    assert initial_confidence(None, gentle) == 0.4
    assert initial_confidence(0.955) == 0.96
    assert round2(0.385) == 0.39 and round2(0.38865) == 0.39 and round2(0.125) == 0.13
