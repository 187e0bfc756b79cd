"""Retrieval-quality benchmark on LoCoMo: evidence recall within a token budget.

    python bench/locomo.py build OUT_DIR [--variant turns|turns+observations] [--data JSON]
    python bench/locomo.py eval OUT_DIR [--methods bm25,lexical] [--budgets 500,1000,2000,4000]
                                [--k 60] [--out bench/results/locomo.json] [--embed-model GGUF]

``build`` turns each LoCoMo conversation into a gitmem workspace: one git repository per
conversation (``OUT_DIR/<sample_id>/``), each session a daily note ``memory/YYYY-MM-DD.md`` (a
second session on the same day gets ``memory/YYYY-MM-DD-session-N.md``) that starts with a heading
naming the session and its date and time, then one list item per turn,
``- [1:56 pm] Caroline: text (image: <blip_caption>)``, committed at the session's date and time
(UTC) by a fixed identity, so the same data always gives the same commit ids. A line break inside a
turn's text is folded into a space: one turn, one line. The ``turns+observations`` variant adds the
session's LoCoMo ``observation`` facts as a ``## Retain`` section (``- S @Speaker: fact``). Beside
each repository, ``OUT_DIR/<sample_id>.json`` (the sidecar) maps every ``dia_id`` to its
``(path, line)``, maps each observation line to the turns it was drawn from, and holds the
questions of categories 1-4 with their evidence cleaned; ``OUT_DIR/build-report.json`` counts
everything the dataset's known flaws made us skip or repair.

``eval`` asks every method each question and reads the ranked results as an agent would: in rank
order, each result's cited line range (the file's lines ``start_line..end_line``, each line costing
its characters plus its newline, 4 characters a token) until the budget is spent. The unit read is
a line, which is a turn: the result that crosses the budget is truncated to its lines that still
fit, and reading stops at the first line that does not fit. Lines are paid for every time they are
delivered (overlapping chunks cost twice). A question's evidence recall is the share of its
evidence turns whose line was read; in the ``turns+observations`` variant, reading an observation
line also covers the turns that observation cites. Reported: mean recall per budget, overall and
per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop), plus recall over all returned
results with no budget, how often a method ran out of results before the budget, and mean result
size.

Methods live in ``METHODS`` (name -> callable(question, workspace) -> ranked
``(path, start_line, end_line)``): ``bm25`` is plain SQLite FTS5 BM25 over single turns with the
question's words OR-ed (an in-memory table built from the sidecar's turn lines, up to
``BM25_DEPTH`` turns, since k turns would not fill the budgets); ``lexical``, ``semantic`` and
``hybrid`` call gitmem's recall in-process with that mode, ``k`` results and a fixed ``now``. A
method that needs embeddings fails up front, with a message saying how to configure them, when the
installed gitmem answers in another mode. New methods only need an entry in ``METHODS``.

Data: ``../shared/bench/locomo-dev.json`` (LoCoMo, Maharana et al., ACL 2024, CC BY-NC 4.0; research
and benchmarking only).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw

BENCH_DIR = Path(__file__).resolve().parent
REPO_ROOT = BENCH_DIR.parent
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "bench" / "locomo-dev.json"
DEFAULT_OUT = BENCH_DIR / "results" / "locomo.json"
SIDECAR_FORMAT = "gitmem-locomo-sidecar/1"
VARIANTS = ("turns", "turns+observations")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_BUDGETS = (500, 1000, 2000, 4000)
CHARS_PER_TOKEN = 4
BM25_DEPTH = 1000  # turns; a turn is ~40 tokens, so this is far more than the largest budget
DEFAULT_NOW = "2024-02-01"  # after the last session of the dev split (2024-01-12)
IDENTITY = ("LoCoMo bench", "locomo-bench@gitmem.invalid")
_MONTH_NAMES = (
    "january february march april may june july august september october november december"
)
MONTHS = {m: n for n, m in enumerate(_MONTH_NAMES.split(), start=1)}
_DATE_TIME = re.compile(
    r"\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*"
)
_DIA_ID = re.compile(r"D(\d+):(\d+)")
_LOOSE_DIA_ID = re.compile(r"D\W*(\d+)\W+(\d+)")
_SESSION = re.compile(r"session_(\d+)")
_WORD = re.compile(r"\w+")

Span = tuple[str, int, int]


class BenchError(Exception):
    """A problem the user can fix (bad input, missing build, unavailable method)."""


# ---------------------------------------------------------------------------------------------
# Reading the dataset


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    caption: str | None


@dataclass(frozen=True)
class Session:
    number: int
    date_time: str
    when: datetime
    turns: tuple[Turn, ...]
    observations: tuple[tuple[str, str, tuple[str, ...]], ...]  # (speaker, fact, dia_ids)


@dataclass(frozen=True)
class Question:
    index: int  # position in the conversation's qa list
    question: str
    answer: str
    category: int
    evidence: tuple[str, ...]


@dataclass
class Skips:
    """What the dataset's flaws made us skip or repair, with a few examples of each."""

    counts: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, reason: str, example: str) -> None:
        self.counts[reason] += 1
        shown = self.examples.setdefault(reason, [])
        if len(shown) < 5:
            shown.append(example)

    def merge(self, other: Skips) -> None:
        for reason, n in other.counts.items():
            self.counts[reason] += n
            shown = self.examples.setdefault(reason, [])
            shown.extend(other.examples.get(reason, [])[: 5 - len(shown)])

    def to_json(self) -> dict[str, Any]:
        return {
            reason: {"count": n, "examples": self.examples.get(reason, [])}
            for reason, n in sorted(self.counts.items())
        }


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, ...]
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    skips: Skips


