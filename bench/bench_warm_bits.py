"""Hybrid recall in one process with and without the sign bits held in memory, interleaved.

    python bench/bench_warm_bits.py [--years 10] [--rounds 40]
        [--model bench/models/all-MiniLM-L6-v2-f16.gguf] [--out bench/results/warm-bits.json]

On a private clone of the N-year synthetic workspace (``bench_lexical.workspace``), indexed
lexically, every current passage given random unit vectors (``bench_growth.fill_vectors``), the
local model loaded: ``answer()`` for each benchmark query twice in a row, once as a command
alone does (vec0's sign-bit scan) and once as the warm process does (``WarmState``: the bits in
memory, ``gitmem.index.signbits``), comparing the two answers' JSON for equality.
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
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench import bench_lexical as lex  # noqa: E402
from bench.bench_growth import NOW, with_model  # noqa: E402
from testing import synth  # noqa: E402


def measure(ws: Path, rounds: int, model: Path) -> dict[str, Any]:
    from gitmem.index.session import Session, WarmSession
    from gitmem.index.watch import WarmState
    from gitmem.recall.answer import RecallRequest, answer

    wsobj, cfg, _dims, vectors = with_model(ws, model)
    warm = WarmState()
    for warmed in (Session(wsobj, cfg), WarmSession(wsobj, cfg, warm)):  # the model, the page
        answer(warmed, RecallRequest(query="warm up"), now=NOW)  # cache and the bits loaded
    times: dict[str, list[float]] = {"vec0": [], "bits_in_memory": []}
    identical = 0
    for query in synth.QUERIES[:rounds]:
        got = []
        for name, session in (("vec0", Session(wsobj, cfg)),
                              ("bits_in_memory", WarmSession(wsobj, cfg, warm))):
            started = time.perf_counter()
            got.append(answer(session, RecallRequest(query=query), now=NOW).to_json())
            times[name].append(time.perf_counter() - started)
        identical += got[0] == got[1]
    return {"vectors": vectors, "held": warm.vectors_held(), "identical_answers": identical,
            "rounds": len(times["vec0"]), **{k: lex.summary_ms(v) for k, v in times.items()}}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--years", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--model", type=Path,
                    default=BENCH_DIR / "models" / "all-MiniLM-L6-v2-f16.gguf")
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "warm-bits.json")
    args = ap.parse_args(argv)
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-warm-bits-"))
    load = [round(os.getloadavg()[0], 1)]
    try:
        src, _ = lex.workspace(args.years, synth.DEFAULT_SEED, lex.DEFAULT_CACHE)
        ws = scratch / "ws"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
        env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none", "GITMEM_WARM_AUTOSTART": "false",
               "XDG_CONFIG_HOME": str(scratch / "config")}
        os.environ.update(XDG_CONFIG_HOME=env["XDG_CONFIG_HOME"], GITMEM_WARM_AUTOSTART="false")
        subprocess.run([sys.executable, "-m", "gitmem", "-C", str(ws), "index", "--no-embed"],
                       env=env, check=True, capture_output=True)
        result = measure(ws, args.rounds, args.model)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load.append(round(os.getloadavg()[0], 1))
    result.update(years=args.years, load_average=load, cpus=os.cpu_count())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
