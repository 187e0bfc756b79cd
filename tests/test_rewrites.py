"""History rewrites at scale: random commits, amends, rebases, resets, checkouts,
merges, cherry-picks and branch deletions on a generated workspace, re-indexed incrementally
after each, equal a clean rebuild after every step (bench/reliability runs 500)."""

from __future__ import annotations

from pathlib import Path

from testing.rewrites import run_rewrites


def test_thirty_random_operations_converge_after_every_step(tmp_path: Path) -> None:
    report = run_rewrites(tmp_path, 30, every=1, seed=3)
    assert report.errors == []
    assert report.mismatches == []
    assert report.checked == 30 and report.operations == 30
    assert len(report.done) >= 6, report.done  # most kinds of operation really happened
