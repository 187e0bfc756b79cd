"""``gitmem reflect``: turn the facts recorded in a window into opinion updates,
entity pages and proposed MEMORY.md edits, written back as Markdown.

One run, under ``.memory/reflect.lock``: bring the index up to HEAD, read the facts recorded in
the window from it, read ``bank/opinions.md``, the entity pages and MEMORY.md from the work tree,
compute every file's new bytes, write the ones that differ (each atomically). With ``--commit``
the commit holds only reflect's changes: made to those files as they are at HEAD, so a hand
edit still pending in one of them stays in the work tree, uncommitted, beside the same changes.
No network, no language model.

Idempotent by construction: an ``O`` entry already cited as evidence is never applied again, and
entity blocks and proposals are functions of the memory as it stands, not of the clock. Nothing
reflect writes is read back as a fact (entity blocks hold no Retain entries; the proposal is not
a ``.md`` file), so its own commit, once indexed, gives the next run nothing to do.
"""

from __future__ import annotations

import math
import os
import shlex
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gitmem.config import Config
from gitmem.domain import Citation, Warn, WrittenKind
from gitmem.errors import GitmemError
from gitmem.git import commit_files, files_at, files_containing, head_id
from gitmem.index.reflect_queries import (
    EntityNames,
    FactRow,
    entity_names,
    fact_links,
    facts_by_fact_id,
    facts_by_id,
    facts_recorded,
    replaced_facts,
)
from gitmem.index.run import index_is_current
from gitmem.index.store import Store, open_store
from gitmem.locks import file_lock
from gitmem.parse.judgements import Similarity
from gitmem.parse.opinions import OPINIONS_PATH
from gitmem.parse.retain import entity_key
from gitmem.parse.stale import STALE_BEGIN, is_stale_begin
from gitmem.parse.timeparse import build_window
from gitmem.parse.visible import hidden_characters, visible
from gitmem.reflect import pending, warned
from gitmem.reflect.entity_summaries import (
    ENTITIES_DIR,
    EntityDigest,
    PageOpinion,
    group_links,
    page_path,
    render_block,
    splice,
    summarise,
)
from gitmem.reflect.opinion_update import DormantOpinion, OpinionChange, dormant, plan_opinions
from gitmem.reflect.opinionfile import (
    OpinionsFile,
    merged_evidence_ids,
    read_opinions,
    write_opinions,
)
from gitmem.reflect.proposals import (
    PROPOSAL_PATH,
    Proposal,
    ProposalParams,
    propose,
    render_patch,
)
from gitmem.reflect.rule import RuleParams
from gitmem.reflect.textfile import split_text
from gitmem.workspace import Workspace, ensure_memory_dir

LOCK_NAME = "reflect.lock"
SUBJECT = "gitmem reflect"


@dataclass(frozen=True)
class FileChange:
    path: str  # workspace-relative
    action: str  # create | update | delete
    kind: WrittenKind
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "action": self.action, "kind": self.kind,
                "reason": self.reason}


@dataclass(frozen=True)
class PageChange:
    entity: str
    path: str
    created: bool
    new_facts: tuple[str, ...]  # citations of the window's facts about the entity
    merged: bool = False  # the block was merged from two machines (stale): written again

    @property
    def reason(self) -> str:
        n = len(self.new_facts)
        facts = f"{n} new fact{'s' if n != 1 else ''} about {self.entity}"
        if not self.merged:
            return facts
        return "merged from two machines, written again" + (f"; {facts}" if n else "")

    def to_json(self) -> dict[str, Any]:
        return {"entity": self.entity, "path": self.path, "created": self.created,
                "reason": self.reason, "evidence": list(self.new_facts), "merged": self.merged}


