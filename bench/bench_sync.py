"""Memory on several machines (issue 20): the merge driver's process and ``gitmem sync``.

    python bench/bench_sync.py [--rounds 30] [--sync-rounds 5] [--years 10]
                               [--out bench/results/sync.json]

1. The merge driver as git runs it (``sh -c`` on the registered ``merge.gitmem.driver``) on a
   500-line daily note, 20 lines appended on each side (and a variant with one line edited in
   the middle on each side, which takes the ``difflib`` path), interleaved round by round with
   ``python -c pass``, ``python -S -c pass``, ``sh -c 'python -c pass'``, the driver's earlier
   form (``python -m gitmem merge-file``, with ``site``) and the console script (``gitmem
   merge-file``). The machine is shared and loaded, so the same-run differences and ratios are
   the figures to read (target: the driver <= 50 ms).
2. ``gitmem sync --json`` of one day's changes on each side, on the N-year synthetic workspace
   (``testing/synth.py``) with two clones of a local bare remote: five commits on each machine
   appending to the same day's note, then the first machine syncs (push), the second (fetch,
   merge through the driver, re-index, push), the first again (fast-forward, re-index). A new
   day each round (target <= 2 s each).

Prints a Markdown table (with the load average before and after) and writes JSON.
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
from gitmem.merge.registration import driver_command, register  # noqa: E402

DAY = "memory/2026-11-30.md"
Samples = tuple[list[float], list[float]]  # (wall seconds, CPU seconds) per run


def _note_files(folder: Path, *, edited: bool) -> dict[str, Path]:
    """Ancestor and two sides of a 500-line daily note; 20 lines appended on each side."""
    body = [f"- W @Peter: line {i} of the day, about the gateway and the backups."
            for i in range(480)]
    base = "\n".join(["# 2026-11-30", "", *body, "", "## Retain"]) + "\n"
    sides = {}
    for side in ("a", "b"):
        text = base + "".join(f"- B @Peter: {side} added entry {i}.\n" for i in range(20))
        if edited:  # a different line on each side: still a clean merge
            line = "line 100 of" if side == "a" else "line 300 of"
            text = text.replace(line, f"{line} ({side} edited)", 1)
        sides[side] = text
    paths = {name: folder / name for name in ("o", "a0", "b")}
    paths["o"].write_text(base, encoding="utf-8")
    paths["a0"].write_text(sides["a"], encoding="utf-8")
    paths["b"].write_text(sides["b"], encoding="utf-8")
    return paths


def _driver_argv(command: str, files: dict[str, Path], ours: Path) -> list[str]:
    for mark, value in (("%O", files["o"]), ("%A", ours), ("%B", files["b"]), ("%P", DAY)):
        command = command.replace(mark, str(value))
    return ["sh", "-c", command]


def driver_bench(rounds: int, scratch: Path, env: dict[str, str]) -> dict[str, Samples]:
    py = sys.executable
    script = Path(py).with_name("gitmem")
    cases: dict[str, tuple[list[str], dict[str, Path] | None]] = {}
    for edited in (False, True):
        folder = scratch / ("edited" if edited else "appended")
        folder.mkdir()
        files = _note_files(folder, edited=edited)
        what = "one line edited on each side" if edited else "appends on both sides"
        cases[f"driver as registered ({what})"] = (
            _driver_argv(driver_command(py), files, folder / "a"), files)
        if not edited:
            plain = [str(files["o"]), str(folder / "a"), str(files["b"]), DAY]
            cases["python -m gitmem merge-file (site, the earlier form)"] = (
                [py, "-m", "gitmem", "merge-file", *plain], files)
            if script.exists():
                cases["gitmem merge-file (the console script)"] = (
                    [str(script), "merge-file", *plain], files)
    order: dict[str, tuple[list[str], dict[str, Path] | None]] = {
        "python -c pass": ([py, "-c", "pass"], None),
        "python -S -c pass": ([py, "-S", "-c", "pass"], None),
        "sh -c 'python -c pass'": (["sh", "-c", f"{py} -c pass"], None),
        **cases,
    }
    samples: dict[str, Samples] = {what: ([], []) for what in order}
    for n in range(rounds + 1):  # the first round warms the page cache
        for what, (argv, inputs) in order.items():
            if inputs is not None:  # ours again as it was: the driver overwrites it
                shutil.copyfile(inputs["a0"], inputs["o"].parent / "a")
            run = lex.run_child(argv, env=env)
            if run.returncode not in (0, 1):
                raise SystemExit(f"{what} failed: {lex.tail(run.stderr)}")
            if n:
                samples[what][0].append(run.seconds)
                samples[what][1].append(run.cpu_seconds)
    return samples


def _git(repo: Path, *args: str, env: dict[str, str]) -> str:
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                          env=env, check=False)
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def _day_of_work(clone: Path, side: str, day: str, env: dict[str, str]) -> None:
    """Five commits appending to the day's note, as a machine's agent does over a day."""
    note = clone / f"memory/{day}.md"
    for n in range(5):
        with note.open("a", encoding="utf-8") as fh:
            fh.write(f"- B @Peter: {side} did thing {n} on {day}.\n")
        _git(clone, "commit", "-q", "-am", f"{side} {day} {n}", env=env)


def sync_bench(rounds: int, years: int, cache: Path, scratch: Path, env: dict[str, str]
               ) -> tuple[dict[str, Samples], dict[str, Any]]:
    src, info = lex.workspace(years, 0, cache)
    bare = scratch / "remote.git"
    _git(scratch, "clone", "-q", "--bare", "--no-hardlinks", str(src), str(bare), env=env)
    gm = [sys.executable, "-m", "gitmem"]
    clones = [scratch / name for name in ("laptop", "server")]
    for n, clone in enumerate(clones):
        _git(scratch, "clone", "-q", str(bare), str(clone), env=env)
        for key, value in (("user.name", clone.name), ("user.email", "bench@example.invalid")):
            _git(clone, "config", key, value, env=env)
        register(clone, "")
        if n == 0:
            _git(clone, "add", ".gitattributes", env=env)
            _git(clone, "commit", "-q", "-m", "merge memory with gitmem", env=env)
            _git(clone, "push", "-q", "origin", "HEAD", env=env)
        else:
            _git(clone, "pull", "-q", "--ff-only", env=env)
        lex.run_child([*gm, "-C", str(clone), "index", "--no-embed"], env=env)
    steps = ("first machine (push only)", "second machine (fetch, merge, re-index, push)",
             "first machine again (fast-forward, re-index)")
    samples: dict[str, Samples] = {s: ([], []) for s in steps}
    laptop, server = clones
    for n in range(rounds):
        day = f"2027-01-{n + 1:02d}"
        (laptop / "memory" / f"{day}.md").write_text(f"# {day}\n\n## Retain\n", encoding="utf-8")
        _git(laptop, "add", "-A", env=env)
        _git(laptop, "commit", "-q", "-m", f"{day}: the note", env=env)
        for clone in (laptop, server, laptop):  # both start the day from the same history
            lex.run_child([*gm, "-C", str(clone), "sync", "--json"], env=env)
        _day_of_work(laptop, "laptop", day, env)
        _day_of_work(server, "server", day, env)
        for step, clone in zip(steps, (laptop, server, laptop), strict=True):
            run = lex.run_child([*gm, "-C", str(clone), "sync", "--json"], env=env)
            if run.returncode:
                raise SystemExit(f"sync failed: {lex.tail(run.stderr)}")
            samples[step][0].append(run.seconds)
            samples[step][1].append(run.cpu_seconds)
        trees = {_git(c, "rev-parse", "HEAD^{tree}", env=env) for c in clones}
        if len(trees) != 1:
            raise SystemExit(f"round {n}: the clones differ after syncing")
        merged = (laptop / "memory" / f"{day}.md").read_text(encoding="utf-8")
        if "<<<<<<<" in merged or merged.count("did thing") != 10:
            raise SystemExit(f"round {n}: the day's note did not merge cleanly")
    return samples, {"days": info["days"], "workspace": str(src)}


def _row(what: str, wall: list[float], cpu: list[float], base: tuple[float, float]
         ) -> dict[str, Any]:
    return {"what": what, **lex.summary_ms(wall),
            "minus_pass_ms": round((lex.pct(wall, 50) - base[0]) * 1000, 1),
            "ratio": round(lex.pct(wall, 50) / base[0], 2),
            "cpu_p50_ms": round(lex.pct(cpu, 50) * 1000, 1),
            "cpu_ratio": round(lex.pct(cpu, 50) / base[1], 2)}


def bench(rounds: int, sync_rounds: int, years: int, cache: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: bytecode written once
    env.pop("PYTHONPATH", None)  # the driver command sets its own
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gitmem")], check=True,
                   env=env)
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-sync-bench-"))
    env["XDG_CONFIG_HOME"] = str(scratch / "config")
    load_before = os.getloadavg()
    try:
        driver = driver_bench(rounds, scratch, env)
        syncs, info = sync_bench(sync_rounds, years, cache, scratch, env) if sync_rounds else (
            {}, {})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    wall, cpu = driver["python -c pass"]
    base = (lex.pct(wall, 50), lex.pct(cpu, 50))
    return {"rounds": rounds, "sync_rounds": sync_rounds, "years": years,
            "python": sys.version.split()[0], "loadavg_before": [round(x, 1) for x in load_before],
            "loadavg_after": [round(x, 1) for x in os.getloadavg()], "workspace": info,
            "driver": [_row(w, s[0], s[1], base) for w, s in driver.items()],
            "sync": [_row(w, s[0], s[1], base) for w, s in syncs.items()]}


def markdown(result: dict[str, Any]) -> str:
    load = (f"load average {result['loadavg_before'][0]} before, {result['loadavg_after'][0]} "
            "after (1 min)")
    lines = [f"Merge driver, {result['rounds']} rounds interleaved; {load}.", "",
             "| process | wall p50 ms | wall p95 ms | p50 − `python -c pass` ms | × `python -c "
             "pass` | CPU p50 ms |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r['what']} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} | {r['minus_pass_ms']:+.0f} "
              f"| {r['ratio']:.2f} | {r['cpu_p50_ms']:.0f} |" for r in result["driver"]]
    if result["sync"]:
        lines += ["", f"`gitmem sync --json`, one day's changes on each side, "
                  f"{result['years']}-year workspace ({result['workspace']['days']} daily "
                  f"commits), local bare remote, {result['sync_rounds']} days:", "",
                  "| step | wall p50 ms | wall p95 ms | CPU p50 ms |",
                  "| --- | ---: | ---: | ---: |"]
        lines += [f"| {r['what']} | {r['p50_ms']:.0f} | {r['p95_ms']:.0f} | "
                  f"{r['cpu_p50_ms']:.0f} |" for r in result["sync"]]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--sync-rounds", type=int, default=5)
    parser.add_argument("--years", type=int, default=10)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitmem-bench")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "sync.json")
    args = parser.parse_args(argv)
    result = bench(args.rounds, args.sync_rounds, args.years, args.cache)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
