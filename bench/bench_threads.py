"""Threads of the local model on a quiet and on a busy machine (issue 41).

    python bench/bench_threads.py --model E5.gguf [--data ../shared/bench/lme-dev.json.gz]
        [--texts 320] [--rounds 2] [--scenarios quiet,…] [--json OUT]

llama.cpp's threads spin while they wait for each other, so a decode on every core is slow
when another process holds one of them. Each scenario runs the embedding of the same texts (the
first turns of a LongMemEval question's sessions, cut to 400 characters, in calls of 16 as
gitmem's worker gets them) in a fresh child process, with ``threads`` fixed at 1, fixed at every
core (gitmem's default before), and ``None`` (the cores other processes leave free, looked at
before every call: ``gitmem.embed.cores``), rounds interleaved:

- quiet: nothing else running (stop other work first);
- one busy: one process spinning on a core, same priority;
- all busy: a spinning process per core, same priority;
- background: the embedding at ``nice 10`` (as a hook's background index may run) under a
  spinning process per core;
- niced work: a spinning process per core at ``nice 19`` (a batch job), the embedding at
  normal priority.

Reported: wall seconds and CPU seconds of the embedding (the median of the rounds), and wall
time as a ratio to every-core threads in the same scenario.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "bench" / "lme-dev.json.gz"
CALL = 16  # texts a call, as LocalEmbedder.max_batch sends them
SPIN = "import os, sys\nos.nice(int(sys.argv[1]))\nwhile True:\n    pass\n"

CHILD = """
import json, os, sys, time
from pathlib import Path
from gitmem.embed.native import NativeModel
model, threads, texts_file, nice = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
CALL = int(sys.argv[5])
os.nice(nice)
texts = json.loads(Path(texts_file).read_text(encoding="utf-8"))
m = NativeModel(Path(model), threads=None if threads == "free" else int(threads))
m.embed(texts[:4], "passage")
used = []
wall, cpu = time.monotonic(), time.process_time()
for i in range(0, len(texts), CALL):
    m.embed(texts[i:i + CALL], "passage")
    used.append(m.threads)
print(json.dumps({"wall": time.monotonic() - wall, "cpu": time.process_time() - cpu,
                  "threads_used": sorted(set(used))}))
"""

# name: (spinning processes, -1 a core each; the embedding's nice; the spinners' nice)
SCENARIOS = {"quiet": (0, 0, 0), "one busy": (1, 0, 0), "all busy": (-1, 0, 0),
             "background": (-1, 10, 0), "niced work": (-1, 0, 19)}


def texts_from(data: Path, n: int) -> list[str]:
    with gzip.open(data, "rt", encoding="utf-8") as fh:
        questions = json.load(fh)
    out: list[str] = []
    for q in questions:
        for session in q["haystack_sessions"]:
            for turn in session:
                text = " ".join(str(turn["content"]).split())[:400]
                if text:
                    out.append(text)
                if len(out) >= n:
                    return out
    return out


def run_child(model: Path, threads: str, texts_file: Path, nice: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    command = [sys.executable, "-c", CHILD, str(model), threads, str(texts_file), str(nice),
               str(CALL)]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"the embedding child failed: {proc.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--texts", type=int, default=320)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--scenarios", default=list(SCENARIOS),
                    type=lambda text: [name.strip() for name in text.split(",")],
                    help=f"comma-separated, of: {', '.join(SCENARIOS)}")
    args = ap.parse_args(argv)
    for name in args.scenarios:
        if name not in SCENARIOS:
            ap.error(f"unknown scenario {name!r}: {', '.join(SCENARIOS)}")
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cores = cores or 1
    texts_file = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-threads-{os.getpid()}.json"
    texts_file.write_text(json.dumps(texts_from(args.data, args.texts)), encoding="utf-8")
    settings = ["1", str(cores), "free"]
    report: dict[str, Any] = {"cores": cores, "texts": args.texts, "rounds": args.rounds,
                              "load_before": os.getloadavg(), "scenarios": {}}
    try:
        for name in args.scenarios:
            busy, nice, spinners_nice = SCENARIOS[name]
            spinners = [subprocess.Popen([sys.executable, "-c", SPIN, str(spinners_nice)])
                        for _ in range(cores if busy < 0 else busy)]
            try:
                runs: dict[str, list[dict[str, Any]]] = {s: [] for s in settings}
                for _ in range(args.rounds):
                    for setting in settings:
                        runs[setting].append(run_child(args.model, setting, texts_file, nice))
            finally:
                for spinner in spinners:
                    spinner.kill()
                    spinner.wait()
            rows = {s: {"wall": statistics.median(r["wall"] for r in rs),
                        "cpu": statistics.median(r["cpu"] for r in rs),
                        "threads_used": sorted({t for r in rs for t in r["threads_used"]})}
                    for s, rs in runs.items()}
            for row in rows.values():
                row["vs_all_cores"] = row["wall"] / rows[str(cores)]["wall"]
            report["scenarios"][name] = rows
            print(f"{name}: " + "; ".join(
                f"threads {s}: {r['wall']:.2f} s wall, {r['cpu']:.2f} s CPU, "
                f"{r['vs_all_cores']:.2f}x, used {r['threads_used']}" for s, r in rows.items()),
                flush=True)
    finally:
        texts_file.unlink(missing_ok=True)
    print("\n| scenario | threads 1 | every core | free cores (default) |")
    print("|---|---|---|---|")
    for name, rows in report["scenarios"].items():
        cells = [f"{rows[s]['wall']:.1f} s ({rows[s]['vs_all_cores']:.2f}×), CPU "
                 f"{rows[s]['cpu']:.1f} s" for s in settings]
        print(f"| {name} | " + " | ".join(cells) + " |")
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
