"""``lifetime.split_map``: one call's work on two cores, with the result one core gives."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from gitmem import lifetime
from gitmem.lifetime import split_map
from testing.bounds import FAILURE_SECONDS

PARENT = os.getpid()
ROOT = Path(__file__).resolve().parents[1]


def squares_and_pids(items: Sequence[int]) -> list[tuple[int, int]]:
    return [(i * i, os.getpid()) for i in items]


def test_every_other_item_is_done_in_a_child_and_the_order_is_kept(
        single_threaded: None) -> None:
    assert lifetime._may_fork(), ("this test needs Linux, two usable cores and no other thread "
                                  f"in this process: {threading.enumerate()}")
    out = split_map(squares_and_pids, list(range(9)))
    assert [v for v, _ in out] == [i * i for i in range(9)]
    pids = [pid for _, pid in out]
    assert set(pids[0::2]) == {PARENT}
    assert len(set(pids[1::2])) == 1 and pids[1] != PARENT


def test_few_items_stay_in_this_process() -> None:
    out = split_map(squares_and_pids, [1, 2, 3], minimum=4)
    assert out == [(1, PARENT), (4, PARENT), (9, PARENT)]


def test_a_child_that_fails_has_its_half_done_here(single_threaded: None) -> None:
    def fails_in_a_child(items: Sequence[int]) -> list[int]:
        if os.getpid() != PARENT:
            raise RuntimeError("the child's half")
        return [i + 1 for i in items]

    assert split_map(fails_in_a_child, list(range(6))) == [1, 2, 3, 4, 5, 6]


def test_a_child_that_dies_has_its_half_done_here(single_threaded: None) -> None:
    def dies_in_a_child(items: Sequence[int]) -> list[int]:
        if os.getpid() != PARENT:
            os._exit(3)
        return [-i for i in items]

    assert split_map(dies_in_a_child, list(range(5))) == [0, -1, -2, -3, -4]


def test_an_error_here_is_raised_and_the_child_is_reaped(monkeypatch: pytest.MonkeyPatch,
                                                         single_threaded: None) -> None:
    children: list[int] = []

    def fails_here(items: Sequence[int]) -> list[int]:
        if os.getpid() == PARENT:
            raise ValueError("the parent's half")
        return list(items)

    real_fork = os.fork

    def fork() -> int:
        pid = real_fork()
        if pid:
            children.append(pid)
        return pid

    monkeypatch.setattr(os, "fork", fork)
    with pytest.raises(ValueError, match="the parent's half"):
        split_map(fails_here, list(range(4)))
    (child,) = children
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)  # already reaped


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        out = split_map(squares_and_pids, list(range(6)))
    finally:
        stop.set()
        other.join()
    assert {pid for _, pid in out} == {PARENT}


def test_a_group_goes_to_one_side_and_the_sides_are_balanced(single_threaded: None
                                                             ) -> None:
    words = ["ant", "bee", "ape", "cat", "bat", "ark", "cow", "bug", "eel", "asp"]
    out = split_map(lambda items: [(w, os.getpid()) for w in items], words, group=lambda w: w[0])
    assert [w for w, _ in out] == words
    side = {w[0]: pid for w, pid in out}  # one pid per first letter
    assert all(pid == side[w[0]] for w, pid in out)
    assert PARENT in side.values() and len(set(side.values())) == 2
    in_child = sum(pid != PARENT for _, pid in out)
    assert in_child in (4, 5, 6)  # a: 4, b: 3, c: 2, e: 1 -> 4+1 / 3+2


def test_a_child_whose_parent_is_killed_ends(tmp_path: Path) -> None:
    """A process killed while its split_map child works leaves no child behind."""
    marker = tmp_path / "child-pid"
    script = (
        "import os, sys, time\n"
        "from gitmem.lifetime import split_map\n"
        "def work(items):\n"
        "    if os.getpid() != PARENT:\n"
        f"        open({str(marker)!r}, 'w').write(str(os.getpid()))\n"
        "        time.sleep(60)\n"
        "    time.sleep(60)\n"
        "    return list(items)\n"
        "PARENT = os.getpid()\n"
        "split_map(work, [1, 2, 3, 4])\n")
    proc = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + FAILURE_SECONDS
        while not (marker.exists() and marker.read_text()):
            assert proc.poll() is None and time.monotonic() < deadline, "no child started"
            time.sleep(0.05)
        child = int(marker.read_text())
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + FAILURE_SECONDS
    while _alive(child):
        assert time.monotonic() < deadline, f"child {child} outlived its killed parent"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    """Running (a zombie nobody has reaped yet has ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
