"""``gitmem status``: counts, the last indexed commit, semantic search state, and every warning
with its ``path#Lline``."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from gitmem.config import Config
from gitmem.domain import Warn
from gitmem.git import head_id
from gitmem.index.store import UNUSABLE, NewerIndexError, open_store
from gitmem.merge.registration import DriverState, driver_state
from gitmem.workspace import Workspace, WorktreeLayer, worktree_layer

if TYPE_CHECKING:
    from gitmem.index.run import FillState


@dataclass(frozen=True)
class ModelCheck:
    """``--deep``: the embedding model set up (a local one loaded) and answering."""

    dimensions: int
    load_seconds: float
    model_name: str
    model_kind: Literal["local", "remote"]


@dataclass(frozen=True)
class VectorCounts:
    """The index's vectors, counted for the model configured now."""

    index_fingerprint: str | None
    embedded: int
    total_items: int
    pending: int
    stale_vectors: int  # another model's: replaced by the next embedding run
    vector_search: str | None


@dataclass
class SemanticStatus:
    """Semantic search: the provider configured, whether it is on, and the index's vectors.
    ``to_json`` writes a key only once its part is known (docs/json.md)."""

    provider: str
    model: str
    active: bool = False
    hint: str | None = None
    fingerprint: str | None = None  # the configured model's
    no_embedder: bool = False  # selection found no embedder: ``unconfigured`` is said
    unconfigured: str | None = None  # registry.unconfigured_warning
    check: ModelCheck | None = None
    vectors: VectorCounts | None = None
    fill: FillState | None = None  # how the pending embeddings get filled in

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"provider": self.provider, "model": self.model,
                               "active": self.active, "hint": self.hint}
        if self.fingerprint is not None:
            out["fingerprint"] = self.fingerprint
        if self.no_embedder:
            out["unconfigured"] = self.unconfigured
        for part in (self.check, self.vectors):
            if part is not None:
                out.update(asdict(part))
        if self.fill is not None:
            out["fill"] = self.fill
        return out


@dataclass
class StatusReport:
    workspace: str
    index: str
    head: str | None
    indexed: bool
    config_warnings: list[str]
    semantic: SemanticStatus
    merge_driver: DriverState  # whether memory files merge with gitmem's driver in this clone
    files: int = 0
    facts: int = 0
    chunks: int = 0
    entities: int = 0
    last_indexed_commit: str | None = None
    up_to_date: bool = False
    # memory files with uncommitted edits (recall layers them over HEAD before it searches)
    uncommitted: list[str] = field(default_factory=list)
    # those whose content on disk the index does not hold yet (the next recall or index reads them)
    uncommitted_unindexed: list[str] = field(default_factory=list)
    warnings: list[Warn] = field(default_factory=list)
    indexed_at: str | None = None
    schema_version: int | None = None
    sqlite_vec: bool | None = None
    sqlite_vec_error: str | None = None
    sqlite_vec_check: str | None = None  # --deep only
    integrity: str | None = None  # --deep only: PRAGMA integrity_check
    index_error: str | None = None  # the index cannot be read; the next index run rebuilds it
    # invalid settings (read as their defaults here; commands that read them fail)
    config_errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "workspace": self.workspace,
            "index": self.index,
            "head": self.head,
            "indexed": self.indexed,
            "config_warnings": self.config_warnings,
            "config_errors": self.config_errors,
            "semantic": self.semantic.to_json(),
            "merge_driver": self.merge_driver.to_json(),
            "files": self.files,
            "facts": self.facts,
            "chunks": self.chunks,
            "entities": self.entities,
            "last_indexed_commit": self.last_indexed_commit,
            "up_to_date": self.up_to_date,
            "uncommitted": self.uncommitted,
            "uncommitted_unindexed": self.uncommitted_unindexed,
            "warnings": [
                {"path": w.path, "line": w.line, "code": w.code, "message": w.message,
                 "location": w.location}
                for w in self.warnings
            ],
        }
        if self.indexed:
            out.update(indexed_at=self.indexed_at, schema_version=self.schema_version,
                       sqlite_vec=self.sqlite_vec, sqlite_vec_error=self.sqlite_vec_error)
        if self.sqlite_vec_check is not None:
            out["sqlite_vec_check"] = self.sqlite_vec_check
        if self.integrity is not None:
            out["integrity"] = self.integrity
        if self.index_error is not None:
            out["index_error"] = self.index_error
        return out


def status(ws: Workspace, cfg: Config, *, deep: bool = False) -> StatusReport:
    """Counts, last indexed commit, semantic search state, every warning with its path#Lline.

    ``deep`` also checks that the sqlite-vec extension answers a query and that the embedding
    provider can be set up (for a local model: loads it)."""
    report = StatusReport(
        workspace=str(ws.root),
        index=str(ws.index_path),
        head=head_id(ws.repo_root),
        indexed=ws.index_path.exists(),
        # Config problems are shown whether or not an index exists yet.
        config_warnings=list(cfg.warnings),
        config_errors=cfg.errors,
        semantic=_semantic_status(cfg, deep),
        merge_driver=driver_state(ws.repo_root, ws.prefix),
    )
    if not report.indexed:
        return report
    try:
        _read_index(report, ws, deep, worktree_layer(ws, cfg) if cfg.worktree else None)
    except (*UNUSABLE, NewerIndexError) as exc:
        report.index_error = (f"the index cannot be used ({exc}); 'gitmem index' or the next "
                              "recall rebuilds it")
    if report.semantic.vectors and report.semantic.vectors.pending:  # how they get embedded
        from gitmem.index.run import pending_fill

        report.semantic.fill = pending_fill(ws, cfg, start=False)
    return report


