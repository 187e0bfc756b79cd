"""Bring the index up to date with HEAD by replaying its first-parent history.

Each commit's tree is diffed with its first parent's (blob ids are the change detector) and only
changed memory files are parsed; their fact and chunk versions are opened and closed at that
commit, which gives every version its record time and end time from git, not from mtimes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from gitmem.config import Config
from gitmem.domain import MemoryFile, ParsedFile, Warn
from gitmem.errors import GitmemError
from gitmem.git import GitRepo, chain_changes, head_from_files, read_blobs
from gitmem.index import graph, linking
from gitmem.index.changes import ChangePlan, IndexReport, plan_changes
from gitmem.index.items import ItemVersion, item_versions
from gitmem.index.store import (
    UNUSABLE,
    WORKTREE,
    NewerIndexError,
    Store,
    index_stamp,
    open_store,
    remove_index_files,
    remove_stale_temporaries,
    settle_journal,
)
from gitmem.locks import LOCK_WAIT_SECONDS, writer_lock
from gitmem.parse.chunking import DEFAULT_CHUNKING
from gitmem.parse.markdown import parse_file
from gitmem.parse.opinions import OPINIONS_PATH
from gitmem.workspace import (
    LAYER_SYMLINK,
    Workspace,
    WorktreeLayer,
    classifier,
    classify,
    memory_files_in_tree,
    pathspecs,
    scope_fingerprint,
    worktree_layer,
)

Progress = Callable[[int, int], None]  # (commits replayed, commits to replay)


Parsed = tuple[ParsedFile, list[ItemVersion]]
PARALLEL_MIN_FILES = 64  # below this a process pool costs more than it saves
BATCH_COMMITS = 400  # commits whose files are parsed together (bounds memory on big replays)


def _parse_blobs(repo_path: str, files: list[MemoryFile]) -> list[Parsed]:
    """Worker: parse blobs of one repository (runs in a child process on big replays)."""
    out: list[Parsed] = []
    for mf, data in zip(files, read_blobs(repo_path, [mf.blob for mf in files]), strict=True):
        parsed = parse_file(mf, data)
        out.append((parsed, item_versions(parsed)))
    return out


class _Replay:
    """Applies commits to the versioned tables, one commit at a time."""

    def __init__(self, store: Store, git: GitRepo, ws: Workspace) -> None:
        self.store, self.git, self.ws = store, git, ws
        self.parsed: dict[tuple[str, str], Parsed] = {}

    def parse(self, mf: MemoryFile, data: bytes | None = None) -> Parsed:
        key = (mf.path, mf.blob)
        hit = self.parsed.get(key)
        if hit is None or hit[0].file != mf:
            if data is None:
                data = self.git.blob(mf.blob)
            parsed = parse_file(mf, data)
            hit = (parsed, item_versions(parsed))
            self.parsed[key] = hit
        return hit

    def prefetch(self, files: list[MemoryFile]) -> None:
        """Parse many blobs at once, on every core when there are enough of them."""
        self.parsed.clear()
        todo = list({(mf.path, mf.blob): mf for mf in files}.values())
        workers = min(os.cpu_count() or 1, 4)
        if len(todo) < PARALLEL_MIN_FILES or workers < 2:
            return
        slices = [todo[i :: workers * 4] for i in range(workers * 4)]
        from gitmem.index.pool import parse_pool  # concurrent.futures: big replays only

        with parse_pool(workers) as pool:
            for batch in pool.map(_parse_blobs, [str(self.git.git_dir)] * len(slices), slices):
                for parsed, versions in batch:
                    self.parsed[(parsed.file.path, parsed.file.blob)] = (parsed, versions)

    def apply(
        self,
        changes: Mapping[str, MemoryFile | None],
        seq: int,
        commit_id: str,
        at: str,
        data: Mapping[str, bytes] | None = None,
    ) -> None:
        carried: dict[str, str | None] = {}
        inserts: list[tuple[MemoryFile, ParsedFile, list[ItemVersion]]] = []
        for path in sorted(changes):
            mf = changes[path]
            current = self.store.open_versions(path)
            parsed, new = self.parse(mf, (data or {}).get(path)) if mf else (None, [])
            keys = {v.vkey for v in new}
            gone = [(k, row) for k, row in current.items() if k not in keys]
            # Versions the uncommitted layer hides keep their vectors: they return when it goes.
            self.store.close_versions([row[0] for _, row in gone], seq, commit_id, at,
                                      keep_vectors=commit_id == WORKTREE)
            for _, (_, fact_id, recorded) in gone:
                carried.setdefault(fact_id or "", recorded)
            if mf is None or parsed is None:
                self.store.remove_files([path])
            else:
                self.store.put_file(parsed)
                inserts.append((mf, parsed, [v for v in new if v.vkey not in current]))
            if path == OPINIONS_PATH:
                self._opinions(parsed, seq, commit_id, at)
        for mf, _, versions in inserts:
            stamped = [(v, (carried.get(v.fact_id) if v.fact_id else None) or at) for v in versions]
            self.store.insert_versions(mf, stamped, seq=seq, commit_id=commit_id)
        self.store.resolve_replaces(seq, [mf.path for mf, _, _ in inserts])
        linking.link(self.store, seq)

    def _opinions(self, parsed: ParsedFile | None, seq: int, commit_id: str, at: str) -> None:
        current = self.store.open_opinions()
        new = {op.vkey: op for op in (parsed.opinions if parsed else ())}
        self.store.close_opinions([i for k, i in current.items() if k not in new], seq, at)
        for key, op in new.items():
            if key not in current:
                self.store.insert_opinion(op, seq=seq, commit_id=commit_id, at=at)


def _reusable_index(ws: Workspace, cfg: Config, notes: list[str]) -> Store | None:
    """The existing index, if an incremental update can bring it to HEAD; None means rebuild
    (and ``notes`` says why, unless there simply is no index yet)."""
    if not ws.index_path.exists():
        return None
    if ws.index_path.is_dir():
        raise GitmemError(f"{ws.index_path} is a folder, not an index file: move it away and "
                          "run 'gitmem index' again")
    if ws.index_path.stat().st_size == 0:
        notes.append(f"index at {ws.index_path} was an empty file; rebuilt it")
        return None
    try:
        store = open_store(ws.index_path)
    except (*UNUSABLE, NewerIndexError) as exc:
        notes.append(f"index at {ws.index_path} was unusable ({exc}); rebuilt it")
        return None
    why = None
    if store.get_meta("chunking") not in (None, DEFAULT_CHUNKING.fingerprint):
        why = "chunking parameters changed: full re-index"
    elif store.get_meta("rule_version") != graph.rule_version():
        why = "the rule of knowledge updates changed: full re-index"
    elif store.get_meta("scope") not in (None, scope_fingerprint(ws.prefix, cfg.extra_paths)):
        why = ("which files are memory changed (workspace.root, index.extra_paths, or this "
               "version's layout rules): full re-index")
    if why is None:
        return store
    notes.append(why)
    store.close()
    return None


def index_workspace(
    ws: Workspace,
    cfg: Config,
    *,
    force: bool = False,
    progress: Progress | None = None,
    wait: bool = True,
    timeout: float = LOCK_WAIT_SECONDS,
    worktree: bool | None = None,
    layer: WorktreeLayer | None = None,
    report_plan: bool = True,
) -> IndexReport:
    """Replay new commits of HEAD's first-parent chain into the index, then layer the
    uncommitted memory edits on top (unless ``worktree`` or ``index.worktree`` is off).

    Incremental when the index knows a commit of the chain (after a rewrite it rolls back to
    the fork point first); a full rebuild into a new file otherwise, or with ``force``.
    ``layer``: the uncommitted layer a caller read just before (the freshness check's ``git
    status``), used while HEAD is still the commit it names; the index records the state it
    applies, so an edit since is seen by the next check. ``report_plan=False``: the report's plan is
    left empty (a caller that only reads its notes: recall), saving two reads of the files
    table on an incremental run.
    """
    started = time.monotonic()
    use_worktree = cfg.worktree if worktree is None else worktree
    with writer_lock(ws, wait=wait, timeout=timeout):
        git = GitRepo(ws.repo_root, ws.git_dir)
        # Read under the lock: the state this run records. git status also names HEAD.
        if not use_worktree:
            layer = None
        elif layer is None or layer.head is None or head_from_files(ws.git_dir) != layer.head:
            layer = worktree_layer(ws, cfg)
        if layer is not None:
            git.__dict__["head"] = layer.head  # GitRepo.head is a cached property
        head = git.head
        notes: list[str] = remove_stale_temporaries(ws.index_path)
        store = None if force else _reusable_index(ws, cfg, notes)
        if store is not None:
            try:
                result = _update(store, git, ws, cfg, progress, layer, notes, report_plan)
            finally:
                store.close()
        else:
            result = None
        if result is None:
            result = _full_build(ws, git, cfg, progress, layer)
            full = True
        else:
            full = False
        stamp = index_stamp(ws.index_path)  # under the lock: this run's write, no other's
    plan, commits, files = result
    return IndexReport(
        head,
        full,
        plan,
        files,
        time.monotonic() - started,
        tuple(notes),
        commits,
        stamp,
    )


_Outcome = tuple[ChangePlan, int, int]


def require_memory(ws: Workspace, cfg: Config) -> None:
    """A first index needs memory files, committed or on disk: in a repository without any,
    nothing is written (no .memory/, no line in .git/info/exclude) and the error says how to
    make the workspace."""
    git = GitRepo(ws.repo_root, ws.git_dir)
    if memory_files_in_tree(git, git.head, ws, cfg)[0]:
        return
    if any(mf is not None for mf in worktree_layer(ws, cfg).changes.values()):
        return
    where = f" (workspace.root = '{ws.prefix.rstrip('/')}')" if ws.prefix else ""
    raise GitmemError(
        f"{ws.root}{where} is not a memory workspace: it has no memory files (MEMORY.md, "
        "USER.md, memory/*.md, bank/*.md); 'gitmem init' creates them here, or pass -C PATH "
        "to the repository that holds the memory"
    )


def layer_key(layer: WorktreeLayer | None) -> str:
    """The index's meta record of its uncommitted layer ('off' when the layer is not used)."""
    return "off" if layer is None else layer.key


