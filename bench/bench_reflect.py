"""Reflect benchmark: ``gitmem reflect`` over the last 7 days and over a whole year of the
10-year synthetic workspace.

    python bench/bench_reflect.py [--years 10] [--out bench/results/reflect.json]

The cached synthetic workspace (``bench/synth.py``, one commit per day, ending 2026-11-29) is
cloned into a scratch folder and indexed (not timed: under cron the hooks have done it). Then,
for each window, from the same starting state (``git reset --hard`` to the generated HEAD):

- ``gitmem reflect --since START --commit --json`` as a real process, wall clock (start-up,
  the lock, reading the window's facts, matching, writing, the commit);
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
import subprocess
import sys
import tempfile
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


def reflect_once(cmd: list[str], ws: Path, since: str, env: dict[str, str]
                 ) -> tuple[float, dict[str, Any]]:
    run = lex.run_child([*cmd, "-C", str(ws), "reflect", "--since", since, "--commit", "--json"],
                        env=env)
    if run.returncode:
        raise SystemExit(f"reflect failed: {lex.tail(run.stderr)}")
    data: dict[str, Any] = json.loads(run.stdout)
    return run.seconds, data


def window_row(cmd: list[str], ws: Path, head: str, label: str, since: str,
               env: dict[str, str]) -> dict[str, Any]:
    git(ws, "reset", "-q", "--hard", head)
    git(ws, "clean", "-qfd")
    lex.run_child([*cmd, "-C", str(ws), "index"], env=env)
    seconds, first = reflect_once(cmd, ws, since, env)
    reindex = lex.run_child([*cmd, "-C", str(ws), "index"], env=env)  # the post-commit hook's job
    again_s, again = reflect_once(cmd, ws, since, env)
    ops = first["opinions"]
    return {
        "window": label,
        "since": since,
        "seconds": round(seconds, 2),
        "target_s": TARGETS.get(label),
        "facts_read": first["facts_read"],
        "files_touched": len(first["files"]),
        "opinions_updated": sum(not o["created"] for o in ops),
        "opinions_created": sum(o["created"] for o in ops),
        "opinions_capped": sum(o["capped"] for o in ops),
        "largest_move": max((abs(o["after"] - o["before"]) for o in ops if not o["created"]),
                            default=0.0),
        "entity_pages": len(first["entity_pages"]),
        "pages_created": sum(p["created"] for p in first["entity_pages"]),
        "proposals": len(first["proposals"]),
        "committed": bool(first["commit"]),
        "reindex_s": round(reindex.seconds, 2),
        "second_run_s": round(again_s, 2),
        "second_run_changed": again["changed"],
        "second_run_facts_read": again["facts_read"],
    }


def bench_years(years: int, cmd: list[str], cache: Path, env: dict[str, str]) -> dict[str, Any]:
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
        out["rows"] = [window_row(cmd, ws, head, label, first.isoformat(), env)
                       for label, first in windows.items()]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| window | facts read | reflect s (target) | files touched | opinions updated / "
        "created (capped) | largest move | entity pages (new) | MEMORY.md proposals | "
        "re-index of its commit s | second run s, changed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['window']} (since {r['since']}) | {r['facts_read']} | {r['seconds']} "
            f"(≤ {r['target_s']}) | {r['files_touched']} | {r['opinions_updated']} / "
            f"{r['opinions_created']} ({r['opinions_capped']}) | {r['largest_move']:.2f} | "
            f"{r['entity_pages']} ({r['pages_created']}) | {r['proposals']} | "
            f"{r['reindex_s']} | {r['second_run_s']}, "
            f"{'yes' if r['second_run_changed'] else 'no'} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--years", type=int, default=10)
    ap.add_argument("--gitmem", default="python -m gitmem")
    ap.add_argument("--cache-dir", type=Path, default=lex.DEFAULT_CACHE)
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "reflect.json")
    args = ap.parse_args(argv)
    cmd = lex.resolve_gitmem(args.gitmem)
    env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none"}
    result = bench_years(args.years, cmd, args.cache_dir, env)
    print(f"{result['years']} years, {result['commits']} commits, ending {result['end']}; "
          f"index {result['index_s']} s (not timed below)")
    print(markdown(result))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
