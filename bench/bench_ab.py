"""Recall latency of two checkouts, A/B in one run: is a change slower, and by how much?

    python bench/bench_ab.py --before DIR --after DIR [--years 10] [--rounds 3]
        [--mode lexical|hybrid] [--cache DIR] [--json OUT]

Each checkout (a worktree or clone: its directory goes first on ``PYTHONPATH``) gets its own
clone of the cached synthetic workspace (``bench_lexical.workspace``), indexed lexically by that
checkout, and a worker process that answers ``recall.answer`` in-process (``now`` fixed, no user
configuration, no embedding model: ``--mode hybrid`` without a model measures the lexical
fall-back). Then, round after round, each of ``testing/synth.py``'s 50 queries is asked of both
workers in turn, the one going first alternating query by query, so both see the same machine
load. Reports p50 / p95 of each and their ratio (after / before), and the paired ratio: the
median, over queries and rounds, of the two checkouts' ratio for the same query — the steadier
figure on a loaded machine. Result counts are compared: a difference means the change is not
only a speed-up or slow-down.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench.bench_lexical import pct, workspace  # noqa: E402
from testing import synth  # noqa: E402

WORKER = r"""
import json, sys, time
from pathlib import Path
from datetime import UTC, datetime
from gitmem.index.run import index_and_embed
from gitmem.index.session import Session
from gitmem.recall.answer import RecallRequest, answer
from gitmem.workspace import open_workspace
from dataclasses import replace

ws, cfg = open_workspace(Path(sys.argv[1]))
cfg = replace(cfg, embed_provider="none")
index_and_embed(ws, cfg, force=True)
now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    ask = json.loads(line)
    start = time.perf_counter()
    resp = answer(Session(ws, cfg), RecallRequest(ask["q"], k=10, mode=ask["mode"]), now=now)
    ms = (time.perf_counter() - start) * 1000
    print(json.dumps({"ms": ms, "n": len(resp.results)}), flush=True)
"""


class Worker:
    """A checkout's worker process over its own clone of the workspace."""

    def __init__(self, checkout: Path, ws: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(checkout), "GITMEM_WARM": "0"}
        self.proc = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(ws)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True, env=env, cwd=ws)
        self._read()  # indexed and ready

    def _read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"worker exited with {self.proc.wait()}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def ask(self, query: str, mode: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"q": query, "mode": mode}) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


def clone(src: Path, dest: Path) -> Path:
    """A clone whose git index is newer than every file it checked out: right after a clone
    the files' times equal the index's, git treats them as racily clean and re-reads each one
    on every ``git status`` (200 ms instead of 50 on ten years), so the checkout cloned a
    little later measured slower (ratios of 1.4-1.8 between identical recall code)."""
    import time

    subprocess.run(["git", "clone", "-q", "--local", str(src), str(dest)], check=True)
    time.sleep(1.1)  # a later second than the files' (some file systems keep whole seconds)
    subprocess.run(["git", "-C", str(dest), "update-index", "-q", "--really-refresh"],
                   check=False)
    return dest


def run(before: Path, after: Path, years: int, rounds: int, mode: str,
        cache: Path) -> dict[str, Any]:
    ws, _ = workspace(years, synth.DEFAULT_SEED, cache)
    with tempfile.TemporaryDirectory(prefix="gitmem-ab-") as tmp:
        workers = {"before": Worker(before, clone(ws, Path(tmp) / "before")),
                   "after": Worker(after, clone(ws, Path(tmp) / "after"))}
        samples: dict[str, list[float]] = {"before": [], "after": []}
        paired: list[float] = []
        differ = 0
        turn = 0
        for _ in range(rounds):
            for query in synth.QUERIES:
                order = ["before", "after"] if turn % 2 == 0 else ["after", "before"]
                turn += 1
                got = {name: workers[name].ask(query, mode) for name in order}
                for name in got:
                    samples[name].append(got[name]["ms"])
                paired.append(got["after"]["ms"] / max(got["before"]["ms"], 1e-6))
                differ += got["after"]["n"] != got["before"]["n"]
        for worker in workers.values():
            worker.close()
    out: dict[str, Any] = {name: {"p50": pct(s, 50), "p95": pct(s, 95), "n": len(s)}
                           for name, s in samples.items()}
    out["ratio_p50"] = out["after"]["p50"] / out["before"]["p50"]
    out["ratio_p95"] = out["after"]["p95"] / out["before"]["p95"]
    out["paired"] = statistics.median(paired)
    out["result_counts_differ"] = differ
    out["load"] = os.getloadavg()[0]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", type=Path, required=True)
    ap.add_argument("--after", type=Path, required=True)
    ap.add_argument("--years", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mode", choices=("lexical", "hybrid"), default="lexical")
    ap.add_argument("--cache", type=Path, default=BENCH_DIR / ".cache")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    out = run(args.before.resolve(), args.after.resolve(), args.years, args.rounds, args.mode,
              args.cache)
    print(f"| {args.mode} answer(), in-process | before p50 / p95 ms | after p50 / p95 ms "
          "| ratio p50 / p95 (paired) | load |")
    print("|---|---:|---:|---|---:|")
    print(f"| {args.years} years, {args.rounds} rounds | {out['before']['p50']:.0f} / "
          f"{out['before']['p95']:.0f} | {out['after']['p50']:.0f} / {out['after']['p95']:.0f} "
          f"| {out['ratio_p50']:.2f} / {out['ratio_p95']:.2f} ({out['paired']:.2f}) "
          f"| {out['load']:.1f} |")
    if out["result_counts_differ"]:
        print(f"result counts differed in {out['result_counts_differ']} calls")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
