"""CI on a loaded machine, run after run, until one fails: the hunt for flaky tests in one command.

    python -m testing.loaded_ci --runs 5               # HEAD of this checkout, 2 busy loops a core
    python -m testing.loaded_ci --rev 2548112 --runs 1 --keep-going

Each run makes a fresh ``git clone`` of the revision into a temporary folder, with ``shared``
beside the clone (a symbolic link to this checkout's ``../shared``: CI runs ``.ci/run`` with
``../shared`` beside the clone), starts ``--busy-per-core`` busy loops for each core
(``while True: pass`` processes at the default priority, so CI gets about a third of each core
with the default two), runs ``CI=true bash .ci/run`` there without this shell's ``PYTHONPATH`` and
virtual environment, and stops the loops. A run that fails stops the hunt (``--keep-going``
carries on); its folder and full log are kept and named. Results (pass or fail, pytest's summary
line, the failed tests, duration, load average) are printed and written as JSON.

The busy loops end with the driver: each checks now and then that its parent is still the driver.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parents[1]
RESULTS = REPO_ROOT / "bench" / "results"
BUSY_MARK = "gitmem-loaded-ci-busy"  # on every busy loop's command line (tests look for it)
# A busy loop: spins, and every few million turns checks that the driver (its parent) lives.
BUSY_LOOP = ("import os, sys\nparent = int(sys.argv[1])\nwhile os.getppid() == parent:\n"
             "    for _ in range(2_000_000):\n        pass\n")
SUMMARY = re.compile(r"^=*\s*(?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|"
                     r"deselected)[ ,]*)+.* in [\d.]+s.*$")
FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)")
TAIL_LINES = 80  # of a failed run's log, kept in the results


@dataclass
class Run:
    number: int
    rev: str
    ok: bool
    exit_code: int
    summary: str | None  # pytest's last line ("1 failed, 1142 passed, ... in 812.3s"), if it ran
    failed: list[str]  # the tests pytest named FAILED or ERROR
    seconds: float
    busy_loops: int
    load_before: list[float]
    load_after: list[float]
    folder: str | None  # kept when the run failed (or with --keep)
    log: str | None
    tail: list[str] = field(default_factory=list)  # a failed run's last log lines


def resolve(source: Path, rev: str) -> str:
    """The full commit id of ``rev`` in the repository at ``source``."""
    out = subprocess.run(["git", "-C", str(source), "rev-parse", "--verify", f"{rev}^{{commit}}"],
                         capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"loaded_ci: no commit {rev!r} in {source}: {out.stderr.strip()}")
    return out.stdout.strip()


def clone(source: Path, commit: str, base: Path, shared: Path | None) -> Path:
    """A fresh clone of ``source`` at ``commit`` in ``base/gitmem``, ``shared`` linked beside."""
    common = subprocess.run(["git", "-C", str(source), "rev-parse", "--path-format=absolute",
                             "--git-common-dir"], capture_output=True, text=True, check=True)
    target = base / "gitmem"
    for args in (["git", "clone", "--quiet", "--no-checkout", common.stdout.strip(), str(target)],
                 ["git", "-C", str(target), "checkout", "--quiet", "--detach", commit]):
        subprocess.run(args, check=True, capture_output=True)
    if shared is not None:
        (base / "shared").symlink_to(shared.resolve(), target_is_directory=True)
    return target


def ci_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """``environ`` as CI sees it: CI=true, no PYTHONPATH, no virtual environment (nor its bin/
    first on PATH, where ``.ci/run``'s ``python3`` would be that environment's)."""
    env = {k: v for k, v in environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    venvs = {p for p in (environ.get("VIRTUAL_ENV"),
                         sys.prefix if sys.prefix != sys.base_prefix else None) if p}
    env["PATH"] = os.pathsep.join(
        p for p in environ.get("PATH", "").split(os.pathsep)
        if p and not any(Path(p).resolve().is_relative_to(Path(v).resolve()) for v in venvs))
    env["CI"] = "true"
    return env


@contextmanager
def busy_loops(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes that spin until the block ends (or this process dies)."""
    procs = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP, str(os.getpid()), BUSY_MARK],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
             for _ in range(count)]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


