"""``gitmem forget``: take named Retain entries out of the memory (docs/forget.md).

A ref names what to forget: a fact id (every place it stands now), a citation ``path#Lline``
(the entry holding that line at HEAD, or at ``@commit`` when the citation names one), or an
entity with an optional piece of its text. Each entry goes with its nested items and
continuation lines, and the digest lines of entity pages that cite it go too (the generated
block of ``bank/entities/<Slug>.md``), all in one commit built like retain's: HEAD's files
without those lines, so a person's uncommitted edits of the same files stay in the work tree,
uncommitted, where the same lines are removed as well. The commit message says why and which
facts (by id and citation, never their text: a purge need not rewrite it).

History keeps what was forgotten (``recall --as-of`` before the commit still finds it); the
purge (``gitmem.reflect.purge``) takes it out of every commit.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gitmem.config import Config
from gitmem.domain import Citation, Fact, Kind, MemoryFile
from gitmem.errors import GitmemError, UsageError
from gitmem.git import blob_id, commit_files, files_at, files_containing, head_id
from gitmem.locks import file_lock
from gitmem.parse.markdown import decode, parse_file
from gitmem.parse.retain import entity_key
from gitmem.reflect.append import LOCK_SECONDS
from gitmem.reflect.entity_summaries import ENTITIES_DIR, digest_entry, digest_text, generated_span
from gitmem.reflect.textfile import Editor, split_text
from gitmem.workspace import OPINIONS_PATH, Workspace, classify, ensure_memory_dir

REF_FORMS = ("a fact id (f-3fa9c2e11aa0) or a citation (memory/2025-11-10.md#L14), as "
             "{command_recall} shows them in its JSON")
_CITATION = re.compile(r"^(?P<path>[^#]+)#L(?P<line>\d+)(?:-L?\d+)?"
                       r"(?:@(?P<commit>[0-9A-Za-z._/~^-]+))?$")
_FACT_ID = re.compile(r"^f-[0-9a-f]{12}$")


@dataclass(frozen=True)
class Forgotten:
    """One entry taken out: where it stood at HEAD and what it said."""

    fact_id: str
    path: str
    start_line: int
    end_line: int
    kind: Kind
    text: str
    entities: tuple[str, ...]
    lines: tuple[str, ...]  # the file's lines as they were (the entry and its nested items)

    @property
    def source(self) -> str:
        return str(Citation(self.path, self.start_line, self.end_line))

    def to_json(self) -> dict[str, Any]:
        return {"fact_id": self.fact_id, "path": self.path, "start_line": self.start_line,
                "end_line": self.end_line, "source": self.source, "kind": self.kind,
                "text": self.text, "entities": list(self.entities), "lines": list(self.lines)}


@dataclass(frozen=True)
class PageLine:
    """A digest line of an entity page's generated block that cites a forgotten entry."""

    path: str
    line: int
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "line": self.line, "text": self.text}


@dataclass(frozen=True)
class ForgetPlan:
    """What a forget would remove, made from HEAD (``base``); nothing written yet."""

    base: str
    entries: tuple[Forgotten, ...]
    page_lines: tuple[PageLine, ...]
    old: Mapping[str, bytes]  # workspace-relative path -> its content at HEAD
    new: Mapping[str, bytes]  # ... and without the forgotten lines
    fact_ids: Mapping[str, frozenset[str]]  # memory file -> the fact ids taken out of it
    still_cited: tuple[str, ...]  # bank/opinions.md lines that cite a forgotten fact id

    def preview(self) -> list[str]:
        """What a person confirms: every entry with its lines, every page line."""
        n = len(self.entries)
        out = [f"forget {n} entr{'y' if n == 1 else 'ies'}:"]
        for e in self.entries:
            out.append(f"  {e.fact_id}  {e.source}")
            out += [f"    {line}" for line in e.lines]
        for p in self.page_lines:
            out.append(f"  and the digest line {p.path}#L{p.line}: {p.text.strip()}")
        out += [f"  note: {c} cites a forgotten fact as evidence; reflect keeps it (edit it "
                "by hand to remove it)" for c in self.still_cited]
        return out

    def to_json(self) -> dict[str, Any]:
        return {"entries": [e.to_json() for e in self.entries],
                "page_lines": [p.to_json() for p in self.page_lines],
                "still_cited": list(self.still_cited)}


