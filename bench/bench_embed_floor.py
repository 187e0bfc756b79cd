"""Indexing at the speed of the model (issue 41): a full index with embeddings against the
model's arithmetic floor on this machine.

    python bench/bench_embed_floor.py [--model GGUF] [--question 0] [--sessions N]
        [--threads 1,2] [--json bench/results/embed-floor.json]

One run measures, for the local model (default: gitmem's default, multilingual-e5-small Q4_0):

- **multiply-adds per token**, from the GGUF metadata: per layer the four attention projections
  (4 d²) and the feed-forward pair (2 d·ff), plus attention's part that grows with the unit's
  length L (Q·Kᵀ and A·V: 2 d·L per token), at the workload's mean unit length. Norms, GELU,
  softmax and pooling are O(d) per token and left out.
- **the floor**: the best multiply-add rate llama.cpp reaches *with this model's own kernels* on
  these cores: one sequence of L tokens (L = 32 … 512) per decode through a ``Llama`` object as
  gitmem configures it, flash attention on and off, best of both; CPU time on one thread. The
  floor for the workload is its multiply-adds per token over that rate. A float32 GEMM in numpy
  (the shape of the feed-forward layer, one thread) is shown for reference only: Q4_0 weights
  run int8 dot products, a different kernel.
- **a full ``gitmem index``** with embeddings of one LongMemEval-S question's memory (``bench.lme``
  builds it: ~50 dated notes, one list item per chat turn), in a subprocess as a user runs it,
  with ``embed.threads`` 1 (CPU time per token: robust on a shared machine) and 2 (wall time),
  a fresh embedding cache each time; and its breakdown, measured apart: the lexical index
  (``--no-embed``), the model load, tokenisation of every unit, the model's work on the units in
  the batches ``gitmem index`` sends (in-process ``NativeModel.embed``), and the rest (worker
  start, pickling, the vector cache and the index's SQLite writes). The model's work is also
  measured in the same run by the path gitmem took before issue 41 (one text a decode, plain
  attention): the before/after ratio.

The machine is shared: every figure carries the 1-minute load average before and after it.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # numpy's GEMM on one thread, before numpy is imported

import argparse  # noqa: E402
import gzip  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from functools import partial  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(ROOT))

from bench.lme import DEFAULT_DATA, build  # noqa: E402
from gitmem.embed.native import NativeModel, import_llama_cpp  # noqa: E402
from gitmem.index.store import open_store  # noqa: E402
from gitmem.index.vectors import BATCH_ITEMS  # noqa: E402
from gitmem.workspace import open_workspace  # noqa: E402

DEFAULT_OUT = HERE / "results" / "embed-floor.json"
FLOOR_LENGTHS = (32, 64, 128, 256, 512)
FILLER = ("The meeting with the bank moved to Thursday; Alice will lead the product team in "
          "Tokyo next month. We fixed the flaky integration test and renewed the TLS "
          "certificate of the mail server. Mødet er flyttet til torsdag. 会議は木曜日に移った。 ")


def load() -> float:
    return round(os.getloadavg()[0], 2)


def cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(fn: Callable[[], Any]) -> dict[str, float]:
    """CPU seconds (this process), wall seconds and the load average around one call."""
    before = load()
    c0, w0 = time.process_time(), time.perf_counter()
    fn()
    return {"cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - w0,
            "load_before": before, "load_after": load()}


# -- arithmetic -----------------------------------------------------------------------------------


def architecture(model: Path) -> dict[str, int]:
    import gguf

    reader = gguf.GGUFReader(str(model))

    def field(key: str) -> Any:
        return reader.fields[key].contents()

    arch = str(field("general.architecture"))
    return {"n_layer": int(field(f"{arch}.block_count")),
            "n_embd": int(field(f"{arch}.embedding_length")),
            "n_ff": int(field(f"{arch}.feed_forward_length")),
            "n_ctx_train": int(field(f"{arch}.context_length"))}


def macs_per_token(arch: dict[str, int], length: float) -> dict[str, float]:
    """Multiply-adds per token of a unit of ``length`` tokens: weights and attention."""
    d, ff, layers = arch["n_embd"], arch["n_ff"], arch["n_layer"]
    weights = layers * (4 * d * d + 2 * d * ff)
    attention = layers * 2 * d * length
    return {"weights": weights, "attention": attention, "total": weights + attention}


# -- the floor ------------------------------------------------------------------------------------


def _llama(model: Path, threads: int, flash: bool, n_ctx: int) -> Any:
    llama_cpp = import_llama_cpp()
    from gitmem.embed.native import _model_params

    with _model_params(llama_cpp, False) as extra:
        return llama_cpp.Llama(model_path=str(model), embedding=True, n_ctx=n_ctx,
                               n_batch=n_ctx, n_ubatch=n_ctx, n_threads=threads,
                               n_threads_batch=threads, verbose=False, flash_attn=flash,
                               **extra)


def floor(model: Path, arch: dict[str, int], threads: int) -> dict[str, Any]:
    """The best multiply-add rate of one sequence per decode, over lengths and attention
    kernels; CPU time with ``threads`` (1: the machine's load hardly changes it)."""
    rows: list[dict[str, Any]] = []
    filler = FILLER * 40
    for flash in (False, True):
        llama = _llama(model, threads, flash, arch["n_ctx_train"])
        tokens = llama.tokenize(filler.encode("utf-8"), add_bos=False)
        try:
            for length in FLOOR_LENGTHS:
                # ``length`` tokens with the model's own start and end tokens
                text = llama.detokenize(tokens[: length - 2]).decode("utf-8", "replace")
                n = len(llama.tokenize(text.encode("utf-8")))
                n = min(n, arch["n_ctx_train"])
                llama.embed([text])  # warm
                reps = max(3, 3000 // length)
                best = min(measure(partial(llama.embed, [text]))["cpu_s"] for _ in range(reps))
                macs = macs_per_token(arch, n)["total"]
                rows.append({"flash_attn": flash, "tokens": n, "cpu_s": best,
                             "tokens_per_cpu_s": n / best, "gmacs_per_cpu_s": macs * n / best / 1e9,
                             "load": load()})
        finally:
            llama.close()
    best_row = max(rows, key=lambda r: r["gmacs_per_cpu_s"])
    return {"rows": rows, "best": best_row, "gmacs_per_cpu_s": best_row["gmacs_per_cpu_s"]}


def numpy_gemm(arch: dict[str, int]) -> dict[str, float]:
    """float32 GEMM of the feed-forward shape (512 tokens × d × ff), one thread: reference."""
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, arch["n_embd"]), dtype=np.float32)
    w = rng.standard_normal((arch["n_embd"], arch["n_ff"]), dtype=np.float32)
    x @ w
    best = min(measure(lambda: x @ w)["cpu_s"] for _ in range(50))
    return {"gmacs_per_cpu_s": 512 * arch["n_embd"] * arch["n_ff"] / best / 1e9}


