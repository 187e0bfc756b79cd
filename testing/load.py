"""Concurrency and load (docs/architecture.md; issue 10): waves of 20 post-commit hooks fired at
once, each wave after a real ``git commit`` (hooks installed), while recall runs in a loop. Nothing
the user sees may fail, no update may be lost, and the final index must equal a rebuild. Used by
tests/test_load.py (10 s) and bench/reliability (a minute).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitmem.hooks import COALESCED, install
from testing import synth
from testing.bounds import FAILURE_SECONDS
from testing.chaos import wait_gone
from testing.index import dump
from testing.repo import git

HOOKS_PER_WAVE = 20


@dataclass
class LoadReport:
    seconds: float = 0.0
    waves: int = 0
    hooks_fired: int = 0
    commits: int = 0
    recalls: int = 0
    recall_ms: list[float] = field(default_factory=list)
    recall_cpu_ms: list[float] = field(default_factory=list)  # CPU time of those recalls
    errors: list[str] = field(default_factory=list)
    indexed_runs: int = 0  # hook runs that indexed (the rest left it to a waiting run)

    def percentile(self, q: float, cpu: bool = False) -> float | None:
        times = sorted(self.recall_cpu_ms if cpu else self.recall_ms)
        if not times:
            return None
        return round(times[min(len(times) - 1, int(q * len(times)))], 1)

    def to_json(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 1), "waves": self.waves,
                "hooks_fired": self.hooks_fired, "indexed_runs": self.indexed_runs,
                "commits": self.commits,
                "recalls": self.recalls, "recall_p50_ms": self.percentile(0.5),
                "recall_p99_ms": self.percentile(0.99), "recall_max_ms": self.percentile(1.0),
                "recall_cpu_p50_ms": self.percentile(0.5, cpu=True),
                "recall_cpu_max_ms": self.percentile(1.0, cpu=True),
                "errors": self.errors}


def prepare(base: Path, days: int = 60, seed: int = 4) -> Path:
    repo = base / "load ws"  # a space in the path, as users have
    synth.generate(repo, days=days, seed=seed)
    install(repo)
    res = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo), "index", "--no-embed"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    return repo


def _commit(repo: Path, wave: int) -> None:
    """A new day with a fact only this wave has; a real 'git commit' (its hook fires)."""
    day = f"2027-{1 + wave // 28:02d}-{1 + wave % 28:02d}"
    note = repo / "memory" / f"{day}.md"
    note.write_text(f"# {day}\n\n## Retain\n- W @Peter: Zeppelin wave {wave} landed at "
                    f"dock w{wave}x.\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"wave {wave}", date=f"{day}T12:00:00+00:00")


def _fire_hooks(repo: Path, count: int) -> None:
    """Run the installed post-commit hook ``count`` times at once, as git would."""
    hook = repo / ".git" / "hooks" / "post-commit"
    procs = [subprocess.Popen([str(hook)], cwd=repo, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for _ in range(count)]
    for proc in procs:
        proc.wait(timeout=FAILURE_SECONDS)


def _recall_loop(repo: Path, queries: list[str], stop: threading.Event,
                 report: LoadReport, lock: threading.Lock) -> None:
    n = 0
    while n == 0 or not stop.is_set():  # one recall at least, however late the thread starts
        query = queries[n % len(queries)]
        n += 1
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo), "recall", query,
                                 "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()  # recall writes little to stderr
        _, status, usage = os.wait4(proc.pid, 0)  # its own CPU time, for the report
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        elapsed = (time.monotonic() - started) * 1000
        with lock:
            report.recalls += 1
            report.recall_ms.append(elapsed)
            report.recall_cpu_ms.append((usage.ru_utime + usage.ru_stime) * 1000)
            if code != 0:
                report.errors.append(f"recall {query!r} exited {code}: {err[-300:]}")
            elif not json.loads(out)["results"]:
                report.errors.append(f"recall {query!r} found nothing")


def run_load(repo: Path, seconds: float, *, wave_every: float, readers: int = 2,
             min_waves: int = 1) -> LoadReport:
    """Waves of hooks and recall loops for ``seconds`` (and ``min_waves`` waves at least, however
    long a loaded machine takes for them); then every check. Errors go to the report."""
    report = LoadReport()
    stop, lock = threading.Event(), threading.Lock()
    queries = ["Peter", "gateway", "Zeppelin wave", "Copenhagen", "backup"]
    threads = [threading.Thread(target=_recall_loop, args=(repo, queries, stop, report, lock))
               for _ in range(readers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    try:
        while report.waves < min_waves or time.monotonic() - started < seconds:
            wave_started = time.monotonic()
            _commit(repo, report.waves)  # fires one hook itself
            _fire_hooks(repo, HOOKS_PER_WAVE - 1)
            report.waves += 1
            report.commits += 1
            report.hooks_fired += HOOKS_PER_WAVE
            time.sleep(max(0.0, wave_every - (time.monotonic() - wave_started)))
    finally:
        stop.set()
        for thread in threads:
            thread.join(FAILURE_SECONDS)
    report.seconds = time.monotonic() - started
    _settle(repo, report)
    return report


def _settle(repo: Path, report: LoadReport) -> None:
    """Wait for every background hook run, then check nothing was lost."""
    left = wait_gone(str(repo), 300)
    if left:
        report.errors.append(f"hook runs still going after 300 s: {left}")
    log = repo / ".memory" / "hook.log"
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    failed = [ln for ln in lines if "failed" in ln or "not indexed" in ln]
    report.errors.extend(f"hook.log: {ln}" for ln in failed[:20])
    indexed = sum(1 for ln in lines if "post-commit: indexed" in ln)
    coalesced = sum(1 for ln in lines if COALESCED in ln)
    report.indexed_runs = indexed
    if indexed + coalesced != report.hooks_fired:
        report.errors.append(f"{report.hooks_fired} hooks fired, {indexed} logged an index run "
                             f"and {coalesced} left it to a waiting run")
    head = git(repo, "rev-parse", "HEAD").strip()
    current = dump(repo)
    if ("meta", "last_indexed_commit", head) not in current:
        report.errors.append("lost update: the index does not hold HEAD")
    copy = repo.parent / "rebuild"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".memory"))
    env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none"}
    res = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(copy), "index", "--force"],
                         capture_output=True, text=True, env=env, timeout=300)
    if res.returncode != 0 or dump(copy) != current:
        report.errors.append("the final index differs from a rebuild")
