"""``gitmem retain``: append one well-formed Retain entry to today's daily note and commit it.

An agent writes memory through this door instead of editing Markdown by hand: the entry is
checked against the grammar (docs/memory-format.md) before anything is written, placed at the end of
the note's ``## Retain`` section (made when missing), checked again by the real parser in its new
place, and committed alone: HEAD's note plus the entry, built from git, so an uncommitted edit
of the note stays in the work tree, uncommitted (README, "What gitmem commits"). A lock around
append and commit lets two agents retain at once: both entries land, one commit each.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from gitmem.config import Config
from gitmem.domain import Citation, Fact, Kind, MemoryFile
from gitmem.errors import GitmemError, UsageError
from gitmem.git import blob_id, commit_files, files_at, head_id
from gitmem.locks import file_lock
from gitmem.parse.markdown import decode, parse_file, retain_sections, split_lines
from gitmem.parse.retain import EntryLines, parse_entry
from gitmem.workspace import Workspace, ensure_memory_dir

GRAMMAR = (
    "a Retain entry is one line '<KIND>[(c=<confidence>)] [@Entity ...]: <text>' where KIND is "
    "W (a fact about the world), B (something the agent did, first person), O (an opinion; "
    "c=0.0..1.0 optional) or S (an observation); entities are @ and a slug "
    "(letters, digits, _ - .). Examples: 'W @Peter @The-Castle: Moved the gateway host to The "
    "Castle.', 'O(c=0.8) @Peter: Prefers short replies.', 'B: Fixed the WS crash.' "
    "Indented continuation lines may follow; headings and code fences may not."
)
LOCK_SECONDS = 60.0
# Lines that would end the list item or the section instead of continuing the entry.
BREAKING = re.compile(r"^\s*(#|```|~~~|=+\s*$|-{3,}\s*$|\*{3,}\s*$|_{3,}\s*$|<!--)")


@dataclass(frozen=True)
class RetainResult:
    path: str
    start_line: int
    end_line: int
    commit: str
    fact_id: str
    kind: Kind
    text: str
    entities: tuple[str, ...]
    confidence: float | None
    created: bool  # the daily note did not exist before

    @property
    def source(self) -> str:
        return str(Citation(self.path, self.start_line, self.end_line))

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "source": self.source,
            "commit": self.commit,
            "fact_id": self.fact_id,
            "kind": self.kind,
            "text": self.text,
            "entities": list(self.entities),
            "confidence": self.confidence,
            "created": self.created,
        }


def entry_lines(entry: str) -> list[str]:
    """The Markdown lines of an entry: a '- ' bullet, continuation lines indented two spaces.

    Refuses (UsageError naming the grammar) what could not be one Retain item."""
    raw = [ln.rstrip() for ln in entry.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    while raw and not raw[-1].strip():
        raw.pop()
    while raw and not raw[0].strip():
        raw.pop(0)
    if not raw:
        raise UsageError(f"empty Retain entry; {GRAMMAR}")
    head = re.sub(r"^\s*[-*+]\s+", "", raw[0]).strip()
    rest = [ln for ln in raw[1:] if ln.strip()]
    for line in rest:
        if BREAKING.match(line):
            raise UsageError(f"refusing the entry: the line {line.strip()!r} would break the "
                             f"daily note's structure; {GRAMMAR}")
    return [f"- {head}", *(f"  {ln.strip()}" for ln in rest)]


def check_entry(lines: list[str], path: str, day: date) -> Fact:
    """The fact an entry states, or a UsageError that shows the grammar."""
    fact, warns = parse_entry(EntryLines(1, tuple(lines)), path, day)
    if fact is None and all(w.code == "retain-malformed" for w in warns):
        raise UsageError(f"not a Retain entry: {lines[0][2:]!r}; {GRAMMAR}")
    if fact is None or warns:
        problems = "; ".join(w.message for w in warns)
        raise UsageError(f"malformed Retain entry ({problems}); {GRAMMAR}")
    return fact


def retain(ws: Workspace, cfg: Config, entry: str, *, day: date | None = None,
           message: str | None = None, replaces: Sequence[str] = (),
           keeps: Sequence[str] = (), importance: int | None = None) -> RetainResult:
    """Append ``entry`` to ``memory/<day>.md`` (today, local time) and commit that file alone.

    The commit holds the note as it stands at HEAD plus the entry, never an uncommitted edit of
    the note (an agent's unfinished line): that stays in the work tree, uncommitted, beside the
    entry, which is appended there too."""
    day = day or datetime.now().astimezone().date()
    rel = f"memory/{day.isoformat()}.md"
    lines = entry_lines(entry)
    if importance is not None:  # OpenClaw's annotation, set once when written (parse.annotations)
        if not 1 <= importance <= 10:
            raise UsageError.naming("{importance} must be a whole number from 1 to 10, not "
                                    "{value}", value=importance)
        lines[0] += f" <!-- importance: {importance} -->"
    if replaces:  # a declared replacement: a nested item the parser reads (docs/memory-format)
        lines.append(f"  - replaces: {', '.join(replaces)}")
    if keeps:  # a declared non-replacement: corrects a wrong mark of the rule
        lines.append(f"  - keeps: {', '.join(keeps)}")
    fact = check_entry(lines, rel, day)
    ensure_memory_dir(ws)
    with file_lock(ws.memory_dir / "retain.lock", wait=True, timeout=LOCK_SECONDS,
                   busy="another agent is retaining memory; try again in a moment"):
        full = ws.root / rel
        _refuse_links(ws, rel)
        base = head_id(ws.repo_root)
        committed = files_at(ws.repo_root, base, [ws.prefix + rel])[ws.prefix + rel]
        data, start = appended(committed or b"", lines, rel, day)
        placed = _verify(data, rel, day, start, fact)
        on_disk = full.read_bytes() if full.is_file() else None
        if on_disk != committed:  # uncommitted edits: the entry joins them in the work tree
            kept, at = appended(on_disk or b"", lines, rel, day)
            _verify(kept, rel, day, at, fact, uncommitted=True)
        else:
            kept = data
        summary = lines[0][2:]
        commit = commit_files(ws.repo_root, {ws.prefix + rel: data},
                              message or f"memory: retain {_shorten(summary, 60)}", base=base)
        full.parent.mkdir(parents=True, exist_ok=True)
        tmp = full.with_name(f".{full.name}.gitmem-{os.getpid()}")
        tmp.write_bytes(kept)
        os.replace(tmp, full)
    return RetainResult(rel, placed.start_line, placed.end_line, commit, placed.fact_id,
                        placed.kind, placed.text, placed.entities, placed.confidence,
                        committed is None)


def _refuse_links(ws: Workspace, rel: str) -> None:
    path = ws.root / rel
    for part in (path, path.parent):
        if part.is_symlink():
            raise GitmemError(f"refusing to write {rel}: {part} is a symbolic link")


def appended(old: bytes, lines: list[str], rel: str, day: date) -> tuple[bytes, int]:
    """The note with the entry appended to its last Retain section, and the entry's line; when
    the note holds the same entry already and this one adds '- replaces:' or '- keeps:' items
    (an agent confirming what its entry replaces, or correcting a mark), they are added under
    it instead."""
    confirmed = _confirmed(old, lines, rel, day)
    if confirmed is not None:
        return confirmed
    bom = b"\xef\xbb\xbf" if old.startswith(b"\xef\xbb\xbf") else b""
    text, warns = decode(old, rel)
    if text is None or any(w.code in ("encoding", "binary", "nul-byte") for w in warns):
        raise GitmemError(f"refusing to write {rel}: it is not clean UTF-8 text; fix it first")
    newline = "\r\n" if "\r\n" in text else "\n"
    body = split_lines(text)
    if body and body[-1] == "":
        body.pop()
    sections = retain_sections(text, rel) if body else []
    if sections:
        last = sections[-1]
        at = last.end_line
        while at > last.start_line and not body[at - 1].strip():
            at -= 1
        new = [*body[:at], *lines, *body[at:]]
        start = at + 1
    else:
        prefix = list(body) if body else [f"# {day.isoformat()}"]
        if prefix[-1].strip():
            prefix.append("")
        new = [*prefix, "## Retain", *lines]
        start = len(prefix) + 2
    return bom + (newline.join(new) + newline).encode("utf-8"), start


def _confirmed(old: bytes, lines: list[str], rel: str,
               day: date) -> tuple[bytes, int] | None:
    nested = [ln for ln in lines[1:] if ln.lstrip().startswith(("- replaces:", "- keeps:"))]
    if not old or not nested:
        return None
    text, _ = decode(old, rel)
    if text is None:
        return None
    plain = parse_entry(EntryLines(1, tuple(ln for ln in lines if ln not in nested)), rel,
                        day)[0]
    parsed = parse_file(MemoryFile(rel, blob_id(old), "daily", day), old)
    same = next((f for f in parsed.facts if plain is not None and f.fact_id == plain.fact_id
                 and not f.replaces and not f.keeps), None)
    if same is None:
        return None
    newline = "\r\n" if "\r\n" in text else "\n"
    body = split_lines(text)
    if body and body[-1] == "":
        body.pop()
    new = [*body[:same.end_line], *nested, *body[same.end_line:]]
    bom = b"\xef\xbb\xbf" if old.startswith(b"\xef\xbb\xbf") else b""
    return bom + (newline.join(new) + newline).encode("utf-8"), same.start_line


def _verify(data: bytes, rel: str, day: date, start: int, fact: Fact, *,
            uncommitted: bool = False) -> Fact:
    """The entry as the indexer will read it from the new note: same fact, no warning."""
    parsed = parse_file(MemoryFile(rel, blob_id(data), "daily", day), data)
    placed = next((f for f in parsed.facts if f.start_line == start), None)
    where = f"{rel} with its uncommitted edits" if uncommitted else rel
    if placed is None or placed.fact_id != fact.fact_id:
        raise GitmemError(f"could not append the entry to {where} safely (the note's structure "
                          "would change its meaning); nothing was written")
    if any(placed.start_line <= w.line <= placed.end_line for w in parsed.warnings):
        raise GitmemError(f"the entry would be read with warnings in {where}; nothing was "
                          "written")
    return placed


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Candidate:
    """An earlier fact about the same subjects that a new entry may replace."""

    fact_id: str
    source: str
    text: str
    stated: str
    rule: bool  # the knowledge-update rule finds that the new entry replaces it

    def to_json(self) -> dict[str, Any]:
        return {"fact_id": self.fact_id, "source": self.source, "text": self.text,
                "date": self.stated, "rule": self.rule}


@dataclass(frozen=True)
class Retained:
    """A retain and what became of indexing it."""

    result: RetainResult
    not_indexed: str | None = None  # why the committed entry is not in the index yet
    replaces: tuple[str, ...] = ()  # the fact ids its '- replaces:' item names
    may_replace: tuple[Candidate, ...] = ()  # earlier facts about its subjects, to confirm
    keeps: tuple[str, ...] = ()  # the fact ids its '- keeps:' item names

    def to_json(self) -> dict[str, Any]:
        return {**self.result.to_json(), "replaces": list(self.replaces),
                "keeps": list(self.keeps),
                "may_replace": [c.to_json() for c in self.may_replace]}

    @property
    def not_indexed_note(self) -> str:
        """What a front end says when the entry is committed but not indexed yet."""
        return f"{self.result.source} committed, not indexed yet: {self.not_indexed}"


MAY_REPLACE = 5  # earlier facts a retain answers with (those the rule matches first)


def retain_and_index(ws: Workspace, cfg: Config, entry: str, *, day: date | None = None,
                     message: str | None = None, replaces: Sequence[str] = (),
                     keeps: Sequence[str] = (), importance: int | None = None) -> Retained:
    """What both front ends do (``gitmem retain``, ``memory_retain``): retain, bring the index
    up to the new commit, and embed the note's new items before answering, so the next search
    finds the entry by meaning as well as by its words (the rest of the index is left to hooks
    and 'gitmem index'). A loaded local model stays loaded for the next call. The entry is
    committed first: a failure after that only delays finding it, and is reported, not raised;
    a model that fails leaves the entry to lexical search, as recall then says."""
    from gitmem.embed.base import EmbeddingError
    from gitmem.embed.selection import select
    from gitmem.index.replay import index_workspace
    from gitmem.index.vectors import embed_pending

    replaces = tuple(r.strip() for r in replaces)  # a ref as a person or an agent types it
    keeps = tuple(r.strip() for r in keeps)
    named: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    if replaces or keeps:
        index_workspace(ws, cfg)
        named = _named_facts(ws, replaces)
        kept = _named_facts(ws, keeps, "keeps")
    result = retain(ws, cfg, entry, day=day, message=message, replaces=replaces, keeps=keeps,
                    importance=importance)
    try:
        index_workspace(ws, cfg)
        candidates = _may_replace(ws, result)
        embedder = select(cfg).embedder
        if embedder is not None:
            embed_pending(ws, cfg, embedder, path=result.path)
    except EmbeddingError:
        return Retained(result, None, named, _may_replace(ws, result), kept)
    except GitmemError as exc:
        return Retained(result, str(exc), named, keeps=kept)
    return Retained(result, None, named, candidates, kept)


_NAMES_NOTHING = ("{%s} {ref}: names no current fact (give a fact id such as f-3fa9c2e11aa0 or a "
                  "citation such as memory/2025-11-10.md#L14, as {command_recall} shows them in "
                  "its JSON); nothing was written")


def _named_facts(ws: Workspace, refs: Sequence[str],
                 option: Literal["replaces", "keeps"] = "replaces") -> tuple[str, ...]:
    """The fact ids these refs name now, or a UsageError naming the ref that names none."""
    from gitmem.index import queries
    from gitmem.index.store import open_store

    store = open_store(ws.index_path, readonly=True)
    try:
        out: list[str] = []
        for ref in refs:
            row = queries.current_fact_named(store, ref)
            if row is None:
                raise UsageError.naming(_NAMES_NOTHING % option, ref=ref)
            out.append(str(row["fact_id"]))
        return tuple(dict.fromkeys(out))
    finally:
        store.close()


def _may_replace(ws: Workspace, result: RetainResult) -> tuple[Candidate, ...]:
    """Earlier current facts about the new entry's subjects, those the replacement graph says
    it replaced first: what an agent may confirm with ``--replaces`` (or correct with
    ``--keeps``)."""
    from gitmem.index import graph, queries
    from gitmem.index.store import open_store
    from gitmem.parse.retain import entity_key
    from gitmem.parse.statements import STATE_KINDS
    from gitmem.recall.update_marks import citation, stated

    keys = sorted({entity_key(e) for e in result.entities} - {""})
    if not keys:
        return ()
    store = open_store(ws.index_path, readonly=True)
    try:
        rows = queries.current_facts_about(store, keys, 200)
        new = next((r for r in rows if r["fact_id"] == result.fact_id), None)
        if new is None:
            return ()
        rows = [r for r in rows if r["fact_id"] != result.fact_id and r["kind"] in STATE_KINDS]
        marked = graph.replaced_by_item(store, int(new["id"]))
        scored = [(int(r["id"]) in marked, r) for r in rows]
        scored.sort(key=lambda pair: not pair[0])  # stable: newest first within each
        return tuple(Candidate(str(r["fact_id"]), citation(r), str(r["content"]), stated(r),
                               rule) for rule, r in scored[:MAY_REPLACE])
    finally:
        store.close()