@dataclass(frozen=True)
class ForgetResult:
    plan: ForgetPlan
    commit: str
    reason: str | None
    not_indexed: str | None = None  # why the index does not show the commit yet
    disk_kept: tuple[str, ...] = ()  # files whose uncommitted version still holds an entry

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "reason": self.reason, **self.plan.to_json(),
                "not_indexed": self.not_indexed, "disk_kept": list(self.disk_kept)}


# -- what the refs name ------------------------------------------------------------------------


def plan_forget(ws: Workspace, cfg: Config, refs: Sequence[str], *, entity: str | None = None,
                match: str | None = None) -> ForgetPlan:
    """Resolve the refs (and the entity selection) against HEAD; UsageError for a ref that
    names nothing, so nothing is forgotten by half."""
    from gitmem.index.replay import index_workspace

    if not refs and entity is None:
        raise UsageError("name what to forget: fact ids or citations (REF...), or --entity "
                         "NAME [--match TEXT]")
    if match is not None and entity is None:
        raise UsageError("--match needs --entity NAME (the entity whose facts to search)")
    base = head_id(ws.repo_root)
    if base is None:
        raise GitmemError("the repository has no commits yet: nothing to forget")
    index_workspace(ws, cfg)
    wanted: dict[str, set[str]] = {}
    for ref in refs:
        for rel, fact_id in _resolve(ws, cfg, base, ref.strip()):
            wanted.setdefault(rel, set()).add(fact_id)
    if entity is not None:
        for rel, fact_id in _selected(ws, entity, match):
            wanted.setdefault(rel, set()).add(fact_id)
    return _plan(ws, cfg, base, {k: frozenset(v) for k, v in sorted(wanted.items())})


def _resolve(ws: Workspace, cfg: Config, base: str, ref: str) -> list[tuple[str, str]]:
    if _FACT_ID.match(ref):
        places = _places(ws, [ref]).get(ref)
        if not places:
            raise UsageError.naming("{ref}: names no current fact (give " + REF_FORMS
                                    + "); nothing was forgotten", ref=ref)
        return [(rel, ref) for rel in places]
    found = _CITATION.match(ref)
    if found is None:
        raise UsageError.naming("{ref!r} is not a ref: give " + REF_FORMS
                                + "; nothing was forgotten", ref=ref)
    rel, line, rev = found["path"], int(found["line"]), found["commit"]
    at = base
    if rev is not None:
        from gitmem.git import resolve_commit

        at = resolve_commit(ws.repo_root, rev) or ""
        if not at:
            raise UsageError(f"{ref}: {rev!r} names no commit; nothing was forgotten")
    fact = _fact_at(ws, cfg, at, rel, line)
    if fact is None:
        raise UsageError(f"{ref}: no Retain entry holds that line (at {at[:7]}); nothing was "
                         "forgotten")
    if at == base:
        return [(rel, fact.fact_id)]
    places = _places(ws, [fact.fact_id]).get(fact.fact_id)
    if not places:
        raise UsageError(f"{ref}: the entry ({fact.fact_id}) is no longer in the memory; "
                         "nothing was forgotten")
    return [(p, fact.fact_id) for p in places]


def _fact_at(ws: Workspace, cfg: Config, commit: str, rel: str, line: int) -> Fact | None:
    found = classify(rel, cfg.extra_paths)
    if found is None:
        raise UsageError(f"{rel} is not a memory file (docs/memory-format.md); nothing was "
                         "forgotten")
    data = files_at(ws.repo_root, commit, [ws.prefix + rel])[ws.prefix + rel]
    if data is None:
        return None
    parsed = parse_file(MemoryFile(rel, blob_id(data), found[0], found[1]), data, chunks=False)
    return next((f for f in parsed.facts if f.start_line <= line <= f.end_line), None)


def _places(ws: Workspace, fact_ids: Sequence[str]) -> dict[str, list[str]]:
    from gitmem.index import queries
    from gitmem.index.store import open_store

    store = open_store(ws.index_path, readonly=True)
    try:
        return queries.current_fact_paths(store, fact_ids)
    finally:
        store.close()


def _selected(ws: Workspace, entity: str, match: str | None) -> list[tuple[str, str]]:
    """(file, fact id) of each current fact naming the entity (or an alias) whose text holds
    ``match`` (case-insensitive)."""
    from gitmem.index import queries
    from gitmem.index.store import open_store

    store = open_store(ws.index_path, readonly=True)
    try:
        keys = queries.entity_with_aliases(store, entity_key(entity.lstrip("@")))
        if keys is None:
            raise UsageError(f"no entity named {entity!r} in the memory; nothing was forgotten")
        rows = queries.current_facts_naming(store, keys)
    finally:
        store.close()
    needle = (match or "").casefold()
    picked = [(str(r["path"]), str(r["fact_id"])) for r in rows
              if needle in str(r["content"]).casefold()]
    if not picked:
        what = f" whose text holds {match!r}" if match else ""
        raise UsageError(f"no current fact about {entity}{what}; nothing was forgotten")
    return picked


