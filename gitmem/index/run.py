"""``gitmem index`` as a library call: the lexical replay lands first, then embeddings are filled
in. Also the cheap freshness check that recall runs before every query."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gitmem.config import Config
from gitmem.errors import LockBusy
from gitmem.git import head_from_files, head_id
from gitmem.index.store import UNUSABLE, NewerIndexError, open_store
from gitmem.workspace import (
    Workspace,
    WorktreeLayer,
    first_time,
    scope_fingerprint,
    worktree_layer,
)

if TYPE_CHECKING:
    from gitmem.index.changes import IndexReport
    from gitmem.index.store import IndexStamp
    from gitmem.index.vectors import EmbedReport

Progress = Callable[[int, int], None]  # (done, total)


@dataclass
class IndexOutcome:
    """What 'gitmem index' did: the lexical replay, then the embedding fill-in."""

    report: IndexReport
    embed: EmbedReport | None = None  # when an embedder is configured
    embed_note: str | None = None  # why nothing was embedded (lexical only)
    hint: str | None = None  # what the command line says about it (once, when not chosen)
    turn_on: str | None = None  # 'auto' is not set up yet (no model): how to turn it on
    embed_error: str | None = None  # an explicitly named provider failed (exit status 4)
    embed_requested: bool = True

    def to_json(self) -> dict[str, Any]:
        report, emb = self.report, self.embed
        return {
            "commit": report.commit,
            "full": report.full,
            "commits": report.commits,
            "files": report.files,
            "added": len(report.plan.added),
            "modified": len(report.plan.modified),
            "deleted": len(report.plan.deleted),
            "renamed": len(report.plan.renamed),
            "seconds": round(report.seconds, 3),
            "notes": list(report.notes),
            "warnings": list(report.notes),  # the name every command's JSON uses
            "embedding": None if emb is None else emb.to_json(),
            "embedding_note": self.embed_note,
            "embedding_error": self.embed_error,
        }


def index_is_current(ws: Workspace, cfg: Config, worktree: bool | None = None) -> bool:
    """True when the index already holds HEAD and the uncommitted layer as they are, with the
    same settings (no indexer needed).

    One meta read, then HEAD read from git's files: a commit since the index was written is
    seen without a process; otherwise one ``git status`` (which also names HEAD): recall runs
    this before every query. Only the memory files git reports as changed are read, to compare
    their content with the layer the index holds."""
    return _freshness(ws, cfg, worktree)[0]


def _freshness(ws: Workspace, cfg: Config,
               worktree: bool | None = None) -> tuple[bool, WorktreeLayer | None]:
    """``index_is_current``, and the uncommitted layer it read (None when it ran no ``git
    status``): the indexer that catches up next may use it instead of running another."""
    if not ws.index_path.exists():
        return False, None
    from gitmem.index.graph import RULE_VERSION
    from gitmem.parse.chunking import DEFAULT_CHUNKING

    try:
        store = open_store(ws.index_path, readonly=True)
    except (*UNUSABLE, NewerIndexError):
        return False, None
    try:
        meta = store.meta()
    finally:
        store.close()
    hint = head_from_files(ws.git_dir)
    if hint is not None and hint != meta.get("last_indexed_commit"):
        return False, None  # committed (or checked out) since: known without running git
    layer = None
    if cfg.worktree if worktree is None else worktree:
        layer = worktree_layer(ws, cfg)
        head, layer_state = layer.head, layer.key
    else:
        head, layer_state = head_id(ws.repo_root), "off"
    return (meta.get("last_indexed_commit") == (head or "")
            and meta.get("worktree") == layer_state
            and meta.get("chunking") == DEFAULT_CHUNKING.fingerprint
            and meta.get("rule_version") == RULE_VERSION
            and meta.get("scope") == scope_fingerprint(ws.prefix, cfg.extra_paths)), layer


def ensure_index(ws: Workspace, cfg: Config) -> list[str]:
    """Build the index when missing, catch up with HEAD and the working tree when behind
    (unless a writer is busy); the notes an answer gives about it (``catch_up``)."""
    return catch_up(ws, cfg).notes


@dataclass(frozen=True)
class CaughtUp:
    """What ``catch_up`` did: its notes, and whether the index was found current as it was
    (``current``) or this process brought it up to date, leaving the file at ``stamp``."""

    notes: list[str]
    current: bool = False
    stamp: IndexStamp | None = None


def catch_up(ws: Workspace, cfg: Config) -> CaughtUp:
    """Build the index when missing, catch up with HEAD and the working tree when behind
    (unless a writer is busy).

    The up-to-date check costs one ``git status`` and one meta read, so recall stays fast;
    the indexer (and pygit2, markdown-it) is imported only when there is work to do. The warm
    process skips even the check while nothing it depends on has changed since
    (``index.session.WarmSession``).
    """
    current, layer = _freshness(ws, cfg)
    if current:
        return CaughtUp([], current=True)
    from gitmem.index.replay import index_workspace
    from gitmem.locks import RECALL_WAIT_SECONDS

    missing = not ws.index_path.exists()
    try:
        report = index_workspace(ws, cfg, wait=missing, timeout=RECALL_WAIT_SECONDS,
                                 layer=layer, report_plan=False)
    except LockBusy:
        if missing:  # nothing to answer from: the error names the process building it
            raise
        return CaughtUp(["the index is being updated by another process; answering from the "
                         "last complete index"])
    return CaughtUp(list(report.notes), stamp=report.stamp)


def index_and_embed(
    ws: Workspace,
    cfg: Config,
    *,
    force: bool = False,
    worktree: bool | None = None,
    embed: bool = True,
    progress: Progress | None = None,
    embed_progress: Progress | None = None,
    check_current: bool = True,
    verbose: bool = False,
    hint: bool = True,
) -> IndexOutcome:
    """The lexical index lands first (usable at once); then embeddings are filled in.

    ``check_current``: answer from the cheap freshness check when nothing changed (the
    command line); hooks skip it, since they run because something did. ``verbose``: repeat
    the hint that 'auto' found no model (otherwise given once per workspace); ``hint``: False
    where nobody reads it (hooks), so that the once-per-workspace hint is not used up there."""
    if check_current and not force and index_is_current(ws, cfg, worktree):
        store = open_store(ws.index_path, readonly=True)
        try:
            files = len(store.file_blobs())
        finally:
            store.close()
        from gitmem.index.changes import ChangePlan, IndexReport

        report = IndexReport(head_id(ws.repo_root), False, ChangePlan((), (), (), ()), files,
                             0.0, tuple(_sweep(ws)))
    else:
        from gitmem.index.replay import index_workspace, require_memory

        if not ws.index_path.exists():
            require_memory(ws, cfg)
        report = index_workspace(ws, cfg, force=force, progress=progress, worktree=worktree)
    outcome = IndexOutcome(report, embed_requested=embed)
    if embed:
        fill_embeddings(ws, cfg, outcome, progress=embed_progress)
        outcome.hint = _hint(ws, cfg, outcome, verbose) if hint else None
    return outcome


def _sweep(ws: Workspace) -> list[str]:
    """Remove what killed rebuilds left behind, when the index itself needs no work."""
    if not any(ws.memory_dir.glob(f"{ws.index_path.name}.tmp-*")):
        return []
    from gitmem.index.store import remove_stale_temporaries
    from gitmem.locks import writer_lock

    try:
        with writer_lock(ws, wait=False):
            return remove_stale_temporaries(ws.index_path)
    except LockBusy:  # a writer is at work: the files may be its own
        return []


def _hint(ws: Workspace, cfg: Config, outcome: IndexOutcome, verbose: bool) -> str | None:
    """Nothing when lexical was chosen; once per workspace when 'auto' has no model yet; every
    time when a configured model fails."""
    if outcome.embed is not None or outcome.embed_note is None or cfg.embed_provider == "none":
        return None
    if outcome.turn_on is None or cfg.embed_provider != "auto":
        return outcome.embed_note
    return f"the index is lexical: {outcome.turn_on}" if verbose or first_time(ws, "lexical") \
        else None


FillState = Literal["running", "started", "recall", "manual"]


def pending_fill(ws: Workspace, cfg: Config, *, start: bool) -> FillState:
    """How the pending embeddings get filled in: ``running`` (a gitmem process is embedding, or
    indexing and embeds next), ``started`` (this call started ``gitmem hooks run recall`` in
    the background, the hook's own run), ``recall`` (the next recall will), or ``manual``
    (``index.background`` is off: the next commit's hook or 'gitmem index')."""
    from gitmem.locks import EMBED_LOCK, INDEX_LOCK, QUEUE_LOCK, held_elsewhere

    if any(held_elsewhere(ws.memory_dir / name) for name in (EMBED_LOCK, INDEX_LOCK, QUEUE_LOCK)):
        return "running"
    if not cfg.background:
        return "manual"
    if not start:
        return "recall"
    from gitmem.lifetime import start_detached

    start_detached([sys.executable, "-m", "gitmem", "-C", str(ws.repo_root), "hooks", "run",
                    "recall"], cwd=str(ws.repo_root))
    return "started"


FILL_SAID = {
    "running": "another gitmem process is embedding them now",
    "started": "embedding them in the background now",
    "recall": "the next recall embeds them in the background, or 'gitmem index' now",
    "manual": "'gitmem index' fills them in (index.background is off)",
}


def fill_embeddings(ws: Workspace, cfg: Config, outcome: IndexOutcome, *,
                    progress: Progress | None = None) -> None:
    """Embed what the index lacks, recording the result (or why nothing ran) in ``outcome``."""
    from gitmem.embed.base import EmbeddingError
    from gitmem.embed.selection import select
    from gitmem.index.vectors import embed_pending

    try:
        sel = select(cfg)
        if sel.embedder is None:
            outcome.embed_note, outcome.turn_on = sel.reason, sel.hint
            return
        try:
            outcome.embed = embed_pending(ws, cfg, sel.embedder, progress=progress)
        finally:
            sel.embedder.close()
    except EmbeddingError as exc:
        if cfg.embed_provider in ("auto", "local"):
            outcome.embed_note = f"embedding failed ({exc}); the lexical index is up to date"
        else:
            outcome.embed_error = str(exc)
