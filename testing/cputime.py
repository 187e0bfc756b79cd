"""CPU time: the measure of work for tests on a shared machine. Wall-clock time grows with
whatever else the machine runs; the CPU time a piece of work needs hardly does."""

from __future__ import annotations

import resource


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads) and of its children that
    have ended (parse workers, git, a model process)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total
