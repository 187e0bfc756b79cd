"""Parse workers for big replays that die with the process that made them.

The pool forks (the workers start in milliseconds, with the parser already imported). A forked
worker shares its parent's pipes, so when the parent is killed a worker blocks for ever on a
pipe that nobody reads: each worker therefore runs ``gitmem.lifetime.die_with_parent`` first.
Workers hold no lock: gitmem's locks are per-process record locks (``gitmem.locks``), which a
fork does not inherit.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from gitmem.lifetime import die_with_parent


def parse_pool(workers: int, *, use_prctl: bool = True) -> ProcessPoolExecutor:
    """A forking process pool whose workers exit when this process dies (``use_prctl=False``:
    by the watching thread alone, as off Linux)."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=die_with_parent, initargs=(os.getpid(), use_prctl))