def _read_index(report: StatusReport, ws: Workspace, deep: bool,
                layer: WorktreeLayer | None) -> None:
    store = open_store(ws.index_path, readonly=True)
    try:
        counts = store.counts()
        report.files, report.facts = counts["files"], counts["facts"]
        report.chunks, report.entities = counts["chunks"], counts["entities"]
        report.last_indexed_commit = store.get_meta("last_indexed_commit") or None
        report.indexed_at = store.get_meta("indexed_at")
        report.schema_version = store.schema_version()
        report.up_to_date = report.last_indexed_commit == report.head
        report.uncommitted, report.uncommitted_unindexed = _uncommitted(
            store.get_meta("worktree"), layer)
        report.sqlite_vec = store.vec_error is None
        report.sqlite_vec_error = store.vec_error
        have, total = store.vector_counts()
        index_fingerprint = store.get_meta("embed_fingerprint")
        # Vectors count for the model configured now: another model's (after a switch of
        # embed.model) are replaced by the next embedding run, and recall does not use them.
        current = report.semantic.fingerprint
        stale = have if current is not None and index_fingerprint != current else 0
        if report.semantic.active or have:
            report.semantic.vectors = VectorCounts(
                index_fingerprint=index_fingerprint,
                embedded=have - stale,
                total_items=total,
                pending=total - have + stale,
                stale_vectors=stale,
                vector_search="sqlite-vec"
                if store.vec_error is None and store.has_vec_table()
                else ("exact scan (sqlite-vec could not be loaded)" if have else None),
            )
        if deep:
            report.sqlite_vec_check = store.vec_self_test()
            report.integrity = store.integrity()
        report.warnings = store.warnings()
    finally:
        store.close()


def _layered(recorded: str | None) -> dict[str, Any]:
    """The uncommitted layer the index holds (as of its last update): path -> its state."""
    try:
        state = json.loads(recorded or "")
    except ValueError:
        return {}
    return state if isinstance(state, dict) else {}


def _uncommitted(recorded: str | None, layer: WorktreeLayer | None) -> tuple[list[str], list[str]]:
    """(the memory files edited on disk, those the index does not hold as they are now). The
    working tree is read, not only the index: an edit made since the last recall is named."""
    held = _layered(recorded)
    if layer is None:  # index.worktree = false: no layer is searched
        return sorted(held), []
    now = json.loads(layer.key)
    return sorted(now), sorted(p for p in set(now) | set(held) if now.get(p) != held.get(p))


def _off_hint(cfg: Config, reason: str | None, missing: bool) -> str:
    """Why semantic search is off and how to turn it on, naming the model once."""
    if cfg.embed_provider == "none":
        return "embed.provider = none"
    if missing and cfg.embed_model.startswith("hf:"):
        return (f"no embedding model yet: 'gitmem model pull' downloads {cfg.embed_model}, or "
                "'gitmem config set embed.model FILE.gguf' names one")
    return str(reason)


def _semantic_status(cfg: Config, deep: bool) -> SemanticStatus:
    from gitmem.config import is_remote
    from gitmem.embed.base import EmbeddingError
    from gitmem.embed.selection import build, select

    out = SemanticStatus(provider=cfg.embed_provider, model=cfg.embed_model)
    started = time.monotonic()
    try:
        sel = select(cfg) if deep or not is_remote(cfg.embed_provider) else None
    except EmbeddingError as exc:
        out.hint = f"the {cfg.embed_provider} provider cannot be set up: {exc}"
        return out
    if sel is None:
        out.active = True
        out.hint = (f"remote provider {cfg.embed_provider} (named explicitly); "
                    "'gitmem status --deep' checks it")
        with contextlib.suppress(EmbeddingError):  # set up, not called: counts per model
            named = build(cfg, cfg.embed_provider)
            out.fingerprint = named.fingerprint
            named.close()
        return out
    if sel.embedder is None:
        from gitmem.embed.selection import unconfigured_warning

        out.hint = _off_hint(cfg, sel.reason, sel.missing)
        out.no_embedder, out.unconfigured = True, unconfigured_warning(cfg)
        return out
    out.active, out.fingerprint = True, sel.embedder.fingerprint
    if deep:
        from gitmem.embed.batch import embed_texts

        try:
            vec = embed_texts(sel.embedder, ["gitmem status check"], input_type="query")[0]
            # Set up (a local model: loaded) and answering: what --deep confirms.
            remote = is_remote(sel.embedder.name)
            out.check = ModelCheck(
                dimensions=len(vec) // 4, load_seconds=round(time.monotonic() - started, 3),
                model_name=sel.embedder.model if remote else Path(sel.embedder.model).name,
                model_kind="remote" if remote else "local")
        except EmbeddingError as exc:
            out.active, out.hint = False, f"embedding check failed: {exc}"
    sel.embedder.close()
    return out
