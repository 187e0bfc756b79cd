"""``python -m bench.reliability crash|load|rewrites|pool|sync``: the benchmark's command line."""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from testing.crash import CrashTally, build_scenario, trial
from testing.gitenv import TEST_GITCONFIG, hermetic_environ
from testing.load import prepare, run_load
from testing.rewrites import run_rewrites
from testing.syncops import run_sync_ops

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "reliability.json"


@contextmanager
def scratch() -> Iterator[Path]:
    """A scratch folder, with HOME, XDG folders and git sealed inside it for the duration."""
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="gitmem-reliability-") as tmp:
        base = Path(tmp)
        home = base / "home"
        home.mkdir()
        (home / ".gitconfig").write_text(TEST_GITCONFIG, encoding="utf-8")
        os.environ.clear()
        os.environ.update(hermetic_environ(home, base=saved))
        try:
            yield base
        finally:
            os.environ.clear()
            os.environ.update(saved)


def tiny_model(base: Path) -> Path:
    """The tests' tiny real GGUF embedding model (tests/gguf_model.py), written into ``base``."""
    sys.path.insert(0, str(REPO_ROOT / "tests"))
    from gguf_model import write_tiny_gguf  # type: ignore[import-not-found]

    path: Path = write_tiny_gguf(base / "tiny-bert.gguf")
    return path


CRASH_SCENARIOS = {  # name: (days, incremental, with embeddings)
    "full, lexical": (300, False, False),
    "incremental, lexical": (300, True, False),
    "full, embeddings": (30, False, True),
    "incremental, embeddings": (30, True, True),
}


