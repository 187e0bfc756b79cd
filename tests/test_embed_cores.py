"""The local model's threads follow the cores other processes leave free (gitmem.embed.cores).

The rule is checked on given ``/proc/stat`` readings and clocks (what it decides from what it
reads); the real model is checked to give the same vectors whatever the threads, and to switch
threads when the rule says so."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from gitmem.embed.cores import FreeCores, busy_seconds, usable_cores

# user nice system idle iowait irq softirq steal guest guest_nice, in ticks of 10 ms
STAT = """cpu  300 0 100 1000 10 0 0 0 0 0
cpu0 100 0 50 500 5 0 0 0 0 0
cpu1 200 0 50 500 5 0 0 0 0 0
intr 12345
"""
# cpu1 ran a virtual machine for 40 of its 200 user ticks: the kernel counts guest time in
# user time as well, so it is not added again
GUEST = STAT.replace("cpu1 200 0 50 500 5 0 0 0 0 0", "cpu1 200 0 50 500 5 0 0 0 40 0")
# cpu0 also ran 100 ticks of niced processes
NICED = STAT.replace("cpu0 100 0 50", "cpu0 100 100 50")


class Machine:
    """Readings of a 2-core machine: ``others`` cores' worth of work by other processes and
    ``mine`` by this process, over ``seconds``."""

    def __init__(self) -> None:
        self.ticks = [0, 0]  # busy ticks per CPU
        self.own = 0.0
        self.now = 100.0

        self.niced = [0, 0]  # ticks of processes of lowered priority per CPU
        self.cpus = [0, 1]

    def run(self, seconds: float, others: float, mine: float, niced: float = 0.0) -> None:
        busy = round((others + mine) * seconds * 100)
        self.ticks[0] += busy // 2
        self.ticks[1] += busy - busy // 2
        low = round(niced * seconds * 100)
        self.niced[0] += low // 2
        self.niced[1] += low - low // 2
        self.own += mine * seconds
        self.now += seconds

    def stat(self) -> str:
        lines = ["cpu  0 0 0 0 0 0 0 0 0 0"]
        lines += [f"cpu{n} {self.ticks[n]} {self.niced[n]} 0 1000 0 0 0 0 0 0"
                  for n in self.cpus]
        return "\n".join(lines) + "\n"

    def cores(self, count_nice: bool = False) -> FreeCores:
        return FreeCores([0, 1], read_stat=self.stat, own_seconds=lambda: self.own,
                         clock=lambda: self.now, tick=0.01, count_nice=count_nice)


def test_busy_seconds_reads_the_cpus_asked_for() -> None:
    assert busy_seconds(STAT, {0, 1}, 0.01) == pytest.approx(4.0)  # (150 + 250) ticks
    assert busy_seconds(STAT, {1}, 0.01) == pytest.approx(2.5)
    assert busy_seconds(STAT, {0, 7}, 0.01) is None  # a CPU of the affinity is not listed
    assert busy_seconds(GUEST, {0, 1}, 0.01) == pytest.approx(4.0)


def test_a_quiet_machine_gets_every_core() -> None:
    machine = Machine()
    free = machine.cores()
    machine.run(2.0, others=0.1, mine=2.0)
    assert free.next_threads() == 2


def test_one_busy_process_leaves_one_thread() -> None:
    machine = Machine()
    free = machine.cores()
    # our two spinning threads and a busy process of the same priority share the cores
    machine.run(2.0, others=0.67, mine=1.33)
    assert free.next_threads() == 1
    machine.run(2.0, others=1.0, mine=1.0)  # with one thread, it has its core
    assert free.next_threads() == 1
    machine.run(2.0, others=0.0, mine=1.0)  # it ended
    assert free.next_threads() == 2


def test_a_fully_busy_machine_still_gets_one_thread() -> None:
    machine = Machine()
    free = machine.cores()
    machine.run(3.0, others=2.0, mine=0.1)
    assert free.next_threads() == 1


def test_a_short_look_keeps_the_last_decision() -> None:
    machine = Machine()
    free = machine.cores()
    machine.run(2.0, others=1.5, mine=0.5)
    assert free.next_threads() == 1
    machine.run(0.1, others=0.0, mine=1.0)  # too short to read
    assert free.next_threads() == 1
    machine.run(0.5, others=0.0, mine=1.0)  # the next look covers both spans
    assert free.next_threads() == 2


def test_an_unreadable_machine_gets_every_core() -> None:
    free = FreeCores([0, 1, 2], read_stat=lambda: None)
    assert free.next_threads() == 3
    machine = Machine()
    free = machine.cores()
    machine.run(2.0, others=2.0, mine=0.1)
    assert free.next_threads() == 1
    machine.cpus = [0]  # a CPU's line is gone (taken offline)
    machine.run(2.0, others=2.0, mine=0.1)
    assert free.next_threads() == 2


def test_niced_work_leaves_the_cores_to_a_worker_of_normal_priority() -> None:
    assert busy_seconds(NICED, {0, 1}, 0.01, count_nice=False) == pytest.approx(4.0)
    assert busy_seconds(NICED, {0, 1}, 0.01) == pytest.approx(5.0)
    machine = Machine()
    free = machine.cores(count_nice=False)
    machine.run(2.0, others=0.0, mine=0.5, niced=1.5)  # a niced job per core, give or take
    assert free.next_threads() == 2
    niced_worker = Machine()
    free = niced_worker.cores(count_nice=True)  # then the niced job may well outrank it
    niced_worker.run(2.0, others=0.0, mine=0.5, niced=1.5)
    assert free.next_threads() == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/stat is Linux's")
def test_this_machine_is_read() -> None:
    cpus = usable_cores()
    assert cpus == sorted(os.sched_getaffinity(0))
    assert busy_seconds(Path("/proc/stat").read_text(), set(cpus), 0.01) is not None
    free = FreeCores()
    assert free._last is not None
    assert 1 <= free.next_threads() <= len(cpus)


def test_the_model_gives_the_same_vectors_whatever_its_threads(e5: Path) -> None:
    from gitmem.embed.native import NativeModel

    texts = ["The gateway runs on host blue-7.", "Der Server steht in Frankfurt.",
             "サーバーは東京にあります。"]
    one, two = NativeModel(e5, threads=1), NativeModel(e5, threads=2)
    for a, b in zip(one.embed(texts, "document"), two.embed(texts, "document"), strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-4
    one.close()
    two.close()


def test_the_model_decodes_on_the_threads_the_rule_gives(e5: Path) -> None:
    import llama_cpp

    from gitmem.embed.native import NativeModel

    machine = Machine()
    model = NativeModel(e5, threads=None)
    assert model.free is not None
    model.free = machine.cores()  # given readings of a 2-core machine
    ctx = model._llama._ctx.ctx
    for others, threads in ((1.5, 1), (0.0, 2), (1.5, 1)):
        machine.run(2.0, others=others, mine=0.5)
        assert len(model.embed(["The gateway runs on host blue-7."], "document")) == 1
        assert model.threads == threads
        # what llama.cpp decodes with: one token (n_threads) and batches (n_threads_batch)
        assert llama_cpp.llama_n_threads(ctx) == threads
        assert llama_cpp.llama_n_threads_batch(ctx) == threads
    model.close()
