"""Crash consistency (docs/architecture.md, issue 10): ``gitmem index`` killed with SIGKILL at a
random moment, then checked: no process left behind, ``PRAGMA integrity_check`` ok, recall answers
quickly, and the next ``gitmem index`` converges to exactly the state of a clean rebuild.

A scenario is a workspace, a saved ``.memory/`` state restored before every trial, the index
command that gets killed and the dump of a clean rebuild. Used by tests/test_crash.py (a few
trials) and bench/reliability (hundreds).
"""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.index.cache import EmbeddingCache
from testing import synth
from testing.chaos import alive, describe, integrity, kill_after, leftovers, reap, wait_gone
from testing.index import dump, same_vectors, vectors
from testing.repo import git

RECALL_BUDGET = 2.0  # seconds: recall must answer this fast right after a kill
GRACE = 2.0  # seconds the processes of a killed run get to be gone
SLOW_GRACE = 60.0  # more seconds for one still exiting (a busy machine); after that a failure
QUERY = "Peter"


@dataclass(frozen=True)
class Scenario:
    name: str
    repo: Path
    killed: tuple[str, ...]  # the gitmem arguments of the run that is killed
    following: tuple[str, ...]  # the next run, which must converge
    snapshot: Path  # the .memory/ files restored before each trial
    expected: list[tuple[Any, ...]]
    expected_vectors: dict[tuple[Any, ...], bytes] | None
    env: Mapping[str, str]
    duration: float  # how long the killed run takes when left alone
    cpu: float = 0.0  # the CPU seconds it uses then (the median of three)


