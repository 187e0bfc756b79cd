"""Multilingual paraphrase recall on the fixture workspace: hit@5 per mode and model.

    python bench/bench_multilingual.py --model MiniLM=bench/models/all-MiniLM-L6-v2-f16.gguf \\
        [--model NAME=GGUF ...] [--k 5] [--threads 1] [--out bench/results/multilingual.json]

The fixture workspace (``fixtures/workspace``, built as a git repository by
``fixtures/build_fixture.py``) holds notes and Retain facts in Japanese, Russian and Danish. Each
query below is a paraphrase, in the same language, of one fact or note line, and shares no word
with it: no folded token (CJK bigrams for Japanese), and for Latin and Cyrillic script no
five-letter word stem either, so stemming cannot bridge it. The script checks that before it runs.
A query scores a hit when one of the first ``--k`` results cites a target line. ``lexical`` needs
no model (it can only find a target through other words of its chunk); ``semantic`` and
``hybrid`` use the local provider with each ``--model`` GGUF in turn; the "whole chunks" rows rank
and cite whole chunks (the ranking before passages). In-process, ``now`` fixed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gitmem.domain import RecallMode

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from fixtures.build_fixture import build_fixture  # noqa: E402
from gitmem.index.run import index_and_embed  # noqa: E402
from gitmem.index.session import Session  # noqa: E402
from gitmem.parse.textfold import fold  # noqa: E402
from gitmem.recall.answer import RecallRequest, answer  # noqa: E402
from gitmem.recall.ranking import Ranking  # noqa: E402
from gitmem.workspace import open_workspace  # noqa: E402

NOW = datetime(2025, 12, 1, 12, 0, tzinfo=UTC)
# name -> (mode, ranking): the shipped ranking (passages), and whole chunks (the one before)
MODES: dict[str, tuple[RecallMode, Ranking | None]] = {
    "lexical": ("lexical", None),
    "lexical, whole chunks": ("lexical", Ranking(passages=False)),
    "semantic": ("semantic", None),
    "hybrid": ("hybrid", None),
    "hybrid, whole chunks": ("hybrid", Ranking(passages=False)),
}
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")

# (language, query, path, the target lines: any of them counts)
QUERIES: list[tuple[str, str, str, tuple[int, ...]]] = [
    ("ja", "週末前の晩に外国語の勉強", "memory/2025-11-21.md", (8, 12)),
    ("ja", "友人の記念日の祝宴をモロッコで催した", "memory/2025-11-29.md", (8, 11)),
    ("ja", "近いうちにルーターを城館へ引っ越す計画", "memory/2025-11-21.md", (9,)),
    ("ja", "簡潔な回答を好む", "memory/2025-11-21.md", (8, 13)),
    ("ja", "感謝の手紙を手短に作成した", "memory/2025-11-29.md", (12,)),
    ("ja", "半時間ほど話す稽古", "memory/2025-11-21.md", (14,)),
    ("ru", "Латвийские сотрудники общаются с ним на родном наречии", "memory/2025-11-25.md",
     (13,)),
    ("ru", "Дважды за семидневку изучает наречие Токио", "memory/2025-11-13.md", (13,)),
    ("ru", "Пространные сообщения игнорирует", "memory/2025-11-13.md", (9,)),
    ("ru", "Любит лаконичность в переписке", "memory/2025-11-25.md", (11,)),
    ("ru", "Пересказал аудиозапись очень сжато", "memory/2025-11-13.md", (14,)),
    ("ru", "Просил избегать подробных отчётов после ужина", "memory/2025-11-25.md", (8,)),
    ("da", "middagsmad i selskab af en kammerat", "memory/2025-11-12.md", (4, 12)),
    ("da", "landstedets elforsyning er stabil, internettet hurtigt", "memory/2025-11-12.md",
     (14,)),
    ("da", "monterede reolen i landhuset", "memory/2025-11-23.md", (11,)),
    ("da", "routeren kan stå højt oppe", "memory/2025-11-23.md", (12,)),
    ("da", "hovedstadens lækreste frikadeller", "memory/2025-11-12.md", (13,)),
    ("da", "lørdagstur mod landstedet: tjekke elektricitet samt internet",
     "memory/2025-11-12.md", (9,)),
]


def _tokens(text: str) -> set[str]:
    return set(_WORD.findall(fold(text)))


def _stems(text: str) -> set[str]:
    return {t[:5] for t in _tokens(text) if len(t) >= 5 and not _CJK.search(t)}


def check_queries(workspace: Path) -> None:
    """Every query shares no folded token and no five-letter stem with its target lines."""
    problems: list[str] = []
    for lang, query, path, lines in QUERIES:
        text = (workspace / path).read_text(encoding="utf-8").split("\n")
        for number in lines:
            line = text[number - 1]
            shared = (_tokens(query) & _tokens(line)) | (_stems(query) & _stems(line))
            if shared:
                problems.append(f"{lang} {query!r} shares {sorted(shared)} with {path}:{number}")
            if not line.strip():
                problems.append(f"{path}:{number} is empty")
    if problems:
        raise SystemExit("queries are not paraphrases:\n  " + "\n  ".join(problems))


def run_model(repo: Path, model: Path | None, k: int,
              threads: int | None = None) -> dict[str, dict[str, Any]]:
    ws, cfg = open_workspace(repo)
    if model is not None:
        cfg = replace(cfg, embed_provider="local", embed_model=str(model.resolve()),
                      embed_threads=threads)
        outcome = index_and_embed(ws, cfg, force=True)
        if outcome.embed_error:
            raise SystemExit(f"embedding with {model} failed: {outcome.embed_error}")
    else:
        cfg = replace(cfg, embed_provider="none")
        index_and_embed(ws, cfg, force=True)
    out: dict[str, dict[str, Any]] = {}
    names = list(MODES) if model is not None else [n for n in MODES if n.startswith("lexical")]
    for name in names:
        mode, ranking = MODES[name]
        per_lang: dict[str, list[int]] = {}
        misses: list[str] = []
        for lang, query, path, lines in QUERIES:
            resp = answer(Session(ws, cfg), RecallRequest(query=query, k=k, mode=mode), now=NOW,
                          ranking=ranking)
            if resp.mode != mode:
                raise SystemExit(f"{mode} answered as {resp.mode}: {resp.warnings}")
            hit = any(r.path == path and any(r.start_line <= n <= r.end_line for n in lines)
                      for r in resp.results)
            per_lang.setdefault(lang, []).append(int(hit))
            if not hit:
                misses.append(f"{lang}: {query}")
        out[name] = {
            "per_language": {lang: round(sum(v) / len(v), 3) for lang, v in per_lang.items()},
            "overall": round(sum(sum(v) for v in per_lang.values()) / len(QUERIES), 3),
            "misses": misses,
        }
    return out


def markdown(results: dict[str, dict[str, dict[str, Any]]], k: int) -> str:
    langs = sorted({lang for lang, *_ in QUERIES}, key=["ja", "ru", "da"].index)
    counts = {lang: sum(1 for q in QUERIES if q[0] == lang) for lang in langs}
    head = " | ".join(f"{lang} ({counts[lang]})" for lang in langs)
    lines = [f"| model | mode | {head} | all ({len(QUERIES)}) |",
             "|---|---|" + "---|" * (len(langs) + 1)]
    for model, modes in results.items():
        for mode, r in modes.items():
            cells = " | ".join(f"{r['per_language'][lang]:.2f}" for lang in langs)
            lines.append(f"| {model} | {mode} | {cells} | {r['overall']:.2f} |")
    return f"hit@{k}, paraphrase queries sharing no word with their target:\n\n" + "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--model", action="append", default=[], metavar="NAME=GGUF",
                    help="a local GGUF embedding model (repeatable)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--threads", type=int, help="llama.cpp threads (default: every core)")
    ap.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "multilingual.json")
    args = ap.parse_args(argv)
    models: list[tuple[str, Path]] = []
    for spec in args.model:
        name, _, path = spec.partition("=")
        if not path:
            name, path = Path(spec).stem, spec
        models.append((name, Path(path)))
    results: dict[str, dict[str, dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="gitmem-multilingual-") as tmp:
        repo = build_fixture(Path(tmp) / "ws")
        check_queries(repo)
        results["(none)"] = run_model(repo, None, args.k)
        for name, path in models:
            results[name] = run_model(repo, path, args.k, args.threads)
    print(markdown(results, args.k))
    report = {"k": args.k, "queries": [[*q[:3], list(q[3])] for q in QUERIES],
              "now": NOW.isoformat(), "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
