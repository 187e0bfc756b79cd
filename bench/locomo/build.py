"""Each LoCoMo conversation as a gitmem workspace: one git repository per conversation.

Each session is a daily note ``memory/YYYY-MM-DD.md`` (a second session on the same day gets
``memory/YYYY-MM-DD-session-N.md``) that starts with a heading naming the session and its date
and time, then one list item per turn, ``- [1:56 pm] Caroline: text (image: <blip_caption>)``,
committed at the session's date and time (UTC) by a fixed identity, so the same data always gives
the same commit ids. A line break inside a turn's text is folded into a space: one turn, one line.
The ``turns+observations`` variant adds the session's LoCoMo ``observation`` facts as a
``## Retain`` section (``- S @Speaker: fact``). Beside each repository, ``OUT_DIR/<sample_id>.json``
(the sidecar) maps every ``dia_id`` to its ``(path, line)``, maps each observation line to the
turns it was drawn from, and holds the questions of categories 1-4 with their evidence cleaned;
``OUT_DIR/build-report.json`` counts everything the dataset's known flaws made us skip or repair.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.locomo.dataset import BenchError, Conversation, Session, Skips, read_dataset
from testing.fastimport import FastImportStream, import_history
from testing.gitenv import Identity

SIDECAR_FORMAT = "gitmem-locomo-sidecar/1"
VARIANTS = ("turns", "turns+observations")
IDENTITY = Identity("LoCoMo bench", "locomo-bench@gitmem.invalid")


@dataclass(frozen=True)
class RenderedSession:
    path: str
    text: str
    turn_lines: dict[str, int]
    observation_lines: list[tuple[int, tuple[str, ...]]]


def entity_slug(name: str) -> str:
    return re.sub(r"[^\w.-]+", "-", name.strip()).strip("-.") or "Speaker"


def in_time_order(sessions: Sequence[Session]) -> list[Session]:
    return sorted(sessions, key=lambda s: (s.when, s.number))


def note_paths(sessions: Sequence[Session]) -> dict[int, str]:
    """Session number -> daily-note path; later sessions of a day get a ``-session-N`` slug."""
    paths: dict[int, str] = {}
    taken: set[str] = set()
    for s in in_time_order(sessions):
        day = s.when.date().isoformat()
        path = f"memory/{day}.md" if day not in taken else f"memory/{day}-session-{s.number}.md"
        taken.add(day)
        paths[s.number] = path
    return paths


def clock(when: datetime) -> str:
    """``1:56 pm``: the time as LoCoMo writes it."""
    return f"{(when.hour + 11) % 12 + 1}:{when.minute:02d} {'pm' if when.hour >= 12 else 'am'}"


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


def history(conv: Conversation, rendered: dict[int, RenderedSession]) -> FastImportStream:
    """One commit per session, in date order, at the session's date and time."""
    stream = FastImportStream(IDENTITY)
    for s in in_time_order(conv.sessions):
        note = rendered[s.number]
        message = f"LoCoMo {conv.sample_id} session {s.number} ({s.date_time})\n"
        stream.commit(s.when, message, [(note.path, note.text)])
    return stream


def build_conversation(conv: Conversation, out_dir: Path, variant: str) -> dict[str, Any]:
    """Write the repository ``out_dir/<sample_id>`` and return its sidecar."""
    repo = out_dir / conv.sample_id
    if repo.exists():
        shutil.rmtree(repo)
    paths = note_paths(conv.sessions)
    rendered = {
        s.number: render_session(s, paths[s.number], variant, conv.speakers) for s in conv.sessions
    }
    head = import_history(repo, history(conv, rendered))
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
        "head": head,
        "speakers": list(conv.speakers),
        "sessions": [
            {
                "session": s.number,
                "date_time": s.date_time,
                "committed_at": s.when.isoformat(),
                "path": paths[s.number],
                "turns": len(s.turns),
            }
            for s in in_time_order(conv.sessions)
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
    conversations = read_dataset(data, observations=variant == "turns+observations")
    if out_dir.exists() and any(out_dir.iterdir()) and not (out_dir / "build-report.json").exists():
        raise BenchError(f"{out_dir} is not empty and holds no earlier build; use another folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    total = Skips()
    built: list[dict[str, Any]] = []
    for conv in conversations:
        sidecar = build_conversation(conv, out_dir, variant)
        sidecar_path = out_dir / f"{conv.sample_id}.json"
        sidecar_path.write_text(json.dumps(sidecar, indent=1, ensure_ascii=False) + "\n", "utf-8")
        total.merge(conv.skips)
        built.append(
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
        "conversations": built,
        "questions": sum(c["questions"] for c in built),
        "skipped": total.to_json(),
    }
    (out_dir / "build-report.json").write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    return report