def _update(
    store: Store,
    git: GitRepo,
    ws: Workspace,
    cfg: Config,
    progress: Progress | None,
    layer: WorktreeLayer | None,
    notes: list[str],
    report_plan: bool = True,
) -> _Outcome | None:
    """Bring an existing index to HEAD; None when it shares no history with HEAD."""
    head = git.head
    last = store.last_commit(committed=True)
    same_head = (last[1] if last else None) == head
    if same_head and store.get_meta("worktree") == layer_key(layer):
        return ChangePlan((), (), (), ()), 0, store.file_count()  # nothing new
    fork = git.fork_point(store.seq_of) if not same_head else (last[0] if last else None)
    if fork is None and last is not None:
        notes.append("HEAD shares no commit with the indexed history: full re-index")
        return None
    before = store.file_blobs() if report_plan else None
    with store.transaction():
        # the files the new layer changes get their rows from it below: not restored first
        _drop_layer(store, git, ws, cfg, set(layer.changes) if layer is not None else set())
        base = fork or 0
        rolled_back = last is not None and last[0] > base
        if rolled_back:
            store.rollback_to(base)
            _sync_files(store, git, ws, cfg, store.commit_at(base))
        replayed = _Replayed() if same_head else _replay(store, git, ws, cfg, base, progress)
        _finish(store, git, ws, cfg, layer, replayed, rolled_back)
    if before is None:
        return ChangePlan((), (), (), ()), replayed.commits, store.file_count()
    after = store.file_blobs()
    return plan_changes(before, after), replayed.commits, len(after)


