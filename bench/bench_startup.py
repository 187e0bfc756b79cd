"""Start-up benchmark: how much of a command's latency is the interpreter, imports and work.

    python bench/bench_startup.py [--rounds 30] [--years 10] [--out bench/results/startup.json]

Measured in one run, as ratios against ``python -c pass`` (the same interpreter and
environment; these machines are shared and noisy, so only same-run ratios mean anything):

- ``python -c "import gitmem.front.cli"``: the import floor of every command;
- a lexical ``gitmem recall`` on the fixture workspace, end to end (target <= 2x);
- a no-op ``gitmem index`` on the fixture workspace (target <= 1.5x);
- ``gitmem index`` after a one-file commit on the N-year synthetic workspace, alone and, commit
  by commit in turn, through a warm process (``gitmem serve``; target p50 <= 120 ms, absolute,
  issue 21);
- a lexical recall on the N-year workspace: clean, with an uncommitted edit already layered
  (the steady state of a session), and right after editing a file (the layer is rebuilt).

Also prints the ten slowest imports of the recall path (``python -X importtime``). Standard
library only; prints a Markdown table and writes JSON.
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

from bench import bench_history as hist  # noqa: E402
from bench import bench_lexical as lex  # noqa: E402

QUERY = "gateway host"


Samples = tuple[list[float], list[float]]  # (wall seconds, CPU seconds) per run


def timed(argv: list[str], rounds: int, env: dict[str, str]) -> Samples:
    """Wall and CPU seconds of ``rounds`` runs (after one warm-up run that fills the page
    cache). CPU time (user + system, git children included) is what a busy machine disturbs
    least, so ratios are also given on it."""
    lex.run_child(argv, env=env)
    wall: list[float] = []
    cpu: list[float] = []
    for _ in range(rounds):
        run = lex.run_child(argv, env=env)
        if run.returncode:
            raise SystemExit(f"{' '.join(argv)} failed: {lex.tail(run.stderr)}")
        wall.append(run.seconds)
        cpu.append(run.cpu_seconds)
    return wall, cpu


def slowest_imports(argv: list[str], env: dict[str, str], n: int = 10) -> list[dict[str, Any]]:
    proc = subprocess.run([sys.executable, "-X", "importtime", *argv], capture_output=True,
                          text=True, env=env, check=False)
    rows: list[tuple[int, str]] = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            self_us, _, name = line.split("|", 2)
            try:
                rows.append((int(self_us.split(":")[-1].strip()), name.strip()))
            except ValueError:
                continue
    rows.sort(reverse=True)
    return [{"module": name, "self_ms": round(us / 1000, 1)} for us, name in rows[:n]]


def start_server(ws: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``gitmem serve`` for ``ws``, once it listens (it says so on stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(ws), "serve",
                             "--idle-timeout", "600"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith(b"gitmem: serving "):
            return proc
    raise SystemExit(f"gitmem serve did not start (exit {proc.wait()})")


def served_count(ws: Path, env: dict[str, str]) -> int:
    code = ("import json, sys; from gitmem.front.warm import client; "
            "print(json.dumps(client.request(sys.argv[1], 'ping')))")
    out = subprocess.run([sys.executable, "-c", code, str(ws.resolve())], env=env,
                         capture_output=True, text=True, check=True).stdout
    return int((json.loads(out) or {}).get("served", -1))


def bench(rounds: int, years: int, cache: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("GITMEM_EMBED_PROVIDER", None)
    env["GITMEM_WARM_AUTOSTART"] = "false"  # cold commands: no warm process answers them
    # Measure what an installed copy does: pip writes bytecode at install time, so compile it
    # here (a shell with PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module).
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gitmem")], check=True,
                   env=env)
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-startup-"))
    env["XDG_CONFIG_HOME"] = str(scratch / "config")  # no user config leaks in
    py = sys.executable
    gm = [py, "-m", "gitmem"]
    try:
        fixture = scratch / "fixture"
        subprocess.run([py, str(ROOT / "fixtures" / "build_fixture.py"), str(fixture)],
                       check=True, capture_output=True, env=env)
        lex.run_child([*gm, "-C", str(fixture), "index"], env=env)
        samples = {
            "python -c pass": timed([py, "-c", "pass"], rounds, env),
            "import gitmem.front.cli": timed([py, "-c", "import gitmem.front.cli"], rounds, env),
            "recall (lexical, fixture)": timed(
                [*gm, "-C", str(fixture), "recall", QUERY, "--mode", "lexical"], rounds, env),
            "index, nothing new (fixture)": timed([*gm, "-C", str(fixture), "index"], rounds,
                                                  env),
        }
        src, info = lex.workspace(years, 0, cache)
        ws = scratch / "ws"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
        for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
            hist.git(ws, "config", key, value)
        lex.run_child([*gm, "-C", str(ws), "index", "--no-embed"], env=env)
        # alone (GITMEM_WARM=0) and through a warm process, commit by commit in turn
        incremental: Samples = ([], [])
        warm_index: Samples = ([], [])
        cold_env = {**env, "GITMEM_WARM": "0"}
        server = start_server(ws, env)
        try:
            for n in range(rounds):
                for mode_env, into in ((cold_env, incremental), (env, warm_index)):
                    hist.commit_one(ws, 2 * n + (mode_env is env), env)
                    run = lex.run_child([*gm, "-C", str(ws), "index", "--no-embed"],
                                        env=mode_env)
                    if run.returncode:
                        raise SystemExit(f"incremental index failed: {lex.tail(run.stderr)}")
                    into[0].append(run.seconds)
                    into[1].append(run.cpu_seconds)
            served = served_count(ws, env)
        finally:
            server.kill()
            server.communicate()
        if served != rounds:
            raise SystemExit(f"the warm process answered {served} of {rounds} index commands")
        samples[f"index after a one-file commit ({years} y, {info['days']} commits)"] = \
            incremental
        samples[f"index after a one-file commit, through the warm process ({years} y; CPU: "
                "the client's)"] = warm_index
        recall_ws = [*gm, "-C", str(ws), "recall", QUERY, "--mode", "lexical"]
        samples[f"recall (lexical, {years} y)"] = timed(recall_ws, rounds, env)
        note = sorted((ws / "memory").glob("????-??-??.md"))[-1]
        with note.open("a", encoding="utf-8") as fh:
            fh.write("- W @bench: an uncommitted line.\n")
        samples[f"recall, one uncommitted file layered ({years} y)"] = timed(recall_ws, rounds,
                                                                            env)
        edited: Samples = ([], [])
        for n in range(rounds):
            with note.open("a", encoding="utf-8") as fh:
                fh.write(f"- W @bench: uncommitted line {n}.\n")
            run = lex.run_child(recall_ws, env=env)
            edited[0].append(run.seconds)
            edited[1].append(run.cpu_seconds)
        samples[f"recall right after an uncommitted edit ({years} y)"] = edited
        imports = slowest_imports(["-m", "gitmem", "-C", str(fixture), "recall", QUERY,
                                   "--mode", "lexical"], env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    base_wall, base_cpu = (lex.pct(xs, 50) for xs in samples["python -c pass"])
    rows = [{"what": what, **lex.summary_ms(wall), "ratio": round(lex.pct(wall, 50) / base_wall, 2),
             "cpu_p50_ms": round(lex.pct(cpu, 50) * 1000, 2),
             "cpu_ratio": round(lex.pct(cpu, 50) / base_cpu, 2)}
            for what, (wall, cpu) in samples.items()]
    return {"rounds": rounds, "years": years, "python": sys.version.split()[0], "rows": rows,
            "slowest_imports": imports}


TARGETS = {
    "recall (lexical, fixture)": "<= 2x",
    "index, nothing new (fixture)": "<= 1.5x",
}


def markdown(result: dict[str, Any]) -> str:
    lines = ["| what | wall p50 ms | wall p95 ms | wall × `python -c pass` | CPU p50 ms | "
             "CPU × `python -c pass` | target |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in result["rows"]:
        target = TARGETS.get(row["what"], "p50 <= 120 ms" if "one-file" in row["what"] else "")
        lines.append(f"| {row['what']} | {row['p50_ms']:.0f} | {row['p95_ms']:.0f} | "
                     f"{row['ratio']:.2f} | {row['cpu_p50_ms']:.0f} | {row['cpu_ratio']:.2f} | "
                     f"{target} |")
    lines.append("")
    lines.append("Slowest imports of `gitmem recall` (self time): " + ", ".join(
        f"`{i['module']}` {i['self_ms']} ms" for i in result["slowest_imports"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--years", type=int, default=10)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitmem-bench")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "startup.json")
    args = parser.parse_args(argv)
    result = bench(args.rounds, args.years, args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
