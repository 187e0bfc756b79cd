"""Child processes that die with the gitmem process that started them, and the one kind that
must not: a background run started detached (``start_detached``).

gitmem starts two kinds of children: forked parse workers for big replays (``gitmem.index.pool``)
and the llama.cpp worker (``gitmem.embed.worker``). A child left behind by a killed gitmem blocks
on a pipe nobody reads, or holds a model's memory, for ever. So each child calls
``die_with_parent`` first: it arms the kernel's parent-death signal (Linux
``prctl(PR_SET_PDEATHSIG)``), exits at once if the parent is already gone, and also watches its
parent id from a thread — the signal is not available off Linux, and on Linux it fires when the
parent *thread* that started the child ends, which is not always the parent process.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
WATCH_SECONDS = 0.2  # how often a child checks that its parent lives


def die_with_parent(parent: int, use_prctl: bool = True, exit_code: int = 1) -> None:
    """Make this process exit with ``exit_code`` (``os._exit``: no clean-up that could block)
    when process ``parent`` dies, also if it died before this ran."""
    if use_prctl:
        arm_parent_death_signal()
    if os.getppid() != parent:
        os._exit(exit_code)
    threading.Thread(target=_watch, args=(parent, exit_code), name="watch-parent",
                     daemon=True).start()


def arm_parent_death_signal() -> bool:
    """Ask the kernel to SIGKILL this process when its parent dies; False where it cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int, exit_code: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(exit_code)


def start_detached(argv: list[str], cwd: str) -> None:
    """Start ``argv`` in its own session, with no terminal and no pipes, and do not wait: it
    outlives this process (a background index run a recall asked for)."""
    import subprocess

    subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True)