def parse_date_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as a UTC datetime (locale-independent)."""
    m = _DATE_TIME.fullmatch(text)
    month = MONTHS.get(m.group(5).lower()) if m else None
    if m is None or month is None:
        raise BenchError(f"unreadable session date and time: {text!r}")
    hour = int(m.group(1)) % 12 + (12 if m.group(3) == "pm" else 0)
    return datetime(int(m.group(6)), month, int(m.group(4)), hour, int(m.group(2)), tzinfo=UTC)


def clock(when: datetime) -> str:
    """``1:56 pm``: the time as LoCoMo writes it."""
    return f"{(when.hour + 11) % 12 + 1}:{when.minute:02d} {'pm' if when.hour >= 12 else 'am'}"


def parse_now(text: str) -> datetime:
    """An ISO date or date-time; UTC when no offset is given."""
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise BenchError(f"--now: not an ISO date or date-time: {text!r}") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def one_line(text: str) -> str:
    return " ".join(text.split())


def clean_evidence(raw: Any, known: set[str], where: str, skips: Skips) -> list[str]:
    """Evidence ids as a clean, de-duplicated list of turn ids that exist.

    Repairs, each counted: several ids in one string (``"D8:6; D9:17"``, ``"D9:1 D4:4"``) are
    split; ``"D:11:26"`` becomes ``D11:26`` when that turn exists (the only reading). Skips, each
    counted: ids no reading of which names an existing turn.
    """
    values = raw if isinstance(raw, list) else [raw]
    out: list[str] = []
    for value in values:
        pieces = [p for p in re.split(r"[;,\s]+", str(value)) if p]
        if len(pieces) > 1:
            skips.add("evidence string holding several ids (split)", f"{where}: {value!r}")
        for piece in pieces:
            dia = piece
            if not _DIA_ID.fullmatch(piece):
                m = _LOOSE_DIA_ID.fullmatch(piece)
                fixed = f"D{int(m.group(1))}:{int(m.group(2))}" if m else None
                if fixed is None or fixed not in known:
                    skips.add("malformed evidence id (dropped)", f"{where}: {piece!r}")
                    continue
                skips.add("malformed evidence id (normalised)", f"{where}: {piece!r} -> {fixed}")
                dia = fixed
            if dia not in known:
                skips.add("evidence id naming no turn (dropped)", f"{where}: {dia}")
                continue
            if dia not in out:
                out.append(dia)
    return out


def _read_turn(raw: dict[str, Any], where: str, skips: Skips) -> Turn | None:
    dia, speaker, text = raw.get("dia_id"), raw.get("speaker"), raw.get("text")
    if not isinstance(dia, str) or not _DIA_ID.fullmatch(dia) or not speaker:
        skips.add("turn without a usable dia_id or speaker (dropped)", f"{where}: {raw!r:.80}")
        return None
    if not isinstance(text, str):
        skips.add("turn without text (kept, empty)", f"{where}: {dia}")
        text = ""
    if "\n" in text.strip() or "\r" in text:
        skips.add("turn text with line breaks (folded into one line)", f"{where}: {dia}")
    caption = raw.get("blip_caption")
    caption = one_line(caption) if isinstance(caption, str) and caption.strip() else None
    return Turn(dia, str(speaker), one_line(text), caption)


def _read_observations(
    raw: Any, known: set[str], where: str, skips: Skips
) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    out: list[tuple[str, str, tuple[str, ...]]] = []
    if not isinstance(raw, dict):
        return ()
    for speaker, facts in raw.items():
        for item in facts if isinstance(facts, list) else []:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
                reason = "observation not a [fact, dia_id] pair (dropped)"
                skips.add(reason, f"{where}: {item!r:.80}")
                continue
            ids = clean_evidence(item[1], known, f"{where} observation", skips)
            out.append((str(speaker), one_line(item[0]), tuple(ids)))
    return tuple(out)


def read_conversation(item: dict[str, Any], observations: bool = False) -> Conversation:
    """One LoCoMo sample, its flaws counted in ``skips`` (observations read only if asked)."""
    sample_id = str(item["sample_id"])
    conv = item["conversation"]
    skips = Skips()
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)))
    for key in conv:
        m = re.fullmatch(r"session_(\d+)_date_time", key)
        if m and int(m.group(1)) not in numbers:
            skips.add("session date_time without a session (ignored)", f"{sample_id}: {key}")
    raw_sessions: list[tuple[int, str, datetime, list[Turn]]] = []
    for n in numbers:
        stamp = conv.get(f"session_{n}_date_time")
        if not isinstance(stamp, str):
            skips.add("session without a date_time (dropped)", f"{sample_id}: session_{n}")
            continue
        where = f"{sample_id} session_{n}"
        turns = [t for raw in conv[f"session_{n}"] if (t := _read_turn(raw, where, skips))]
        if not turns:
            skips.add("session without turns (dropped)", where)
            continue
        raw_sessions.append((n, stamp, parse_date_time(stamp), turns))
    known = {t.dia_id for _, _, _, turns in raw_sessions for t in turns}
    observed = (item.get("observation") or {}) if observations else {}
    sessions = tuple(
        Session(
            n,
            stamp,
            when,
            tuple(turns),
            _read_observations(
                observed.get(f"session_{n}_observation"), known, f"{sample_id} session_{n}", skips
            ),
        )
        for n, stamp, when, turns in raw_sessions
    )
    questions = tuple(_read_questions(item.get("qa") or [], known, sample_id, skips))
    speakers = (str(conv.get("speaker_a", "")), str(conv.get("speaker_b", "")))
    return Conversation(sample_id, speakers, sessions, questions, skips)


def _read_questions(
    qa: list[dict[str, Any]], known: set[str], sample_id: str, skips: Skips
) -> Iterable[Question]:
    for index, q in enumerate(qa):
        where = f"{sample_id} qa[{index}]"
        category = q.get("category")
        if category not in CATEGORIES:
            skips.add(f"question of category {category} (not evaluated)", where)
            continue
        answer = q.get("answer", q.get("adversarial_answer", ""))
        if not isinstance(answer, str):
            skips.add("answer not a string (converted)", f"{where}: {answer!r}")
            answer = str(answer)
        if not q.get("evidence"):
            skips.add("question without evidence (not evaluated)", where)
            continue
        evidence = clean_evidence(q["evidence"], known, where, skips)
        if not evidence:
            skips.add("question left without usable evidence (not evaluated)", where)
            continue
        yield Question(index, str(q.get("question", "")), answer, int(category), tuple(evidence))


# ---------------------------------------------------------------------------------------------
# Building the workspaces


@dataclass(frozen=True)
class RenderedSession:
    path: str
    text: str
    turn_lines: dict[str, int]
    observation_lines: list[tuple[int, tuple[str, ...]]]


def entity_slug(name: str) -> str:
    return re.sub(r"[^\w.-]+", "-", name.strip()).strip("-.") or "Speaker"


def note_paths(sessions: Sequence[Session]) -> dict[int, str]:
    """Session number -> daily-note path; later sessions of a day get a ``-session-N`` slug."""
    paths: dict[int, str] = {}
    taken: set[str] = set()
    for s in sorted(sessions, key=lambda s: (s.when, s.number)):
        day = s.when.date().isoformat()
        path = f"memory/{day}.md" if day not in taken else f"memory/{day}-session-{s.number}.md"
        taken.add(day)
        paths[s.number] = path
    return paths


def render_session(
    session: Session, path: str, variant: str, speakers: Sequence[str]
) -> RenderedSession:
    who = " and ".join(s for s in speakers if s)
    lines = [f"# Session {session.number}: {session.date_time} ({who})", ""]
    at = clock(session.when)
    turn_lines: dict[str, int] = {}
    for turn in session.turns:
        image = f" (image: {turn.caption})" if turn.caption else ""
        lines.append(f"- [{at}] {turn.speaker}: {turn.text}{image}")
        turn_lines[turn.dia_id] = len(lines)
    observation_lines: list[tuple[int, tuple[str, ...]]] = []
    if variant == "turns+observations" and session.observations:
        lines += ["", "## Retain", ""]
        for speaker, fact, ids in session.observations:
            lines.append(f"- S @{entity_slug(speaker)}: {fact}")
            observation_lines.append((len(lines), ids))
    return RenderedSession(path, "\n".join(lines) + "\n", turn_lines, observation_lines)


def git_env() -> dict[str, str]:
    """Git sealed from the user's and the system's configuration, with a fixed identity."""
    name, email = IDENTITY
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME=name,
        GIT_AUTHOR_EMAIL=email,
        GIT_COMMITTER_NAME=name,
        GIT_COMMITTER_EMAIL=email,
        TZ="UTC",
    )
    return env


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> str:
    run = subprocess.run(
        ["git", "-C", str(repo), *args], input=stdin, capture_output=True, env=git_env()
    )
    if run.returncode:
        raise BenchError(f"git {' '.join(args)} failed in {repo}: {run.stderr.decode().strip()}")
    return run.stdout.decode()


def _data(payload: bytes) -> bytes:
    return b"data %d\n" % len(payload) + payload + b"\n"


def fast_import_stream(conv: Conversation, rendered: dict[int, RenderedSession]) -> bytes:
    """One commit per session, in date order, at the session's date and time."""
    name, email = IDENTITY
    out = bytearray()
    for s in sorted(conv.sessions, key=lambda s: (s.when, s.number)):
        note = rendered[s.number]
        stamp = f"{int(s.when.timestamp())} +0000"
        message = f"LoCoMo {conv.sample_id} session {s.number} ({s.date_time})\n".encode()
        out += b"commit refs/heads/main\n"
        out += f"author {name} <{email}> {stamp}\ncommitter {name} <{email}> {stamp}\n".encode()
        out += _data(message)
        out += f"M 100644 inline {note.path}\n".encode()
        out += _data(note.text.encode())
    out += b"done\n"
    return bytes(out)