def run_ci(command: Sequence[str], work: Path, log: IO[bytes]) -> int:
    """``command`` in ``work`` with CI's environment, its output to ``log``; its exit status.
    In a session of its own, so that nothing it started outlives an interrupted driver."""
    proc = subprocess.Popen(list(command), cwd=work, env=ci_environ(os.environ),
                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        return proc.wait()
    except BaseException:
        with suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise


def summary_of(lines: Sequence[str]) -> tuple[str | None, list[str]]:
    """pytest's summary line (the last one) and the tests it named FAILED or ERROR."""
    found = [ln.strip("= \n") for ln in lines if SUMMARY.match(ln.strip())]
    failed = [m.group(1) for ln in lines if (m := FAILED.match(ln))]
    return (found[-1] if found else None), failed


def run_once(number: int, source: Path, commit: str, *, shared: Path | None, busy: int,
             command: Sequence[str], keep: bool, scratch: Path | None = None) -> Run:
    """One fresh clone (in a new folder in ``scratch``, default the system's temporary
    folder), ``command`` run in it under ``busy`` busy loops; the clone is removed unless the
    run failed or ``keep``."""
    base = Path(tempfile.mkdtemp(prefix=f"gitmem-loaded-ci-{number}-", dir=scratch))
    log_path = base / "ci.log"
    started = time.monotonic()
    load_before = list(os.getloadavg())
    try:
        work = clone(source, commit, base, shared)
        with log_path.open("wb") as log, busy_loops(busy):
            code = run_ci(command, work, log)
    except subprocess.CalledProcessError as exc:  # the clone failed
        log_path.write_bytes(exc.stderr or b"")
        code = exc.returncode or 1
    seconds = time.monotonic() - started
    lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    summary, failed = summary_of(lines)
    ok = code == 0
    kept = keep or not ok
    run = Run(number=number, rev=commit, ok=ok, exit_code=code, summary=summary, failed=failed,
              seconds=round(seconds, 1), busy_loops=busy, load_before=load_before,
              load_after=list(os.getloadavg()), folder=str(base) if kept else None,
              log=str(log_path) if kept else None, tail=[] if ok else lines[-TAIL_LINES:])
    if not kept:
        shutil.rmtree(base, ignore_errors=True)
    return run


def hunt(source: Path, rev: str, *, runs: int, keep_going: bool = False,
         shared: Path | None = None, busy_per_core: int = 2,
         command: Sequence[str] = ("bash", ".ci/run"), keep: bool = False,
         scratch: Path | None = None,
         report: Callable[[Run], None] | None = None) -> dict[str, Any]:
    """``runs`` loaded runs of ``command`` on fresh clones of ``rev``; stops at the first failure
    unless ``keep_going``. ``report(run)`` is called after each run."""
    commit = resolve(source, rev)
    cores = os.cpu_count() or 1
    busy = busy_per_core * cores
    started = datetime.now(UTC)
    done: list[Run] = []
    for number in range(1, runs + 1):
        run = run_once(number, source, commit, shared=shared, busy=busy, command=command,
                       keep=keep, scratch=scratch)
        done.append(run)
        if report is not None:
            report(run)
        if not run.ok and not keep_going:
            break
    return {"rev": commit, "started": started.isoformat(timespec="seconds"), "cores": cores,
            "busy_loops": busy, "command": list(command), "runs_asked": runs,
            "passed": sum(r.ok for r in done), "failed": sum(not r.ok for r in done),
            "in_a_row": len(done) == runs and all(r.ok for r in done),
            "runs": [asdict(r) for r in done]}


def _say(run: Run) -> None:
    verdict = "passed" if run.ok else f"FAILED (exit {run.exit_code})"
    said = run.summary or "no pytest summary"
    print(f"run {run.number}: {verdict} in {run.seconds:.0f} s, load "
          f"{run.load_before[0]:.1f} -> {run.load_after[0]:.1f}: {said}", flush=True)
    for test in run.failed:
        print(f"  failed: {test}", flush=True)
    if run.log:
        print(f"  log: {run.log}", flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m testing.loaded_ci", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="runs to make (default 5)")
    parser.add_argument("--rev", default="HEAD",
                        help="the revision (default: this checkout's HEAD)")
    parser.add_argument("--source", type=Path, default=REPO_ROOT,
                        help="the repository to clone (default: this checkout)")
    parser.add_argument("--shared", type=Path, default=None,
                        help="the folder linked as ../shared (default: the source's ../shared)")
    parser.add_argument("--busy-per-core", type=int, default=2,
                        help="busy loops per core while CI runs (default 2)")
    parser.add_argument("--keep-going", action="store_true", help="go on after a failed run")
    parser.add_argument("--keep", action="store_true", help="keep every run's folder and log")
    parser.add_argument("--scratch", type=Path, default=None,
                        help="where the runs' folders go (default: the temporary folder)")
    parser.add_argument("--out", type=Path, default=None,
                        help="the JSON results (default bench/results/loaded-ci-<time>.json)")
    args = parser.parse_args(argv)
    shared = args.shared or args.source.resolve().parent / "shared"
    if not shared.is_dir():
        parser.error(f"{shared} is not a folder: .ci/run needs ../shared beside the clone "
                     "(give it with --shared)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # busy loops stopped on the way out
    results = hunt(args.source, args.rev, runs=args.runs, keep_going=args.keep_going,
                   shared=shared, busy_per_core=args.busy_per_core, keep=args.keep,
                   scratch=args.scratch, report=_say)
    out = args.out or RESULTS / f"loaded-ci-{results['started'][:16].replace(':', '')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"{results['passed']} of {results['runs_asked']} runs passed"
          f"{' in a row' if results['in_a_row'] else ''} at {results['rev'][:7]}; results: {out}")
    return 0 if results["in_a_row"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
