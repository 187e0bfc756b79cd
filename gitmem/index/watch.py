"""What a long-running process (``gitmem serve``, ``gitmem mcp``) may remember between requests.

A command that runs alone finds its workspace (``git rev-parse``), reads its configuration and
checks that the index holds HEAD and the uncommitted edits (``git status``) on every call: ~10
ms of processes under a 3,650-file memory, before the query. A warm process answers many calls
for one repository, so it keeps those answers and asks the kernel (Linux inotify) to say when
anything they depend on changes: the memory files and their folders, the configuration files,
the index, and where git keeps HEAD (``git.head_files``). Each change bumps a counter
(``ChangeWatch.changes``), and every remembered answer is kept with the count it was computed
at, so it is used only while nothing has changed since.

Three counts are kept (``ChangeWatch.changes``): every change (what the index is checked
against), the changes that can move where or how the workspace is set up (``setup``: a
configuration file, the repository's ``.git``, a folder that came or went), and the changes
outside the index file (``outside``). An edit to a memory file, a write to the index or a moved
branch leaves the setup count alone: the workspace and its configuration are kept, and no
folder is listed again to re-arm the watch (~11 ms of each request after an edit under a
3,650-file memory). A write to the index alone leaves the outside count too: after its own
catch-up the warm process knows the index current while the file keeps the stamp that write
left (``WarmState.wrote_current``), without running git.

Correctness rests on the order: the watch is armed before an answer is computed, so a change
that lands while it is computed is seen at the next call (which computes again). Where inotify
is missing (not Linux, or the watch limit is reached) the counter moves on every call: nothing
is remembered and every call checks, as a command alone does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar, cast

from gitmem.config import REPO_CONFIG, Config, user_config_path
from gitmem.git import common_dir, head_files
from gitmem.index.store import IndexStamp, Store, index_stamp, open_store
from gitmem.workspace import MEMORY_FOLDERS, ROOT_FILES, Workspace, open_workspace

if TYPE_CHECKING:
    from inotify_simple import INotify

    from gitmem.index.signbits import SignBits

# A change to a file or folder: written, touched, created, removed or renamed (either end).
_MASK = 0x2 | 0x4 | 0x100 | 0x200 | 0x40 | 0x80 | 0x400 | 0x800  # MODIFY ATTRIB CREATE
#   DELETE MOVED_FROM MOVED_TO DELETE_SELF MOVE_SELF
_WATCH_FLAGS = 0x01000000 | 0x02000000 | 0x04000000  # ONLYDIR DONT_FOLLOW EXCL_UNLINK
_IN_ISDIR = 0x40000000
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_INDEX_FILE = "index.sqlite"  # and its -journal: what a writer of the index touches
T = TypeVar("T")


class WatchCounts(NamedTuple):
    """The changes a ``ChangeWatch`` has seen: all, those that can change the setup, and those
    outside the index file."""

    every: int
    setup: int
    outside: int


@dataclass(frozen=True)
class Target:
    """A folder to watch: only ``names`` in it matter (None: any memory file or folder, and
    with ``tree`` every folder below it too; ``refs``: any name but a lock file). ``setup``:
    the names whose change can change the workspace or its configuration (a folder coming
    or going always can)."""

    folder: str
    names: frozenset[str] | None = None
    tree: bool = False
    refs: bool = False
    setup: frozenset[str] = frozenset()
    own: bool = False  # the index: what the warm process writes itself

    def matters(self, name: str, mask: int) -> bool:
        if not name:  # the folder itself: removed, renamed
            return True
        if self.names is not None:
            return name in self.names or (name.startswith(_INDEX_FILE) and
                                          _INDEX_FILE in self.names)
        if self.refs:
            return not name.endswith(".lock")
        return bool(mask & _IN_ISDIR) or name.endswith(".md")

    def sets_up(self, name: str, mask: int) -> bool:
        """Whether this change (one that ``matters``) can change the workspace or its
        configuration, or the folders to watch: else it changes memory, the index or HEAD."""
        return not name or bool(mask & _IN_ISDIR) or name in self.setup


def _file_target(path: Path, *, setup: bool = True) -> Target:
    """The nearest existing folder above ``path``, watching the one name that leads to it:
    a configuration file that does not exist yet is seen when it (or its folder) appears.
    ``setup``: the file is configuration (not a memory file)."""
    child, folder = path, path.parent
    while not folder.is_dir() and folder.parent != folder:
        child, folder = folder, folder.parent
    names = frozenset({child.name})
    # A folder on the way to the file is a folder coming or going (setup) in any case.
    return Target(str(folder), names, setup=names if setup or child != path else frozenset())


def targets(ws: Workspace, cfg: Config) -> list[Target]:
    """Everything an answer for ``ws`` depends on, as folders to watch."""
    extra = [p.strip("/") for p in cfg.extra_paths if p.strip("/")]
    tops = frozenset({*ROOT_FILES, *MEMORY_FOLDERS, ".memory", ".git", REPO_CONFIG,
                      *(p.split("/")[0] for p in extra)})
    # At the top, the memory files are memory; everything else there (the configuration,
    # .git, the memory folders as such) is setup.
    setup = tops - frozenset(ROOT_FILES) - frozenset(p for p in extra if "/" not in p)
    out = [Target(str(ws.root), tops, setup=setup), Target(str(ws.repo_root), tops, setup=setup),
           Target(str(ws.memory_dir), frozenset({_INDEX_FILE}), own=True),
           _file_target(ws.repo_root / REPO_CONFIG), _file_target(user_config_path())]
    out += [Target(str(ws.root / p), tree=True) for p in (*MEMORY_FOLDERS, *extra)]
    # an extra path may be one file
    out += [_file_target(ws.root / p, setup=False) for p in extra]
    named, trees = head_files(ws.git_dir)
    out += [Target(str(folder), names) for folder, names in named]
    out += [Target(str(folder), tree=True, refs=True) for folder in trees]
    if common_dir(ws.git_dir) != ws.git_dir:
        out.append(Target(str(ws.git_dir), frozenset({"HEAD", "commondir"}),
                          setup=frozenset({"commondir"})))
    return out


class ChangeWatch:
    """Counters of changes to the watched folders, read without blocking (``changes``)."""

    def __init__(self) -> None:
        self._targets: dict[Target, None] = {}  # in the order they were added
        self._inotify: INotify | None = None
        self._wds: dict[int, Target] = {}
        self._count = 0
        self._setup = 0
        self._outside = 0

    def follow(self, found: Iterable[Target]) -> None:
        """Also watch ``found``. A new target moves every count: what was computed before it
        was watched is not covered."""
        new = [t for t in found if t not in self._targets]
        for target in new:
            self._targets[target] = None
            if self._inotify is not None:
                self._add(target)
        if new:
            self._count += 1
            self._setup += 1
            self._outside += 1

    def changes(self) -> WatchCounts:
        """The changes seen so far (at least: one burst of events counts once): every one,
        those that can change the workspace or its configuration (``Target.sets_up``: not
        an edit of memory, the index or HEAD), and those outside the index (``Target.own``).
        When the setup count moved, the watch was armed anew before this returns."""
        self._poll()
        return WatchCounts(self._count, self._setup, self._outside)

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None

    def _poll(self) -> None:
        if self._inotify is None:  # nothing watched: everything may have changed
            self._count += 1
            self._setup += 1
            self._outside += 1
            self._arm()
            return
        changed, setup, outside = self._read()
        if changed:
            self._count += 1
        if outside:
            self._outside += 1
        if setup:
            self._setup += 1
            self._arm()

    def _read(self) -> tuple[bool, bool, bool]:
        """Every event queued, read away: (any change that matters, any that sets up, any
        outside the index)."""
        assert self._inotify is not None
        changed = setup = outside = False
        while events := self._inotify.read(timeout=0):
            for event in events:
                if event.wd < 0 or event.mask & (_IN_Q_OVERFLOW | _IN_IGNORED):
                    # events were lost, or a watched folder went away
                    changed = setup = outside = True
                    continue
                target = self._wds.get(event.wd)
                if target is None:
                    changed = setup = outside = True
                elif target.matters(event.name, event.mask):
                    changed = True
                    outside = outside or not target.own
                    setup = setup or target.sets_up(event.name, event.mask)
        return changed, setup, outside

    def _arm(self) -> None:
        """Watch every target, each folder added again after a setup change (folders come and
        go: a new one is watched from now on; the kernel drops the watch of one removed). One
        inotify instance throughout: closing one costs ~10 ms, and with the one kept nothing
        goes unwatched while the watches are added. Events already queued are read away: what
        they say is what the caller is about to read."""
        try:
            if self._inotify is None:
                from inotify_simple import INotify

                self._inotify = INotify()
            else:
                while self._inotify.read(timeout=0):
                    pass
            self._wds = {}
            for target in self._targets:
                self._add(target)
        except (ImportError, OSError):  # not Linux, or out of watches: check every call
            self.close()

    def _add(self, target: Target) -> None:
        assert self._inotify is not None
        folders = [target.folder]
        if target.tree:
            folders = list(_subfolders(target.folder))
        for folder in folders:
            try:
                wd = self._inotify.add_watch(folder, _MASK | _WATCH_FLAGS)
            except FileNotFoundError:
                continue  # not there (yet): its parent's watch sees it appear
            except NotADirectoryError:
                continue  # a file, or a symbolic link (never followed)
            known = self._wds.get(wd)
            # One folder can be two targets (the workspace root is also the repository's).
            self._wds[wd] = target if known is None else _union(known, target)


def _union(a: Target, b: Target) -> Target:
    if a.names is None or b.names is None:
        kept = a if a.names is None else b
        return replace(kept, setup=a.setup | b.setup, own=a.own and b.own)
    return Target(a.folder, a.names | b.names, setup=a.setup | b.setup, own=a.own and b.own)


def _subfolders(top: str) -> Iterable[str]:
    """``top`` and every folder below it, without following symbolic links."""
    if not os.path.isdir(top) or os.path.islink(top):
        return
    yield top
    try:
        entries = list(os.scandir(top))
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield from _subfolders(entry.path)


class WarmState:
    """The workspaces a warm process opened and whether their index was current, each kept
    with the change count it was found at (``ChangeWatch``)."""

    def __init__(self, watch: ChangeWatch | None = None) -> None:
        self.watch = watch or ChangeWatch()
        self._opened: dict[tuple[str, bool], tuple[int, Workspace, Config]] = {}
        self._current: dict[Workspace, tuple[int, Config]] = {}
        # brought up to date by this process: (outside changes then, config, index stamp after)
        self._written: dict[Workspace, tuple[int, Config, IndexStamp]] = {}
        self._followed: dict[tuple[Workspace, Config], int] = {}  # targets watched as of
        self._bits: dict[Path, SignBits | None] = {}  # by index file; None: no numpy
        self._readers: dict[Path, tuple[tuple[int, int], Store]] = {}  # by index file: idle
        self._lent: dict[Store, tuple[int, int]] = {}  # in use, with the file each opened
        self._of_index: dict[tuple[Path, str], tuple[IndexStamp, object]] = {}

    def sign_bits(self, ws: Workspace) -> SignBits | None:
        """The sign bits of the vectors of ``ws``'s index, held in memory (``index.signbits``:
        they follow the index's own log of vector changes, not this watch); None without
        numpy, and the caller asks vec0."""
        if ws.index_path not in self._bits:
            try:
                from gitmem.index.signbits import SignBits
            except ImportError:  # no numpy 2
                self._bits[ws.index_path] = None
            else:
                self._bits[ws.index_path] = SignBits()
        return self._bits[ws.index_path]

    def reader(self, path: Path) -> Store:
        """A read connection to the index at ``path``: the one kept since the last request
        while the path is still that file, else a new one (``open_store``). SQLite reads
        what other connections wrote since (it checks the file's change counter at each
        read), and a kept connection keeps its page cache and the loaded vector extension
        (~2 ms a request). Hand it back with ``release``; until then it is this caller's."""
        try:
            info = os.stat(path)
        except OSError:
            self._drop_reader(path)
            return open_store(path, readonly=True)  # raises what a command alone raises
        identity = (info.st_dev, info.st_ino)
        kept = self._readers.pop(path, None)
        if kept is not None and kept[0] == identity:
            store = kept[1]
        else:
            if kept is not None:  # another file now (rebuilt, reset): the old one goes
                kept[1].close()
            # stat before open: a file swapped in between is not the one named here, and is
            # opened again next time
            store = open_store(path, readonly=True)
        self._lent[store] = identity
        return store

    def release(self, path: Path, store: Store, *, failed: bool = False) -> None:
        """Keep ``store`` (from ``reader``) for the next request, unless the request failed
        or left a statement reading: an open read would hold a lock that writers wait for."""
        identity = self._lent.pop(store, None)
        if failed or identity is None or store.conn.txn_state() != 0 or path in self._readers:
            store.close()
            return
        self._readers[path] = (identity, store)

    def of_index(self, path: Path, name: str, compute: Callable[[], T]) -> T:
        """``compute()`` for what depends on the index's content alone (counts, say),
        remembered while the index file is as it was: the same file, no transaction written
        since (``index_stamp``; its change counter only moves on)."""
        stamp = index_stamp(path)  # before computing: a write in between is seen next time
        known = self._of_index.get((path, name))
        if stamp is not None and known is not None and known[0] == stamp:
            return cast(T, known[1])
        value = compute()
        if stamp is not None:
            self._of_index[(path, name)] = (stamp, value)
        return value

    def _drop_reader(self, path: Path) -> None:
        kept = self._readers.pop(path, None)
        if kept is not None:
            kept[1].close()

    def vectors_held(self) -> int:
        """How many vectors' sign bits are held in memory (``gitmem serve``'s ping)."""
        return sum(len(bits) for bits in self._bits.values() if bits is not None)

    def open_workspace(self, start: Path, *, lenient: bool = False) -> tuple[Workspace, Config]:
        """``workspace.open_workspace``, remembered until something it read changes."""
        count = self.watch.changes().setup
        key = (str(start), lenient)
        known = self._opened.get(key)
        if known is not None and known[0] == count and os.path.isdir(start):
            return known[1], known[2]
        ws, cfg = open_workspace(start, lenient=lenient)
        self.watch.follow(targets(ws, cfg))
        self._opened[key] = (count, ws, cfg)
        return ws, cfg

    def index_known(self, ws: Workspace, cfg: Config) -> tuple[bool, WatchCounts]:
        """(whether the index of ``ws`` was found current with ``cfg`` and nothing changed
        since, the change counts now: give them to ``found_current`` after a check, or to
        ``wrote_current`` after bringing the index up to date)."""
        counts = self.watch.changes()
        if self._followed.get((ws, cfg)) != counts.setup:  # folders may have come or gone
            self.watch.follow(targets(ws, cfg))
            counts = self.watch.changes()
            self._followed[(ws, cfg)] = counts.setup
        if self._current.get(ws) == (counts.every, cfg):
            return True, counts
        # Since this process caught the index up, nothing changed but the index, and the
        # index file is as that write left it: the write was this process's own.
        written = self._written.get(ws)
        if written is not None and written[:2] == (counts.outside, cfg) and \
                index_stamp(ws.index_path) == written[2]:
            self._current[ws] = (counts.every, cfg)
            return True, counts
        return False, counts

    def found_current(self, ws: Workspace, cfg: Config, counts: WatchCounts) -> None:
        self._current[ws] = (counts.every, cfg)

    def wrote_current(self, ws: Workspace, cfg: Config, counts: WatchCounts,
                      stamp: IndexStamp) -> None:
        """This process brought the index up to date with what changed before ``counts``;
        ``stamp``: the index file right after that write (``index.store.index_stamp``)."""
        self._written[ws] = (counts.outside, cfg, stamp)

    def close(self) -> None:
        for path in list(self._readers):
            self._drop_reader(path)
        self.watch.close()