@dataclass
class ReflectReport:
    """What a run found and changed (or, with ``dry_run``, would change)."""

    since: str | None
    window_start: str | None
    dry_run: bool
    facts_read: int = 0
    opinions: list[OpinionChange] = field(default_factory=list)
    pages: list[PageChange] = field(default_factory=list)
    proposals: list[Proposal] = field(default_factory=list)
    files: list[FileChange] = field(default_factory=list)
    warnings: list[Warn] = field(default_factory=list)
    commit: str | None = None
    seconds: float = 0.0
    # files an earlier run wrote and could not commit, which this run's commit holds, and
    # that run's commit message
    resumed: tuple[str, ...] = ()
    earlier_message: str | None = None
    # entities with new facts but no page, and fewer facts than a new page needs
    sparse: tuple[str, ...] = ()
    min_facts: int = 0
    # opinions on one entry, none since this day (reflect.dormant_days before the run)
    dormant_before: str = ""
    dormant: tuple[DormantOpinion, ...] = ()
    # the text each warning is about (a section, a page): said once per text (reflect.warned)
    contexts: dict[Warn, str] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        return bool(self.files or self.resumed)

    def to_json(self) -> dict[str, Any]:
        return {
            "since": self.since,
            "window_start": self.window_start,
            "dry_run": self.dry_run,
            "changed": self.changed,
            "facts_read": self.facts_read,
            "files": [f.to_json() for f in self.files],
            "opinions": [o.to_json() for o in self.opinions],
            "entity_pages": [p.to_json() for p in self.pages],
            "proposals": [p.to_json() for p in self.proposals],
            "commit": self.commit,
            "resumed": list(self.resumed),
            "below_min_facts": list(self.sparse),
            "dormant": [d.to_json() for d in self.dormant],
            "warnings": [{"location": w.location, "code": w.code, "message": w.message}
                         for w in self.warnings],
            "seconds": round(self.seconds, 3),
        }

    def title(self) -> str:
        """One line: what changed (the commit's subject); with nothing new, the subject of the
        run whose commit failed, which this one completes."""
        if self.earlier_message is not None and not self.files:
            return self.earlier_message.partition("\n")[0]
        updated = sum(not o.created and not o.merged for o in self.opinions)
        created = sum(o.created for o in self.opinions)
        merged = sum(o.merged for o in self.opinions)
        parts = []
        if updated:
            parts.append(f"{updated} opinion{'s' if updated != 1 else ''} updated")
        if merged:
            parts.append(f"{merged} merged opinion{'s' if merged != 1 else ''} recomputed")
        if created:
            parts.append(f"{created} new opinion{'s' if created != 1 else ''}")
        if self.pages:
            parts.append(f"{len(self.pages)} entity page{'s' if len(self.pages) != 1 else ''}")
        if any(f.kind == "proposal" for f in self.files):
            n = len(self.proposals)
            parts.append(f"{n} proposed MEMORY.md edit{'s' if n != 1 else ''}"
                         if n else "MEMORY.md proposal withdrawn")
        return f"{SUBJECT}: " + (", ".join(parts) if parts else "nothing changed")

    def lines(self) -> list[str]:
        """The report as text, one change per line, evidence indented below it."""
        out: list[str] = []
        for o in self.opinions:
            verb = "new" if o.created else f"{o.before:.2f} -> {o.after:.2f}" + (
                " (merged from two machines, recomputed)" if o.merged else "")
            out.append(f"{OPINIONS_PATH}: {o.opinion_id} {verb}: {_short(o.statement)}")
            out.append(f"  {o.reason}")
            out += [f"    {e.stance} {e.fact_id} {e.source}"
                    + ("" if e.confidence is None else f" (c={e.confidence:.2f})")
                    for e in o.evidence]
        for p in self.pages:
            out.append(f"{p.path}: {'created' if p.created else 'updated'} the generated block: "
                       f"{p.reason}")
            out += [f"    {cite}" for cite in p.new_facts[:5]]
            if len(p.new_facts) > 5:
                out.append(f"    … {len(p.new_facts) - 5} more")
        if self.resumed:
            out.append("committing what an earlier run wrote and could not commit: "
                       + ", ".join(self.resumed))
        if self.sparse:
            n = len(self.sparse)
            out.append(f"no page yet for {n} entit{'y' if n == 1 else 'ies'} with fewer than "
                       f"{self.min_facts} facts: {_names(self.sparse)}")
        if self.dormant:
            n = len(self.dormant)
            out.append(f"{n} dormant opinion{'s' if n != 1 else ''} (one O entry each, none "
                       f"since {self.dormant_before}; kept, not deleted): "
                       + _names([d.opinion_id for d in self.dormant]))
            out += [f"    {d.opinion_id} (updated {d.updated}): {_short(d.statement)}"
                    for d in self.dormant[:10]]
        for f in self.files:
            if f.kind == "proposal":
                out.append(f"{f.path}: {f.reason}")
                out += [f"  {'+' if p.action == 'add' else '-'} {p.opinion_id}: {p.reason}"
                        for p in self.proposals]
        return out

    def message(self) -> str:
        """The commit message: the title, then the report; then the message of a run whose
        commit failed, when this commit holds that run's files."""
        earlier = self.earlier_message
        if earlier is not None and not self.files:
            return earlier
        body = [ln if len(ln) <= 100 else ln[:99] + "…" for ln in self.lines()]
        if earlier is not None:
            body += ["", "Also the changes of a run whose commit failed:", *earlier.splitlines()]
        return "\n".join([self.title(), "", *body]) + "\n"