# -- the workload ---------------------------------------------------------------------------------


def gitmem_env(tmp: Path, model: Path, threads: int | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env[name] = str(tmp / name.lower())
    env["GITMEM_EMBED_PROVIDER"] = "local" if threads else "none"
    env["GITMEM_EMBED_MODEL"] = str(model)
    if threads:
        env["GITMEM_EMBED_THREADS"] = str(threads)
    return env


def run_index(ws: Path, env: dict[str, str], *args: str) -> dict[str, Any]:
    before, c0, w0 = load(), cpu_children(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(ws), "index", "--json",
                           *args], env=env, capture_output=True, text=True, check=False)
    wall, cpu = time.perf_counter() - w0, cpu_children() - c0
    if proc.returncode != 0:
        raise SystemExit(f"gitmem index failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return {"cpu_s": cpu, "wall_s": wall, "load_before": before, "load_after": load(),
            "report": json.loads(proc.stdout)}


def units(ws: Path) -> list[str]:
    """The texts ``gitmem index`` embeds, in its order (after a lexical index)."""
    workspace, _ = open_workspace(ws)
    store = open_store(workspace.index_path, readonly=True)
    try:
        return [t for _, _, passages in store.pending_embeddings(10**9) for t in passages]
    finally:
        store.close()


def batches(texts: Sequence[str], size: int = 32) -> list[list[str]]:
    """The provider calls ``gitmem index`` makes: BATCH_ITEMS items' texts, then at most
    ``size`` distinct texts per call (``embed.batch_size``, capped by the provider)."""
    from gitmem.embed.local import LocalEmbedder

    size = min(size, LocalEmbedder.max_batch)
    fresh = list(dict.fromkeys(texts))  # each distinct text once (the cache does the rest)
    return [fresh[start:start + size] for start in range(0, len(fresh), size)]


