"""Reflect benchmark: ``gitmem reflect`` over the last 7 days and over a whole year of the
10-year synthetic workspace.

    python bench/bench_reflect.py [--years 10] [--repeat 3] [--out bench/results/reflect.json]

The cached synthetic workspace (``testing/synth.py``, one commit per day, ending 2026-11-29) is
cloned into a scratch folder and indexed (not timed: under cron the hooks have done it). The
generator writes ``bank/opinions.md`` with the evidence already applied, so each window starts
from the generated HEAD plus one commit that puts back the opinions file as it stood when the
window opened (reflect has not run since). Then, ``--repeat`` times from that state:

- ``gitmem reflect --since START --commit --json`` as a real process: wall clock and the
  process's CPU time (start-up, the lock, reading the window's facts, matching, writing; the
  ``git commit`` child's CPU is not in it);
- ``gitmem index``: the re-index of reflect's commit that the post-commit hook does;
- the same command again: nothing changes (idempotence), and how long finding that out takes.

Reported: facts read, files touched, opinions moved (updated / created / capped), entity pages
written, proposed MEMORY.md edits. Standard library only; prints a Markdown table, writes JSON.

    python bench/bench_reflect.py --reviewer [--model E5.gguf]
        [--out bench/results/reflect_reviewer.json]

The reviewer table (issue 18): what a person reviewing reflect's pull request gets, on the 1-year
synthetic workspace (one run over the year, ``bank/opinions.md`` as it stood when the year
began) and on ten days of a new user's notes (``testing/newuser.py``), with the shipped pruning
settings and without them (``min_facts = 1``, ``evidence_shown = 1000``): entity pages created,
opinions created / updated / dormant, evidence lines per opinion (median, max), and recall@3 of
a question set before and after reflect's commit (after must not be lower: generated text must
not push the notes out). Questions: the ten days' own (``newuser.QUESTIONS``); on the synthetic
year, 30 facts spread over it, each asked as its subject and its first words. Runs gitmem in
this process (lexical recall), so only the figures, not the times, matter here.

Then opinion identity (issue 39, ``bench/bench_opinions.py``): the opinion threads of
``bench/opinions_data.py`` (tuning) and ``bench/opinions_heldout.py`` (held out) scored as pairs,
merged-correctly precision and recall, lexical and (``--model``) with a local embedding model.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench import bench_lexical as lex  # noqa: E402

TARGETS = {"7 days": 2.0, "1 year": 20.0}


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(ws), *args], check=True, capture_output=True,
                          text=True).stdout


@dataclass(frozen=True)
class Timed:
    wall: float
    cpu: float  # user + system of the process itself
    stdout: bytes


def timed(argv: list[str], env: dict[str, str]) -> Timed:
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status):
            err = proc.stderr.read() if proc.stderr else b""
            raise SystemExit(f"{' '.join(argv)} failed: {lex.tail(err)}")
        out.seek(0)
        return Timed(wall, usage.ru_utime + usage.ru_stime, out.read())


def reflect_once(cmd: list[str], ws: Path, since: str, env: dict[str, str]
                 ) -> tuple[Timed, dict[str, Any]]:
    run = timed([*cmd, "-C", str(ws), "reflect", "--since", since, "--commit", "--json"], env)
    data: dict[str, Any] = json.loads(run.stdout)
    return run, data


def start_state(cmd: list[str], ws: Path, head: str, since: str, env: dict[str, str]) -> None:
    """HEAD, plus a commit putting back bank/opinions.md as it was when the window opened."""
    git(ws, "reset", "-q", "--hard", head)
    git(ws, "clean", "-qfd")
    before = git(ws, "rev-list", "-1", f"--before={since}T00:00:00Z", head).strip()
    old = subprocess.run(["git", "-C", str(ws), "show", f"{before}:bank/opinions.md"],
                         check=True, capture_output=True).stdout
    (ws / "bank" / "opinions.md").write_bytes(old)
    git(ws, "commit", "-q", "-am", f"bench: bank/opinions.md as of {since}",
        f"--date={since}T00:00:00Z")
    lex.run_child([*cmd, "-C", str(ws), "index"], env=env)


def median(values: list[float]) -> float:
    return round(statistics.median(values), 2)


def window_row(cmd: list[str], ws: Path, head: str, label: str, since: str,
               env: dict[str, str], repeat: int) -> dict[str, Any]:
    firsts: list[Timed] = []
    reindexes: list[Timed] = []
    agains: list[Timed] = []
    for _ in range(repeat):
        start_state(cmd, ws, head, since, env)
        run, first = reflect_once(cmd, ws, since, env)
        firsts.append(run)
        reindexes.append(timed([*cmd, "-C", str(ws), "index"], env))  # the hook's job
        run, again = reflect_once(cmd, ws, since, env)
        agains.append(run)
    ops = first["opinions"]
    return {
        "window": label,
        "since": since,
        "seconds": median([r.wall for r in firsts]),
        "cpu_s": median([r.cpu for r in firsts]),
        "samples_s": [round(r.wall, 2) for r in firsts],
        "target_s": TARGETS.get(label),
        "facts_read": first["facts_read"],
        "files_touched": len(first["files"]),
        "opinions_updated": sum(not o["created"] for o in ops),
        "opinions_created": sum(o["created"] for o in ops),
        "opinions_capped": sum(o["capped"] for o in ops),
        "largest_move": round(max((abs(o["after"] - o["before"]) for o in ops
                                   if not o["created"]), default=0.0), 2),
        "entity_pages": len(first["entity_pages"]),
        "pages_created": sum(p["created"] for p in first["entity_pages"]),
        "proposals": len(first["proposals"]),
        "committed": bool(first["commit"]),
        "reindex_s": median([r.wall for r in reindexes]),
        "second_run_s": median([r.wall for r in agains]),
        "second_run_cpu_s": median([r.cpu for r in agains]),
        "second_run_changed": again["changed"],
        "second_run_facts_read": again["facts_read"],
    }


def bench_years(years: int, cmd: list[str], cache: Path, env: dict[str, str],
                repeat: int) -> dict[str, Any]:
    src, info = lex.workspace(years, 0, cache)
    scratch = Path(tempfile.mkdtemp(prefix=f"gitmem-reflect-{years}y-"))
    ws = scratch / "ws"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(ws)], check=True)
    for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
        git(ws, "config", key, value)
    head = git(ws, "rev-parse", "HEAD").strip()
    end = date.fromisoformat(info["end"])
    out: dict[str, Any] = {"years": years, "commits": info["days"], "end": info["end"]}
    try:
        index = lex.run_child([*cmd, "-C", str(ws), "index"], env=env)
        if index.returncode:
            raise SystemExit(f"index failed: {lex.tail(index.stderr)}")
        out["index_s"] = round(index.seconds, 2)
        windows = {"7 days": end - timedelta(days=6), "1 year": end - timedelta(days=364)}
        out["rows"] = [window_row(cmd, ws, head, label, first.isoformat(), env, repeat)
                       for label, first in windows.items()]
        out["load_average"] = os.getloadavg()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| window | facts read | reflect s, wall (CPU) | files touched | opinions updated / "
        "created (capped) | largest move | entity pages (new) | MEMORY.md proposals | "
        "re-index of its commit s | second run s, changed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['window']} (since {r['since']}) | {r['facts_read']} | {r['seconds']} "
            f"({r['cpu_s']}) | {r['files_touched']} | {r['opinions_updated']} / "
            f"{r['opinions_created']} ({r['opinions_capped']}) | {r['largest_move']:.2f} | "
            f"{r['entity_pages']} ({r['pages_created']}) | {r['proposals']} | "
            f"{r['reindex_s']} | {r['second_run_s']} ({r['second_run_cpu_s']}), "
            f"{'yes' if r['second_run_changed'] else 'no'} |")
    return "\n".join(lines)


# -- the reviewer table (issue 18) --------------------------------------------------------------

PRUNING_OFF = {"GITMEM_REFLECT_MIN_FACTS": "1", "GITMEM_REFLECT_EVIDENCE_SHOWN": "1000"}
SYNTH_QUESTIONS = 30
_WORD = re.compile(r"[^\W_][\w'-]*")


def cli(ws: Path, *args: str) -> Any:
    """``gitmem -C ws ARGS --json`` in this process; its JSON."""
    from testing.cli import gitmem

    code, out, err = gitmem("-C", str(ws), *args, "--json")
    if code:
        raise SystemExit(f"gitmem {' '.join(args)} failed ({code}): {err.strip()}")
    return json.loads(out)


def recall_at_3(ws: Path, questions: Sequence[tuple[str, str]]) -> float:
    """The share of questions with a result from the expected file among the first three."""
    hits = 0
    for query, expected in questions:
        results = cli(ws, "recall", query, "--k", "3")["results"]
        hits += any(r["path"] == expected for r in results[:3])
    return round(hits / len(questions), 3)


def synthetic_questions(ws: Path, since: str) -> list[tuple[str, str]]:
    """Facts spread over the window (world and experience entries with a subject), each asked
    as its subject's name and its first six words, answered by its daily note."""
    from gitmem.index.reflect_queries import facts_recorded
    from gitmem.index.store import open_store

    store = open_store(ws / ".memory" / "index.sqlite", readonly=True)
    try:
        facts = [f for f in facts_recorded(store, since) if f.kind in ("world", "experience")
                 and f.path.startswith("memory/") and any(r == "subject" for *_, r in f.entities)]
    finally:
        store.close()
    step = max(1, len(facts) // SYNTH_QUESTIONS)
    out = []
    for f in facts[::step][:SYNTH_QUESTIONS]:
        subject = next(name for _, name, role in f.entities if role == "subject")
        words = _WORD.findall(f.text.replace("@", " "))[:6]
        out.append((f"{subject} {' '.join(words)}", f.path))
    return out


def evidence_lines(ws: Path) -> list[int]:
    """Evidence lines per opinion of bank/opinions.md (listed entries plus a folded line)."""
    from gitmem.reflect.opinionfile import read_opinions

    path = ws / "bank" / "opinions.md"
    doc = read_opinions(path.read_bytes() if path.exists() else None)
    return [len(s.evidence_lines) + (s.folded_line is not None) for s in doc.sections]


@contextlib.contextmanager
def settings(extra: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def reviewer_row(label: str, ready: Path, since: str, questions: list[tuple[str, str]],
                 now: datetime, pruning: bool) -> dict[str, Any]:
    """One reflect --commit on a private copy of ``ready`` (indexed), and what it gives a
    reviewer."""
    from gitmem.reflect.reflect import reflect
    from gitmem.workspace import open_workspace

    ws = ready.parent / f"{ready.name}-{'pruned' if pruning else 'all'}"
    shutil.copytree(ready, ws, symlinks=True)
    with settings({} if pruning else PRUNING_OFF):
        before = recall_at_3(ws, questions)
        opened, cfg = open_workspace(ws)
        report = reflect(opened, cfg, since=since, commit=True, now=now)
        cli(ws, "index")
        after = recall_at_3(ws, questions)
    lines = evidence_lines(ws)
    return {
        "workspace": label, "pruning": pruning, "since": since,
        "facts_read": report.facts_read,
        "pages_created": sum(p.created for p in report.pages),
        "pages_updated": sum(not p.created for p in report.pages),
        "below_min_facts": len(report.sparse),
        "opinions_created": sum(o.created for o in report.opinions),
        "opinions_updated": sum(not o.created for o in report.opinions),
        "opinions_dormant": len(report.dormant),
        "opinions_in_file": len(lines),
        "evidence_lines_median": statistics.median(lines) if lines else 0,
        "evidence_lines_max": max(lines, default=0),
        "questions": len(questions),
        "recall_at_3_before": before,
        "recall_at_3_after": after,
    }


def bench_reviewer(cache: Path) -> dict[str, Any]:
    from testing import newuser

    env = {"GITMEM_EMBED_PROVIDER": "none"}
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-reflect-reviewer-"))
    rows: list[dict[str, Any]] = []
    try:
        with settings(env):
            ten = newuser.build(scratch, "ten-days")
            cli(ten, "index")
            for pruning in (False, True):
                rows.append(reviewer_row("ten days of a new user's notes", ten, "2026-11-01",
                                         list(newuser.QUESTIONS), datetime(2026, 12, 1,
                                                                           tzinfo=UTC), pruning))
            src, info = lex.workspace(1, 0, cache)
            year = scratch / "year"
            subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(year)],
                           check=True)
            for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
                git(year, "config", key, value)
            start = info["start"]
            root = git(year, "rev-list", "--max-parents=0", "HEAD").strip()
            (year / "bank" / "opinions.md").write_bytes(subprocess.run(
                ["git", "-C", str(year), "show", f"{root}:bank/opinions.md"], check=True,
                capture_output=True).stdout)  # as the year began: no evidence applied yet
            git(year, "commit", "-q", "-am", "bench: bank/opinions.md as the year began",
                f"--date={info['end']}T23:00:00Z")
            cli(year, "index")
            questions = synthetic_questions(year, start)
            end = datetime.fromisoformat(info["end"]).replace(tzinfo=UTC) + timedelta(days=1)
            for pruning in (False, True):
                rows.append(reviewer_row("1-year synthetic workspace", year, start, questions,
                                         end, pruning))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return {"rows": rows, "load_average": os.getloadavg()}