def _names(names: Sequence[str], shown: int = 10) -> str:
    more = f" … and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _short(text: str, width: int = 72) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class _Write:
    path: str  # workspace-relative
    data: bytes | None  # None: delete
    change: FileChange


def rule_params(cfg: Config) -> RuleParams:
    return RuleParams(step=cfg.reflect_step, max_move=cfg.reflect_max_move,
                      max_evidence=cfg.reflect_max_evidence, agreement=cfg.reflect_agreement,
                      default_confidence=cfg.reflect_default_confidence)


def reflect(ws: Workspace, cfg: Config, *, since: str | None = "7d", dry_run: bool = False,
            commit: bool = False, now: datetime | None = None) -> ReflectReport:
    """One reflect run. Raises LockBusy when another run holds the lock past
    ``reflect.lock_timeout``, UsageError for a bad ``since``, GitmemError when the commit fails."""
    started = time.monotonic()
    at = now or datetime.now(UTC)
    window = build_window(since=since, until=None, around=None, now=at)
    start = window.start.isoformat() if window is not None and window.start else None
    ensure_memory_dir(ws)
    with file_lock(ws.memory_dir / LOCK_NAME, wait=True, timeout=cfg.reflect_lock_timeout,
                   busy="another 'gitmem reflect' is running in this workspace (it holds "
                        f".memory/{LOCK_NAME}); try again when it finishes"):
        # Committed memory only: a note still being written (the uncommitted layer recall
        # searches) must not become evidence that a committed opinion cites.
        if not index_is_current(ws, cfg, worktree=False):
            from gitmem.index.replay import index_workspace

            index_workspace(ws, cfg, worktree=False)
        report = ReflectReport(since, start, dry_run)
        report.dormant_before = (at - timedelta(days=cfg.reflect_dormant_days)).date().isoformat()
        if commit and not dry_run:
            report.commit = _plan_and_commit(ws, cfg, start, report)
        else:
            for w in _plan(ws, cfg, start, report, _on_disk(ws)):
                if not dry_run:
                    _write(ws.root / w.path, w.data)
        if not dry_run:  # cron: a malformed section is said once, not every run
            report.warnings = warned.new_only(ws.memory_dir, report.warnings, report.contexts)
    report.seconds = time.monotonic() - started
    return report


Read = Callable[[str], "bytes | None"]  # a workspace-relative file's content (None: absent)


def _on_disk(ws: Workspace) -> Read:
    return lambda rel: _read(ws.root / rel)


class _AtCommit:
    """Files as they are in a commit, or as an earlier run wrote them and could not commit
    (``overlay``); remembers what was read."""

    def __init__(self, ws: Workspace, commit: str | None,
                 overlay: Mapping[str, bytes | None] | None = None) -> None:
        self.ws, self.commit = ws, commit
        self.seen: dict[str, bytes | None] = dict(overlay or {})

    def __call__(self, rel: str) -> bytes | None:
        if rel not in self.seen:
            self.seen[rel] = self.committed([rel])[rel]
        return self.seen[rel]

    def committed(self, rels: Sequence[str]) -> dict[str, bytes | None]:
        found = files_at(self.ws.repo_root, self.commit, [self.ws.prefix + r for r in rels])
        return {r: found[self.ws.prefix + r] for r in rels}


