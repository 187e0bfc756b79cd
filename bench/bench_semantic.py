"""Semantic benchmark: embedding throughput, cache-hit re-index, hybrid recall latency.

    python bench/bench_semantic.py --model bench/models/all-MiniLM-L6-v2-q8_0.gguf \\
        [--days 60] [--chunks 50000] [--out bench/results/semantic.json]

In one run, on this machine:

1. Throughput: a synthetic workspace of ``--days`` daily notes is indexed with the local model
   (``gitmem index``: lexical first, then every fact and chunk embedded); reported as items/s and
   tokens/s, against the lexical-only index of the same workspace.
2. Cache-hit re-index: ``gitmem index --force`` of the same workspace, now answered from the
   embedding cache (zero model calls), against the lexical-only ``index --force``.
3. Latency at scale: a ``--chunks``-item index (the 10-year synthetic workspace, topped up to the
   target with copies) whose vectors are random unit vectors of the model's dimension (content
   does not change k-NN cost), queried in-process with the model loaded: hybrid ``answer()``
   p50/p95 over the benchmark queries, against lexical ``answer()`` in the same process.

Standard library plus gitmem; the model is the real one built by ``bench/build_model.sh``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gitmem.domain import RecallMode

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench import bench_lexical as lex  # noqa: E402
from gitmem.config import Config  # noqa: E402
from gitmem.index.items import MAX_PASSAGES, embedding_passages  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.index.store import open_store  # noqa: E402
from gitmem.recall.answer import RecallRequest, answer  # noqa: E402
from gitmem.recall.ranking import Ranking  # noqa: E402
from gitmem.workspace import Workspace, open_workspace  # noqa: E402
from testing import synth  # noqa: E402


def _index(ws: Path, env: dict[str, str], *extra: str) -> tuple[float, dict[str, Any]]:
    run = lex.run_child([sys.executable, "-m", "gitmem", "-C", str(ws), "index", "--json",
                         *extra], env=env)
    if run.returncode:
        raise SystemExit(f"index failed: {lex.tail(run.stderr)}")
    return run.seconds, json.loads(run.stdout)


def throughput(days: int, model: Path, scratch: Path) -> dict[str, Any]:
    ws = scratch / "throughput"
    synth.generate(ws, days=days)
    lexical_env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none"}
    local_env = {**os.environ, "GITMEM_EMBED_PROVIDER": "local",
                 "GITMEM_EMBED_MODEL": str(model.resolve())}
    lex_s, _ = _index(ws, lexical_env, "--force")
    shutil.rmtree(ws / ".memory")
    full_s, report = _index(ws, local_env)
    emb = report["embedding"]
    store = open_store(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        row = store.conn.execute("SELECT sum(length(content)) FROM items "
                                 "WHERE valid_to IS NULL").fetchone()
        chars = int(row[0]) if row and row[0] else 0
    finally:
        store.close()
    cached_s, cached = _index(ws, local_env, "--force")
    lex2_s, _ = _index(ws, lexical_env, "--force")
    return {
        "days": days, "items": emb["total"], "embed_seconds": emb["seconds"],
        "items_per_s": round(emb["total"] / emb["seconds"], 1),
        "tokens_per_s": round(chars / 4 / emb["seconds"]),
        "lexical_index_s": round(lex_s, 2), "index_with_embedding_s": round(full_s, 2),
        "cache_hit_reindex_s": round(cached_s, 2),
        "cache_hit_provider_calls": cached["embedding"]["provider_calls"],
        "lexical_reindex_s": round(lex2_s, 2),
    }


def _random_vectors(n: int, dims: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        v = [rng.gauss(0.0, 1.0) for _ in range(dims)]
        norm = sum(x * x for x in v) ** 0.5
        out.append(struct.pack(f"<{dims}f", *(x / norm for x in v)))
    return out


def _count(store: Any, sql: str) -> int:
    row = store.conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


def latency(target: int, model: Path, scratch: Path, rounds: int,
            threads: int | None = None) -> dict[str, Any]:
    src, _ = lex.workspace(10, 0, lex.DEFAULT_CACHE)
    ws = scratch / "scale"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
    env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none"}
    _index(ws, env, "--force")
    # A fresh clone's index holds racy timestamps (files written in the second the index was),
    # so every 'git status --no-optional-locks' (recall's freshness check) re-reads all 3,650
    # files (~30-60 ms) until a git command that may write the index runs a second or more
    # later, as the user's next 'git status' or commit does: measure that steady state.
    subprocess.run(["git", "-C", str(ws), "status", "--porcelain"], check=True,
                   capture_output=True)
    os.environ.update(GITMEM_EMBED_PROVIDER="local", GITMEM_EMBED_MODEL=str(model.resolve()))
    wsobj, cfg = open_workspace(ws)
    cfg = replace(cfg, embed_threads=threads)
    have, searched, dims = fill_random_vectors(wsobj, cfg, target)
    now = datetime(2026, 11, 30, tzinfo=UTC)
    # hybrid: the shipped ranking (passages); hybrid_chunks: whole chunks, the ranking before
    variants: dict[str, tuple[RecallMode, Ranking | None]] = {
        "lexical": ("lexical", None), "hybrid": ("hybrid", None),
        "hybrid_chunks": ("hybrid", Ranking(passages=False))}
    timings: dict[str, list[float]] = {name: [] for name in variants}
    for mode, ranking in variants.values():
        answer(Session(wsobj, cfg), RecallRequest(query="warm up", mode=mode), now=now,
               ranking=ranking)
    for query in synth.QUERIES[:rounds]:  # interleaved: the machine's load hits all alike
        for name, (mode, ranking) in variants.items():
            started = time.perf_counter()
            answer(Session(wsobj, cfg), RecallRequest(query=query, mode=mode), now=now,
                   ranking=ranking)
            timings[name].append(time.perf_counter() - started)
    return {"vectors": searched, "items": max(have, target), "dims": dims,
            **{f"{name}_ms": lex.summary_ms(t) for name, t in timings.items()}}


def fill_random_vectors(wsobj: Workspace, cfg: Config, target: int = 0) -> tuple[int, int, int]:
    """Give every current item of a lexically indexed workspace random unit vectors of the
    configured local model's size, under its fingerprint (so recall runs hybrid), topped up to
    ``target`` items: k-NN cost does not depend on content, and embedding 10 years of notes
    would take an hour. Returns (current items, passage vectors searched, dimensions)."""
    from gitmem.embed.selection import select

    embedder = select(cfg).embedder
    assert embedder is not None
    probe = embedder.embed_batch(["probe"], input_type="query")[0]
    store = open_store(wsobj.index_path)
    try:
        have = _count(store, "SELECT count(*) FROM items WHERE valid_to IS NULL")
        with store.transaction():
            store.reset_vectors(embedder.fingerprint, len(probe))
        # Real passage counts for real items; top-up items get 4 passages (a typical chunk).
        parts = [(int(i), str(k), len(embedding_passages(str(t), str(c), "")))
                 for i, k, t, c in store.conn.execute(
                     "SELECT id, vkey, type, content FROM items WHERE valid_to IS NULL")]
        extra_items = max(0, target - len(parts))
        total = sum(n for _, _, n in parts) + 4 * extra_items
        vectors = iter(_random_vectors(total, len(probe)))
        with store.transaction():
            store.put_vectors([(i, k, n, next(vectors)) for i, k, count in parts
                               for n in range(count)])
            store.conn.executemany(  # top-up: vectors of no current item still cost k-NN time
                "INSERT INTO vec_bits (rowid, embedding) VALUES (?, vec_quantize_binary(?))",
                [((10_000_000 + i) * MAX_PASSAGES + n, next(vectors))
                 for i in range(extra_items) for n in range(4)])
        searched = _count(store, "SELECT count(*) FROM vec_bits")
    finally:
        store.close()
    return have, searched, len(probe)


def markdown(tp: dict[str, Any] | None, lat: dict[str, Any]) -> str:
    rows = ["| measure | value | baseline in the same run |", "|---|---:|---:|"]
    if tp is not None:
        rows += [
            f"| embedding throughput ({tp['items']} items, {tp['days']} days) | "
            f"{tp['items_per_s']} items/s, {tp['tokens_per_s']} tokens/s | — |",
            f"| index with embedding | {tp['index_with_embedding_s']} s | lexical only "
            f"{tp['lexical_index_s']} s |",
            f"| cache-hit re-index (`--force`, {tp['cache_hit_provider_calls']} model calls) | "
            f"{tp['cache_hit_reindex_s']} s | lexical only {tp['lexical_reindex_s']} s |",
        ]

    def ms(name: str) -> str:
        return f"{lat[name]['p50_ms']:.0f} / {lat[name]['p95_ms']:.0f} ms"

    rows.append(f"| hybrid recall p50 / p95, {lat['items']} items ({lat['vectors']} passage "
                f"vectors), model loaded | {ms('hybrid_ms')} | whole chunks "
                f"{ms('hybrid_chunks_ms')}; lexical {ms('lexical_ms')} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path,
                    default=BENCH_DIR / "models" / "all-MiniLM-L6-v2-q8_0.gguf")
    ap.add_argument("--days", type=int, default=60)
    ap.add_argument("--chunks", type=int, default=50_000)
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "semantic.json")
    ap.add_argument("--threads", type=int, help="llama.cpp threads (default: every core)")
    ap.add_argument("--latency-only", action="store_true", help="skip the throughput runs")
    args = ap.parse_args(argv)
    if not args.model.exists():
        raise SystemExit(f"{args.model} is missing: run bench/build_model.sh first")
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-sem-"))
    try:
        tp = None if args.latency_only else throughput(args.days, args.model, scratch)
        lat = latency(args.chunks, args.model, scratch, args.rounds, args.threads)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(markdown(tp, lat))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"throughput": tp, "latency": lat,
                                    }, indent=2),
                        encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
