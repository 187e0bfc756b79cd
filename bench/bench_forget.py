"""Forgetting on several machines (issue 42): ``gitmem forget`` and ``--purge`` mixed into the
sync harness (testing/forgetops.py), on clones of one local bare remote.

    python bench/bench_forget.py [--operations 120] [--clones 3] [--seeds 3]
                                 [--out bench/results/forget.json]

Target: 0 lost facts other than those named (every line any clone pushed is on the remote
after each sync, unless it was forgotten), forgotten lines never come back, and after the
last sync no clone (nor the remote, after its own gc) holds an object with a purged line.
Prints one Markdown row per seed and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(ROOT))

from bench.reliability.cli import scratch  # noqa: E402
from testing.forgetops import run_forget_ops  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--operations", type=int, default=120)
    parser.add_argument("--clones", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "forget.json")
    args = parser.parse_args()
    rows = []
    print("| seed | operations | syncs | forgets | purges | followed | lost or back | "
          "clones holding a purged line | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    with scratch() as tmp:
        for seed in range(args.seeds):
            started = time.monotonic()
            (tmp / str(seed)).mkdir()
            report, ops = run_forget_ops(tmp / str(seed), args.operations,
                                         clones=args.clones, seed=seed)
            seconds = time.monotonic() - started
            held = [f for f in report.failures if "holds a purged line" in f]
            row = {"seed": seed, **report.to_json(), "purged": len(ops.purged),
                   "named": len(ops.named), "followed": ops.followed, "seconds": seconds}
            rows.append(row)
            print(f"| {seed} | {report.operations} | {report.syncs} | "
                  f"{report.done['forget']} | {len(ops.purged)} | {ops.followed} | "
                  f"{len(report.failures) - len(held)} | {len(held)} | {seconds:.0f} |")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 1 if any(r["failures"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