def _plan_and_commit(ws: Workspace, cfg: Config, start: str | None,
                     report: ReflectReport) -> str | None:
    """``--commit``: commit reflect's changes made to the files as they are at HEAD, and make the
    same changes to the files on disk, so a hand edit pending in one of them (an opinion's
    wording, a page's text outside its markers) stays in the work tree, uncommitted. The plan
    is made a second time, from disk, only when such an edit exists.

    Resumable: when the commit fails (a hook refuses it, another commit lands), the run's
    files are written to disk all the same and kept in ``.memory/reflect-pending.json``; the
    next ``--commit`` run starts from them instead of HEAD's and commits them with its own
    changes, whatever its window."""
    base = head_id(ws.repo_root)
    at_head = _AtCommit(ws, base)
    earlier = pending.load(ws.memory_dir, at_head.committed)
    at_head = _AtCommit(ws, base, earlier.files if earlier else None)
    writes = _plan(ws, cfg, start, report, at_head)
    files = {**(earlier.files if earlier else {}), **{w.path: w.data for w in writes}}
    if earlier is not None:
        report.resumed = tuple(sorted(set(earlier.files) - {w.path for w in writes}))
        report.earlier_message = earlier.message
    if not files:
        return None
    on_disk = _on_disk(ws)
    if any(on_disk(rel) != data for rel, data in at_head.seen.items()):
        disk_writes = _plan(ws, cfg, start, ReflectReport(report.since, start, False), on_disk)
    else:
        disk_writes = writes
    message = report.message()
    try:
        commit = commit_files(ws.repo_root, {ws.prefix + rel: data for rel, data in files.items()},
                              message, base=base)
    except GitmemError as exc:
        for w in disk_writes:
            _write(ws.root / w.path, w.data)
        pending.save(ws.memory_dir, files, at_head.committed(sorted(files)), message)
        shown = " ".join(shlex.quote(ws.prefix + rel) for rel in sorted(files))
        raise GitmemError(
            f"{exc}\nreflect's changes are written to the work tree and kept in "
            f".memory/{pending.NAME}: the next 'gitmem reflect --commit' commits them (or "
            f"commit them yourself: git add -- {shown} && git commit)") from exc
    for w in disk_writes:
        _write(ws.root / w.path, w.data)
    pending.clear(ws.memory_dir)
    return commit


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise GitmemError(f"cannot read {path}: {exc.strerror or exc}") from exc


def _refused(ws: Workspace, rel: str, report: ReflectReport) -> bool:
    """Is the path, or a folder on the way to it, a symbolic link? Links are never followed:
    reflect neither reads nor writes through one, and says so."""
    path = ws.root / rel
    if not any(p.is_symlink() for p in (path, *path.parents)
               if p != ws.root and p.is_relative_to(ws.root)):
        return False
    report.warnings.append(Warn(rel, 0, "symlink", "symbolic link: reflect does not follow "
                                "links, so it left this file alone"))
    return True


