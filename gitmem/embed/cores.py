"""How many threads the local model should decode with: the cores other processes leave free.

llama.cpp's threads wait for each other at every step of a decode by spinning. When another
process holds one of the cores, a decode on every core waits for a thread that is not running,
and spins meanwhile: measured on 2 cores (BENCHMARKS.md, "Threads that follow the free cores"),
two threads beside one busy process of the same priority took 2.3 times as long as one, and in
a lower-priority background process beside two busy ones 3.9 times as long, with 7 times the
CPU. Unless ``embed.threads`` fixes the number, the worker looks before every batch at how much
of its cores' time other processes took since it last looked (``/proc/stat``, less its own CPU
time) and decodes on the cores left: ``floor(cores - others + 0.5)``, at least 1. Work of
lower priority (``nice``) is not counted against a worker that runs at normal priority: the
kernel gives that worker the core first. Where ``/proc/stat`` cannot be read (not Linux) it
uses every core, as before.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from pathlib import Path

PROC_STAT = Path("/proc/stat")
# Shorter looks than this are too coarse (the kernel counts in 10 ms ticks): the last decision
# stands and the next look covers the longer span.
MIN_LOOK_SECONDS = 0.25


def usable_cores() -> list[int]:
    """The CPUs this process may run on (its affinity: a container's or ``taskset``'s share)."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return list(range(os.cpu_count() or 1))


def busy_seconds(text: str, cpus: set[int], tick: float, *,
                 count_nice: bool = True) -> float | None:
    """The CPU-seconds the ``cpus`` spent busy (all but idle and I/O wait; without
    ``count_nice``, also but the time of processes of lowered priority) since boot, read from
    ``/proc/stat`` text; None when a CPU's line is missing."""
    total, seen = 0.0, 0
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or not name[3:].isdigit() or int(name[3:]) not in cpus:
            continue
        fields = [int(f) for f in rest.split()]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        niced = 0 if count_nice else fields[1]
        total += (sum(fields[:8]) - idle - niced) * tick  # guest time is already in user time
        seen += 1
    return total if seen == len(cpus) else None


def _clock_tick() -> float:
    """Seconds per tick of ``/proc/stat``."""
    try:
        return 1.0 / os.sysconf("SC_CLK_TCK")
    except (AttributeError, ValueError, OSError):
        return 0.01


def _niceness() -> int:
    try:
        return os.getpriority(os.PRIO_PROCESS, 0)
    except (AttributeError, OSError):  # not Unix
        return 0


def _read_stat() -> str | None:
    try:
        return PROC_STAT.read_text(encoding="ascii")
    except (OSError, UnicodeDecodeError):
        return None


class FreeCores:
    """Threads for the next decode: the cores of ``usable_cores`` that other processes left
    free since the last look (see the module's docstring). The clocks, ``/proc/stat`` and
    whether niced work counts (by default: when this process is niced itself) are parameters
    so that the rule can be checked on given readings."""

    def __init__(self, cpus: list[int] | None = None, *,
                 read_stat: Callable[[], str | None] = _read_stat,
                 own_seconds: Callable[[], float] = time.process_time,
                 clock: Callable[[], float] = time.monotonic, tick: float | None = None,
                 count_nice: bool | None = None) -> None:
        self.cpus = set(cpus if cpus is not None else usable_cores())
        self._read_stat, self._own, self._clock = read_stat, own_seconds, clock
        self._tick = tick or _clock_tick()
        # a worker of normal priority takes a core from niced work: that work is not counted
        # (and a niced worker's own time is in the nice column, so then it must be)
        self._count_nice = _niceness() > 0 if count_nice is None else count_nice
        self.threads = len(self.cpus)
        self.others = 0.0  # cores' worth of other processes' work at the last look
        self._last = self._look()

    def _look(self) -> tuple[float, float, float] | None:
        text = self._read_stat()
        busy = None if text is None else busy_seconds(text, self.cpus, self._tick,
                                                      count_nice=self._count_nice)
        return None if busy is None else (busy, self._own(), self._clock())

    def next_threads(self) -> int:
        """Threads for the next decode (every core when the machine cannot be read)."""
        if self._last is None:
            return self.threads
        now = self._look()
        if now is None:  # no longer readable (a CPU's line gone): every core, as before
            self._last, self.threads = None, len(self.cpus)
            return self.threads
        span = now[2] - self._last[2]
        if span < MIN_LOOK_SECONDS:
            return self.threads
        theirs = (now[0] - self._last[0]) - (now[1] - self._last[1])
        self._last = now
        self.others = max(0.0, theirs / span)
        self.threads = max(1, min(len(self.cpus), math.floor(len(self.cpus) - self.others + 0.5)))
        return self.threads