def _drop_layer(store: Store, git: GitRepo, ws: Workspace, cfg: Config,
                relaid: set[str] | None = None) -> None:
    """Remove the uncommitted layer: its versions go, the ones it closed reopen, and the files
    it changed are described as committed again (only those files are parsed), but for those
    in ``relaid``: a new layer applied in the same transaction replaces their rows (the files
    table row and its warnings are all a path's, and the layer's versions are read from the
    items, not from it)."""
    seq = store.seq_of(WORKTREE)
    if seq is None:
        return
    store.rollback_to(seq - 1)
    try:
        recorded = json.loads(store.get_meta("worktree") or "")
    except ValueError:
        recorded = None
    if not isinstance(recorded, dict):  # an index from before the layer was recorded
        _sync_files(store, git, ws, cfg, store.commit_at(seq - 1))
        return
    replay = _Replay(store, git, ws)
    for path, (base, _) in sorted(recorded.items()):
        if relaid and path in relaid:
            continue
        found = classify(path, cfg.extra_paths)
        if base is None or found is None:
            store.remove_files([path])
        else:
            store.put_file(replay.parse(MemoryFile(path, base, found[0], found[1]))[0])


def _sync_files(
    store: Store, git: GitRepo, ws: Workspace, cfg: Config, commit_id: str | None
) -> None:
    """Make the files table describe a commit's tree (after a rollback)."""
    target, _ = memory_files_in_tree(git, commit_id, ws, cfg)
    plan = plan_changes(store.file_blobs(), {p: f.blob for p, f in target.items()})
    store.remove_files(plan.to_remove)
    replay = _Replay(store, git, ws)
    for path in plan.to_parse:
        store.put_file(replay.parse(target[path])[0])


