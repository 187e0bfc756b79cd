"""Concurrency and load with real processes (docs/architecture.md): waves of 20 post-commit hooks fired
at once while recall runs in a loop, for 10 s (bench/reliability runs a minute). No recall fails,
no hook run fails or is lost, and the final index equals a rebuild."""

from __future__ import annotations

from pathlib import Path

from testing.load import HOOKS_PER_WAVE, prepare, run_load


def test_twenty_hooks_at_once_while_recall_loops(tmp_path: Path) -> None:
    repo = prepare(tmp_path, days=60)
    report = run_load(repo, 10.0, wave_every=5.0, min_waves=2)
    assert report.errors == []
    assert report.waves >= 2 and report.hooks_fired == report.waves * HOOKS_PER_WAVE
    assert report.recalls >= 2  # two loops, one recall each at least (a count, not a time)