def workload(args: argparse.Namespace, model: Path, arch: dict[str, int],
             tmp: Path) -> dict[str, Any]:
    with gzip.open(args.data, "rt", encoding="utf-8") as fh:
        questions = [q for q in json.load(fh) if not q["question_id"].endswith("_abs")]
    question = questions[args.question]
    if args.sessions:
        question = {**question, **{k: question[k][: args.sessions] for k in
                                   ("haystack_sessions", "haystack_dates", "haystack_session_ids")}}
    ws = build(question, tmp / "ws").root
    out: dict[str, Any] = {"question_id": question["question_id"],
                           "notes": len(question["haystack_sessions"])}
    lexical = run_index(ws, gitmem_env(tmp, model, None), "--force", "--no-embed")
    texts = units(ws)
    out["lexical"] = {k: v for k, v in lexical.items() if k != "report"}

    # In-process, the same model and settings as the worker: tokens, then the breakdown.
    loaded: dict[str, NativeModel] = {}
    out["load"] = measure(lambda: loaded.setdefault("m", NativeModel(model, threads=1)))
    native = loaded["m"]
    distinct = list(dict.fromkeys(texts))  # each distinct text is embedded once
    # the tokens the model sees (prompt, start and end tokens, cut to the context)
    lengths = [len(native.tokens(t, "document")) for t in distinct]
    out["units"] = {"count": len(texts), "distinct": len(set(texts)), "tokens": sum(lengths),
                    "mean_tokens": statistics.fmean(lengths),
                    "median_tokens": statistics.median(lengths), "max_tokens": max(lengths),
                    "cut_at_context": sum(n >= native.info.n_ctx for n in lengths),
                    "batch_items": BATCH_ITEMS}
    out["tokenise"] = measure(lambda: [native.tokens(t, "document") for t in distinct])
    out["embed_in_process"] = measure(lambda: [native.embed(b, "document")
                                               for b in batches(texts)])
    native.close()
    # the same in the same run by the path before issue 41: one text a decode, plain attention
    old = NativeModel(model, threads=1, flash_attn=False, pack_tokens=0)
    out["embed_in_process_before"] = measure(lambda: [old.embed(b, "document")
                                                      for b in batches(texts)])
    old.close()
    tokens = out["units"]["tokens"]
    for threads in args.threads:
        cache = ws / ".memory" / "embeddings.sqlite"
        cache.unlink(missing_ok=True)  # every run embeds every unit
        full = run_index(ws, gitmem_env(tmp, model, threads), "--force")
        embedded = full["report"].get("embedding") or {}
        if full["report"].get("embedding_error") or embedded.get("pending"):
            raise SystemExit(f"the index did not embed everything: {full['report']}")
        out[f"index_threads_{threads}"] = {
            **{k: v for k, v in full.items() if k != "report"},
            "embedded": embedded.get("embedded"),
            "tokens_per_cpu_s": tokens / full["cpu_s"],
            "tokens_per_wall_s": tokens / full["wall_s"],
        }
    one = out.get("index_threads_1")
    if one:
        rest = one["cpu_s"] - out["lexical"]["cpu_s"] - out["load"]["cpu_s"] - \
            out["embed_in_process"]["cpu_s"]
        out["breakdown_cpu_s"] = {
            "lexical index": out["lexical"]["cpu_s"],
            "model load": out["load"]["cpu_s"],
            "tokenisation (once)": out["tokenise"]["cpu_s"],
            "model (embed, in-process, less tokenisation)":
                out["embed_in_process"]["cpu_s"] - out["tokenise"]["cpu_s"],
            "rest (worker start, IPC, cache and SQLite writes)": rest,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, help="GGUF (default: gitmem's default model)")
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--question", type=int, default=0, help="index among non-abstention ones")
    ap.add_argument("--sessions", type=int, help="only the first N sessions (a quick run)")
    ap.add_argument("--threads", default="1,2", type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--no-index", action="store_true", help="the floor only")
    ap.add_argument("--json", type=Path, default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    if args.model is None:
        from gitmem.embed.download import default_model

        args.model = default_model()
    model = args.model.resolve()
    arch = architecture(model)
    report: dict[str, Any] = {"model": model.name, "arch": arch, "cpus": os.cpu_count(),
                              "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    report["floor"] = floor(model, arch, 1)
    report["numpy_f32_gemm"] = numpy_gemm(arch)
    rate = report["floor"]["gmacs_per_cpu_s"] * 1e9
    tmp = Path(tempfile.mkdtemp(prefix="gitmem-floor-"))
    try:
        if not args.no_index:
            work = report["workload"] = workload(args, model, arch, tmp)
            mean = work["units"]["mean_tokens"]
            macs = macs_per_token(arch, mean)
            floor_tps = rate / macs["total"]
            report["macs_per_token"] = macs
            report["floor_tokens_per_cpu_s"] = floor_tps
            summary = {"floor tokens/CPU-s (one thread)": round(floor_tps)}
            for key in [k for k in work if k.startswith("index_threads_")]:
                row = work[key]
                summary[f"{key} tokens/CPU-s"] = round(row["tokens_per_cpu_s"])
                summary[f"{key} tokens/wall-s"] = round(row["tokens_per_wall_s"])
                summary[f"{key} CPU over floor"] = round(floor_tps / row["tokens_per_cpu_s"], 2)
            model_only = work["units"]["tokens"] / work["embed_in_process"]["cpu_s"]
            summary["model alone tokens/CPU-s"] = round(model_only)
            summary["model alone over floor"] = round(floor_tps / model_only, 2)
            before = work["units"]["tokens"] / work["embed_in_process_before"]["cpu_s"]
            summary["model alone, path before issue 41, tokens/CPU-s"] = round(before)
            summary["model alone, path before issue 41, over floor"] = round(floor_tps / before, 2)
            report["summary"] = summary
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: report[k] for k in ("summary",) if k in report} or report["floor"],
                     indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