@dataclass
class CrashTally:
    scenario: str
    trials: int = 0
    killed: int = 0  # kills that landed before the run finished
    failures: list[str] = field(default_factory=list)
    recall_seconds: list[float] = field(default_factory=list)
    recall_cpu: list[float] = field(default_factory=list)  # CPU seconds of those recalls
    slow_exits: list[str] = field(default_factory=list)  # gone only after GRACE seconds

    def to_json(self) -> dict[str, Any]:
        times, cpu = sorted(self.recall_seconds), sorted(self.recall_cpu)
        return {"scenario": self.scenario, "trials": self.trials, "killed": self.killed,
                "failures": self.failures, "slow_exits": self.slow_exits,
                "recall_p50": round(times[len(times) // 2], 3) if times else None,
                "recall_max": round(times[-1], 3) if times else None,
                "recall_cpu_p50": round(cpu[len(cpu) // 2], 3) if cpu else None,
                "recall_cpu_max": round(cpu[-1], 3) if cpu else None}


def gitmem_cmd(repo: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "gitmem", "-C", str(repo), *args]


def run_gitmem(repo: Path, *args: str, env: Mapping[str, str],
               timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(gitmem_cmd(repo, *args), capture_output=True, text=True,
                          env=dict(env), timeout=timeout)


def embed_env(base: Path, model: Path) -> dict[str, str]:
    """The environment of a run with the local provider on ``model`` (one thread: on a shared
    two-core machine, llama.cpp's spinning threads otherwise slow it tenfold)."""
    config = base / "xdg-config"
    (config / "gitmem").mkdir(parents=True, exist_ok=True)
    (config / "gitmem" / "config.toml").write_text("[embed]\nthreads = 1\n", encoding="utf-8")
    return {**os.environ, "GITMEM_EMBED_PROVIDER": "local", "GITMEM_EMBED_MODEL": str(model),
            "XDG_CONFIG_HOME": str(config), "GITMEM_WARM_AUTOSTART": "false"}


def lexical_env() -> dict[str, str]:
    return {**os.environ, "GITMEM_EMBED_PROVIDER": "none", "GITMEM_WARM_AUTOSTART": "false"}


def _clean_state(repo: Path, killed: tuple[str, ...], env: Mapping[str, str], base: Path
                 ) -> tuple[list[tuple[Any, ...]], dict[tuple[Any, ...], bytes] | None]:
    """The dump (and vectors) of a clean rebuild, made in a copy of the repository."""
    copy = base / "clean"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".memory"))
    embed = "--no-embed" not in killed
    res = run_gitmem(copy, "index", "--force", *(() if embed else ("--no-embed",)), env=env)
    assert res.returncode == 0, res.stderr
    return dump(copy), (vectors(copy) if embed else None)


def restore(scenario: Scenario) -> None:
    memory = scenario.repo / ".memory"
    shutil.rmtree(memory, ignore_errors=True)
    shutil.copytree(scenario.snapshot, memory)


def build_scenario(base: Path, name: str, *, days: int, incremental: bool,
                   model: Path | None, seed: int = 7) -> Scenario:
    """A synthetic workspace of ``days`` days and its starting state: for a full run an index
    without vectors (the killed run is ``index --force``), for an incremental one an index (with
    vectors) of the first two thirds of the history."""
    base.mkdir(parents=True, exist_ok=True)
    repo = base / "ws"
    synth.generate(repo, days=days, seed=seed)
    env = embed_env(base, model) if model is not None else lexical_env()
    embed = () if model is not None else ("--no-embed",)
    if incremental:
        head = git(repo, "rev-parse", "HEAD").strip()
        git(repo, "reset", "-q", "--hard", f"HEAD~{days // 3}")
        res = run_gitmem(repo, "index", *embed, env=env)
        git(repo, "reset", "-q", "--hard", head)
        killed: tuple[str, ...] = ("index", *embed)
    else:
        res = run_gitmem(repo, "index", "--no-embed", env=env)
        killed = ("index", "--force", *embed)
    assert res.returncode == 0, res.stderr
    snapshot = base / "snapshot"
    shutil.copytree(repo / ".memory", snapshot, ignore=shutil.ignore_patterns("*.lock"))
    expected, expected_vectors = _clean_state(repo, killed, env, base)
    probe = Scenario(name, repo, killed, ("index", *embed), snapshot, expected,
                     expected_vectors, env, 0.0)
    runs, cpu = [], []
    for _ in range(3):  # the median of three: one slow moment must not widen the kill window
        restore(probe)
        started, used = time.monotonic(), _children_cpu()
        res = run_gitmem(repo, *killed, env=env)
        assert res.returncode == 0, res.stderr
        runs.append(time.monotonic() - started)
        cpu.append(_children_cpu() - used)
    return Scenario(name, repo, killed, ("index", *embed), snapshot, expected, expected_vectors,
                    env, sorted(runs)[1], sorted(cpu)[1])


def cache_integrity(memory: Path) -> str:
    path = memory / "embeddings.sqlite"
    if not path.exists():
        return "ok"
    cache = EmbeddingCache(path)
    try:
        return "; ".join(str(r[0]) for r in cache.conn.execute("PRAGMA integrity_check"))
    finally:
        cache.close()


def _left_running(repo: Path, family: list[int], timeout: float) -> list[int]:
    """The processes of ``repo`` (by command line) or of ``family`` still running after
    ``timeout`` seconds at most."""
    deadline = time.monotonic() + timeout
    while True:
        left = wait_gone(str(repo), 0) + [p for p in family if alive(p)]
        if not left or time.monotonic() >= deadline:
            return sorted(set(left))
        time.sleep(0.02)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def trial(scenario: Scenario, tally: CrashTally, rng: random.Random, *,
          recall_budget: float = RECALL_BUDGET, recall_cpu_budget: float | None = None) -> None:
    """One kill at a random moment of the run, then every check; failures go to ``tally``.
    ``recall_budget`` bounds the recall's wall-clock seconds, ``recall_cpu_budget`` its CPU
    seconds (the work it does, which a loaded machine does not change much) beyond those of
    the killed run left alone: recall first finishes what the killed run left undone, and must
    not start over."""
    n = tally.trials
    tally.trials += 1
    restore(scenario)
    delay = rng.uniform(0.05, max(0.1, scenario.duration))
    proc = subprocess.Popen(gitmem_cmd(scenario.repo, *scenario.killed), env=dict(scenario.env),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    family: list[int] = []
    tally.killed += kill_after(proc, delay, family)
    where = f"trial {n} (killed after {delay:.2f}s)"
    survivors = _left_running(scenario.repo, family, GRACE)
    if survivors:  # still exiting on a busy machine, or living on? Give them longer to go.
        seen = [describe(p) for p in survivors]
        started = time.monotonic()
        left = _left_running(scenario.repo, survivors, SLOW_GRACE)
        if left:
            reap(left)
            tally.failures.append(f"{where}: processes outlived the kill by {GRACE + SLOW_GRACE}"
                                  f" s: {[describe(p) for p in left]}")
        else:
            tally.slow_exits.append(f"{where}: {seen} gone "
                                    f"{GRACE + time.monotonic() - started:.1f} s after the kill")
    memory = scenario.repo / ".memory"
    for what, state in (("index", integrity(memory / "index.sqlite")),
                        ("embedding cache", cache_integrity(memory))):
        if state not in ("ok", "missing"):
            tally.failures.append(f"{where}: {what} integrity_check: {state}")
    started, cpu = time.monotonic(), _children_cpu()
    res = run_gitmem(scenario.repo, "recall", QUERY, "--json", env=scenario.env,
                     timeout=max(60.0, recall_budget))
    seconds = time.monotonic() - started
    tally.recall_seconds.append(seconds)
    tally.recall_cpu.append(_children_cpu() - cpu)
    if res.returncode != 0 or not json.loads(res.stdout or "{}").get("results"):
        tally.failures.append(f"{where}: recall failed ({res.returncode}): {res.stderr[-300:]}")
    elif seconds > recall_budget:
        tally.failures.append(f"{where}: recall took {seconds:.2f}s")
    elif recall_cpu_budget is not None and \
            tally.recall_cpu[-1] > scenario.cpu + recall_cpu_budget:
        tally.failures.append(f"{where}: recall used {tally.recall_cpu[-1]:.2f}s of CPU (the "
                              f"uninterrupted run {scenario.cpu:.2f}s)")
    res = run_gitmem(scenario.repo, *scenario.following, env=scenario.env)
    if res.returncode != 0:
        tally.failures.append(f"{where}: the next index run failed: {res.stderr[-300:]}")
        return
    files = leftovers(memory)
    if files:
        tally.failures.append(f"{where}: left behind: {files}")
    if dump(scenario.repo) != scenario.expected:
        tally.failures.append(f"{where}: the index differs from a clean rebuild")
    wanted = scenario.expected_vectors
    if wanted is not None and not same_vectors(vectors(scenario.repo), wanted):
        tally.failures.append(f"{where}: the vectors differ from a clean rebuild")