# -- the new files -----------------------------------------------------------------------------


def _plan(ws: Workspace, cfg: Config, base: str,
          wanted: Mapping[str, frozenset[str]]) -> ForgetPlan:
    rels = list(wanted)
    at_head = files_at(ws.repo_root, base, [ws.prefix + r for r in rels])
    old: dict[str, bytes] = {}
    new: dict[str, bytes] = {}
    entries: list[Forgotten] = []
    for rel in rels:
        data = at_head[ws.prefix + rel]
        if data is None:
            continue
        kept, gone = without_facts(cfg, rel, data, wanted[rel])
        old[rel], new[rel] = data, kept
        entries += gone
    if not entries:
        raise UsageError("the refs name no entry in the files at HEAD; nothing was forgotten")
    pages = _page_edits(ws, base, entries)
    page_lines: list[PageLine] = []
    for rel, (data, kept, dropped) in pages.items():
        old[rel], new[rel] = data, kept
        page_lines += dropped
    return ForgetPlan(base, tuple(entries), tuple(page_lines), old, new, dict(wanted),
                      _still_cited(ws, base, entries))


def without_facts(cfg: Config, rel: str, data: bytes, fact_ids: Collection[str]
                  ) -> tuple[bytes, list[Forgotten]]:
    """The file without the entries that carry these fact ids (each with its nested lines),
    and those entries; GitmemError when the rest of the file would read differently."""
    found = classify(rel, cfg.extra_paths)
    if found is None:
        raise GitmemError(f"{rel} is not a memory file")
    text, warns = decode(data, rel)
    if text is None or any(w.code in ("encoding", "binary", "nul-byte") for w in warns):
        raise GitmemError(f"refusing to edit {rel}: it is not clean UTF-8 text; fix it first")
    mf = MemoryFile(rel, blob_id(data), found[0], found[1])
    facts = parse_file(mf, data, chunks=False).facts
    hits = [f for f in facts if f.fact_id in fact_ids]
    lines = split_text(data)
    editor = Editor(lines)
    gone: list[Forgotten] = []
    for f in hits:
        editor.dropped.update(range(f.start_line - 1, f.end_line))
        gone.append(Forgotten(f.fact_id, rel, f.start_line, f.end_line, f.kind, f.text,
                              f.entities, lines.lines[f.start_line - 1:f.end_line]))
    kept = editor.result().encode()
    left = [f.fact_id for f in parse_file(MemoryFile(rel, blob_id(kept), found[0], found[1]),
                                          kept, chunks=False).facts]
    if sorted(left) != sorted(f.fact_id for f in facts if f.fact_id not in fact_ids):
        raise GitmemError(f"could not take the entries out of {rel} safely (the rest of the "
                          "file would read differently); nothing was forgotten")
    return kept, gone


def _page_edits(ws: Workspace, base: str, entries: Sequence[Forgotten]
                ) -> dict[str, tuple[bytes, bytes, list[PageLine]]]:
    """Entity pages whose generated block shows a forgotten entry (its citation, or its text
    under an older citation): (HEAD's page, the page without those digest lines, the lines)."""
    shown = _shown(entries)
    folder = ws.prefix + ENTITIES_DIR
    pages = sorted({p.removeprefix(ws.prefix) for needle in shown
                    for p in files_containing(ws.repo_root, needle, folder, base)})
    found = files_at(ws.repo_root, base, [ws.prefix + p for p in pages])
    out: dict[str, tuple[bytes, bytes, list[PageLine]]] = {}
    for rel in pages:
        data = found[ws.prefix + rel]
        if data is None:
            continue
        kept, dropped = without_digest_lines(rel, data, shown)
        if dropped:
            out[rel] = (data, kept, dropped)
    return out


def _shown(entries: Sequence[Forgotten]) -> set[str]:
    """How digest lines show the entries: their citations and their texts."""
    return {e.source for e in entries} | {digest_text(e.text) for e in entries}