def build_conversation(conv: Conversation, out_dir: Path, variant: str) -> dict[str, Any]:
    """Write the repository ``out_dir/<sample_id>`` and return its sidecar."""
    repo = out_dir / conv.sample_id
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    paths = note_paths(conv.sessions)
    rendered = {
        s.number: render_session(s, paths[s.number], variant, conv.speakers) for s in conv.sessions
    }
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "fast-import", "--quiet", "--done", stdin=fast_import_stream(conv, rendered))
    _git(repo, "reset", "-q", "--hard", "main")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as fh:
        fh.write(".memory/\n")
    turns = {
        dia: {"path": r.path, "line": line}
        for r in rendered.values()
        for dia, line in r.turn_lines.items()
    }
    return {
        "format": SIDECAR_FORMAT,
        "sample_id": conv.sample_id,
        "variant": variant,
        "repo": conv.sample_id,
        "head": _git(repo, "rev-parse", "HEAD").strip(),
        "speakers": list(conv.speakers),
        "sessions": [
            {
                "session": s.number,
                "date_time": s.date_time,
                "committed_at": s.when.isoformat(),
                "path": paths[s.number],
                "turns": len(s.turns),
            }
            for s in sorted(conv.sessions, key=lambda s: (s.when, s.number))
        ],
        "turns": turns,
        "observations": [
            {"path": r.path, "line": line, "evidence": list(ids)}
            for r in rendered.values()
            for line, ids in r.observation_lines
        ],
        "questions": [
            {
                "index": q.index,
                "question": q.question,
                "answer": q.answer,
                "category": q.category,
                "evidence": list(q.evidence),
            }
            for q in conv.questions
        ],
        "skipped": conv.skips.to_json(),
    }


