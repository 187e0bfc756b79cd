"""Reflect benchmark: ``gitmem reflect`` over the last 7 days and over a whole year of the
10-year synthetic workspace.

    python bench/bench_reflect.py [--years 10] [--repeat 3] [--out bench/results/reflect.json]

The cached synthetic workspace (``bench/synth.py``, one commit per day, ending 2026-11-29) is
cloned into a scratch folder and indexed (not timed: under cron the hooks have done it). The
generator writes ``bank/opinions.md`` with the evidence already applied, so each window starts
from the generated HEAD plus one commit that puts back the opinions file as it stood when the
window opened (reflect has not run since). Then, ``--repeat`` times from that state:

- ``gitmem reflect --since START --commit --json`` as a real process: wall clock and the
  process's CPU time (start-up, the lock, reading the window's facts, matching, writing; the
  ``git commit`` child's CPU is not in it);
- ``gitmem index``: the re-index of reflect's commit that the post-commit hook does;
- the same command again: nothing changes (idempotence), and how long finding that out takes.

Reported: facts read, files touched, opinions moved (updated / created / capped), entity pages
written, proposed MEMORY.md edits. Standard library only; prints a Markdown table, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench import bench_lexical as lex  # noqa: E402

TARGETS = {"7 days": 2.0, "1 year": 20.0}


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True,
                          text=True).stdout


@dataclass(frozen=True)
class Timed:
    wall: float
    cpu: float  # user + system of the process itself
    stdout: bytes


def timed(argv: list[str], env: dict[str, str]) -> Timed:
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status):
            err = proc.stderr.read() if proc.stderr else b""
            raise SystemExit(f"{' '.join(argv)} failed: {lex.tail(err)}")
        out.seek(0)
        return Timed(wall, usage.ru_utime + usage.ru_stime, out.read())


def reflect_once(cmd: list[str], ws: Path, since: str, env: dict[str, str]
                 ) -> tuple[Timed, dict[str, Any]]:
    run = timed([*cmd, "-C", str(ws), "reflect", "--since", since, "--commit", "--json"], env)
    data: dict[str, Any] = json.loads(run.stdout)
    return run, data


def start_state(cmd: list[str], ws: Path, head: str, since: str, env: dict[str, str]) -> None:
    """HEAD, plus a commit putting back bank/opinions.md as it was when the window opened."""
    git(ws, "reset", "-q", "--hard", head)
    git(ws, "clean", "-qfd")
    before = git(ws, "rev-list", "-1", f"--before={since}T00:00:00Z", head).strip()
    old = subprocess.run(["git", "-C", str(ws), "show", f"{before}:bank/opinions.md"],
                         check=True, capture_output=True).stdout
    (ws / "bank" / "opinions.md").write_bytes(old)
    git(ws, "commit", "-q", "-am", f"bench: bank/opinions.md as of {since}",
        f"--date={since}T00:00:00Z")
    lex.run_child([*cmd, "-C", str(ws), "index"], env=env)


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def window_row(cmd: list[str], ws: Path, head: str, label: str, since: str,
               env: dict[str, str], repeat: int) -> dict[str, Any]:
    firsts: list[Timed] = []
    reindexes: list[Timed] = []
    agains: list[Timed] = []
    for _ in range(repeat):
        start_state(cmd, ws, head, since, env)
        run, first = reflect_once(cmd, ws, since, env)
        firsts.append(run)
        reindexes.append(timed([*cmd, "-C", str(ws), "index"], env))  # the hook's job
        run, again = reflect_once(cmd, ws, since, env)
        agains.append(run)
    ops = first["opinions"]
    return {
        "window": label,
        "since": since,
        "seconds": median([r.wall for r in firsts]),
        "cpu_s": median([r.cpu for r in firsts]),
        "samples_s": [round(r.wall, 2) for r in firsts],
        "target_s": TARGETS.get(label),
        "facts_read": first["facts_read"],
        "files_touched": len(first["files"]),
        "opinions_updated": sum(not o["created"] for o in ops),
        "opinions_created": sum(o["created"] for o in ops),
        "opinions_capped": sum(o["capped"] for o in ops),
        "largest_move": round(max((abs(o["after"] - o["before"]) for o in ops
                                   if not o["created"]), default=0.0), 2),
        "entity_pages": len(first["entity_pages"]),
        "pages_created": sum(p["created"] for p in first["entity_pages"]),
        "proposals": len(first["proposals"]),
        "committed": bool(first["commit"]),
        "reindex_s": median([r.wall for r in reindexes]),
        "second_run_s": median([r.wall for r in agains]),
        "second_run_cpu_s": median([r.cpu for r in agains]),
        "second_run_changed": again["changed"],
        "second_run_facts_read": again["facts_read"],
    }


def bench_years(years: int, cmd: list[str], cache: Path, env: dict[str, str],
                repeat: int) -> dict[str, Any]:
    src, info = lex.workspace(years, 0, cache)
    scratch = Path(tempfile.mkdtemp(prefix=f"gitmem-reflect-{years}y-"))
    ws = scratch / "ws"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        git(ws, "config", key, value)
    head = git(ws, "rev-parse", "HEAD").strip()
    end = date.fromisoformat(info["end"])
    out: dict[str, Any] = {"years": years, "commits": info["days"], "end": info["end"]}
    try:
        index = lex.run_child([*cmd, "-C", str(ws), "index"], env=env)
        if index.returncode:
            raise SystemExit(f"index failed: {lex.tail(index.stderr)}")
        out["index_s"] = round(index.seconds, 2)
        windows = {"7 days": end - timedelta(days=6), "1 year": end - timedelta(days=364)}
        out["rows"] = [window_row(cmd, ws, head, label, first.isoformat(), env, repeat)
                       for label, first in windows.items()]
        out["load_average"] = os.getloadavg()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| window | facts read | reflect s, wall (CPU) | files touched | opinions updated / "
        "created (capped) | largest move | entity pages (new) | MEMORY.md proposals | "
        "re-index of its commit s | second run s, changed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['window']} (since {r['since']}) | {r['facts_read']} | {r['seconds']} "
            f"({r['cpu_s']}) | {r['files_touched']} | {r['opinions_updated']} / "
            f"{r['opinions_created']} ({r['opinions_capped']}) | {r['largest_move']:.2f} | "
            f"{r['entity_pages']} ({r['pages_created']}) | {r['proposals']} | "
            f"{r['reindex_s']} | {r['second_run_s']} ({r['second_run_cpu_s']}), "
            f"{'yes' if r['second_run_changed'] else 'no'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--years", type=int, default=10)
    ap.add_argument("--gitmem", default="python -m gitmem")
    ap.add_argument("--cache-dir", type=Path, default=lex.DEFAULT_CACHE)
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "reflect.json")
    ap.add_argument("--repeat", type=int, default=3, help="runs per window (median)")
    args = ap.parse_args(argv)
    cmd = lex.resolve_gitmem(args.gitmem)
    env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none"}
    result = bench_years(args.years, cmd, args.cache_dir, env, args.repeat)
    print(f"{result['years']} years, {result['commits']} commits, ending {result['end']}; "
          f"index {result['index_s']} s (not timed below)")
    print(markdown(result))
    print(f"load average at the end: {result['load_average']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