def without_digest_lines(rel: str, data: bytes, shown: Collection[str]
                         ) -> tuple[bytes, list[PageLine]]:
    """A page without the lines of its generated block that show one of the entries (by its
    citation or its text, ``_shown``)."""
    text = split_text(data)
    editor = Editor(text)
    dropped: list[PageLine] = []
    for i in generated_span(text.lines):
        found = digest_entry(text.lines[i])
        if found is not None and (found[0] in shown or found[1] in shown):
            editor.dropped.add(i)
            dropped.append(PageLine(rel, i + 1, text.lines[i]))
    return editor.result().encode(), dropped


def _still_cited(ws: Workspace, base: str, entries: Sequence[Forgotten]) -> tuple[str, ...]:
    data = files_at(ws.repo_root, base, [ws.prefix + OPINIONS_PATH])[ws.prefix + OPINIONS_PATH]
    if data is None:
        return ()
    ids = {e.fact_id for e in entries}
    return tuple(f"{OPINIONS_PATH}#L{i}" for i, line in enumerate(split_text(data).lines, 1)
                 if any(f in line for f in ids))


# -- doing it ----------------------------------------------------------------------------------


def commit_message(plan: ForgetPlan, reason: str | None) -> str:
    """Why and which (ids and citations only: the text itself is what is being forgotten)."""
    n = len(plan.entries)
    files = sorted({e.path for e in plan.entries})
    shown = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    body = [f"Why: {reason.strip()}" if reason and reason.strip()
            else "Why: no reason given (gitmem forget --reason)", "", "Forgotten:"]
    body += [f"- {e.fact_id} {e.source}" for e in plan.entries]
    pages = sorted({p.path for p in plan.page_lines})
    if pages:
        body += ["", "Digest lines removed from: " + ", ".join(pages)]
    return f"memory: forget {n} entr{'y' if n == 1 else 'ies'} ({shown})\n\n" + "\n".join(body)


def forget(ws: Workspace, cfg: Config, plan: ForgetPlan, *, reason: str | None = None
           ) -> ForgetResult:
    """Commit the plan (HEAD's files without the lines, nothing else), take the same lines out
    of the files on disk, and re-index, so recall stops returning them at once."""
    from gitmem.index.replay import index_workspace

    ensure_memory_dir(ws)
    with file_lock(ws.memory_dir / "retain.lock", wait=True, timeout=LOCK_SECONDS,
                   busy="another agent is writing memory; try again in a moment"):
        if head_id(ws.repo_root) != plan.base:
            raise GitmemError("the memory changed since the preview (a new commit); nothing "
                              "was forgotten: run it again")
        for rel in plan.new:
            _refuse_links(ws, rel)
        commit = commit_files(ws.repo_root, {ws.prefix + r: d for r, d in plan.new.items()},
                              commit_message(plan, reason), base=plan.base)
        kept = _update_disk(ws, cfg, plan)
    try:
        index_workspace(ws, cfg)
    except GitmemError as exc:
        return ForgetResult(plan, commit, reason, str(exc), kept)
    return ForgetResult(plan, commit, reason, None, kept)


def _refuse_links(ws: Workspace, rel: str) -> None:
    path = ws.root / rel
    if any(p.is_symlink() for p in (path, *path.parents) if p.is_relative_to(ws.root)
           and p != ws.root):
        raise GitmemError(f"refusing to write {rel}: it is reached through a symbolic link")


def _update_disk(ws: Workspace, cfg: Config, plan: ForgetPlan) -> tuple[str, ...]:
    """The work tree: a file as committed gets the new bytes; one with uncommitted edits loses
    the same lines and keeps its edits. Returns the files where that could not be done."""
    shown = _shown(plan.entries)
    kept: list[str] = []
    for rel, new in plan.new.items():
        path = ws.root / rel
        try:
            on_disk = path.read_bytes()
        except FileNotFoundError:
            continue  # removed in the work tree: nothing of it left to forget
        if on_disk == plan.old[rel]:
            data = new
        else:
            try:
                data = (without_facts(cfg, rel, on_disk, plan.fact_ids[rel])[0]
                        if rel in plan.fact_ids
                        else without_digest_lines(rel, on_disk, shown)[0])
            except GitmemError:
                kept.append(rel)
                continue
        if data != on_disk:
            tmp = path.with_name(f".{path.name}.gitmem-{os.getpid()}")
            tmp.write_bytes(data)
            os.chmod(tmp, path.stat().st_mode & 0o7777)
            os.replace(tmp, path)
    return tuple(kept)
