"""``gitmem import FORMAT PATH``: another tool's memory as ordinary Retain entries
(docs/import.md).

Each item of the source (``gitmem.reflect.importers``) becomes one entry, ``- W [@Entity ...]:
<text>``, with a nested ``- source: <tool> <where> (<how dated> <day>)`` item, appended to the
Retain section of ``memory/<day>-import-<tool>.md``: a daily note of the day the source gives
the item, so recall's time filters and decay treat it like the rest. All of it lands in one
commit built like retain's (HEAD's files plus the entries; uncommitted edits of those files
stay uncommitted), so ``gitmem review`` shows the import as facts added per entity.

An item already imported from the same tool (the same first line of text about the same
entities, in any of that tool's import notes) is skipped: importing a source twice adds
nothing. An item the Retain grammar cannot hold is reported with its source, never dropped
silently.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from gitmem.config import Config
from gitmem.domain import MemoryFile
from gitmem.errors import GitmemError, UsageError
from gitmem.git import blob_id, commit_files, files_at, head_id
from gitmem.locks import file_lock
from gitmem.parse.annotations import without_notes
from gitmem.parse.markdown import parse_file
from gitmem.parse.retain import entity_key
from gitmem.reflect.append import BREAKING, LOCK_SECONDS, appended, check_entry
from gitmem.reflect.importers import Imported, read_source
from gitmem.workspace import Workspace, ensure_memory_dir

TOOL_NAMES = {"claude-code": "Claude Code", "codex": "Codex", "hermes": "Hermes",
              "mem0": "mem0", "mcp-memory": "MCP memory server"}
_DECLARING = re.compile(r"^\s*[-*+]\s+(replaces|keeps)\s*:", re.I)


@dataclass(frozen=True)
class Refused:
    source: str
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "reason": self.reason}


@dataclass(frozen=True)
class ImportFile:
    """One import note and the entries the import adds to it."""

    path: str
    created: bool
    entries: tuple[tuple[str, ...], ...]  # each entry's Markdown lines
    old: bytes | None
    new: bytes

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "created": self.created,
                "entries": ["\n".join(e) for e in self.entries]}


@dataclass(frozen=True)
class ImportReport:
    fmt: str
    source: str
    read: int  # items the source holds
    already: int  # items imported before (skipped)
    refused: tuple[Refused, ...]
    files: tuple[ImportFile, ...]
    commit: str | None = None
    dry_run: bool = False
    not_indexed: str | None = None

    @property
    def added(self) -> int:
        return sum(len(f.entries) for f in self.files)

    def lines(self) -> list[str]:
        """The report a person reads (with --dry-run: every entry that would be written)."""
        verb = "would add" if self.dry_run else "added"
        out = [f"{self.fmt}: {self.read} item{'s' if self.read != 1 else ''} read from "
               f"{self.source}; {verb} {self.added}, {self.already} imported before"
               + (f", {len(self.refused)} refused" if self.refused else "")]
        for f in self.files:
            out.append(f"{'new ' if f.created else ''}{f.path}: {len(f.entries)} "
                       f"entr{'y' if len(f.entries) == 1 else 'ies'}")
            if self.dry_run:
                out += [f"  {line}" for e in f.entries for line in e]
        out += [f"refused {r.source}: {r.reason}" for r in self.refused]
        if self.commit:
            out.append(f"committed {self.commit[:7]}")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"format": self.fmt, "source": self.source, "read": self.read,
                "added": self.added, "already_imported": self.already,
                "refused": [r.to_json() for r in self.refused],
                "files": [f.to_json() for f in self.files], "commit": self.commit,
                "dry_run": self.dry_run, "not_indexed": self.not_indexed}


def import_memory(ws: Workspace, cfg: Config, fmt: str, path: Path, *,
                  dry_run: bool = False) -> ImportReport:
    """Read the source, plan the entries, and (unless ``dry_run``) commit them and index."""
    from gitmem.index.replay import index_workspace

    items = read_source(fmt, path)
    ensure_memory_dir(ws)
    with file_lock(ws.memory_dir / "retain.lock", wait=True, timeout=LOCK_SECONDS,
                   busy="another agent is writing memory; try again in a moment"):
        base = head_id(ws.repo_root)
        report = _plan(ws, fmt, str(path), items, base)
        if dry_run or not report.files:
            return ImportReport(**{**_fields(report), "dry_run": dry_run})
        commit = commit_files(ws.repo_root,
                              {ws.prefix + f.path: f.new for f in report.files},
                              _message(report), base=base)
        _update_disk(ws, report)
    try:
        index_workspace(ws, cfg)
    except GitmemError as exc:
        return ImportReport(**{**_fields(report), "commit": commit, "not_indexed": str(exc)})
    return ImportReport(**{**_fields(report), "commit": commit})


def _fields(report: ImportReport) -> dict[str, Any]:
    return {"fmt": report.fmt, "source": report.source, "read": report.read,
            "already": report.already, "refused": report.refused, "files": report.files}


def entry_lines(item: Imported) -> list[str]:
    """The entry's Markdown: a W line naming the item's entities, its further lines indented
    (a line that would end the item or declare a replacement is escaped), and the source."""
    text = [ln.rstrip() for ln in item.text.splitlines()]
    first = " ".join(text[0].split()) if text else ""
    names = " ".join(f"@{e}" for e in item.entities)
    lines = [f"- W{' ' + names if names else ''}: {first}"]
    for raw in text[1:]:
        line = raw.strip()
        if not line:
            continue
        if BREAKING.match(line) or _DECLARING.match(line):
            line = "\\" + line
        lines.append(f"  {line}")
    how = {"created": "created", "updated": "updated"}.get(item.dated_by, "file dated")
    lines.append(f"  - source: {TOOL_NAMES.get(item.tool, item.tool)} {item.source} "
                 f"({how} {item.day.isoformat()})")
    return lines


def note_path(item: Imported) -> str:
    return f"memory/{item.day.isoformat()}-import-{item.tool}.md"


def _key(entities: Sequence[str], first_line: str) -> tuple[tuple[str, ...], str]:
    """What makes two entries one: their subjects and first line (annotations left out, as
    the parser leaves them out of a fact's text), whitespace and case aside."""
    return (tuple(sorted(entity_key(e) for e in entities)),
            " ".join(without_notes(first_line).split()).casefold())


def _plan(ws: Workspace, fmt: str, source: str, items: list[Imported],
          base: str | None) -> ImportReport:
    by_file: dict[str, list[tuple[Imported, list[str]]]] = defaultdict(list)
    refused: list[Refused] = []
    seen = _imported_before(ws, {i.tool for i in items}, base)
    already = 0
    for item in items:
        if not item.text.strip():
            continue
        key = (item.tool, *_key(item.entities, item.text.splitlines()[0]))
        if key in seen:
            already += 1
            continue
        lines = entry_lines(item)
        rel = note_path(item)
        try:
            check_entry(lines, rel, item.day)
        except UsageError as exc:
            refused.append(Refused(f"{item.tool} {item.source}", str(exc).split(";")[0]))
            continue
        seen.add(key)
        by_file[rel].append((item, lines))
    rels = sorted(by_file)
    old = files_at(ws.repo_root, base, [ws.prefix + r for r in rels])
    files: list[ImportFile] = []
    for rel in rels:
        before = old[ws.prefix + rel]
        data = before or b""
        day = by_file[rel][0][0].day
        for _, lines in by_file[rel]:
            data, _ = appended(data, lines, rel, day)
        _verify(rel, day, data, before, len(by_file[rel]))
        files.append(ImportFile(rel, before is None, tuple(tuple(ln) for _, ln in by_file[rel]),
                                before, data))
    return ImportReport(fmt, source, len(items), already, tuple(refused), tuple(files))


def _verify(rel: str, day: date, data: bytes, before: bytes | None, added: int) -> None:
    """The note reads back with exactly ``added`` more facts and no new warning."""
    def count(content: bytes | None) -> tuple[int, int]:
        if content is None:
            return 0, 0
        parsed = parse_file(MemoryFile(rel, blob_id(content), "daily", day), content,
                            chunks=False)
        return len(parsed.facts), len(parsed.warnings)

    facts, warns = count(data)
    old_facts, old_warns = count(before)
    if facts != old_facts + added or warns > old_warns:
        raise GitmemError(f"could not add the imported entries to {rel} safely (it would read "
                          "differently); nothing was written")


def _imported_before(ws: Workspace, tools: set[str], base: str | None
                     ) -> set[tuple[str, tuple[str, ...], str]]:
    """(tool, entity keys, first line) of every entry in the tools' import notes at HEAD."""
    folder = ws.root / "memory"
    rels = sorted(f"memory/{p.name}" for tool in tools
                  for p in folder.glob(f"*-import-{tool}.md")) if folder.is_dir() else []
    found = files_at(ws.repo_root, base, [ws.prefix + r for r in rels])
    out: set[tuple[str, tuple[str, ...], str]] = set()
    for rel in rels:
        data = found[ws.prefix + rel]
        if data is None:
            continue
        tool = rel.rsplit("-import-", 1)[1].removesuffix(".md")
        parsed = parse_file(MemoryFile(rel, blob_id(data), "note", None), data, chunks=False)
        for fact in parsed.facts:
            out.add((tool, *_key(fact.subjects, fact.text.splitlines()[0])))
    return out


def _message(report: ImportReport) -> str:
    n = report.added
    name = Path(report.source).name or report.source
    body = [f"Format: {report.fmt}", f"Source: {report.source}",
            f"Read {report.read} items: added {n}, {report.already} imported before, "
            f"{len(report.refused)} refused", "", "Files:"]
    body += [f"- {f.path} ({len(f.entries)})" for f in report.files]
    return (f"memory: import {n} entr{'y' if n == 1 else 'ies'} from {report.fmt} ({name})\n\n"
            + "\n".join(body))


def _update_disk(ws: Workspace, report: ImportReport) -> None:
    """Like retain: a note as committed gets the new bytes; one with uncommitted edits gets
    the entries appended to those edits."""
    for f in report.files:
        path = ws.root / f.path
        if path.is_symlink() or path.parent.is_symlink():
            continue
        on_disk = path.read_bytes() if path.is_file() else None
        data = f.new
        if on_disk is not None and on_disk != f.old:
            data = on_disk
            for lines in f.entries:
                data, _ = appended(data, list(lines), f.path, _day_of(f.path))
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.gitmem-{os.getpid()}")
        tmp.write_bytes(data)
        os.replace(tmp, path)


def _day_of(rel: str) -> date:
    return date.fromisoformat(rel.removeprefix("memory/")[:10])
