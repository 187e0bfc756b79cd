"""The retrieval methods compared, and the built workspaces they run on.

``METHODS`` maps a name to a callable(question, workspace) -> ranked ``(path, start_line,
end_line)``: ``bm25`` is plain SQLite FTS5 BM25 over single turns with the question's words OR-ed
(an in-memory table built from the sidecar's turn lines, up to ``BM25_DEPTH`` turns, since k turns
would not fill the budgets); ``lexical``, ``semantic`` and ``hybrid`` call gitmem's recall
in-process with that mode, ``k`` results and a fixed ``now``. A method that needs embeddings fails
up front, with a message saying how to configure them, when the installed gitmem answers in
another mode. New methods only need an entry in ``METHODS``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw

from bench.locomo.build import SIDECAR_FORMAT
from bench.locomo.dataset import BenchError
from gitmem.domain import RecallMode
from gitmem.errors import GitmemError
from gitmem.index.run import index_and_embed
from gitmem.index.session import Session
from gitmem.recall.answer import RecallRequest, answer
from gitmem.recall.ranking import Ranking
from gitmem.workspace import open_workspace

BM25_DEPTH = 1000  # turns; a turn is ~40 tokens, so this is far more than the largest budget
DEFAULT_NOW = "2024-02-01"  # after the last session of the dev split (2024-01-12)
_WORD = re.compile(r"\w+")

Span = tuple[str, int, int]


def parse_now(text: str) -> datetime:
    """An ISO date or date-time; UTC when no offset is given."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise BenchError(f"--now: not an ISO date or date-time: {text!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@dataclass
class BenchWorkspace:
    """One built conversation: its repository, its sidecar, and per-method state built lazily."""

    root: Path
    sidecar: dict[str, Any]
    k: int = 60
    now: datetime = field(default_factory=lambda: parse_now(DEFAULT_NOW))
    embed_model: str | None = None
    embed_threads: int | None = None
    reindex: bool = True
    _lines: dict[str, list[str]] = field(default_factory=dict)
    _bm25: tuple[Any, list[Span]] | None = None
    _gitmem: tuple[Any, Any] | None = None

    @classmethod
    def load(cls, sidecar_path: Path, **options: Any) -> BenchWorkspace:
        sidecar = json.loads(sidecar_path.read_text(encoding="utf-8"))
        if sidecar.get("format") != SIDECAR_FORMAT:
            raise BenchError(f"{sidecar_path} is not a {SIDECAR_FORMAT} sidecar")
        return cls(sidecar_path.parent / sidecar["repo"], sidecar, **options)

    def lines(self, path: str) -> list[str]:
        """The note's lines as committed (the build checks every file out)."""
        if path not in self._lines:
            self._lines[path] = (self.root / path).read_text(encoding="utf-8").split("\n")
        return self._lines[path]

    def line(self, path: str, number: int) -> str:
        lines = self.lines(path)
        return lines[number - 1] if 1 <= number <= len(lines) else ""

    def bm25_index(self) -> tuple[Any, list[Span]]:
        """An in-memory FTS5 table with one row per turn (speaker, text, caption)."""
        if self._bm25 is None:
            conn = apsw.Connection(":memory:")
            conn.execute("CREATE VIRTUAL TABLE turns USING fts5(body, tokenize='unicode61')")
            spans: list[Span] = []
            with conn:
                for info in self.sidecar["turns"].values():
                    body = re.sub(r"^- \[[^\]]*\] ", "", self.line(info["path"], info["line"]))
                    conn.execute("INSERT INTO turns(rowid, body) VALUES (?, ?)", (len(spans), body))
                    spans.append((info["path"], info["line"], info["line"]))
            self._bm25 = (conn, spans)
        return self._bm25

    def gitmem(self) -> tuple[Any, Any]:
        """gitmem's (Workspace, Config) for this repository, the index rebuilt once."""
        if self._gitmem is None:
            ws, cfg = open_workspace(self.root)
            if self.embed_model is not None:
                cfg = replace(cfg, embed_provider="local", embed_model=self.embed_model)
            if self.embed_threads is not None:
                cfg = replace(cfg, embed_threads=self.embed_threads)
            outcome = index_and_embed(ws, cfg, force=self.reindex)  # lexical, then vectors
            if outcome.embed_error:
                raise BenchError(f"embedding failed: {outcome.embed_error}")
            self._gitmem = (ws, cfg)
        return self._gitmem


Method = Callable[[str, BenchWorkspace], list[Span]]


def bm25_turns(question: str, workspace: BenchWorkspace) -> list[Span]:
    """Plain FTS5 BM25 over single turns, the question's words OR-ed, best first."""
    conn, spans = workspace.bm25_index()
    words = dict.fromkeys(w.lower() for w in _WORD.findall(question))
    if not words:
        return []
    match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
    rows = conn.execute(
        "SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY bm25(turns), rowid LIMIT ?",
        (match, BM25_DEPTH),
    )
    return [spans[int(row[0])] for row in rows]


class MethodUnavailable(BenchError):
    """The installed gitmem cannot run this method (e.g. no embedding provider)."""


def gitmem_recall(mode: RecallMode, ranking: Any = None, name: str | None = None) -> Method:
    """gitmem's recall in-process in ``mode``; refuses to stand in lexical results for another.

    ``ranking`` overrides gitmem's shipped ranking (``gitmem.recall.ranking.Ranking``)."""

    def run(question: str, workspace: BenchWorkspace) -> list[Span]:
        ws, cfg = workspace.gitmem()
        try:
            response = answer(
                Session(ws, cfg), RecallRequest(query=question, k=workspace.k, mode=mode),
                now=workspace.now, ranking=ranking,
            )
        except GitmemError as exc:
            if exc.exit_code == 4:  # SearchUnavailable: the provider itself failed
                raise MethodUnavailable(f"method {mode!r}: {exc}") from exc
            raise QuestionFailed(str(exc)) from exc
        if response.mode != mode:
            said = "; ".join(response.warnings) or "no warning given"
            raise MethodUnavailable(
                f"method {mode!r} needs an embedding provider, but gitmem answered in mode "
                f"{response.mode!r} ({said}). Build the model with `bash bench/build_model.sh` and "
                "pass --embed-model bench/models/all-MiniLM-L6-v2-q8_0.gguf (or set "
                "GITMEM_EMBED_PROVIDER=local and GITMEM_EMBED_MODEL)."
            )
        return [(r.path, r.start_line, r.end_line) for r in response.results]

    run.__name__ = f"gitmem_{name or mode}"
    return run


class QuestionFailed(BenchError):
    """A method could not answer one question (counted, recall 0)."""


METHODS: dict[str, Method] = {
    "bm25": bm25_turns,
    "lexical": gitmem_recall("lexical"),
    "semantic": gitmem_recall("semantic"),
    "hybrid": gitmem_recall("hybrid"),
    # gitmem's hybrid before passage units: whole chunks ranked and cited.
    "hybrid-chunks": gitmem_recall("hybrid", Ranking(passages=False), "hybrid-chunks"),
    # OpenClaw's published hybrid: 0.7 x cosine + 0.3 x text, no decay, no diversity.
    "openclaw": gitmem_recall("hybrid", Ranking.openclaw(), "openclaw"),
}


def load_workspaces(ws_dir: Path, **options: Any) -> list[BenchWorkspace]:
    sidecars = sorted(p for p in ws_dir.glob("*.json") if p.name != "build-report.json")
    if not sidecars:
        hint = f"run `python -m bench.locomo build {ws_dir}` first"
        raise BenchError(f"no sidecars in {ws_dir}; {hint}")
    return [BenchWorkspace.load(p, **options) for p in sidecars]