def reviewer_markdown(result: dict[str, Any]) -> str:
    lines = [
        "| workspace | pruning | facts read | entity pages created (updated; left without, "
        "under min_facts) | opinions created / updated / dormant | opinions in the file | "
        "evidence lines per opinion, median (max) | recall@3 before → after reflect |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['workspace']} | {'shipped settings' if r['pruning'] else 'off'} | "
            f"{r['facts_read']} | {r['pages_created']} ({r['pages_updated']}; "
            f"{r['below_min_facts']}) | {r['opinions_created']} / {r['opinions_updated']} / "
            f"{r['opinions_dormant']} | {r['opinions_in_file']} | "
            f"{r['evidence_lines_median']:g} ({r['evidence_lines_max']}) | "
            f"{r['recall_at_3_before']:.2f} → {r['recall_at_3_after']:.2f} "
            f"({r['questions']} questions) |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--years", type=int, default=10)
    ap.add_argument("--gitmem", default="python -m gitmem")
    ap.add_argument("--cache-dir", type=Path, default=lex.DEFAULT_CACHE)
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "reflect.json")
    ap.add_argument("--repeat", type=int, default=3, help="runs per window (median)")
    ap.add_argument("--reviewer", action="store_true",
                    help="only the reviewer table: what reflect's pull request holds")
    ap.add_argument("--model", help="--reviewer: opinion identity with this local GGUF model "
                                    "too (multilingual e5-small)")
    args = ap.parse_args(argv)
    if args.reviewer:
        from bench import bench_opinions

        found = bench_reviewer(args.cache_dir)
        print(reviewer_markdown(found))
        # issue 39: one belief, one opinion (bench/bench_opinions.py: its sets and scoring)
        found["opinion_identity"] = [bench_opinions.bench("all", None)]
        if args.model:
            found["opinion_identity"].append(bench_opinions.bench("all", args.model))
        for identity in found["opinion_identity"]:
            print()
            print(bench_opinions.markdown(identity))
        print(f"load average at the end: {found['load_average']}")
        out = (args.out if args.out != BENCH_DIR / "results" / "reflect.json"
               else BENCH_DIR / "results" / "reflect_reviewer.json")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(found, indent=2), encoding="utf-8")
        return 0
    cmd = lex.resolve_gitmem(args.gitmem)
    env = {**os.environ, "GITMEM_EMBED_PROVIDER": "none"}
    result = bench_years(args.years, cmd, args.cache_dir, env, args.repeat)
    print(f"{result['years']} years, {result['commits']} commits, ending {result['end']}; "
          f"index {result['index_s']} s (not timed below)")
    print(markdown(result))
    print(f"load average at the end: {result['load_average']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
