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

``--model``: the statements are also compared by a local embedding model (multilingual e5-small:
``python -m gitmem.embed.convert_e5 OUT.gguf``), as ``reflect`` does when ``[embed]`` names a
local model. Standard library only besides gitmem; prints Markdown, writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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
    from gitmem.reflect.run import reflect
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


def bench(set_name: str, model: str | None) -> dict[str, Any]:
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
    args = ap.parse_args(argv)
    result = bench(args.set, args.model)
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
