"""Bring the index up to date with a commit: plan from blob ids, parse what changed, write."""

from __future__ import annotations

import errno
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pygit2

from gitmem.changes import ChangePlan, plan_changes
from gitmem.chunking import DEFAULT_CHUNKING
from gitmem.config import Config
from gitmem.errors import GitmemError
from gitmem.model import MemoryFile, Warn
from gitmem.parse import parse_file
from gitmem.store import UNUSABLE, NewerIndexError, Store, open_store, remove_index_files
from gitmem.workspace import Workspace, memory_files_in_tree

Progress = Callable[[int, int], None]
LOCK_WAIT_SECONDS = 600.0


@dataclass(frozen=True)
class IndexReport:
    commit: str | None
    full: bool
    plan: ChangePlan
    files: int
    seconds: float
    notes: tuple[str, ...]


class LockBusy(GitmemError):
    pass


@contextmanager
def writer_lock(
    ws: Workspace, *, wait: bool = True, timeout: float = LOCK_WAIT_SECONDS
) -> Iterator[None]:
    """Serialise writers (two hooks at once) with an advisory lock on .memory/index.lock."""
    ensure_memory_dir(ws)
    fd = os.open(ws.memory_dir / "index.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if not wait or time.monotonic() > deadline:
                    raise LockBusy(
                        "another gitmem process is updating the index; try again when it finishes"
                    ) from exc
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


def ensure_memory_dir(ws: Workspace) -> None:
    """Create .memory/ and keep it out of git via info/exclude (never a tracked file)."""
    ws.memory_dir.mkdir(parents=True, exist_ok=True)
    common = ws.git_dir
    commondir = ws.git_dir / "commondir"
    if commondir.is_file():
        common = (ws.git_dir / commondir.read_text(encoding="utf-8").strip()).resolve()
    exclude = common / "info" / "exclude"
    pattern = f"/{ws.prefix}.memory/"
    try:
        existing = exclude.read_text(encoding="utf-8") if exclude.exists() else ""
    except OSError:
        return
    if pattern not in existing.splitlines():
        exclude.parent.mkdir(parents=True, exist_ok=True)
        sep = "" if not existing or existing.endswith("\n") else "\n"
        with exclude.open("a", encoding="utf-8") as fh:
            fh.write(f"{sep}# gitmem's derived index\n{pattern}\n")


def head_commit(repo: pygit2.Repository) -> pygit2.Commit | None:
    if repo.head_is_unborn:
        return None
    commit = repo.head.peel(pygit2.Commit)
    assert isinstance(commit, pygit2.Commit)
    return commit


def commit_time(commit: pygit2.Commit) -> str:
    """Commit time in UTC, so stored times compare correctly as strings."""
    return datetime.fromtimestamp(commit.commit_time, UTC).isoformat(timespec="seconds")


def index_workspace(
    ws: Workspace,
    cfg: Config,
    *,
    force: bool = False,
    progress: Progress | None = None,
    wait: bool = True,
) -> IndexReport:
    """Index HEAD: incrementally when an index exists, from scratch otherwise or with force."""
    started = time.monotonic()
    with writer_lock(ws, wait=wait):
        repo = ws.open_repo()
        commit = head_commit(repo)
        files, warns = memory_files_in_tree(
            repo, commit.tree if commit else None, ws.prefix, cfg.extra_paths
        )
        if commit is None:
            warns.append(
                Warn(
                    "",
                    0,
                    "no-commits",
                    "the repository has no commits yet; commit memory files to index them",
                )
            )
        notes: list[str] = []
        full = force or not ws.index_path.exists()
        store: Store | None = None
        if not full:
            try:
                store = open_store(ws.index_path)
                if store.get_meta("chunking") != DEFAULT_CHUNKING.fingerprint:
                    notes.append("chunking parameters changed: full re-index")
                    store.close()
                    store, full = None, True
            except (*UNUSABLE, NewerIndexError) as exc:
                notes.append(f"index at {ws.index_path} was unusable ({exc}); rebuilt it")
                full = True
        if full:
            plan = _full_build(ws, repo, commit, files, warns, progress)
        else:
            assert store is not None
            try:
                plan = _apply(store, repo, commit, files, warns, progress)
            finally:
                store.close()
    return IndexReport(
        str(commit.id) if commit else None,
        full,
        plan,
        len(files),
        time.monotonic() - started,
        tuple(notes),
    )


def _full_build(
    ws: Workspace,
    repo: pygit2.Repository,
    commit: pygit2.Commit | None,
    files: dict[str, MemoryFile],
    warns: list[Warn],
    progress: Progress | None,
) -> ChangePlan:
    """Write a new index beside the old one and swap it in atomically."""
    tmp = ws.index_path.with_name(f"index.sqlite.tmp-{os.getpid()}")
    remove_index_files(tmp)
    try:
        store = open_store(tmp)
        try:
            plan = _apply(store, repo, commit, files, warns, progress)
        finally:
            store.close()
        os.replace(tmp, ws.index_path)
    finally:
        remove_index_files(tmp)
    return plan


def _apply(
    store: Store,
    repo: pygit2.Repository,
    commit: pygit2.Commit | None,
    files: dict[str, MemoryFile],
    warns: list[Warn],
    progress: Progress | None,
) -> ChangePlan:
    plan = plan_changes(store.file_blobs(), {p: f.blob for p, f in files.items()})
    recorded = commit_time(commit) if commit else None
    commit_id = str(commit.id) if commit else None
    todo = plan.to_parse
    with store.transaction():
        store.remove_paths(plan.to_remove)
        for n, path in enumerate(todo, 1):
            mf = files[path]
            blob = repo[pygit2.Oid(hex=mf.blob)]
            assert isinstance(blob, pygit2.Blob)
            store.add_file(parse_file(mf, blob.data), commit_id, recorded)
            if progress is not None:
                progress(n, len(todo))
        store.replace_global_warnings(warns)
        store.refresh_entities()
        store.set_meta("last_indexed_commit", commit_id or "")
        store.set_meta("indexed_at", datetime.now(UTC).isoformat(timespec="seconds"))
        store.set_meta("chunking", DEFAULT_CHUNKING.fingerprint)
        store.set_meta("embed_provider", "none")
    return plan


def workspace_path_of(ws: Workspace, path: Path) -> str:
    return path.resolve().relative_to(ws.root.resolve()).as_posix()
