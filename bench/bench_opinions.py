"""Opinion identity (issue 39): does ``gitmem reflect`` keep one belief as one opinion?

    python bench/bench_opinions.py [--set tuning|heldout|all] [--model PATH.gguf] [--misses]
        [--json OUT]

Each thread of ``bench/opinions_data.py`` (tuning) or ``bench/opinions_heldout.py`` (held out:
run, never read by the rule's authors) is written as ``O`` entries in daily notes of a real git
repository, one repository per set and language, the threads' entries interleaved two days
apart (one commit per day at 21:00 UTC). The repository is indexed, ``reflect`` runs once over
the whole window (in this process, the library the CLI calls) and ``bank/opinions.md`` is read
back: which opinion lists each entry, and with which stance.

Scored as pairs, within each thread (a thread is one subject): a pair of entries is *merged*
when one opinion lists both; *merged correctly* when they state the same belief and the opinion
lists each with its expected stance (``for`` / ``against``). Precision: merged correctly /
merged; recall: merged correctly / pairs of the same belief. Also: headings per belief (the
opinions a belief's entries went to) and the entries reflect reported as "possibly the same as".

``--workspaces``: the reviewer's view instead, on ten days of a new user's notes
(``testing/newuser.py``, one reflect over the ten days) and on the one-year synthetic workspace
(``testing/synth.py``, one reflect over the year from ``bank/opinions.md`` as the year began): O
entries applied, opinions in the file, opinions per subject (mean, max), headings per belief
(the opinions one belief's entries went to; beliefs known: the new user's four, the synthetic
year's tracked opinions, whose entries repeat their statement), and the file a reviewer reads.
``--code DIR`` runs another gitmem (a ``git archive`` of an older commit's ``gitmem/``) for the
"before" column.

``--model``: the statements are also compared by a local embedding model (multilingual e5-small:
``python -m gitmem.embed.convert_e5 OUT.gguf``), as ``reflect`` does when ``[embed]`` names a
local model. Standard library only besides gitmem; prints Markdown, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from itertools import combinations
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

START = date(2026, 9, 1)
GAP_DAYS = 2


def sets(name: str) -> dict[str, list[dict[str, Any]]]:
    from bench import opinions_data, opinions_heldout

    found = {"tuning": opinions_data.THREADS, "heldout": opinions_heldout.THREADS}
    return found if name == "all" else {name: found[name]}


def _entry_line(e: dict[str, Any], subject: str) -> str:
    c = "" if e["c"] is None else f"(c={e['c']})"
    return f"- O{c} @{subject}: {e['text']}"


def write_workspace(parent: Path, name: str, threads: list[dict[str, Any]]
                    ) -> tuple[Path, dict[str, tuple[str, int]], str]:
    """The repository; where each entry is (``thread#n`` -> (path, line)); the last day."""
    from testing.repo import commit_all, make_repo, write

    repo = make_repo(parent, name)
    days: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for t in threads:
        for n, e in enumerate(t["entries"]):
            day = (START + timedelta(days=GAP_DAYS * n)).isoformat()
            days[day].append((f"{t['id']}#{n}", _entry_line(e, t["subject"])))
    where: dict[str, tuple[str, int]] = {}
    for day in sorted(days):
        lines = [f"# {day}", "", "## Retain"]
        for key, line in days[day]:
            lines.append(line)
            where[key] = (f"memory/{day}.md", len(lines))
        write(repo, f"memory/{day}.md", "\n".join(lines) + "\n")
        commit_all(repo, f"memory: {day}", f"{day}T21:00:00+00:00")
    return repo, where, max(days)


def run_reflect(repo: Path, last: str) -> tuple[dict[tuple[str, int], tuple[str, str]], Any]:
    """Index, one reflect over the window; (path, line) -> (opinion id, stance), the report."""
    from gitmem.index.replay import index_workspace
    from gitmem.reflect.opinionfile import read_opinions
    from gitmem.reflect.reflect import reflect
    from gitmem.workspace import open_workspace

    ws, cfg = open_workspace(repo)
    index_workspace(ws, cfg)
    now = datetime.fromisoformat(last).replace(tzinfo=UTC) + timedelta(days=1)
    report = reflect(ws, cfg, since=f"{START.isoformat()}", commit=False, now=now)
    path = repo / "bank" / "opinions.md"
    doc = read_opinions(path.read_bytes() if path.exists() else None)
    listed: dict[tuple[str, int], tuple[str, str]] = {}
    for op in doc.opinions:
        for ev in op.evidence:
            src, _, line = ev.source.partition("#L")
            listed[(src, int(line.split("-")[0]))] = (op.opinion_id, ev.stance)
    return listed, report


def score(threads: list[dict[str, Any]], where: dict[str, tuple[str, int]],
          listed: dict[tuple[str, int], tuple[str, str]]) -> dict[str, Any]:
    merged = correct = same = 0
    misses: list[str] = []
    per_case: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    headings: list[int] = []
    for t in threads:
        got = [listed.get(where[f"{t['id']}#{n}"], ("?", "?")) for n in range(len(t["entries"]))]
        entries = t["entries"]
        for belief in sorted({e["belief"] for e in entries}):
            headings.append(len({got[n][0] for n, e in enumerate(entries)
                                 if e["belief"] == belief}))
        for i, j in combinations(range(len(entries)), 2):
            a, b = entries[i], entries[j]
            truth = a["belief"] == b["belief"]
            pred = got[i][0] == got[j][0] and got[i][0] != "?"
            ok = (truth and pred and got[i][1] == a["stance"] and got[j][1] == b["stance"])
            merged += pred
            correct += ok
            same += truth
            row = per_case[t["case"]]
            row[0] += pred
            row[1] += ok
            row[2] += truth
            if pred != truth or (pred and not ok):
                want = f"same {b['stance']}" if truth else "apart"
                misses.append(f"{t['id']}: [{i}] {a['text']!r} ({got[i][1]}) ~ [{j}] "
                              f"{b['text']!r} ({got[j][1]}): expected {want}, "
                              f"got {'merged' if pred else 'apart'}")
    return {"merged": merged, "correct": correct, "same": same,
            "precision": round(correct / merged, 3) if merged else 1.0,
            "recall": round(correct / same, 3) if same else 1.0,
            "headings_per_belief": round(sum(headings) / len(headings), 3) if headings else 0.0,
            "per_case": {k: {"merged": v[0], "correct": v[1], "same": v[2]}
                         for k, v in sorted(per_case.items())},
            "misses": misses}


def bench(set_name: str, model: str | None, files: Path | None = None) -> dict[str, Any]:
    env = {"GITMEM_EMBED_PROVIDER": "local", "GITMEM_EMBED_MODEL": model,
           "GITMEM_REFLECT_MODEL": "true"} if model else {
        "GITMEM_EMBED_PROVIDER": "none"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-bench-opinions-"))
    out: dict[str, Any] = {"mode": "model" if model else "lexical", "sets": {}}
    try:
        for name, threads in sets(set_name).items():
            by_lang: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for t in threads:
                by_lang[t["lang"]].append(t)
            rows = {}
            total = {"merged": 0, "correct": 0, "same": 0}
            unsure = 0
            misses: list[str] = []
            heads: list[float] = []
            for lang, group in sorted(by_lang.items()):
                repo, where, last = write_workspace(scratch, f"{name}-{lang}", group)
                listed, report = run_reflect(repo, last)
                if files is not None:
                    files.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(repo / "bank" / "opinions.md",
                                    files / f"{name}-{lang}{'-model' if model else ''}.md")
                found = score(group, where, listed)
                found["unsure"] = sum(len(getattr(o, "possibly", ())) for o in report.opinions)
                unsure += found["unsure"]
                misses += found.pop("misses")
                rows[lang] = found
                heads.append(found["headings_per_belief"])
                for k in total:
                    total[k] += found[k]
            rows["all"] = {**total, "unsure": unsure,
                           "precision": round(total["correct"] / total["merged"], 3)
                           if total["merged"] else 1.0,
                           "recall": round(total["correct"] / total["same"], 3)
                           if total["same"] else 1.0,
                           "threads": len(threads)}
            out["sets"][name] = {"rows": rows, "misses": misses}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return out


# The new user's beliefs (testing/newuser.py): words each entry of one belief holds.
NEWUSER_BELIEFS = {"Bob: async updates": "async updates", "Nadia: Rust for ingest":
                   "right choice for the ingest", "Alice: design docs": "design docs",
                   "Bob: on-call handbook": "handbook"}


def _entry_text(ws: Path, source: str) -> str:
    path, _, line = source.partition("#L")
    return (ws / path).read_text(encoding="utf-8").splitlines()[int(line.split("-")[0]) - 1]


def tracked(data: bytes) -> dict[str, str]:
    """The synthetic year's tracked beliefs: the sections of the file as the year began, each
    known by its statement, which its entries repeat ("@Lena prefers async updates" <-
    "- O(c=0.71) @Lena: Prefers async updates.")."""
    from gitmem.reflect.opinionfile import read_opinions

    out = {}
    for op in read_opinions(data).opinions:
        name = op.entities[0] if op.entities else ""
        words = op.statement.removeprefix(f"@{name}").strip()
        out[op.statement] = f"@{name}: {words[:1].upper()}{words[1:]}."
    return out


def view(ws: Path, beliefs: dict[str, str], exact: bool = False) -> dict[str, Any]:
    """What a reviewer reads in ``bank/opinions.md``: counts, and headings per belief (a belief
    is known by words each of its entries holds, or with ``exact`` by the entry's whole text
    after its kind)."""
    from gitmem.reflect.opinionfile import read_opinions

    data = (ws / "bank" / "opinions.md").read_bytes()
    doc = read_opinions(data)
    subjects: dict[str, int] = defaultdict(int)
    for op in doc.opinions:
        subjects[op.entities[0].casefold() if op.entities else "-"] += 1
    homes: dict[str, set[str]] = defaultdict(set)
    applied = 0
    for op in doc.opinions:
        for ev in op.evidence:  # listed ones; folded ones are older entries of the same section
            applied += 1
            text = _entry_text(ws, ev.source)
            for belief, words in beliefs.items():
                if (text.split(" ", 2)[-1] == words) if exact else words in text:
                    homes[belief].add(op.opinion_id)
        applied += len(op.folded.fact_ids) if op.folded else 0
    per = sorted(subjects.values())
    known = {k: len(v) for k, v in homes.items()}
    headings = [op.statement.casefold() for op in doc.opinions]
    return {"entries_applied": applied, "opinions": len(doc.opinions), "subjects": len(per),
            "opinions_per_subject": round(sum(per) / len(per), 2) if per else 0.0,
            "opinions_per_subject_max": max(per, default=0),
            "beliefs": len(known),
            "headings_per_belief": round(sum(known.values()) / len(known), 2) if known else 0.0,
            "headings_per_belief_max": max(known.values(), default=0),
            # one statement word for word under two headings: one belief the rule split
            "same_heading_twice": len(headings) - len(set(headings)),
            "file": data.decode("utf-8", "replace")}


def bench_workspaces(cache: Path) -> dict[str, Any]:
    from bench import bench_lexical as lex
    from gitmem.index.replay import index_workspace
    from gitmem.reflect.reflect import reflect
    from gitmem.workspace import open_workspace
    from testing import newuser
    from testing.repo import git

    os.environ["GITMEM_EMBED_PROVIDER"] = "none"
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-bench-opinion-views-"))
    out: dict[str, Any] = {}
    try:
        ten = newuser.build(scratch, "ten-days")
        ws, cfg = open_workspace(ten)
        index_workspace(ws, cfg)
        reflect(ws, cfg, since="2026-11-01", now=datetime(2026, 12, 1, tzinfo=UTC))
        out["ten days of a new user's notes"] = view(ten, NEWUSER_BELIEFS)
        src, info = lex.workspace(1, 0, cache)
        year = scratch / "year"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(year)], check=True)
        for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
            git(year, "config", key, value)
        root = git(year, "rev-list", "--max-parents=0", "HEAD").strip()
        began = subprocess.run(["git", "-C", str(year), "show", f"{root}:bank/opinions.md"],
                               check=True, capture_output=True).stdout
        (year / "bank" / "opinions.md").write_bytes(began)  # no evidence applied yet
        git(year, "commit", "-q", "-am", "bench: bank/opinions.md as the year began",
            f"--date={info['end']}T23:00:00Z")
        ws, cfg = open_workspace(year)
        index_workspace(ws, cfg)
        end = datetime.fromisoformat(info["end"]).replace(tzinfo=UTC) + timedelta(days=1)
        reflect(ws, cfg, since=info["start"], now=end)
        out["1-year synthetic workspace"] = view(year, tracked(began), exact=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return out


def workspaces_markdown(result: dict[str, Any]) -> str:
    rows = ["| workspace | O entries applied | opinions | subjects | opinions/subject (max) | "
            "beliefs known | headings/belief (max) | a heading twice |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, r in result.items():
        rows.append(f"| {name} | {r['entries_applied']} | {r['opinions']} | {r['subjects']} | "
                    f"{r['opinions_per_subject']} ({r['opinions_per_subject_max']}) | "
                    f"{r['beliefs']} | {r['headings_per_belief']} "
                    f"({r['headings_per_belief_max']}) | {r.get('same_heading_twice', '')} |")
    return "\n".join(rows)


def markdown(result: dict[str, Any]) -> str:
    out = [f"Opinion identity ({result['mode']}): pairs within a thread",
           "", "| set | lang | merged | merged correctly | same-belief pairs | precision | recall "
           "| headings/belief | unsure |", "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: "
           "| ---: |"]
    for name, found in result["sets"].items():
        for lang, r in found["rows"].items():
            out.append(f"| {name} | {lang} | {r['merged']} | {r['correct']} | {r['same']} | "
                       f"{r['precision']:.3f} | {r['recall']:.3f} | "
                       f"{r.get('headings_per_belief', '')} | {r['unsure']} |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="tuning", choices=("tuning", "heldout", "all"))
    ap.add_argument("--model", help="a local GGUF embedding model (multilingual e5-small)")
    ap.add_argument("--misses", action="store_true", help="list the pairs it got wrong")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--workspaces", action="store_true",
                    help="the reviewer's view on the ten-day and one-year workspaces")
    ap.add_argument("--code", type=Path, help="run the gitmem package found in this folder")
    ap.add_argument("--files", type=Path, help="write each bank/opinions.md reflect wrote here")
    args = ap.parse_args(argv)
    if args.code is not None:
        sys.path.insert(0, str(args.code.resolve()))
        for name in [m for m in sys.modules if m == "gitmem" or m.startswith("gitmem.")]:
            del sys.modules[name]
    if args.workspaces:
        from bench import bench_lexical as lex

        views = bench_workspaces(lex.DEFAULT_CACHE)
        print(workspaces_markdown(views))
        if args.files:
            args.files.mkdir(parents=True, exist_ok=True)
            for name, r in views.items():
                slug = "ten-days" if name.startswith("ten") else "one-year"
                (args.files / f"{slug}.md").write_text(r["file"], encoding="utf-8")
        if args.json:
            args.json.write_text(json.dumps({k: {x: y for x, y in v.items() if x != "file"}
                                             for k, v in views.items()}, indent=2) + "\n")
        return 0
    result = bench(args.set, args.model, args.files)
    print(markdown(result))
    if args.misses:
        for name, found in result["sets"].items():
            print(f"\n{name} misses:")
            print("\n".join(f"- {m}" for m in found["misses"]) or "- none")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
