"""Parse workers for big replays that die with the process that made them.

The pool forks (the workers start in milliseconds, with the parser already imported). A forked
worker shares its parent's pipes, so when the parent is killed a worker blocks for ever on a
pipe that nobody reads. Each worker therefore arms the kernel's parent-death signal (Linux
``prctl(PR_SET_PDEATHSIG)``) or, elsewhere, watches its parent from a thread, and exits when
the parent is gone. Workers hold no lock: gitmem's locks are per-process record locks
(``gitmem.locks``), which a fork does not inherit.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.2  # how often a worker without prctl checks that its parent lives


def parse_pool(workers: int, *, use_prctl: bool = True) -> ProcessPoolExecutor:
    """A forking process pool whose workers exit when this process dies."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=die_with_parent, initargs=(os.getpid(), use_prctl))


def die_with_parent(parent: int, use_prctl: bool = True) -> None:
    """Worker initializer: exit when ``parent`` dies (also if it died before this ran)."""
    if not (use_prctl and _arm_parent_death_signal()):
        threading.Thread(target=_watch, args=(parent,), name="watch-parent", daemon=True).start()
    if os.getppid() != parent:
        os._exit(1)


def _arm_parent_death_signal() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(1)
