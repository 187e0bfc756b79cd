"""History benchmark: full history index, incremental re-index, hook return, as-of recall.

    python bench/bench_history.py --years 1 10 [--out bench/results/history.json] [--rounds 20]

For each N it clones the cached synthetic workspace (``testing/synth.py``: one commit per day, so
365·N commits) into a scratch folder and measures, in one run:

- full history index: ``gitmem index --force`` (replays every commit), wall clock and peak RSS;
- incremental re-index after a one-file commit: append an entry to the newest daily note,
  ``git commit`` (hooks off), then time ``gitmem index``; median of ``--rounds``; the 10-year /
  1-year ratio shows whether it stays flat in workspace size;
- hook return time: ``git commit`` wall clock with gitmem's hooks installed against the same
  commit without hooks (the baseline), median of ``--rounds``;
- ``--as-of`` recall against plain recall, p50 over the benchmark queries.

Standard library only; prints a Markdown table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench import bench_lexical as lex  # noqa: E402
from testing import synth  # noqa: E402


def git(ws: Path, *args: str, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True, env=env)
    return time.perf_counter() - started


def commit_one(ws: Path, n: int, env: dict[str, str]) -> float:
    """Append one entry to the newest daily note and commit it; returns git commit's time."""
    note = sorted((ws / "memory").glob("????-??-??.md"))[-1]
    with note.open("a", encoding="utf-8") as fh:
        fh.write(f"- B @bench: incremental benchmark entry number {n} zq{n}x.\n")
    git(ws, "add", "-A", env=env)
    return git(ws, "commit", "-q", "-m", f"bench {n}", env=env)


def wait_for_lines(log: Path, want: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists() and log.read_text(encoding="utf-8").count("\n") >= want:
            return
        time.sleep(0.02)
    raise SystemExit(f"the hook did not log a re-index within {timeout} s: {log}")


def bench_years(years: int, cmd: list[str], rounds: int, cache: Path,
                env: dict[str, str]) -> dict[str, Any]:
    src, info = lex.workspace(years, 0, cache)
    scratch = Path(tempfile.mkdtemp(prefix=f"gitmem-hist-{years}y-"))
    ws = scratch / "ws"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        git(ws, "config", key, value)
    out: dict[str, Any] = {"years": years, "commits": info["days"]}
    try:
        full = lex.run_child([*cmd, "-C", str(ws), "index", "--force"], env=env)
        if full.returncode:
            raise SystemExit(f"index failed: {lex.tail(full.stderr)}")
        out["full_index_s"] = round(full.seconds, 2)
        out["full_index_rss_mb"] = round(full.maxrss_kb / 1024, 1)
        incr: list[float] = []
        for n in range(rounds):
            commit_one(ws, n, env)
            run = lex.run_child([*cmd, "-C", str(ws), "index"], env=env)
            if run.returncode:
                raise SystemExit(f"incremental index failed: {lex.tail(run.stderr)}")
            incr.append(run.seconds)
        out["incremental_ms"] = lex.summary_ms(incr)
        plain = [commit_one(ws, 1000 + n, env) for n in range(rounds)]
        lex.run_child([*cmd, "-C", str(ws), "hooks", "install"], env=env)
        hooked = []
        log = ws / ".memory" / "hook.log"
        for n in range(rounds):
            lines = log.read_text(encoding="utf-8").count("\n") if log.exists() else 0
            hooked.append(commit_one(ws, 2000 + n, env))
            wait_for_lines(log, lines + 1)  # let the background re-index finish first
        lex.run_child([*cmd, "-C", str(ws), "hooks", "uninstall"], env=env)
        out["commit_no_hook_ms"] = lex.summary_ms(plain)
        out["commit_with_hook_ms"] = lex.summary_ms(hooked)
        lex.run_child([*cmd, "-C", str(ws), "index"], env=env)
        end = date.fromisoformat(info["end"])
        as_of = date(end.year - max(1, years // 2), end.month, 1).isoformat()[:7]
        plain_q: list[float] = []
        as_of_q: list[float] = []
        for query in synth.QUERIES[:20]:
            plain_q.append(lex.run_child([*cmd, "-C", str(ws), "recall", query, "--json"],
                                         env=env).seconds)
            as_of_q.append(lex.run_child([*cmd, "-C", str(ws), "recall", query, "--json",
                                          "--as-of", as_of], env=env).seconds)
        out["as_of"] = as_of
        out["recall_ms"] = lex.summary_ms(plain_q)
        out["recall_as_of_ms"] = lex.summary_ms(as_of_q)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| years | commits | full history index s | peak RSS MB | incremental p50 ms | "
        "commit p50 ms (no hook → hook) | hook overhead ms | recall p50 ms | as-of p50 ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        base, hook = r["commit_no_hook_ms"]["p50_ms"], r["commit_with_hook_ms"]["p50_ms"]
        lines.append(
            f"| {r['years']} | {r['commits']} | {r['full_index_s']} | {r['full_index_rss_mb']} | "
            f"{r['incremental_ms']['p50_ms']:.0f} | {base:.0f} → {hook:.0f} | "
            f"{hook - base:+.0f} | {r['recall_ms']['p50_ms']:.0f} | "
            f"{r['recall_as_of_ms']['p50_ms']:.0f} |")
    if len(rows) >= 2:
        ratio = rows[-1]["incremental_ms"]["p50_ms"] / rows[0]["incremental_ms"]["p50_ms"]
        lines.append("")
        lines.append(f"incremental re-index {rows[-1]['years']}y / {rows[0]['years']}y "
                     f"p50 ratio: {ratio:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--years", type=int, nargs="+", default=[1, 10])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--gitmem", default="python -m gitmem")
    ap.add_argument("--cache-dir", type=Path, default=lex.DEFAULT_CACHE)
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "history.json")
    args = ap.parse_args(argv)
    cmd = lex.resolve_gitmem(args.gitmem)
    env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none", "GITMEM_WARM_AUTOSTART": "false"}
    rows = [bench_years(y, cmd, args.rounds, args.cache_dir, env) for y in args.years]
    table = markdown(rows)
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"rows": rows},
                                   indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
