"""``gitmem triggers``: the entries of the curated files that carry trigger phrases.

OpenClaw's trigger recall (its active-memory extension, 2026.9.6) asks the memory backend's
search manager for ``listTriggerCandidates()`` and injects, on each inbound message, the few
whose ``<!-- trigger: ... -->`` phrases match it strongly. Like OpenClaw's own index, only the
curated tier qualifies: ``MEMORY.md`` and ``USER.md`` (daily notes and other files never
auto-inject, whatever they say). The OpenClaw plugin (integrations/openclaw) answers that call
with this list.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gitmem.config import Config
from gitmem.domain import Citation
from gitmem.parse.annotations import without_notes
from gitmem.recall.ranking import stated_importance, stated_triggers
from gitmem.workspace import Workspace

CURATED = ("core", "user")  # the file classes of MEMORY.md and USER.md


@dataclass(frozen=True)
class TriggerEntry:
    path: str
    start_line: int
    end_line: int
    text: str  # the entry's text, its annotations left out
    triggers: tuple[str, ...]
    importance: int | None
    fact_id: str | None

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "start_line": self.start_line, "end_line": self.end_line,
                "source": str(Citation(self.path, self.start_line, self.end_line)),
                "text": self.text, "triggers": list(self.triggers),
                "importance": self.importance, "fact_id": self.fact_id}


@dataclass(frozen=True)
class TriggerList:
    entries: tuple[TriggerEntry, ...]

    def to_json(self) -> dict[str, Any]:
        return {"entries": [e.to_json() for e in self.entries]}


def trigger_entries(ws: Workspace, cfg: Config) -> TriggerList:
    """Every current entry of MEMORY.md and USER.md (with their uncommitted edits, as recall
    sees them) that carries trigger phrases: a fact whole, a note line alone."""
    from gitmem.index import queries
    from gitmem.index.run import index_is_current
    from gitmem.index.store import open_store

    if not index_is_current(ws, cfg):
        from gitmem.index.replay import index_workspace

        index_workspace(ws, cfg)
    store = open_store(ws.index_path, readonly=True)
    try:
        found = queries.trigger_lines(store, CURATED)
    finally:
        store.close()
    facts = {(str(r["path"]), n) for r, _, _ in found if r["type"] == "fact"
             for n in range(int(r["start_line"]), int(r["end_line"]) + 1)}
    entries: list[TriggerEntry] = []
    for row, line, notes in found:
        if row["type"] == "chunk" and (str(row["path"]), line) in facts:
            continue  # the fact says it (a Retain section is a chunk too)
        if row["type"] == "fact":
            first, last, text = int(row["start_line"]), int(row["end_line"]), row["content"]
        else:
            first = last = line
            lines = str(row["content"]).split("\n")
            text = without_notes(lines[line - int(row["start_line"])]).strip()
        entries.append(TriggerEntry(row["path"], first, last, text,
                                    stated_triggers(notes, first, last),
                                    stated_importance(notes, first, last), row["fact_id"]))
    return TriggerList(tuple(entries))