@dataclass
class _Replayed:
    commits: int = 0
    paths: set[str] = field(default_factory=set)  # memory paths changed by those commits
    links: bool = False  # some commit turned a memory path into a symbolic link


def _replay(
    store: Store,
    git: GitRepo,
    ws: Workspace,
    cfg: Config,
    base: int,
    progress: Progress | None,
) -> _Replayed:
    """Replay the chain's commits after seq ``base`` up to ``head``."""
    done = _Replayed()
    if git.head is None:
        return done
    commits = chain_changes(ws.repo_root, git.head, store.commit_at(base) if base else None,
                            ws.prefix, pathspecs(ws.prefix, cfg.extra_paths), classifier(cfg))
    replay = _Replay(store, git, ws)
    for first in range(0, len(commits), BATCH_COMMITS):
        batch = commits[first : first + BATCH_COMMITS]
        replay.prefetch([mf for c in batch for mf in c.changes.values() if mf is not None])
        for n, change in enumerate(batch, first + 1):
            replay.apply(change.changes, base + n, change.commit_id, change.committed_at)
            store.add_commit(base + n, change.commit_id, change.committed_at)
            done.paths.update(change.changes)
            done.links = done.links or bool(change.links)
            if progress is not None:
                progress(n, len(commits))
    done.commits = len(commits)
    return done


def _finish(
    store: Store,
    git: GitRepo,
    ws: Workspace,
    cfg: Config,
    layer: WorktreeLayer | None,
    replayed: _Replayed,
    recheck: bool,
) -> None:
    """Warnings not tied to a parsed file (symbolic links, no commits), the uncommitted layer,
    entities, meta.

    Walking HEAD's whole tree for links costs tens of milliseconds on a large workspace, so an
    incremental run only does it when a replayed commit made a link (or after a rollback)."""
    head = git.head
    if recheck or replayed.links or head is None:
        _, warns = memory_files_in_tree(git, head, ws, cfg)
        if head is None and layer is None:
            warns.append(Warn("", 0, "no-commits", "the repository has no commits yet; "
                              "commit memory files to index them"))
        store.replace_global_warnings(warns)
    else:
        store.clear_link_warnings(replayed.paths)
        store.clear_warnings("no-commits")  # a warning belongs to the state it describes
    if layer is not None and layer.changes:
        _apply_layer(store, git, ws, layer)
    store.replace_warnings(LAYER_SYMLINK, layer.warns if layer is not None else [])
    store.refresh_entities()
    store.set_meta("last_indexed_commit", head or "")
    store.set_meta("worktree", layer_key(layer))
    store.set_meta("indexed_at", datetime.now(UTC).isoformat(timespec="seconds"))
    store.set_meta("chunking", DEFAULT_CHUNKING.fingerprint)
    store.set_meta("rule_version", graph.rule_version())
    store.set_meta("scope", scope_fingerprint(ws.prefix, cfg.extra_paths))


def _apply_layer(store: Store, git: GitRepo, ws: Workspace, layer: WorktreeLayer) -> None:
    """Layer uncommitted memory edits on top as the pseudo-commit 'worktree': only the changed
    files are parsed; the versions they replace are closed (and reopen when it is dropped)."""
    last = store.last_commit()
    seq = (last[0] if last else 0) + 1
    at = datetime.now(UTC).isoformat(timespec="seconds")
    _Replay(store, git, ws).apply(layer.changes, seq, WORKTREE, at, layer.data)
    store.add_commit(seq, WORKTREE, at)


def _full_build(
    ws: Workspace,
    git: GitRepo,
    cfg: Config,
    progress: Progress | None,
    layer: WorktreeLayer | None,
) -> _Outcome:
    """Replay the whole chain into a new file and swap it in atomically."""
    tmp = ws.index_path.with_name(f"index.sqlite.tmp-{os.getpid()}")
    remove_index_files(tmp)
    try:
        store = open_store(tmp)
        try:
            with store.transaction():
                replayed = _replay(store, git, ws, cfg, 0, progress)
                _finish(store, git, ws, cfg, layer, replayed, True)
            files = store.file_blobs()
        finally:
            store.close()
        # A journal left by a killed writer belongs to the file being replaced: were it kept,
        # SQLite would "roll it back" into the new file. It is rolled back into the old file
        # first, so that a kill before the swap still leaves the old file whole.
        settle_journal(ws.index_path)
        os.replace(tmp, ws.index_path)
    finally:
        remove_index_files(tmp)
    return plan_changes({}, files), replayed.commits, len(files)


