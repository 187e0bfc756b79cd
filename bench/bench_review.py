"""Review benchmark: ``gitmem review`` of a range on the N-year synthetic workspace.

    python bench/bench_review.py [--rounds 15] [--years 10] [--commits 30]
                                 [--out bench/results/review.json]

Measured end to end as subprocesses in one run, rounds interleaved (one of each command per
round, so the shared machine's noise falls on all of them alike), as p50/p95 wall time, as ratios
against ``python -c pass`` in the same run, and as CPU time (user + system of the process and the
git processes it ran, which other work on the machine barely moves):

- ``python -c "import gitmem.front.cli"``: the import floor of every command;
- ``gitmem review HEAD~N..HEAD`` (Markdown; the target: p50 <= 1 s for N = 30), the same with
  ``--format json``, and the same pinned to one CPU (review splits its work over two cores when
  it has them; its CPU time counts the forked child's);
- ``gitmem review HEAD~1..HEAD`` (one day) and ``HEAD..HEAD`` (no memory change).

Review needs no index: the workspace is used as generated (``bench_lexical.workspace``, cached).
Bytecode is compiled first, as pip does at install time. Also reports what the 30-commit review
found (files, opinions moved, facts, superseded facts, comment size). Standard library only;
prints a Markdown table and writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(ROOT))

from bench import bench_lexical as lex  # noqa: E402

TARGET_S = 1.0
ONE_CORE = "one core"  # a command whose name says so runs pinned to one CPU (no second core)


def commands(ws: Path, commits: int) -> dict[str, list[str]]:
    py = sys.executable
    review = [py, "-m", "gitmem", "-C", str(ws), "review"]
    return {
        "python -c pass": [py, "-c", "pass"],
        "import gitmem.front.cli": [py, "-c", "import gitmem.front.cli"],
        f"review HEAD~{commits}..HEAD (Markdown)": [*review, f"HEAD~{commits}..HEAD"],
        f"review HEAD~{commits}..HEAD --format json": [*review, f"HEAD~{commits}..HEAD",
                                                       "--format", "json"],
        f"review HEAD~{commits}..HEAD (Markdown), {ONE_CORE}": [*review, f"HEAD~{commits}..HEAD"],
        "review HEAD~1..HEAD (one day)": [*review, "HEAD~1..HEAD"],
        "review HEAD..HEAD (no memory change)": [*review, "HEAD..HEAD"],
    }


def run_child(argv: list[str], env: dict[str, str], one_core: bool = False
              ) -> tuple[float, float]:
    """(wall seconds, CPU seconds: user + system of the child and the git processes it waited
    for). CPU time barely moves when other work shares the machine; wall time does."""
    pin = (lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})) if one_core else None
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, preexec_fn=pin)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # already reaped: keep Popen quiet
    assert proc.stderr is not None
    err = proc.stderr.read()
    proc.stderr.close()
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {lex.tail(err)}")
    return wall, usage.ru_utime + usage.ru_stime


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)  # this checkout's gitmem
    # Measure what an installed copy does: pip writes bytecode at install time.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gitmem")], check=True,
                   env=env)
    return env


def found(ws: Path, commits: int, env: dict[str, str]) -> dict[str, Any]:
    """What the review of the range reports (its JSON, summarised) and the comment's size."""
    argv = [sys.executable, "-m", "gitmem", "-C", str(ws), "review", f"HEAD~{commits}..HEAD"]
    data = json.loads(subprocess.run([*argv, "--json"], capture_output=True, check=True,
                                     env=env).stdout)
    markdown = subprocess.run(argv, capture_output=True, check=True, env=env).stdout
    ops = data["opinions"]
    return {
        "summary": data["summary"],
        "files": len(data["files"]),
        "opinions_changed": len(ops["changed"]),
        "opinions_added": len(ops["added"]),
        "opinions_removed": len(ops["removed"]),
        "evidence_added": sum(len(o["evidence_added"]) for o in ops["changed"]),
        "facts_added": len(data["facts"]["added"]),
        "facts_removed": len(data["facts"]["removed"]),
        "entities": len(data["entities"]),
        "superseded": len(data["superseded"]),
        "warnings": len(data["warnings"]),
        "markdown_chars": len(markdown.decode("utf-8")),
    }


def bench(rounds: int, years: int, commits: int, cache: Path) -> dict[str, Any]:
    ws, info = lex.workspace(years, 0, cache)
    env = environment()
    argvs = commands(ws, commits)
    samples: dict[str, list[float]] = {name: [] for name in argvs}
    cpu: dict[str, list[float]] = {name: [] for name in argvs}
    for argv in argvs.values():  # warm-up: the page cache, bytecode
        run_child(argv, env)
    for _ in range(rounds):
        for name, argv in argvs.items():
            wall, used = run_child(argv, env, one_core=ONE_CORE in name)
            samples[name].append(wall)
            cpu[name].append(used)
    base = lex.pct(samples["python -c pass"], 50)
    rows = [{"what": name, **lex.summary_ms(xs), "ratio": round(lex.pct(xs, 50) / base, 2),
             "cpu_p50_ms": round(lex.pct(cpu[name], 50) * 1000, 1)}
            for name, xs in samples.items()]
    load = os.getloadavg()[0]
    return {"rounds": rounds, "years": years, "days": info["days"], "commits": commits,
            "python": sys.version.split()[0], "load_average_1min": round(load, 1),
            "rows": rows, "found": found(ws, commits, env)}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| what | p50 ms | p95 ms | × `python -c pass` | CPU p50 ms | target |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in result["rows"]:
        target = (f"p50 <= {TARGET_S * 1000:.0f} ms"
                  if row["what"].startswith(f"review HEAD~{result['commits']}.") else "")
        lines.append(f"| {row['what']} | {row['p50_ms']:.0f} | {row['p95_ms']:.0f} | "
                     f"{row['ratio']:.2f} | {row['cpu_p50_ms']:.0f} | {target} |")
    f = result["found"]
    lines += ["", f"The {result['commits']}-commit range ({result['years']} years, "
              f"{result['days']} daily commits): {f['files']} memory files; opinions "
              f"{f['opinions_changed']} changed ({f['evidence_added']} evidence lines added), "
              f"{f['opinions_added']} added, {f['opinions_removed']} removed; facts "
              f"+{f['facts_added']} −{f['facts_removed']} about {f['entities']} entities; "
              f"{f['superseded']} superseded; {f['warnings']} warnings; the comment is "
              f"{f['markdown_chars']:,} characters. Load average during the run: "
              f"{result['load_average_1min']} (2 cores)."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--years", type=int, default=10)
    parser.add_argument("--commits", type=int, default=30)
    # Its own cache: a workspace cached by an older generator is not noticed by workspace().
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "gitmem-bench-review")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "review.json")
    args = parser.parse_args(argv)
    result = bench(args.rounds, args.years, args.commits, args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