def crash(args: argparse.Namespace) -> dict[str, Any]:
    """SIGKILL ``gitmem index`` at random moments; ``--trials`` spread over the scenarios."""
    per = max(1, args.trials // len(CRASH_SCENARIOS))
    rows: list[dict[str, Any]] = []
    with scratch() as base:
        model = tiny_model(base)
        for n, (name, (days, incremental, embed)) in enumerate(CRASH_SCENARIOS.items()):
            scenario = build_scenario(base / f"s{n}", name, days=days, incremental=incremental,
                                      model=model if embed else None)
            tally = CrashTally(name)
            rng = random.Random(f"{args.seed}:{name}")
            started = time.monotonic()
            for _ in range(per):
                trial(scenario, tally, rng)
            row = tally.to_json() | {"days": days, "run_seconds": round(scenario.duration, 2),
                                     "bench_seconds": round(time.monotonic() - started, 1)}
            rows.append(row)
            print(f"{name}: {tally.trials} trials, {tally.killed} killed mid-run, "
                  f"{len(tally.failures)} failures; recall p50 {row['recall_p50']}s "
                  f"max {row['recall_max']}s", flush=True)
            for failure in tally.failures:
                print(f"  {failure}", flush=True)
            for slow in tally.slow_exits:
                print(f"  slow exit (not a failure): {slow}", flush=True)
    return {"trials_per_scenario": per, "rows": rows}


def load(args: argparse.Namespace) -> dict[str, Any]:
    """Waves of 20 hooks fired at once while recall loops, for ``--seconds`` (once per
    ``--wave-every`` value)."""
    rows: list[dict[str, Any]] = []
    for every in args.wave_every:
        with scratch() as base:
            repo = prepare(base, days=args.days)
            report = run_load(repo, args.seconds, wave_every=every)
        row = report.to_json() | {"days": args.days, "wave_every": every}
        print(f"load, a wave every {every} s: {report.waves} waves, {report.hooks_fired} hooks "
              f"({report.indexed_runs} indexed), {report.recalls} recalls (p50 "
              f"{row['recall_p50_ms']} ms, p99 {row['recall_p99_ms']} ms, CPU p50 "
              f"{row['recall_cpu_p50_ms']} ms), {len(report.errors)} errors", flush=True)
        for error in report.errors:
            print(f"  {error}")
        rows.append(row | {"failures": report.errors})
    return {"rows": rows}


def rewrites(args: argparse.Namespace) -> dict[str, Any]:
    """``--ops`` random git operations, re-indexed after each, compared every ``--every``."""
    with scratch() as base:
        report = run_rewrites(base, args.ops, every=args.every, seed=args.seed)
    row = report.to_json() | {"every": args.every}
    print(f"rewrites: {report.operations} operations, {report.checked} compared with a "
          f"rebuild, {len(report.mismatches)} mismatches, {len(report.errors)} errors; "
          f"done {dict(report.done)}, skipped {dict(report.skipped)}")
    return {"rows": [row | {"failures": report.mismatches + report.errors}]}


def sync(args: argparse.Namespace) -> dict[str, Any]:
    """``--ops`` random operations on ``--clones`` clones of one remote, checked after each sync."""
    with scratch() as base:
        work = base / "work"
        work.mkdir()
        report = run_sync_ops(work, args.ops, clones=args.clones, seed=args.seed)
    row = report.to_json() | {"clones": args.clones}
    print(f"sync: {report.operations} operations on {args.clones} clones, {report.syncs} syncs "
          f"({report.conflicts} real conflicts resolved), {report.checked} compared with a "
          f"rebuild, stale markers after {dict(report.flagged)} syncs, "
          f"{len(report.failures)} failures; done {dict(report.done)}")
    return {"rows": [row]}


def _pools() -> dict[str, Callable[[int], Any]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from gitmem.index.pool import parse_pool

    def plain(method: str) -> Callable[[int], Any]:
        return lambda workers: ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context(method))

    return {"fork, workers may outlive gitmem (before)": plain("fork"),
            "fork + die with parent (gitmem now)": parse_pool,
            "forkserver": plain("forkserver"), "spawn": plain("spawn")}


def pool(args: argparse.Namespace) -> dict[str, Any]:
    """The full-index time of each way to start the parse workers (rounds interleaved)."""
    import statistics

    import gitmem.index.replay as replay
    from gitmem.workspace import open_workspace
    from testing import synth

    rows: list[dict[str, Any]] = []
    with scratch() as base:
        for days in args.days:
            repo = base / f"ws{days}"
            synth.generate(repo, days=days, seed=args.seed)
            ws, cfg = open_workspace(repo)
            times: dict[str, list[float]] = {name: [] for name in _pools()}
            module: Any = replay  # the replay's pool factory is swapped for each variant
            original = module.parse_pool
            try:
                for _ in range(args.rounds):
                    for name, make in _pools().items():
                        module.parse_pool = make
                        started = time.perf_counter()
                        replay.index_workspace(ws, cfg, force=True)
                        times[name].append(time.perf_counter() - started)
            finally:
                module.parse_pool = original
            for name, values in times.items():
                row = {"days": days, "pool": name, "rounds": args.rounds,
                       "median_s": round(statistics.median(values), 3),
                       "min_s": round(min(values), 3)}
                rows.append(row)
                print(f"{days} days, {name}: median {row['median_s']} s, min {row['min_s']} s",
                      flush=True)
    return {"rows": rows}


COMMANDS: dict[str, tuple[Callable[[argparse.Namespace], dict[str, Any]], str]] = {
    "crash": (crash, "SIGKILL gitmem index at random moments"),
    "load": (load, "20 hooks at once, repeatedly, while recall loops"),
    "rewrites": (rewrites, "random git operations, re-indexed after each"),
    "pool": (pool, "full-index time of the parse-pool start methods"),
    "sync": (sync, "clones of one remote append, retain, edit, reflect and sync at random"),
}


def _environment() -> dict[str, Any]:
    return {"python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "load_average": [round(x, 2) for x in os.getloadavg()],
            "when": datetime.now(UTC).isoformat(timespec="seconds")}


def save(out: Path, name: str, result: dict[str, Any]) -> None:
    data: dict[str, Any] = {}
    if out.exists():
        data = json.loads(out.read_text(encoding="utf-8"))
    data[name] = result | {"environment": _environment()}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="python -m bench.reliability",
                                  description=__doc__)
    top.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON to merge into")
    top.add_argument("--seed", type=int, default=0)
    sub = top.add_subparsers(dest="command", required=True)
    for name, (_, help_text) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text)
        if name == "crash":
            cmd.add_argument("--trials", type=int, default=200)
        elif name == "load":
            cmd.add_argument("--seconds", type=float, default=60.0)
            cmd.add_argument("--wave-every", type=float, nargs="+", default=[5.0, 20.0])
            cmd.add_argument("--days", type=int, default=90)
        elif name == "pool":
            cmd.add_argument("--days", type=int, nargs="+", default=[300, 1095])
            cmd.add_argument("--rounds", type=int, default=7)
        elif name == "rewrites":
            cmd.add_argument("--ops", type=int, default=500)
            cmd.add_argument("--every", type=int, default=5)
        elif name == "sync":
            cmd.add_argument("--ops", type=int, default=500)
            cmd.add_argument("--clones", type=int, default=3)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    run, _ = COMMANDS[args.command]
    started = time.monotonic()
    result = run(args)
    result["seconds"] = round(time.monotonic() - started, 1)
    save(args.out, args.command, result)
    print(f"wrote {args.out} ({args.command}, {result['seconds']} s)")
    failures = sum(len(r.get("failures", [])) for r in result.get("rows", []))
    return 1 if failures else 0
