"""Cross-language recall (issue 41): gitmem against the bare model on the same lines.

    python bench/bench_crosslang.py [--model GGUF] [--k 5] [--threads 2]
        [--out bench/results/crosslang.json]

The set is ``bench/crosslang_data.py``: 48 questions, each in another language than its answer
(English, Japanese, Danish, Russian), answers in ``## Log`` lines and Retain entries of daily
notes that mix languages and hold distractors; 32 development questions, 16 held out (reported
apart). Scored, with the same model (default: gitmem's default model, multilingual-e5-small):

- **bare model**: one embedding per line of the notes (a list item's text, a Retain entry), with
  the model's own prompts, cosine top ``k``: what the model alone can do on these lines;
- **gitmem** ``hybrid``, ``semantic`` and ``lexical``: the notes committed to a git repository,
  indexed with the model, ``recall --k k``.

A question is a hit when one of the first ``k`` results cites its answer's line. In-process,
``now`` fixed a month after the last note.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench.crosslang_data import TARGETS, held_out, layout  # noqa: E402
from gitmem.domain import RecallMode  # noqa: E402
from gitmem.embed.download import default_model  # noqa: E402
from gitmem.embed.local import LocalEmbedder  # noqa: E402
from gitmem.index.run import index_and_embed  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.recall.answer import RecallRequest, answer  # noqa: E402
from gitmem.workspace import open_workspace  # noqa: E402
from testing.gitenv import TEST_IDENTITY, sealed_env  # noqa: E402
from testing.repo import commit_all, make_repo, write  # noqa: E402

NOW = datetime(2025, 11, 30, 12, 0, tzinfo=UTC)
MODES: tuple[RecallMode, ...] = ("hybrid", "semantic", "lexical")


def build(root: Path) -> tuple[Path, dict[str, Any]]:
    """The notes as a repository, one commit per day at 21:00 UTC; and the layout."""
    env = sealed_env(TEST_IDENTITY)
    repo = make_repo(root, "ws", env=env)
    notes, where = layout()
    for path, text in sorted(notes.items()):
        write(repo, path, text)
        day = path.removeprefix("memory/").removesuffix(".md")
        commit_all(repo, f"notes of {day}", f"{day}T21:00:00+00:00", env=env)
    return repo, {"notes": notes, "where": where}


def note_lines(notes: dict[str, str]) -> list[tuple[str, int, str]]:
    """Every list item of the notes: (path, line number, its text without the bullet)."""
    out: list[tuple[str, int, str]] = []
    for path, text in sorted(notes.items()):
        for n, line in enumerate(text.split("\n"), 1):
            if line.startswith("- "):
                out.append((path, n, line[2:]))
    return out


def bare_model(model: Path, notes: dict[str, str], k: int,
               threads: int | None) -> dict[str, bool]:
    """Target id -> whether its line is among the ``k`` lines closest to its question."""
    units = note_lines(notes)
    embedder = LocalEmbedder(model, threads=threads)
    try:
        docs = embedder.embed_batch([u[2] for u in units], input_type="document")
        queries = embedder.embed_batch([t[5] for t in TARGETS], input_type="query")
    finally:
        embedder.close()
    _, where = layout()
    hits: dict[str, bool] = {}
    for target, qvec in zip(TARGETS, queries, strict=True):
        sims = [sum(a * b for a, b in zip(qvec, d, strict=True)) for d in docs]
        top = sorted(range(len(units)), key=lambda i: -sims[i])[:k]
        place = where[target[0]]
        hits[target[0]] = any(units[i][:2] == (place.path, place.line) for i in top)
    return hits


def gitmem_modes(repo: Path, model: Path, k: int, threads: int | None,
                 modes: tuple[RecallMode, ...] = MODES) -> tuple[dict[str, dict[str, bool]], float]:
    ws, cfg = open_workspace(repo)
    cfg = replace(cfg, embed_provider="local", embed_model=str(model), embed_threads=threads)
    started = time.monotonic()
    outcome = index_and_embed(ws, cfg, force=True)
    if outcome.embed_error:
        raise SystemExit(f"embedding failed: {outcome.embed_error}")
    seconds = time.monotonic() - started
    _, where = layout()
    out: dict[str, dict[str, bool]] = {}
    for mode in modes:
        hits: dict[str, bool] = {}
        for tid, *_rest, question in TARGETS:
            resp = answer(Session(ws, cfg), RecallRequest(query=question, k=k, mode=mode), now=NOW)
            if resp.mode != mode:
                raise SystemExit(f"{mode} answered as {resp.mode}: {resp.warnings}")
            place = where[tid]
            hits[tid] = any(r.path == place.path and r.start_line <= place.line <= r.end_line
                            for r in resp.results)
        out[mode] = hits
    return out, seconds


def score(hits: dict[str, bool]) -> dict[str, Any]:
    dev = [h for t, h in hits.items() if not held_out(t)]
    held = [h for t, h in hits.items() if held_out(t)]
    by_answer: dict[str, list[bool]] = {}
    for tid, lang, *_ in TARGETS:
        by_answer.setdefault(lang, []).append(hits[tid])
    return {
        "dev": round(sum(dev) / len(dev), 3),
        "held_out": round(sum(held) / len(held), 3),
        "all": round(sum(hits.values()) / len(hits), 3),
        "by_answer_language": {lang: round(sum(v) / len(v), 3) for lang, v in by_answer.items()},
        "misses": sorted((t for t, h in hits.items() if not h), key=lambda t: (t[0], int(t[1:]))),
    }


def markdown(results: dict[str, dict[str, Any]], k: int) -> str:
    langs = ["en", "ja", "da", "ru"]
    lines = ["| method | dev (32) | held out (16) | all (48) | "
             + " | ".join(f"answer {lang}" for lang in langs) + " |",
             "|---|---|---|---|" + "---|" * len(langs)]
    for name, r in results.items():
        cells = " | ".join(f"{r['by_answer_language'][lang]:.2f}" for lang in langs)
        lines.append(f"| {name} | {r['dev']:.3f} | {r['held_out']:.3f} | {r['all']:.3f} | "
                     f"{cells} |")
    return f"answer line in the top {k}:\n\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", type=Path, help="a GGUF model (default: gitmem's default model)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--threads", type=int, help="llama.cpp threads (default: every core; 1 is "
                    "faster on a busy machine)")
    ap.add_argument("--modes", default=",".join(MODES), help="gitmem's modes to score")
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "crosslang.json")
    args = ap.parse_args(argv)
    model = (args.model or default_model()).resolve()
    with tempfile.TemporaryDirectory(prefix="gitmem-crosslang-") as tmp:
        repo, built = build(Path(tmp))
        results: dict[str, dict[str, Any]] = {
            "bare model (one line, cosine)": score(
                bare_model(model, built["notes"], args.k, args.threads))}
        chosen = tuple(m for m in MODES if m in args.modes.split(","))
        modes, seconds = gitmem_modes(repo, model, args.k, args.threads, chosen)
        for mode, hits in modes.items():
            results[f"gitmem {mode}"] = score(hits)
    print(markdown(results, args.k))
    for name, r in results.items():
        print(f"{name}: misses {' '.join(r['misses']) or '-'}")
    report = {"k": args.k, "model": str(model), "now": NOW.isoformat(),
              "index_seconds": round(seconds, 1), "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
