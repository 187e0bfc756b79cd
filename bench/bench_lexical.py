"""Lexical benchmark: gitmem index/recall against ripgrep, on synthetic workspaces.

    python bench/bench_lexical.py --years 1 10 [--out bench/results/lexical.json] [--queries 50]
                                  [--gitmem "python -m gitmem"] [--cache-dir DIR]

For each N (years of daily notes) it generates the workspace with ``testing/synth.py`` (or reuses
the cached one), then measures in one run:

- full index time: ``gitmem -C WS index --force`` as a subprocess, wall clock, ``--repeat`` times
  (default 3), median; and the subprocess's peak RSS (``ru_maxrss`` from ``os.wait4`` on that
  child — it covers the child and any descendants it waited for);
- index size on disk (``WS/.memory/index.sqlite`` plus ``-wal``/``-shm``, and all of ``.memory``);
- ``gitmem recall QUERY --json --k 10`` end-to-end latency, p50/p95 over the queries (one
  subprocess per query, wall clock), against ``rg -i --fixed-strings`` over the same memory files;
- two startup baselines: ``python -c pass`` and ``python -c "import gitmem.front.cli"``.

Prints a Markdown table and writes the raw numbers as JSON. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from testing import synth  # noqa: E402

DEFAULT_CACHE = Path(tempfile.gettempdir()) / "gitmem-bench-cache"
MEMORY_PATHS = ("MEMORY.md", "memory.md", "USER.md", "DREAMS.md", "memory", "bank")


@dataclass(frozen=True)
class Run:
    """One finished child process."""

    seconds: float
    maxrss_kb: int
    returncode: int
    stdout: bytes
    stderr: bytes
    cpu_seconds: float = 0.0  # user + system time of the child and the children it waited for


def run_child(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> Run:
    """Run ``argv``; wall time, and peak RSS of exactly this child (via ``os.wait4``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen quiet
        out.seek(0)
        err.seek(0)
        # ru_maxrss is in KiB on Linux (bytes on macOS).
        maxrss = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
        cpu = usage.ru_utime + usage.ru_stime
        return Run(seconds, maxrss, proc.returncode, out.read(), err.read(), cpu)


def pct(samples: list[float], p: float) -> float:
    """Percentile by linear interpolation (p in 0..100)."""
    if not samples:
        return float("nan")
    xs = sorted(samples)
    k = (len(xs) - 1) * p / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def summary_ms(samples: list[float]) -> dict[str, float]:
    return {
        "p50_ms": round(pct(samples, 50) * 1000, 2),
        "p95_ms": round(pct(samples, 95) * 1000, 2),
        "mean_ms": round(statistics.fmean(samples) * 1000, 2) if samples else float("nan"),
        "min_ms": round(min(samples) * 1000, 2) if samples else float("nan"),
    }


def dir_bytes(path: Path) -> int:
    total = 0
    if path.is_file():
        return path.stat().st_size
    for root, _dirs, files in os.walk(path):
        for name in files:
            p = Path(root) / name
            if not p.is_symlink():
                total += p.stat().st_size
    return total


def corpus_stats(ws: Path) -> dict[str, int]:
    files = 0
    size = 0
    for rel in MEMORY_PATHS:
        p = ws / rel
        if p.is_file():
            files += 1
            size += p.stat().st_size
        elif p.is_dir():
            for f in p.rglob("*.md"):
                files += 1
                size += f.stat().st_size
    return {"files": files, "bytes": size}


def resolve_gitmem(spec: str) -> list[str]:
    """Split the --gitmem command; a bare ``python``/``python3`` becomes this interpreter.

    (Through a version-manager shim such as pyenv's, ``python`` is a shell script that would add
    tens of milliseconds to every call and to no baseline.)
    """
    argv = shlex.split(spec)
    if not argv:
        raise SystemExit("bench_lexical: --gitmem is empty")
    if argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    return argv


def workspace(years: int, seed: int, cache: Path) -> tuple[Path, dict[str, Any]]:
    """The cached workspace for (years, seed), generating it when missing or stale."""
    ws = cache / f"synth-y{years}-s{seed}"
    marker = cache / f"synth-y{years}-s{seed}.json"
    if ws.is_dir() and marker.is_file():
        info: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
        head = subprocess.run(
            ["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True, text=True,
            check=False,
        ).stdout.strip()
        if head and head == info.get("head"):
            info["reused"] = True
            return ws, info
    if ws.exists():
        shutil.rmtree(ws)
    cache.mkdir(parents=True, exist_ok=True)
    res = synth.generate(ws, years, seed=seed)
    info = {
        "head": res.head, "days": res.days, "start": res.start.isoformat(),
        "end": res.end.isoformat(), "generate_s": round(res.seconds, 3),
        "generator_bytes": res.bytes_written,
    }
    marker.write_text(json.dumps(info, indent=2), encoding="utf-8")
    info["reused"] = False
    return ws, info


def rg_argv(query: str, ws: Path) -> list[str]:
    """ripgrep baseline over the memory paths that exist in ``ws``.

    A query wrapped in double quotes is searched without the quotes (a phrase).
    """
    text = query[1:-1] if len(query) >= 2 and query[0] == query[-1] == '"' else query
    paths = [p for p in MEMORY_PATHS if (ws / p).exists()]
    return ["rg", "-i", "--fixed-strings", "--glob", "*.md", "--", text, *paths]


def tail(data: bytes, n: int = 600) -> str:
    return data.decode("utf-8", errors="replace")[-n:].strip()


def bench_one(
    years: int, args: argparse.Namespace, gitmem: list[str], env: dict[str, str]
) -> dict[str, Any]:
    ws, gen = workspace(years, args.seed, args.cache_dir)
    corpus = corpus_stats(ws)
    label = f"{years}y"
    print(f"[{label}] workspace {ws} ({gen['days']} days, {corpus['files']} files, "
          f"{corpus['bytes'] / 1e6:.1f} MB; "
          + ("reused" if gen["reused"] else f"generated in {gen['generate_s']:.2f} s") + ")",
          file=sys.stderr)
    result: dict[str, Any] = {"years": years, "workspace": str(ws), "generator": gen,
                              "corpus": corpus, "errors": []}

    # ---- full index, repeated --------------------------------------------------------------
    index_runs: list[Run] = []
    for i in range(args.repeat):
        run = run_child([*gitmem, "-C", str(ws), "index", "--force"], cwd=REPO_ROOT, env=env)
        print(f"[{label}] index --force #{i + 1}: {run.seconds:.2f} s, "
              f"rss {run.maxrss_kb / 1024:.0f} MB, exit {run.returncode}", file=sys.stderr)
        if run.returncode != 0:
            result["errors"].append(f"index --force exited {run.returncode}: {tail(run.stderr)}")
            break
        index_runs.append(run)
    secs = [r.seconds for r in index_runs]
    result["index"] = {
        "runs_s": [round(s, 3) for s in secs],
        "median_s": round(statistics.median(secs), 3) if secs else None,
        "peak_rss_mb": round(max(r.maxrss_kb for r in index_runs) / 1024, 1)
        if index_runs else None,
        "rss_mb_per_run": [round(r.maxrss_kb / 1024, 1) for r in index_runs],
    }
    mem = ws / ".memory"
    db = mem / "index.sqlite"
    db_bytes = sum(dir_bytes(Path(f"{db}{sfx}")) for sfx in ("", "-wal", "-shm")
                   if Path(f"{db}{sfx}").exists())
    result["index_size"] = {
        "index_sqlite_bytes": db_bytes,
        "memory_dir_bytes": dir_bytes(mem) if mem.exists() else 0,
        "ratio_to_corpus": round(db_bytes / corpus["bytes"], 2) if corpus["bytes"] else None,
    }

    # ---- recall vs rg -------------------------------------------------------------------------
    queries = synth.queries(args.seed)[: args.queries]
    recall_s: list[float] = []
    rg_s: list[float] = []
    per_query: list[dict[str, Any]] = []
    recall_ok = bool(index_runs)
    if recall_ok:  # warm-up (page cache, .pyc), not timed
        run_child([*gitmem, "-C", str(ws), "recall", queries[0], "--json", "--k", str(args.k)],
                  cwd=REPO_ROOT, env=env)
    run_child(rg_argv(queries[0], ws), cwd=ws, env=env)
    for q in queries:
        row: dict[str, Any] = {"query": q}
        if recall_ok:
            run = run_child(
                [*gitmem, "-C", str(ws), "recall", q, "--json", "--k", str(args.k)],
                cwd=REPO_ROOT, env=env,
            )
            row["gitmem_ms"] = round(run.seconds * 1000, 2)
            row["gitmem_exit"] = run.returncode
            if run.returncode == 0:
                recall_s.append(run.seconds)
                try:
                    doc = json.loads(run.stdout)
                    row["gitmem_results"] = len(doc.get("results", []))
                except (ValueError, AttributeError) as exc:
                    row["gitmem_results"] = None
                    result["errors"].append(f"recall {q!r}: output is not JSON ({exc})")
            else:
                result["errors"].append(f"recall {q!r} exited {run.returncode}: "
                                        f"{tail(run.stderr, 300)}")
        rg = run_child(rg_argv(q, ws), cwd=ws, env=env)
        if rg.returncode not in (0, 1):
            result["errors"].append(f"rg {q!r} exited {rg.returncode}: {tail(rg.stderr, 300)}")
        rg_s.append(rg.seconds)
        row["rg_ms"] = round(rg.seconds * 1000, 2)
        row["rg_lines"] = rg.stdout.count(b"\n")
        per_query.append(row)
    result["recall"] = summary_ms(recall_s) if recall_s else None
    result["recall_ok"] = len(recall_s)
    result["recall_with_results"] = sum(1 for r in per_query if r.get("gitmem_results"))
    result["rg"] = summary_ms(rg_s)
    result["rg_with_hits"] = sum(1 for r in per_query if r["rg_lines"])
    if recall_s:
        result["ratio_p50"] = round(pct(recall_s, 50) / pct(rg_s, 50), 1)
        result["ratio_p95"] = round(pct(recall_s, 95) / pct(rg_s, 95), 1)
    result["queries"] = per_query
    return result


def startup_baselines(runs: int, env: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, code in (("python_pass", "pass"), ("import_gitmem_cli", "import gitmem.front.cli")):
        argv = [sys.executable, "-c", code]
        run_child(argv, cwd=REPO_ROOT, env=env)  # warm-up
        samples: list[float] = []
        for _ in range(runs):
            r = run_child(argv, cwd=REPO_ROOT, env=env)
            if r.returncode != 0:
                out[name] = {"error": tail(r.stderr, 300)}
                break
            samples.append(r.seconds)
        else:
            out[name] = summary_ms(samples)
    return out


def fmt(x: Any, spec: str = ".0f") -> str:
    return "—" if x is None else format(x, spec)


def markdown(results: list[dict[str, Any]], base: dict[str, Any]) -> str:
    py = base.get("python_pass", {}).get("p50_ms")
    imp = base.get("import_gitmem_cli", {}).get("p50_ms")
    head = (
        "| years | notes | corpus MB | index s (median) | peak RSS MB | index MB | "
        "recall p50 ms | recall p95 ms | rg p50 ms | rg p95 ms | ratio p50 | ratio p95 | "
        "startup share p50 |\n"
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    rows = [head]
    for r in results:
        rec = r.get("recall") or {}
        share = (
            f"{100 * imp / rec['p50_ms']:.0f}%" if imp and rec.get("p50_ms") else "—"
        )
        rows.append(
            f"| {r['years']} | {r['generator']['days']} | {r['corpus']['bytes'] / 1e6:.1f} | "
            f"{fmt(r['index']['median_s'], '.2f')} | {fmt(r['index']['peak_rss_mb'])} | "
            f"{r['index_size']['index_sqlite_bytes'] / 1e6:.1f} | "
            f"{fmt(rec.get('p50_ms'))} | {fmt(rec.get('p95_ms'))} | "
            f"{r['rg']['p50_ms']:.1f} | {r['rg']['p95_ms']:.1f} | "
            f"{fmt(r.get('ratio_p50'), '.1f')}× | {fmt(r.get('ratio_p95'), '.1f')}× | {share} |"
        )
    rows.append("")
    rows.append(
        f"Startup baselines (p50): `python -c pass` {fmt(py, '.1f')} ms, "
        f"`python -c \"import gitmem.front.cli\"` {fmt(imp, '.1f')} ms. "
        "Startup share = import gitmem.front.cli p50 / recall p50."
    )
    for r in results:
        q = r["recall_ok"]
        rows.append(
            f"- {r['years']}y: recall succeeded for {q}/{len(r['queries'])} queries, "
            f"{r['recall_with_results']} with ≥1 result; rg matched {r['rg_with_hits']}; "
            f"index runs {r['index']['runs_s']} s; generation "
            + f"{r['generator']['generate_s']:.2f} s"
            + (" (workspace reused from cache)" if r["generator"]["reused"] else "")
        )
        for e in r["errors"][:5]:
            rows.append(f"  - error: {e}")
        if len(r["errors"]) > 5:
            rows.append(f"  - … {len(r['errors']) - 5} more errors (see JSON)")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--years", type=int, nargs="+", default=[1, 10])
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "lexical.json")
    ap.add_argument("--queries", type=int, default=50, help="number of queries (max 50)")
    ap.add_argument("--gitmem", default="gitmem", help='gitmem command, e.g. "python -m gitmem"')
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--seed", type=int, default=synth.DEFAULT_SEED)
    ap.add_argument("--repeat", type=int, default=3, help="full index runs per workspace")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--startup-runs", type=int, default=20)
    args = ap.parse_args(argv)
    if not 1 <= args.queries <= 50:
        ap.error("--queries must be between 1 and 50")

    if shutil.which("rg") is None:
        print("bench_lexical: ripgrep (`rg`) is required for the baseline but was not found on "
              "PATH; install it (Debian/Ubuntu: `apt-get install -y ripgrep`, macOS: "
              "`brew install ripgrep`) and re-run.", file=sys.stderr)
        return 2
    gitmem = resolve_gitmem(args.gitmem)
    if shutil.which(gitmem[0]) is None and not Path(gitmem[0]).exists():
        print(f"bench_lexical: gitmem command {gitmem[0]!r} not found; pass --gitmem "
              '"python -m gitmem" to run from a checkout.', file=sys.stderr)
        return 2
    env = dict(os.environ)
    env.setdefault("TZ", "UTC")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(REPO_ROOT), env.get("PYTHONPATH", "")) if p
    )
    env["GITMEM_EMBED_PROVIDER"] = "none"  # lexical benchmark: never touch a model
    env["GITMEM_WARM_AUTOSTART"] = "false"  # every recall measured works alone

    rg_version = subprocess.run(["rg", "--version"], capture_output=True, text=True,
                                check=False).stdout.splitlines()[0]
    results = [bench_one(y, args, gitmem, env) for y in args.years]
    base = startup_baselines(args.startup_runs, env)
    doc: dict[str, Any] = {
        "benchmark": "lexical",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "gitmem_cmd": gitmem,
        "seed": args.seed,
        "k": args.k,
        "repeat": args.repeat,
        "environment": {
            "python": sys.version.split()[0], "executable": sys.executable,
            "platform": platform.platform(), "cpus": os.cpu_count(), "rg": rg_version,
        },
        "startup": base,
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown(results, base))
    print(f"\nwrote {args.out}", file=sys.stderr)
    return 1 if any(r["errors"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