def build(out_dir: Path, data: Path, variant: str) -> dict[str, Any]:
    """All workspaces of ``data`` under ``out_dir``; returns the build report (also written)."""
    if variant not in VARIANTS:
        raise BenchError(f"unknown variant {variant!r}; use one of {', '.join(VARIANTS)}")
    items = json.loads(data.read_text(encoding="utf-8"))
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / "build-report.json").exists():
        raise BenchError(f"{out_dir} is not empty and holds no earlier build; use another folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    total = Skips()
    conversations: list[dict[str, Any]] = []
    for item in items:
        conv = read_conversation(item, observations=variant == "turns+observations")
        sidecar = build_conversation(conv, out_dir, variant)
        sidecar_path = out_dir / f"{conv.sample_id}.json"
        sidecar_path.write_text(json.dumps(sidecar, indent=1, ensure_ascii=False) + "\n", "utf-8")
        total.merge(conv.skips)
        conversations.append(
            {
                "sample_id": conv.sample_id,
                "sessions": len(conv.sessions),
                "turns": len(sidecar["turns"]),
                "observations": len(sidecar["observations"]),
                "questions": len(conv.questions),
                "head": sidecar["head"],
            }
        )
    report = {
        "data": str(data),
        "variant": variant,
        "seconds": round(time.monotonic() - started, 2),
        "conversations": conversations,
        "questions": sum(c["questions"] for c in conversations),
        "skipped": total.to_json(),
    }
    (out_dir / "build-report.json").write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    return report


# ---------------------------------------------------------------------------------------------
# Methods


@dataclass
class BenchWorkspace:
    """One built conversation: its repository, its sidecar, and per-method state built lazily."""

    root: Path
    sidecar: dict[str, Any]
    k: int = 60
    now: datetime = field(default_factory=lambda: parse_now(DEFAULT_NOW))
    embed_model: str | None = None
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
            from gitmem.index.run import index_and_embed
            from gitmem.workspace import open_workspace

            ws, cfg = open_workspace(self.root)
            if self.embed_model is not None:
                cfg = replace(cfg, embed_provider="local", embed_model=self.embed_model)
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


def gitmem_recall(mode: str, ranking: Any = None, name: str | None = None) -> Method:
    """gitmem's recall in-process in ``mode``; refuses to stand in lexical results for another.

    ``ranking`` overrides gitmem's shipped ranking (``gitmem.search.Ranking``)."""

    def run(question: str, workspace: BenchWorkspace) -> list[Span]:
        from gitmem.errors import GitmemError
        from gitmem.recall.answer import RecallRequest, answer

        ws, cfg = workspace.gitmem()
        try:
            response = answer(
                ws, cfg, RecallRequest(query=question, k=workspace.k, mode=mode),
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


def _openclaw() -> Any:
    from gitmem.recall.ranking import Ranking

    return Ranking.openclaw()


class QuestionFailed(BenchError):
    """A method could not answer one question (counted, recall 0)."""


METHODS: dict[str, Method] = {
    "bm25": bm25_turns,
    "lexical": gitmem_recall("lexical"),
    "semantic": gitmem_recall("semantic"),
    "hybrid": gitmem_recall("hybrid"),
    # OpenClaw's published hybrid: 0.7 x cosine + 0.3 x text, no decay, no diversity.
    "openclaw": gitmem_recall("hybrid", _openclaw(), "openclaw"),
}


# ---------------------------------------------------------------------------------------------
# Scoring


def read_order(spans: Sequence[Span], workspace: BenchWorkspace) -> list[tuple[float, str, int]]:
    """Every delivered line in reading order with the tokens spent once it is read."""
    spent = 0.0
    out: list[tuple[float, str, int]] = []
    for path, start, end in spans:
        for number in range(start, end + 1):
            spent += (len(workspace.line(path, number)) + 1) / CHARS_PER_TOKEN
            out.append((spent, path, number))
    return out


def evidence_lines(workspace: BenchWorkspace) -> dict[tuple[str, int], set[str]]:
    """(path, line) -> the turns whose evidence reading that line delivers."""
    cover: dict[tuple[str, int], set[str]] = {}
    for dia, info in workspace.sidecar["turns"].items():
        cover.setdefault((info["path"], info["line"]), set()).add(dia)
    for obs in workspace.sidecar["observations"]:
        cover.setdefault((obs["path"], obs["line"]), set()).update(obs["evidence"])
    return cover


def recall_at(
    order: Sequence[tuple[float, str, int]],
    cover: dict[tuple[str, int], set[str]],
    evidence: Sequence[str],
    budget: float | None,
) -> float:
    """Share of ``evidence`` covered by the lines read within ``budget`` tokens (None: all)."""
    wanted = set(evidence)
    found: set[str] = set()
    for spent, path, number in order:
        if budget is not None and spent > budget:
            break  # reading stops at the first line that does not fit
        found |= cover.get((path, number), set()) & wanted
    return len(found) / len(wanted)


@dataclass
class Tally:
    """Running sums for one method."""

    budgets: tuple[int, ...]
    recall: dict[int | None, dict[int, list[float]]] = field(default_factory=dict)
    exhausted: dict[int, int] = field(default_factory=dict)
    results: int = 0
    result_tokens: float = 0.0
    empty: int = 0
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(
        self,
        category: int,
        order: list[tuple[float, str, int]],
        scores: dict[int | None, float],
        n_results: int,
    ) -> None:
        for budget, value in scores.items():
            self.recall.setdefault(budget, {}).setdefault(category, []).append(value)
        total = order[-1][0] if order else 0.0
        for budget in self.budgets:
            if total < budget:
                self.exhausted[budget] = self.exhausted.get(budget, 0) + 1
        self.results += n_results
        self.result_tokens += total
        self.empty += n_results == 0

    def summary(self, questions: int) -> dict[str, Any]:
        def mean(values: Sequence[float]) -> float:
            return round(sum(values) / len(values), 4) if values else 0.0

        def by_budget(categories: Sequence[int]) -> dict[str, float]:
            return {
                _budget_key(b): mean(
                    [v for c in categories for v in self.recall.get(b, {}).get(c, [])]
                )
                for b in [*self.budgets, None]
            }

        return {
            "overall": by_budget(list(CATEGORIES)),
            "per_category": {name: by_budget([c]) for c, name in CATEGORIES.items()},
            "ran_out_before_budget": {
                str(b): round(self.exhausted.get(b, 0) / max(questions, 1), 4) for b in self.budgets
            },
            "mean_results": round(self.results / max(questions, 1), 2),
            "mean_tokens_per_result": round(self.result_tokens / max(self.results, 1), 1),
            "questions_without_results": self.empty,
            "questions_failed": len(self.failed),
            "failures": self.failed[:10],
            "seconds": round(self.seconds, 2),
        }


def _budget_key(budget: int | None) -> str:
    return "all" if budget is None else str(budget)


def load_workspaces(ws_dir: Path, **options: Any) -> list[BenchWorkspace]:
    sidecars = sorted(p for p in ws_dir.glob("*.json") if p.name != "build-report.json")
    if not sidecars:
        hint = f"run `python bench/locomo.py build {ws_dir}` first"
        raise BenchError(f"no sidecars in {ws_dir}; {hint}")
    return [BenchWorkspace.load(p, **options) for p in sidecars]


def evaluate(
    workspaces: Sequence[BenchWorkspace],
    methods: Sequence[str],
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    details: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Evidence recall of each method per budget, overall and per category.

    ``details``, when given, receives one record per (question, method).
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise BenchError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
    tallies = {m: Tally(tuple(budgets)) for m in methods}
    first = next((w for w in workspaces if w.sidecar["questions"]), None)
    setup: dict[str, float] = {}
    for name in methods:  # fail fast, before any long loop, when a method cannot run here
        started = time.monotonic()
        if first is not None:
            with contextlib.suppress(QuestionFailed):
                METHODS[name](first.sidecar["questions"][0]["question"], first)
        setup[name] = round(time.monotonic() - started, 2)
    questions = 0
    for workspace in workspaces:
        cover = evidence_lines(workspace)
        for q in workspace.sidecar["questions"]:
            questions += 1
            for name in methods:
                tally = tallies[name]
                started = time.monotonic()
                try:
                    spans = METHODS[name](q["question"], workspace)
                except QuestionFailed as exc:
                    tally.failed.append(f"{workspace.sidecar['sample_id']} qa[{q['index']}]: {exc}")
                    spans = []
                tally.seconds += time.monotonic() - started
                order = read_order(spans, workspace)
                scores: dict[int | None, float] = {
                    b: recall_at(order, cover, q["evidence"], b) for b in [*budgets, None]
                }
                tally.add(q["category"], order, scores, len(spans))
                if details is not None:
                    details.append(
                        {
                            "sample_id": workspace.sidecar["sample_id"],
                            "index": q["index"],
                            "category": q["category"],
                            "method": name,
                            "recall": {_budget_key(b): v for b, v in scores.items()},
                            "results": len(spans),
                        }
                    )
    per_category = Counter(
        CATEGORIES[q["category"]] for w in workspaces for q in w.sidecar["questions"]
    )
    return {
        "questions": questions,
        "questions_per_category": {c: per_category.get(c, 0) for c in CATEGORIES.values()},
        "budgets": list(budgets),
        "setup_seconds": setup,
        "methods": {m: tallies[m].summary(questions) for m in methods},
    }


def markdown(report: dict[str, Any], at: int = 2000) -> str:
    budgets = report["budgets"]
    head = " | ".join(f"{b:,}" for b in budgets)
    lines = [
        f"Evidence recall, {report['questions']} questions (categories 1-4), "
        "results read in rank order until the budget (tokens) is spent:",
        "",
        f"| method | {head} | all results |",
        "|---" * (len(budgets) + 2) + "|",
    ]
    for name, m in report["methods"].items():
        cells = " | ".join(f"{m['overall'][str(b)]:.3f}" for b in budgets)
        lines.append(f"| {name} | {cells} | {m['overall']['all']:.3f} |")
    at = at if at in budgets else budgets[len(budgets) // 2]
    counts = report["questions_per_category"]
    cats = " | ".join(f"{c} ({counts[c]})" for c in CATEGORIES.values())
    lines += ["", f"Per category at {at:,} tokens:", "", f"| method | {cats} |"]
    lines.append("|---" * (len(CATEGORIES) + 1) + "|")
    for name, m in report["methods"].items():
        cells = " | ".join(f"{m['per_category'][c][str(at)]:.3f}" for c in CATEGORIES.values())
        lines.append(f"| {name} | {cells} |")
    lines += [
        "",
        f"| method | results/question | tokens/result | ran out before {at:,} | failed | s |",
    ]
    lines.append("|---|---|---|---|---|---|")
    for name, m in report["methods"].items():
        out = m["ran_out_before_budget"].get(str(at), 0.0)
        lines.append(
            f"| {name} | {m['mean_results']} | {m['mean_tokens_per_result']} | {out:.3f} | "
            f"{m['questions_failed']} | {m['seconds']} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Command line


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        message = f"expected numbers separated by commas: {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers: {text!r}")
    return values


def _environment() -> dict[str, Any]:
    try:
        commit = _git(REPO_ROOT, "rev-parse", "HEAD").strip()
        changed = _git(REPO_ROOT, "status", "--porcelain", "--untracked-files=no", "gitmem")
        dirty = bool(changed.strip())
    except (BenchError, OSError):
        commit, dirty = None, None
    return {
        "gitmem_commit": commit,
        "gitmem_dirty": dirty,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def cmd_build(args: argparse.Namespace) -> int:
    report = build(args.out_dir, args.data, args.variant)
    print(
        f"built {len(report['conversations'])} workspaces ({args.variant}) in {args.out_dir} "
        f"in {report['seconds']} s; {report['questions']} questions to evaluate"
    )
    for c in report["conversations"]:
        print(
            f"  {c['sample_id']}: {c['sessions']} sessions, {c['turns']} turns, "
            f"{c['observations']} observations, {c['questions']} questions"
        )
    print("skipped or repaired:")
    for reason, info in report["skipped"].items():
        print(f"  {info['count']:4d}  {reason}  e.g. {'; '.join(info['examples'][:2])}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    now = parse_now(args.now)
    model = args.embed_model
    if model is not None and Path(model).exists():
        model = str(Path(model).resolve())  # the index records it; keep it cwd-independent
    workspaces = load_workspaces(
        args.workspaces_dir,
        k=args.k,
        now=now,
        embed_model=model,
        reindex=not args.no_reindex,
    )
    details: list[dict[str, Any]] | None = [] if args.details else None
    started = time.monotonic()
    report = evaluate(workspaces, args.methods, args.budgets, details)
    report.update(
        dataset=str(args.workspaces_dir),
        variant=workspaces[0].sidecar["variant"],
        k=args.k,
        bm25_depth=BM25_DEPTH,
        now=now.isoformat(),
        seconds=round(time.monotonic() - started, 2),
        environment=_environment(),
    )
    build_report = args.workspaces_dir / "build-report.json"
    if build_report.exists():
        report["build_skipped"] = json.loads(build_report.read_text(encoding="utf-8"))["skipped"]
    print(markdown(report))
    print(f"\n{report['questions']} questions, {len(args.methods)} methods, {report['seconds']} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if details is not None:
        args.details.write_text(json.dumps(details) + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="LoCoMo conversations -> one gitmem workspace each")
    b.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    b.add_argument("--variant", choices=VARIANTS, default="turns")
    b.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the LoCoMo JSON")
    b.set_defaults(run=cmd_build)
    e = sub.add_parser("eval", help="evidence recall per token budget, per method")
    e.add_argument("workspaces_dir", type=Path, metavar="WORKSPACES_DIR")
    e.add_argument(
        "--methods",
        type=lambda s: [m.strip() for m in s.split(",") if m.strip()],
        default=["bm25", "lexical"],
        help=f"comma-separated: {', '.join(METHODS)}",
    )
    e.add_argument("--budgets", type=_int_list, default=list(DEFAULT_BUDGETS))
    e.add_argument("--k", type=int, default=60, help="results asked of gitmem recall")
    e.add_argument("--now", default=DEFAULT_NOW, help="recall's clock (recency decay, phrases)")
    e.add_argument("--embed-model", help="GGUF model for semantic/hybrid (provider 'local')")
    e.add_argument("--no-reindex", action="store_true", help="reuse each workspace's index")
    e.add_argument("--out", type=Path, default=DEFAULT_OUT)
    e.add_argument("--details", type=Path, help="also write per-question recall here")
    e.set_defaults(run=cmd_eval)
    args = ap.parse_args(argv)
    try:
        return int(args.run(args))
    except BenchError as exc:
        print(f"locomo: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
