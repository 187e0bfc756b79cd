"""Entity and opinion benchmark: ``gitmem entity`` for the most-mentioned entity of the N-year
synthetic workspace, end to end (a new process each time, as a user or an agent runs it).

    python bench/bench_entity.py [--rounds 20] [--years 10] [--out bench/results/entity.json]

Target: ``gitmem entity <most mentioned>`` p50 <= 150 ms. These machines are shared and noisy,
so each round runs every command once, interleaved, and every row is also given as a ratio to
``python -c pass`` measured in the same rounds, and as CPU time (user + system of the process and
the git processes it waited for), which a busy machine inflates far less than wall time. Also
measured: the entity list, ``--json``, ``opinions --history`` and an ``--as-of`` view.
Standard library only; prints a Markdown table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(ROOT))

from bench import bench_lexical as lex  # noqa: E402

TARGET_MS = 150.0


def prepare(years: int, cache: Path, scratch: Path, env: dict[str, str]) -> tuple[Path, str]:
    """A private clone of the cached synthetic workspace, indexed; and its most-mentioned
    entity (from ``gitmem entity --json``)."""
    src, _ = lex.workspace(years, 0, cache)
    ws = scratch / "ws"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
    gm = [sys.executable, "-m", "gitmem", "-C", str(ws)]
    run = lex.run_child([*gm, "index", "--no-embed"], env=env)
    if run.returncode:
        raise SystemExit(f"index failed: {lex.tail(run.stderr)}")
    listing = subprocess.run([*gm, "entity", "--json"], capture_output=True, env=env, check=True)
    top = json.loads(listing.stdout)["entities"][0]
    return ws, str(top["entity"])


def bench(rounds: int, years: int, cache: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("GITMEM_EMBED_PROVIDER", None)
    # Measure what an installed copy does: pip writes bytecode at install time.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gitmem")], check=True,
                   env=env)
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-entity-"))
    env["XDG_CONFIG_HOME"] = str(scratch / "config")  # no user config leaks in
    try:
        ws, top = prepare(years, cache, scratch, env)
        gm = [sys.executable, "-m", "gitmem", "-C", str(ws)]
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            f"entity {top}": [*gm, "entity", top],
            f"entity {top} --json": [*gm, "entity", top, "--json"],
            f"entity {top} --as-of 2025-11": [*gm, "entity", top, "--as-of", "2025-11"],
            "entity (the list)": [*gm, "entity"],
            "opinions --history": [*gm, "opinions", "--history"],
        }
        walls: dict[str, list[float]] = {what: [] for what in commands}
        cpus: dict[str, list[float]] = {what: [] for what in commands}
        for argv in commands.values():  # warm-up: page cache, bytecode
            lex.run_child(argv, env=env)
        for _ in range(rounds):  # interleaved, so load changes hit every command alike
            for what, argv in commands.items():
                run = lex.run_child(argv, env=env)
                if run.returncode:
                    raise SystemExit(f"{what} failed: {lex.tail(run.stderr)}")
                walls[what].append(run.seconds)
                cpus[what].append(run.cpu_seconds)
        view = json.loads(subprocess.run(commands[f"entity {top} --json"], capture_output=True,
                                         env=env, check=True).stdout)
        load = os.getloadavg()[0]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    base, base_cpu = lex.pct(walls["python -c pass"], 50), lex.pct(cpus["python -c pass"], 50)
    rows = [{"what": what, **lex.summary_ms(xs), "ratio": round(lex.pct(xs, 50) / base, 2),
             "cpu_p50_ms": round(lex.pct(cpus[what], 50) * 1000, 1),
             "cpu_ratio": round(lex.pct(cpus[what], 50) / base_cpu, 2)}
            for what, xs in walls.items()]
    shown = sum(len(v) for v in view["facts"].values())
    replaced = sum(len(f["history"]) for v in view["facts"].values() for f in v)
    return {"rounds": rounds, "years": years, "python": sys.version.split()[0], "entity": top,
            "mentions": view["counts"]["mentions"], "facts": view["counts"]["facts"],
            "facts_shown": shown, "replaced_facts_shown": replaced, "load_average": load,
            "cpus": os.cpu_count(), "rows": rows}


def markdown(result: dict[str, Any]) -> str:
    lines = [f"Most-mentioned entity: `{result['entity']}` ({result['mentions']} mentions, "
             f"{result['facts']} facts; the view shows {result['facts_shown']} current facts "
             f"and {result['replaced_facts_shown']} they replaced). {result['rounds']} rounds, "
             f"{result['years']}-year workspace; load average {result['load_average']:.1f} on "
             f"{result['cpus']} CPUs.", "",
             "| what | p50 ms | p95 ms | × `python -c pass` | CPU p50 ms | CPU × | target |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in result["rows"]:
        target = (f"p50 <= {TARGET_MS:.0f} ms" if row["what"] == f"entity {result['entity']}"
                  else "")
        lines.append(f"| {row['what']} | {row['p50_ms']:.0f} | {row['p95_ms']:.0f} | "
                     f"{row['ratio']:.2f} | {row['cpu_p50_ms']:.0f} | {row['cpu_ratio']:.2f} | "
                     f"{target} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--years", type=int, default=10)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitmem-bench")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "entity.json")
    args = parser.parse_args(argv)
    result = bench(args.rounds, args.years, args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
