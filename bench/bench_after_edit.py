"""Warm recall right after an uncommitted edit, through ``gitmem serve`` (lexical, no model).

    python bench/bench_after_edit.py WORKSPACE --rounds 15

WORKSPACE: an indexed copy of a synthetic workspace (``testing/synth.py``; it is edited and put
back with ``git checkout -- memory``). Each round: a recall with nothing changed ("clean"), one
line appended to the newest daily note, a recall ("after edit": the warm process catches up
with the edit first), and one more ("next": the catch-up's own write to the index is a change
the watch sees). Every call is a ``gitmem recall --json`` process, so ``python -c pass`` is in
every figure; p50 and minimum in ms. The gitmem measured is this checkout's, wherever the bench
is run from (its processes run in the workspace, with this checkout first on ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    ws = str(args.workspace.resolve())
    # ``python -m`` puts the working folder first on sys.path: run in the workspace, with this
    # checkout on PYTHONPATH, so that this checkout's gitmem is measured.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    server = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", ws, "serve",
                               "--idle-timeout", "300"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, cwd=ws, env=env)

    def recall(query: str) -> float:
        started = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "gitmem", "-C", ws, "recall", query,
                              "--json"], capture_output=True, check=False, cwd=ws, env=env)
        if run.returncode:
            raise SystemExit(f"recall failed: {run.stderr.decode()[-500:]}")
        return (time.perf_counter() - started) * 1000

    def floor() -> float:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, cwd=ws, env=env)
        return (time.perf_counter() - started) * 1000

    try:
        time.sleep(3)  # the warm-up
        for _ in range(3):
            recall("gateway host")
        note = sorted((Path(ws) / "memory").glob("????-??-??.md"))[-1]
        samples: dict[str, list[float]] = {"python -c pass": [], "clean": [], "after edit": [],
                                           "next": []}
        for n in range(args.rounds):
            samples["python -c pass"].append(floor())
            samples["clean"].append(recall("gateway host"))
            with note.open("a", encoding="utf-8") as fh:
                fh.write(f"- W @Bench: an uncommitted line {n} zqedit{n}x.\n")
            samples["after edit"].append(recall("gateway host"))
            samples["next"].append(recall("gateway host"))
        print("| measure | p50 ms | min ms |\n| --- | ---: | ---: |")
        for name, values in samples.items():
            print(f"| {name} | {statistics.median(values):.0f} | {min(values):.0f} |")
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["git", "-C", ws, "checkout", "--", "memory"], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
