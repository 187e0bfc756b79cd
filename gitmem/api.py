"""The library's front door: plain functions the CLI (and any program) calls."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from gitmem.config import Config, load_config
from gitmem.errors import GitmemError
from gitmem.store import UNUSABLE, NewerIndexError, Store, open_store
from gitmem.workspace import Workspace, find_repo_root, head_id, is_memory_path


def open_workspace(start: Path) -> tuple[Workspace, Config]:
    """Find the repository around ``start`` and apply its configuration."""
    repo_root, git_dir = find_repo_root(start)
    cfg = load_config(repo_root)
    prefix = cfg.workspace_root.strip("/")
    if prefix:
        if ".." in PurePosixPath(prefix).parts:
            raise GitmemError(
                f"{repo_root / '.gitmem.toml'}: 'workspace.root' must be a folder "
                "inside the repository"
            )
        prefix += "/"
    return Workspace(repo_root=repo_root, prefix=prefix, git_dir=git_dir), cfg


def ensure_index(ws: Workspace, cfg: Config) -> list[str]:
    """Build the index when missing, catch up with HEAD when behind (unless a writer is busy).

    The up-to-date check costs one ``git rev-parse`` and one meta read, so recall stays fast;
    the indexer (and pygit2, markdown-it) is imported only when there is work to do.
    """
    if index_is_current(ws, cfg, keep_layer=True):
        return []
    from gitmem.indexer import index_workspace
    from gitmem.locks import LockBusy

    try:
        return list(index_workspace(ws, cfg, wait=not ws.index_path.exists()).notes)
    except LockBusy:
        return ["the index is being updated by another process; answering from the last "
                "complete index"]


def status(ws: Workspace, cfg: Config, *, deep: bool = False) -> dict[str, Any]:
    """Counts, last indexed commit, semantic search state, every warning with its path#Lline.

    ``deep`` also checks that the sqlite-vec extension answers a query and that the embedding
    provider can be set up (for a local model: loads it)."""
    info: dict[str, Any] = {
        "workspace": str(ws.root),
        "index": str(ws.index_path),
        "head": head_id(ws.repo_root),
        "indexed": ws.index_path.exists(),
        # Config problems are shown whether or not an index exists yet.
        "config_warnings": list(cfg.warnings),
        "semantic": _semantic_status(cfg, deep),
    }
    if not ws.index_path.exists():
        info.update(
            files=0,
            facts=0,
            chunks=0,
            entities=0,
            last_indexed_commit=None,
            up_to_date=False,
            warnings=[],
        )
        return info
    store = open_store(ws.index_path, readonly=True)
    try:
        info.update(_counts(store))
        info["last_indexed_commit"] = store.get_meta("last_indexed_commit") or None
        info["indexed_at"] = store.get_meta("indexed_at")
        info["schema_version"] = store.schema_version()
        info["up_to_date"] = info["last_indexed_commit"] == info["head"]
        info["sqlite_vec"] = store.vec_error is None
        info["sqlite_vec_error"] = store.vec_error
        have, total = store.vector_counts()
        if info["semantic"]["active"] or have:
            info["semantic"].update(
                index_fingerprint=store.get_meta("embed_fingerprint"),
                embedded=have,
                total_items=total,
                pending=total - have,
                vector_search="sqlite-vec"
                if store.vec_error is None and store.has_vec_table()
                else ("exact scan (sqlite-vec could not be loaded)" if have else None),
            )
        if deep:
            info["sqlite_vec_check"] = _vec_self_test(store)
        info["warnings"] = [
            {"path": p, "line": ln, "code": c, "message": m, "location": f"{p}#L{ln}" if ln else p}
            for p, ln, c, m in store.conn.execute(
                "SELECT path, line, code, message FROM warnings ORDER BY path, line"
            )
        ]
    finally:
        store.close()
    return info


def _semantic_status(cfg: Config, deep: bool) -> dict[str, Any]:
    from gitmem.embed.base import EmbeddingError
    from gitmem.embed.select import select

    out: dict[str, Any] = {
        "provider": cfg.embed_provider,
        "model": cfg.embed_model,
        "active": False,
        "hint": None,
    }
    try:
        sel = select(cfg) if deep or cfg.embed_provider in ("auto", "local", "none") else None
    except EmbeddingError as exc:
        out["hint"] = f"the {cfg.embed_provider} provider cannot be set up: {exc}"
        return out
    if sel is None:
        out.update(
            active=True,
            hint=f"remote provider {cfg.embed_provider} (named explicitly); "
            "'gitmem status --deep' checks it",
        )
        return out
    if sel.embedder is None:
        out["hint"] = (
            sel.reason
            if cfg.embed_provider != "none"
            else ("semantic search is off (embed.provider = none)")
        )
        return out
    out.update(active=True, fingerprint=sel.embedder.fingerprint)
    if deep:
        from gitmem.embed.service import embed_texts

        try:
            vec = embed_texts(sel.embedder, ["gitmem status check"], input_type="query")[0]
            out["dimensions"] = len(vec) // 4
        except EmbeddingError as exc:
            out.update(active=False, hint=f"embedding check failed: {exc}")
    sel.embedder.close()
    return out


def _vec_self_test(store: Store) -> str:
    """Run a real vec0 query in memory: proves the extension loads and answers."""
    if store.vec_error is not None:
        return f"failed: {store.vec_error} (vector search falls back to an exact scan)"
    import apsw

    try:
        store.conn.execute("SELECT vec_distance_cosine('[1, 0]', '[0, 1]')").fetchall()
    except apsw.Error as exc:
        return f"failed: {exc}"
    return "ok"


def _count(store: Store, sql: str) -> int:
    row = store.conn.execute(sql).fetchone()
    return int(row[0]) if row else 0


def _counts(store: Store) -> dict[str, int]:
    current = "SELECT count(*) FROM items WHERE ended_at IS NULL AND type = "
    return {
        "files": _count(store, "SELECT count(*) FROM files"),
        "facts": _count(store, current + "'fact'"),
        "chunks": _count(store, current + "'chunk'"),
        "entities": _count(store, "SELECT count(*) FROM entities"),
    }


@dataclass(frozen=True)
class GetResult:
    path: str
    start_line: int
    end_line: int
    lines: tuple[str, ...]
    revision: str | None


def _check_memory_path(ws: Workspace, cfg: Config, raw: str) -> str:
    """A user-given path to a workspace-relative memory path, or a clear refusal.

    Citations are workspace-relative, so a relative path is read from the workspace root, unless
    it names an existing file relative to the current folder inside the workspace.
    """
    root = ws.root.resolve()
    given = Path(raw)
    if given.is_absolute():
        full = Path(os.path.normpath(given))
    else:
        here = Path(os.path.normpath(Path.cwd() / given))
        full = (
            here
            if here.is_relative_to(root) and here.exists()
            else Path(os.path.normpath(root / given))
        )
    if not full.is_relative_to(root):
        raise GitmemError(f"refusing '{raw}': it is outside the workspace {root}")
    rel = full.relative_to(root).as_posix()
    if not is_memory_path(rel, cfg.extra_paths):
        raise GitmemError(
            f"refusing '{raw}': not a memory file (MEMORY.md, USER.md, DREAMS.md, "
            "memory/**/*.md, bank/..., or a configured extra path)"
        )
    return rel


def get_lines(
    ws: Workspace,
    cfg: Config,
    raw: str,
    *,
    start: int | None = None,
    count: int | None = None,
    at: str | None = None,
) -> GetResult:
    """Memory text by line, from the working tree or from a revision (``at``)."""
    rel = _check_memory_path(ws, cfg, raw)
    if at is None:
        path = ws.root / rel
        for parent in [path, *path.parents]:
            if parent == ws.root:
                break
            if parent.is_symlink():
                raise GitmemError(f"refusing '{raw}': {parent} is a symbolic link")
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise GitmemError(f"no such memory file: {rel}") from None
    else:
        data = _blob_at(ws, rel, at)
    from gitmem.parse import decode, split_lines

    text, _ = decode(data, rel)
    lines = split_lines(text or "")
    if lines and lines[-1] == "":
        lines.pop()
    first = max(1, start or 1)
    last = len(lines) if count is None else min(len(lines), first + count - 1)
    if first > max(len(lines), 1):
        raise GitmemError(f"{rel} has {len(lines)} lines; line {first} does not exist")
    return GetResult(rel, first, last, tuple(lines[first - 1 : last]), at)


def _blob_at(ws: Workspace, rel: str, rev: str) -> bytes:
    import pygit2

    repo = ws.open_repo()
    try:
        commit = repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise GitmemError(f"unknown revision '{rev}'") from None
    try:
        entry = commit.tree[ws.prefix + rel]
    except KeyError:
        raise GitmemError(f"{rel} does not exist at {rev}") from None
    if entry.filemode == 0o120000:
        raise GitmemError(f"refusing '{rel}': it is a symbolic link at {rev}")
    blob = repo[entry.id]
    if not isinstance(blob, pygit2.Blob):
        raise GitmemError(f"{rel} is not a file at {rev}")
    return bytes(blob.data)


@dataclass
class IndexOutcome:
    """What 'gitmem index' did: the lexical replay, then the embedding fill-in."""

    report: Any  # gitmem.indexer.IndexReport
    embed: Any = None  # gitmem.embedding.EmbedReport, when an embedder is configured
    embed_note: str | None = None  # why nothing was embedded (lexical only)
    embed_error: str | None = None  # an explicitly named provider failed (exit status 4)


def index_is_current(ws: Workspace, cfg: Config, worktree: bool | None = None, *,
                     keep_layer: bool = False) -> bool:
    """True when the index already holds HEAD with the same settings (no indexer needed).

    ``keep_layer``: an uncommitted layer from 'index --worktree' counts as current (recall
    reads it as it is; only an index run replaces or drops it)."""
    if (cfg.worktree if worktree is None else worktree) or not ws.index_path.exists():
        return False
    from gitmem.chunking import DEFAULT_CHUNKING
    from gitmem.workspace import scope_fingerprint

    try:
        store = open_store(ws.index_path, readonly=True)
    except (*UNUSABLE, NewerIndexError):
        return False
    try:
        meta = store.meta()
    finally:
        store.close()
    return (meta.get("last_indexed_commit") == (head_id(ws.repo_root) or "")
            and (keep_layer or meta.get("worktree") != "1")
            and meta.get("chunking") == DEFAULT_CHUNKING.fingerprint
            and meta.get("scope") == scope_fingerprint(ws.prefix, cfg.extra_paths))


def _indexed_files(ws: Workspace) -> int:
    store = open_store(ws.index_path, readonly=True)
    try:
        return _count(store, "SELECT count(*) FROM files")
    finally:
        store.close()


def index_and_embed(
    ws: Workspace,
    cfg: Config,
    *,
    force: bool = False,
    worktree: bool | None = None,
    embed: bool = True,
    progress: Any = None,
    embed_progress: Any = None,
) -> IndexOutcome:
    """The lexical index lands first (usable at once); then embeddings are filled in."""
    if not force and index_is_current(ws, cfg, worktree):
        from gitmem.changes import ChangePlan, IndexReport

        files = _indexed_files(ws)
        outcome = IndexOutcome(IndexReport(head_id(ws.repo_root), False, ChangePlan((), (), (), ()),
                                           files, 0.0, ()))
    else:
        from gitmem.indexer import index_workspace

        outcome = IndexOutcome(index_workspace(ws, cfg, force=force, progress=progress,
                                               worktree=worktree))
    if not embed:
        outcome.embed_note = "embedding skipped (--no-embed)"
        return outcome
    fill_embeddings(ws, cfg, outcome, progress=embed_progress)
    return outcome


def fill_embeddings(ws: Workspace, cfg: Config, outcome: IndexOutcome, *,
                    progress: Any = None) -> None:
    """Embed what the index lacks, recording the result (or why nothing ran) in ``outcome``."""
    from gitmem.embed.base import EmbeddingError
    from gitmem.embed.select import select
    from gitmem.embedding import embed_pending

    try:
        sel = select(cfg)
        if sel.embedder is None:
            outcome.embed_note = sel.reason
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