def _write(path: Path, data: bytes | None) -> None:
    """Replace the file atomically (a reader sees the old bytes or the new), or remove it."""
    if data is None:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise GitmemError(f"cannot remove {path}: {exc.strerror or exc}") from exc
        return
    tmp = path.with_name(f".{path.name}.reflect-{os.getpid()}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        if path.exists():
            os.chmod(tmp, path.stat().st_mode & 0o7777)
        os.replace(tmp, path)
    except OSError as exc:
        raise GitmemError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def _plan(ws: Workspace, cfg: Config, start: str | None, report: ReflectReport,
          read: Read) -> list[_Write]:
    store = open_store(ws.index_path, readonly=True)
    try:
        names = entity_names(store)
        facts = facts_recorded(store, start)
        report.facts_read = len(facts)
        writes, doc = _opinions(ws, cfg, store, facts, names, report, read)
        report.dormant = tuple(dormant(doc, report.dormant_before))
        writes += _pages(ws, cfg, store, facts, names, doc, report, read)
    finally:
        store.close()
    writes += _proposal(ws, cfg, doc, names, report, read)
    report.files = [w.change for w in writes]
    if writes:
        report.warnings += _escaped(facts)
    return writes


def _escaped(facts: list[FactRow]) -> list[Warn]:
    """The window's facts about entities or opinions (what reflect writes from) whose control
    or bidi characters it writes as visible escapes: said, not silent (the entries stay)."""
    out: list[Warn] = []
    for f in facts:
        found = hidden_characters(f.text)
        if found and (f.entities or f.kind == "opinion"):
            names = ", ".join(f"U+{ord(c):04X} as {visible(c)}" for c in found)
            out.append(Warn(f.path, f.start_line, "control-characters",
                            f"the entry holds control or bidirectional characters; reflect "
                            f"writes them as visible escapes ({names})"))
    return out


def _opinions(ws: Workspace, cfg: Config, store: Store, facts: list[FactRow],
              names: EntityNames, report: ReflectReport, read: Read
              ) -> tuple[list[_Write], OpinionsFile]:
    if _refused(ws, OPINIONS_PATH, report):
        return [], read_opinions(None)
    old = read(OPINIONS_PATH)
    doc = read_opinions(old)
    plan = plan_opinions(doc, facts, names.canonical, rule_params(cfg),
                         facts_by_fact_id(store, merged_evidence_ids(doc)),
                         model_similarity(cfg) if cfg.reflect_model else None)
    report.opinions = plan.changes
    report.warnings += plan.warnings
    report.contexts.update((w, _section_text(doc, w.line)) for w in plan.warnings)
    if not plan.changed:
        return [], doc
    data = write_opinions(doc, plan.edits, plan.new, shown=cfg.reflect_evidence_shown)
    n = len(plan.changes)
    merged = sum(c.merged for c in plan.changes)
    why = (f"{n} opinion{'s' if n != 1 else ''} changed by new O entries" if not merged else
           f"{n} opinion{'s' if n != 1 else ''} changed, {merged} merged from two machines "
           f"and recomputed")
    change = FileChange(OPINIONS_PATH, "update" if old is not None else "create", "opinions",
                        why)
    return [_Write(OPINIONS_PATH, data, change)], read_opinions(data)


def model_similarity(cfg: Config) -> Similarity | None:
    """The cosine of two statements by the local embedding model (``reflect.model``), each text
    embedded once a run; None without a local model (reflect never calls a remote provider:
    it needs no network)."""
    if cfg.embed_provider not in ("auto", "local"):
        return None
    from gitmem.embed.selection import select

    embedder = select(cfg).embedder
    if embedder is None:
        return None
    vectors: dict[str, list[float]] = {}

    def vector(text: str) -> list[float]:
        found = vectors.get(text)
        if found is None:
            [raw] = embedder.embed_batch([text], input_type="query")
            norm = math.sqrt(sum(x * x for x in raw)) or 1.0
            found = vectors[text] = [x / norm for x in raw]
        return found

    def cosine(a: str, b: str) -> float:
        return sum(x * y for x, y in zip(vector(a), vector(b), strict=True))

    return cosine


def _section_text(doc: OpinionsFile, line: int) -> str:
    """The text of the opinion section holding a 1-based line (a warning's context)."""
    for s in doc.sections:
        if s.heading < line <= s.stop:
            return "\n".join(doc.text.lines[s.heading:s.stop])
    return ""


def _page_paths(ws: Workspace, names: EntityNames) -> dict[str, str]:
    """Entity key -> the page that exists for it: committed (the index knows it) or only on
    disk (made by an earlier run that did not commit)."""
    paths: dict[str, str] = {}
    folder = ws.root / ENTITIES_DIR
    if folder.is_dir():
        for page in sorted(folder.glob("*.md")):
            if page.is_file() or page.is_symlink():  # a link is refused, with a warning
                paths.setdefault(entity_key(page.stem), f"{ENTITIES_DIR}/{page.name}")
    for key, (_, known) in names.entities.items():
        if known is not None:
            paths[key] = known
    return paths


def _pages(ws: Workspace, cfg: Config, store: Store, facts: list[FactRow], names: EntityNames,
           doc: OpinionsFile, report: ReflectReport, read: Read) -> list[_Write]:
    """The generated block of each entity with new facts."""
    new_by_key: dict[str, list[FactRow]] = defaultdict(list)
    display: dict[str, str] = {k: n for k, (n, _) in names.entities.items()}
    for f in facts:
        for key, name, _ in f.entities:
            if key:
                new_by_key[names.canonical(key)].append(f)
                display.setdefault(names.canonical(key), name)
    paths = _page_paths(ws, names)
    merged = _merged_pages(ws, paths, read)
    for key in merged:
        new_by_key.setdefault(key, [])
    if not new_by_key:
        return []
    wanted = [*new_by_key, *(alias for alias, key in names.aliases.items() if key in new_by_key)]
    by_entity, keys_of = group_links(fact_links(store, wanted), names.canonical)
    replaced = replaced_facts(store, [i for facts in by_entity.values() for i in facts])
    summaries = {key: summarise(key, by_entity[key], keys_of, newest=cfg.reflect_digest_items,
                                replaced=frozenset(replaced))
                 for key in sorted(new_by_key)}
    full = {f.item_id: f for f in facts_by_id(
        store, [i for s in summaries.values()
                for ids in (*s.newest.values(), s.replaced) for i in ids])}
    opinions: dict[str, list[PageOpinion]] = defaultdict(list)
    for op in doc.opinions:
        for key in dict.fromkeys(names.canonical(entity_key(e)) for e in op.entities):
            opinions[key].append(PageOpinion(op.opinion_id, op.statement, op.confidence))
    writes: list[_Write] = []
    sparse: list[str] = []
    for key, summary in summaries.items():
        name = display.get(key, key)
        if key not in paths and summary.total < cfg.reflect_min_facts:
            sparse.append(name)  # too little to say for a page of its own (yet)
            continue
        path = paths.get(key, page_path(name))
        if _refused(ws, path, report):
            continue
        newest = {kind: [full[i] for i in ids if i in full]
                  for kind, ids in summary.newest.items()}
        related = tuple((display.get(k, k), n) for k, n in summary.related)
        gone = tuple((full[i], replaced[i]) for i in summary.replaced if i in full)
        digest = EntityDigest(key, name, summary, newest, tuple(opinions[key]), related, gone)
        old = read(path)
        data, warn = splice(path, old, render_block(digest), name)
        if warn is not None:
            report.warnings.append(warn)
            report.contexts[warn] = (old or b"").decode("utf-8", "surrogateescape")
        if data is None or data == old:
            continue
        cites = tuple(dict.fromkeys(str(Citation(f.path, f.start_line, f.end_line))
                                    for f in new_by_key[key]))
        page = PageChange(name, path, old is None, cites, key in merged)
        report.pages.append(page)
        writes.append(_Write(path, data, FileChange(path, "create" if old is None else "update",
                                                    "entity-page", page.reason)))
    report.sparse, report.min_facts = tuple(sparse), cfg.reflect_min_facts
    return writes


_STALE_NEEDLE = STALE_BEGIN[:STALE_BEGIN.index("(stale") + 6]


def _merged_pages(ws: Workspace, paths: dict[str, str], read: Read) -> set[str]:
    """The entities whose page holds a generated block the merge driver flagged (both machines
    regenerated it): reflect writes them again, new facts or not. Found with one ``git grep``
    of the pages as reflect reads them (at HEAD with --commit, else on disk)."""
    revision = read.commit if isinstance(read, _AtCommit) else None
    if isinstance(read, _AtCommit) and revision is None:
        return set()
    folder = ws.prefix + ENTITIES_DIR
    found = {p.removeprefix(ws.prefix) for p in files_containing(ws.repo_root, _STALE_NEEDLE,
                                                                   folder, revision)}
    key_of = {path: key for key, path in paths.items()}
    out = set()
    for path in sorted(found):
        data = read(path)
        lines = data.decode("utf-8", "replace").splitlines() if data else []
        if path in key_of and any(is_stale_begin(ln) for ln in lines):
            out.add(key_of[path])
    return out


def _proposal(ws: Workspace, cfg: Config, doc: OpinionsFile, names: EntityNames,
              report: ReflectReport, read: Read) -> list[_Write]:
    memory_path = next((p for p in ("MEMORY.md", "memory.md") if (ws.root / p).is_file()),
                       "MEMORY.md")
    if _refused(ws, memory_path, report) or _refused(ws, PROPOSAL_PATH, report):
        return []
    memory = read(memory_path)
    text = split_text(memory) if memory is not None else None
    params = ProposalParams(cfg.reflect_propose_at, cfg.reflect_propose_evidence,
                            cfg.reflect_drop_below)
    proposals = propose(text, [s.opinion for s in doc.sections if not s.malformed],
                        names.canonical, params, memory_path)
    old = read(PROPOSAL_PATH)
    if not proposals:
        if old is None:
            return []
        change = FileChange(PROPOSAL_PATH, "delete", "proposal",
                            f"no edit to {memory_path} is proposed any more")
        return [_Write(PROPOSAL_PATH, None, change)]
    report.proposals = proposals
    data = render_patch(text, proposals, ws.prefix + memory_path, ws.prefix + PROPOSAL_PATH)
    if data == old:
        return []
    n = len(proposals)
    change = FileChange(PROPOSAL_PATH, "create" if old is None else "update", "proposal",
                        f"{n} proposed edit{'s' if n != 1 else ''} to {memory_path} "
                        "(review, then git apply)")
    return [_Write(PROPOSAL_PATH, data, change)]
