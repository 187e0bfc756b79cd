"""Child processes that die with the gitmem process that started them, and the one kind that
must not: a background run started detached (``start_detached``).

gitmem starts three kinds of children: forked parse workers for big replays
(``gitmem.index.pool``), the llama.cpp worker (``gitmem.embed.worker``), and a forked second core
for one call's work (``split_map``: review's search for superseded facts). A child left behind
by a killed gitmem blocks on a pipe nobody reads, or holds a model's memory, for ever. So each
child calls ``die_with_parent`` first: it arms the kernel's parent-death signal (Linux
``prctl(PR_SET_PDEATHSIG)``), exits at once if the parent is already gone, and also watches its
parent id from a thread — the signal is not available off Linux, and on Linux it fires when the
parent *thread* that started the child ends, which is not always the parent process.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

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
    import ctypes  # only in a child: the commands that start one import this module

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch(parent: int, exit_code: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(exit_code)


def split_map(fn: Callable[[Sequence[T]], list[R]], items: Sequence[T], *, minimum: int = 2,
              group: Callable[[T], Hashable] | None = None) -> list[R]:
    """``fn(items)``, with about half of the items done by a forked child on a second core: the
    same list, in ``items``' order, as one call. ``fn`` must give one result per item and its
    results must pickle; the child sees this process as it was when forked (no copying in).
    ``group``: items of one group go to one side (work they share is done once), the groups
    spread so that each side has about as many items; else every other item is the child's.

    Done here alone when there are fewer than ``minimum`` items, one usable core, another
    thread in this process (a fork copies only the calling thread, so a lock another thread
    holds would stay locked in the child), or no ``fork`` (off Linux); and the child's half is
    done here when the child fails in any way, so a result never depends on the child."""
    if len(items) < max(minimum, 2) or not _may_fork():
        return fn(items)
    import pickle  # only here: every command that may split imports this module

    child = _child_share(items, group)
    mine = [x for i, x in enumerate(items) if i not in child]
    theirs = [x for i, x in enumerate(items) if i in child]
    parent = os.getpid()
    read_end, write_end = os.pipe()
    gc.freeze()  # the collector of either process then leaves the shared objects' pages alone
    pid = os.fork()
    if pid == 0:  # the child: its half, pickled down the pipe, then gone without clean-up
        code = 1
        try:
            os.close(read_end)
            # no kernel signal: its ctypes import (~5 ms) would be on every split's critical
            # path, and the watch thread ends a child whose parent died within WATCH_SECONDS
            die_with_parent(parent, use_prctl=False)
            data = pickle.dumps(fn(theirs), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write_end, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_end)
    reader = os.fdopen(read_end, "rb")
    try:
        first = fn(mine)
        data = reader.read()
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        reader.close()
        _, status = os.waitpid(pid, 0)
        gc.unfreeze()
    second: list[R] | None = None
    if os.waitstatus_to_exitcode(status) == 0 and data:
        try:
            second = pickle.loads(data)
        except Exception:  # a torn or unreadable result: do that half here
            second = None
    if second is None or len(second) != len(theirs):
        second = fn(theirs)
    done, given = iter(first), iter(second)
    return [next(given) if i in child else next(done) for i in range(len(items))]


def _child_share(items: Sequence[T], group: Callable[[T], Hashable] | None) -> set[int]:
    """The indices of the items the child does: every other one, or whole groups, the largest
    first, each to the side with fewer items so far."""
    if group is None:
        return set(range(1, len(items), 2))
    groups: dict[Hashable, list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(group(item), []).append(i)
    sides: tuple[list[int], list[int]] = ([], [])
    for members in sorted(groups.values(), key=len, reverse=True):
        sides[len(sides[1]) < len(sides[0])].extend(members)
    return set(sides[1])


def _may_fork() -> bool:
    return (sys.platform.startswith("linux") and threading.active_count() == 1
            and len(os.sched_getaffinity(0)) > 1)


def start_detached(argv: list[str], cwd: str) -> int:
    """Start ``argv`` in its own session, with no terminal and no pipes, and do not wait: it
    outlives this process (a background index run a recall asked for). Its pid."""
    import subprocess

    return subprocess.Popen(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True).pid
