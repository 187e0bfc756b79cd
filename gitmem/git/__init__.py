"""The one door to git: every git command gitmem runs and every pygit2 call live here.

The git CLI starts in a few milliseconds, where importing pygit2 alone costs ~60 ms, so the hot
paths (recall's freshness check, an incremental index after one commit) only run ``git``;
pygit2 is imported on first use for tree walks, full builds and reads at a revision.

One ``git log --raw -z`` process lists every commit of the first-parent chain with its changed
paths and blob ids; git computes those tree diffs far faster than diffing tree objects one by one
from Python (0.6 s against 2.5 s for 3,650 daily commits).

Nothing here knows which files are memory: callers pass a ``classify`` function (the
workspace's), so this module depends on nothing but the domain types.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from gitmem.domain import Classified, MemoryFile
from gitmem.errors import GitmemError, UsageError

if TYPE_CHECKING:
    import pygit2

GIT_LINK = 0o120000
GIT_SUBMODULE = 0o160000

# What a workspace-relative path is (class, daily date, problem), or None when it is not memory.
Classify = Callable[[str], Classified | None]


def run(cwd: Path, *args: str, env: Mapping[str, str] | None = None,
        stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C cwd ARGS`` and capture its output (never raises for git's exit status)."""
    try:
        return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, check=False,
                              env=env, input=stdin)
    except OSError as exc:
        raise GitmemError(f"cannot run git ({exc}); gitmem needs git on PATH") from exc


def _out(proc: subprocess.CompletedProcess[bytes]) -> str:
    return proc.stdout.decode("utf-8", "surrogateescape").strip()


def _path_out(proc: subprocess.CompletedProcess[bytes]) -> str:
    """A path git printed: only the line end is removed (names may end in spaces or hold
    newlines)."""
    text = proc.stdout.decode("utf-8", "surrogateescape")
    return text[:-1] if text.endswith("\n") else text


def find_repo_root(start: Path) -> tuple[Path, Path]:
    """(work tree root, git dir) of the repository containing ``start``."""
    if not start.is_dir():
        raise GitmemError(f"{start} is not a folder; pass -C PATH, a folder in the memory "
                          "repository")
    return plain_repo_root(start) or asked_repo_root(start)


def asked_repo_root(start: Path) -> tuple[Path, Path]:
    """``find_repo_root`` as git answers it (one process), with git's reasons to refuse."""
    # One git call: recall runs this on every query. A path may hold any character but NUL,
    # newlines included, so only the last value is a path: the top folder comes as
    # --show-cdup ('../' steps, never anything else) and the git dir takes the rest.
    proc = run(start, "rev-parse", "--is-bare-repository", "--show-cdup", "--absolute-git-dir")
    text = proc.stdout.decode("utf-8", "surrogateescape")
    bare, _, rest = text.partition("\n")
    if bare not in ("true", "false"):
        raise GitmemError(
            f"{start} is not inside a git repository; run 'gitmem init' there, or pass -C PATH"
        )
    cdup, _, git_dir = rest.partition("\n")
    if proc.returncode != 0 or bare == "true" or not git_dir:
        raise GitmemError(f"{start} has no work tree (bare, or run from inside .git); "
                          "gitmem needs a work tree")
    git_dir = git_dir[:-1] if git_dir.endswith("\n") else git_dir
    return (start.resolve() / cdup).resolve(), Path(git_dir).resolve()


# Variables and settings that change where git finds a repository: git itself is asked then.
_DISCOVERY_VARIABLES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
                        "GIT_DISCOVERY_ACROSS_FILESYSTEM")


def plain_repo_root(start: Path) -> tuple[Path, Path] | None:
    """What ``git rev-parse`` answers for the plain case, found without starting git (every
    command looks for its repository first): the nearest ``.git`` folder, or ``.git`` file of
    a linked worktree or submodule, above ``start`` on one file system, owned by this user,
    in a repository whose config sets no ``core.bare`` or ``core.worktree``. None for anything
    else (git then answers, or explains why not)."""
    if any(name in os.environ for name in _DISCOVERY_VARIABLES):
        return None
    here = start.resolve()  # the physical path, as git's getcwd() gives it
    if ".git" in here.parts:
        return None  # inside a git dir: no work tree, as git says
    try:
        device = os.stat(here).st_dev
        for folder in (here, *here.parents):
            info = os.stat(folder)
            if info.st_dev != device:
                return None  # git stops at a file system boundary
            try:
                dot = os.lstat(folder / ".git")
            except FileNotFoundError:
                continue
            return _repo_at(folder, info, dot)
    except OSError:
        return None
    return None


def _repo_at(folder: Path, info: os.stat_result, dot: os.stat_result) -> tuple[Path, Path] | None:
    git_dir = folder / ".git"
    if stat.S_ISREG(dot.st_mode):  # gitdir: <path>, the git dir of a worktree or submodule
        text = git_dir.read_text(encoding="utf-8", errors="surrogateescape").rstrip("\n")
        if not text.startswith("gitdir: "):
            return None
        git_dir = folder / text[len("gitdir: "):]
    elif not stat.S_ISDIR(dot.st_mode):
        return None
    uid = os.getuid()
    if info.st_uid != uid or dot.st_uid != uid:
        return None  # another user's repository: git's safe.directory rule decides
    if not (git_dir / "HEAD").is_file():
        return None
    if (git_dir / "config.worktree").exists() or _moves_work_tree(common_dir(git_dir) / "config"):
        return None
    return folder, git_dir.resolve()


def _moves_work_tree(config: Path) -> bool:
    """Whether a repository's config may say it is bare or has its work tree elsewhere:
    ``bare`` set to anything but false (a bare ``bare`` is true), or any ``worktree`` key."""
    try:
        text = config.read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        return False
    for line in text.splitlines():
        key, _, value = line.replace(" ", "").replace("\t", "").lower().partition("=")
        if key.startswith(("worktree", "[include")) or (key == "bare" and value not in (
                "false", "no", "off", "0")):
            return True  # (an included file may set either)
    return False


def head_id(repo_root: Path) -> str | None:
    """HEAD's commit id, or None when the branch has no commits yet."""
    proc = run(repo_root, "rev-parse", "-q", "--verify", "HEAD^{commit}")
    return (_out(proc) or None) if proc.returncode == 0 else None


@dataclass(frozen=True)
class TreeStatus:
    """HEAD and the paths whose working-tree content may differ from it (``git status``)."""

    head: str | None  # None: no commits yet
    # repository-relative path -> (its blob id at HEAD or None, its file mode on disk; 0: gone)
    changed: dict[str, tuple[str | None, int]]


_NO_BLOB = "0" * 40


def tree_status(repo_root: Path, pathspecs: Sequence[str]) -> TreeStatus:
    """One ``git status`` over ``pathspecs``: HEAD, and each path that is modified, staged,
    deleted or untracked, with its HEAD blob id. This is recall's freshness check, so it is one
    process; ``--no-optional-locks`` keeps it from writing git's index under a running git."""
    proc = run(repo_root, "--no-optional-locks", "--literal-pathspecs", "status",
               "--porcelain=v2", "-z", "--branch", "--untracked-files=all", "--no-renames",
               "--ignore-submodules=all", "--", *pathspecs)
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot read the working tree of {repo_root}: {reason}")
    head: str | None = None
    changed: dict[str, tuple[str | None, int]] = {}
    for record in proc.stdout.split(b"\x00"):
        line = record.decode("utf-8", "surrogateescape")
        if line.startswith("# branch.oid "):
            oid = line[len("# branch.oid "):].strip()
            head = None if oid == "(initial)" else oid
        elif line.startswith("1 "):  # 1 XY sub mH mI mW hH hI path
            parts = line.split(" ", 8)
            blob = parts[6]
            changed[parts[8]] = (None if blob == _NO_BLOB else blob, int(parts[5], 8))
        elif line.startswith("u "):  # u XY sub m1 m2 m3 mW h1 h2 h3 path (h2: ours, HEAD)
            parts = line.split(" ", 10)
            blob = parts[8]
            changed[parts[10]] = (None if blob == _NO_BLOB else blob, int(parts[6], 8))
        elif line.startswith("? "):
            changed[line[2:]] = (None, 0o100644)
    return TreeStatus(head, changed)


def commit_time(repo_root: Path, rev: str) -> tuple[str, str] | None:
    """(commit id, commit time as ISO 8601 UTC) of a revision (id, branch, tag, HEAD~2), or
    None when it names no commit."""
    proc = run(repo_root, "show", "-s", "--format=%H %ct", "--end-of-options", f"{rev}^{{commit}}")
    fields = _out(proc).split()
    if proc.returncode != 0 or len(fields) != 2:
        return None
    at = datetime.fromtimestamp(int(fields[1]), UTC).isoformat(timespec="seconds")
    return fields[0], at


def hooks_dir(repo_root: Path) -> Path:
    """The directory git runs hooks from, for this work tree (honours core.hooksPath and
    linked worktrees)."""
    proc = run(repo_root, "rev-parse", "--git-path", "hooks")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot ask git for the hooks directory of {repo_root}: {reason}")
    path = Path(_path_out(proc))
    return path if path.is_absolute() else (repo_root / path).resolve()


def common_dir(git_dir: Path) -> Path:
    """The directory shared by all work trees (where info/exclude lives)."""
    commondir = git_dir / "commondir"
    if commondir.is_file():
        return (git_dir / commondir.read_text(encoding="utf-8").removesuffix("\n")).resolve()
    return git_dir


def head_files(git_dir: Path) -> tuple[list[tuple[Path, frozenset[str]]], list[Path]]:
    """Where git keeps what HEAD resolves to, for a file watcher: (folders with the names in
    them that matter, folders whose whole tree matters). HEAD lives in the work tree's git
    dir, packed refs in the common one, loose branch refs under ``refs/heads``, and a reftable
    repository keeps every ref in ``reftable/``. Lock files are how git writes (a ``.lock``
    renamed over the file): the rename is the change."""
    common = common_dir(git_dir)
    named = [(git_dir, frozenset({"HEAD"})), (common, frozenset({"HEAD", "packed-refs"}))]
    return named, [common / "refs" / "heads", common / "reftable"]


def head_from_files(git_dir: Path) -> str | None:
    """HEAD's commit id read from git's files (``HEAD``, a loose branch ref, ``packed-refs``),
    without a process; None when that is not plain (no commit yet, a reftable repository,
    anything unexpected). A hint only: recall's freshness check uses it to see that a commit
    was made since the index was written, and asks ``git status`` otherwise."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if not head.startswith("ref: "):
            return head if _is_commit_id(head) else None
        ref = head[len("ref: "):]
        common = common_dir(git_dir)
        loose = common / ref
        if ref.startswith("refs/heads/") and ".." not in ref and loose.is_file():
            found = loose.read_text(encoding="utf-8").strip()
            return found if _is_commit_id(found) else None
        with (common / "packed-refs").open(encoding="utf-8") as fh:
            for line in fh:
                oid, _, name = line.rstrip("\n").partition(" ")
                if name == ref and _is_commit_id(oid):
                    return oid
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _is_commit_id(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def init_or_open(target: Path) -> tuple[Path, Path, bool]:
    """(work tree root, git dir, created) for the repository at or above ``target``, making a
    new one (branch ``main``) when there is none. Refuses bare repositories."""
    import pygit2

    found = pygit2.discover_repository(str(target))
    created = found is None
    repo = (pygit2.init_repository(str(target), initial_head="main") if found is None
            else pygit2.Repository(found))
    if repo.is_bare or repo.workdir is None:
        raise GitmemError(f"{found} is a bare repository; run 'gitmem init' in a work tree")
    return Path(repo.workdir).resolve(), Path(repo.path).resolve(), created


def blob_id(data: bytes) -> str:
    """The id git gives a blob with this content (for uncommitted files)."""
    import hashlib  # OpenSSL's start-up: only when a memory file is uncommitted

    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


# -- commits gitmem makes itself (retain, reflect --commit) ------------------------------------

INDEX_LOCK_SECONDS = 5.0  # git holds its index lock for milliseconds (a status, an add)


def files_at(repo_root: Path, commit: str | None, paths: Sequence[str]) -> dict[str, bytes | None]:
    """Each path's content (repository-relative) in ``commit``; None when it is absent there,
    not a file, or there is no commit yet."""
    if commit is None:
        return dict.fromkeys(paths)
    found = read_objects(repo_root, [f"{commit}:{p}" for p in paths])
    return dict(zip(paths, found, strict=True))


def commit_files(repo_root: Path, files: Mapping[str, bytes | None], message: str, *,
                 base: str | None) -> str:
    """Commit exactly ``files`` (repository-relative path -> new content; None: removed) on top
    of ``base``, the HEAD the contents were made from, and return the new commit id.

    The commit is built from git, not from the work tree: HEAD's tree with these blobs. Nothing
    else goes in, neither other edits of the same files nor what is staged in others; the work
    tree is not touched, and git's index afterwards holds the new blobs for these paths and
    everything else as it was (a person's staged changes stay staged). Like ``git commit
    --only``, this holds git's index lock throughout and runs the repository's commit hooks."""
    paths = sorted(files)
    index = _git_path(repo_root, "index")
    with _index_locked(index):
        if head_id(repo_root) != base:
            raise GitmemError("another commit landed while gitmem prepared its own; nothing "
                              "was committed: run it again")
        entries = _new_entries(repo_root, files, base, paths)
        work = index.with_name(f"{index.name}.gitmem-{os.getpid()}")
        env = {**os.environ, "GIT_INDEX_FILE": str(work)}
        try:
            _index_from(index, work, base, env, repo_root)
            _git(repo_root, env, "update-index", "-z", "--index-info", stdin=entries)
            _git(repo_root, env, "commit", "-q", "--no-edit", "-m", message)
            commit = head_id(repo_root)
            if commit is None or commit == base:
                raise GitmemError(f"git commit in {repo_root} made no commit")
            # git's own index: the new blobs for these paths, every other entry as it was
            work.unlink(missing_ok=True)
            if index.exists():
                import shutil

                shutil.copyfile(index, work)
            _git(repo_root, env, "update-index", "-z", "--index-info", stdin=entries)
            os.replace(work, index)
        finally:
            work.unlink(missing_ok=True)
    return commit


def _new_entries(repo_root: Path, files: Mapping[str, bytes | None], base: str | None,
                 paths: list[str]) -> bytes:
    """``git update-index -z --index-info`` input for the new blobs; refuses a path whose
    staged state differs from HEAD (that staged edit would be lost or swept in) or that is not
    a plain file at HEAD."""
    at_head = _listed(repo_root, base, paths)
    staged = _listed(repo_root, None, paths)
    lines: list[bytes] = []
    for path in paths:
        head = at_head.get(path)
        if staged.get(path) != head:
            raise GitmemError(f"{path} has staged changes; commit them or unstage them ('git "
                              f"restore --staged -- {path}') and run it again; nothing was "
                              "committed")
        if head is not None and head[0] not in ("100644", "100755"):
            raise GitmemError(f"refusing to commit {path}: it is not a plain file at HEAD")
        data = files[path]
        if data is None:
            mode, blob = "0", _NO_BLOB
        else:
            mode = head[0] if head is not None else "100644"
            blob = _git(repo_root, None, "hash-object", "-w", "--stdin", stdin=data)
        lines.append(f"{mode} {blob}\t{path}\0".encode("utf-8", "surrogateescape"))
    return b"".join(lines)


def _listed(repo_root: Path, tree: str | None, paths: list[str]) -> dict[str, tuple[str, str]]:
    """path -> (mode, object id) in ``tree`` (``ls-tree``), or in git's index for None
    (``ls-files --stage``: an unmerged path's id carries its stage, so it never equals HEAD's)."""
    if tree is None:
        raw = _git_bytes(repo_root, "ls-files", "-z", "--stage", "--", *paths)
    else:
        raw = _git_bytes(repo_root, "ls-tree", "-z", "--full-tree", tree, "--", *paths)
    out: dict[str, tuple[str, str]] = {}
    for record in raw.split(b"\0"):
        if record:
            meta, _, path = record.decode("utf-8", "surrogateescape").partition("\t")
            mode, second, third = meta.split(" ")  # mode type id | mode id stage
            out[path] = (mode, third) if tree is not None else (
                mode, second if third == "0" else f"{second}#{third}")
    return out


def _index_from(index: Path, work: Path, base: str | None, env: Mapping[str, str],
                repo_root: Path) -> None:
    """``work`` as an index holding ``base``'s tree. It starts as a copy of git's index, so the
    entries that match ``base`` keep their file stats and git need not re-read those files."""
    if base is None:
        _git(repo_root, env, "read-tree", "--empty")
        return
    if index.exists():
        import shutil

        shutil.copyfile(index, work)
        if run(repo_root, "read-tree", "-m", base, env=env).returncode == 0:
            return  # (fails with unmerged entries: then a plain read)
    _git(repo_root, env, "read-tree", base)


def _git(repo_root: Path, env: Mapping[str, str] | None, *args: str,
         stdin: bytes | None = None) -> str:
    return _git_bytes(repo_root, *args, env=env, stdin=stdin).decode("utf-8", "replace").strip()


def _git_bytes(repo_root: Path, *args: str, env: Mapping[str, str] | None = None,
               stdin: bytes | None = None) -> bytes:
    """The output of a git command that must succeed (GitmemError with git's reason)."""
    proc = run(repo_root, "--literal-pathspecs", *args, env=env, stdin=stdin)
    if proc.returncode != 0:
        reason = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        raise GitmemError(f"git {args[0]} failed in {repo_root}: {reason}")
    return proc.stdout


def _git_path(repo_root: Path, name: str) -> Path:
    proc = run(repo_root, "rev-parse", "--git-path", name)
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot ask git where its {name} is in {repo_root}: {reason}")
    path = Path(_path_out(proc))
    return path if path.is_absolute() else (repo_root / path).resolve()


@contextmanager
def _index_locked(index: Path) -> Iterator[None]:
    """Hold git's own index lock (``index.lock``, made exclusively, as git makes it): no git
    command changes the index, or commits from it, while gitmem commits and updates it."""
    lock = index.with_name(f"{index.name}.lock")
    deadline = time.monotonic() + INDEX_LOCK_SECONDS
    while True:
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            break
        except FileExistsError:
            if time.monotonic() >= deadline:
                raise GitmemError(f"another git process is running in this repository ({lock} "
                                  "exists); try again when it ends, or remove that file if "
                                  "no git process is running") from None
            time.sleep(0.05)
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)


# -- history -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class CommitChanges:
    commit_id: str
    committed_at: str  # UTC, ISO 8601, seconds
    changes: dict[str, MemoryFile | None] = field(default_factory=dict)  # None: removed
    links: frozenset[str] = frozenset()  # memory paths that became symbolic links


def chain_changes(repo_root: Path, tip: str, base: str | None, prefix: str,
                  pathspecs: Sequence[str], classify: Classify) -> list[CommitChanges]:
    """Commits after ``base`` (exclusive) up to ``tip`` along first parents, oldest first.

    A merge's changes are those against its first parent: what the merge brought into the
    mainline is recorded at the merge commit.
    """
    args = ["--literal-pathspecs", "log", "--first-parent", "--sparse",
            "--diff-merges=first-parent", "--raw", "--no-renames", "--no-abbrev", "-z",
            "--format=%x01%H%x02%ct", "--root", tip]
    if base:
        args.append(f"^{base}")
    proc = run(repo_root, *args, "--", *pathspecs)
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot read the history of {repo_root}: {reason}")
    out = [_parse_commit(rec, prefix, classify) for rec in proc.stdout.split(b"\x01") if rec]
    out.reverse()
    return out


def _parse_commit(record: bytes, prefix: str, classify: Classify) -> CommitChanges:
    head, _, rest = record.partition(b"\x00")
    sha, _, stamp = head.decode("ascii").partition("\x02")
    at = datetime.fromtimestamp(int(stamp.strip()), UTC).isoformat(timespec="seconds")
    changes: dict[str, MemoryFile | None] = {}
    links: set[str] = set()
    for (_, new_mode, _, new_blob, status), path, found in _raw_entries(rest.lstrip(b"\n"),
                                                                         prefix, classify):
        mode = int(new_mode, 8)
        if mode == GIT_LINK and not status.startswith("D"):
            links.add(path)
        if status.startswith("D") or mode in (GIT_LINK, GIT_SUBMODULE, 0):
            changes[path] = None
        else:
            changes[path] = MemoryFile(path, new_blob, found[0], found[1])
    return CommitChanges(sha.strip(), at, changes, frozenset(links))


def _raw_entries(data: bytes, prefix: str, classify: Classify) -> Iterator[
        tuple[list[str], str, Classified]]:
    """The memory files of ``--raw -z`` output: ([old mode, new mode, old blob, new blob,
    status], workspace-relative path, its classification)."""
    fields = data.split(b"\x00")
    for i in range(0, len(fields) - 1, 2):
        meta, raw_path = fields[i].lstrip(b"\n"), fields[i + 1]
        if not meta.startswith(b":"):
            continue
        path = raw_path.decode("utf-8", "surrogateescape")
        if prefix:
            if not path.startswith(prefix):
                continue
            path = path[len(prefix):]
        found = classify(path)
        if found is not None:
            yield meta[1:].decode("ascii").split(" "), path, found


class GitRepo:
    """A repository as the indexer needs it, without paying for pygit2 on the fast path.

    An incremental update after a commit needs HEAD, the fork point and a few blobs: the git CLI
    answers those in a few milliseconds. Tree walks (full builds, rollbacks, link checks) open
    pygit2 on first use.
    """

    def __init__(self, repo_root: Path, git_dir: Path) -> None:
        self.root, self.git_dir = repo_root, git_dir
        self._repo: pygit2.Repository | None = None

    @cached_property
    def head(self) -> str | None:
        return head_id(self.root)

    @property
    def pygit(self) -> pygit2.Repository:
        if self._repo is None:
            import pygit2

            self._repo = pygit2.Repository(str(self.git_dir))
        return self._repo

    def blob(self, sha: str) -> bytes:
        if self._repo is not None:
            import pygit2

            obj = self._repo[pygit2.Oid(hex=sha)]
            assert isinstance(obj, pygit2.Blob)
            return bytes(obj.data)
        proc = run(self.root, "cat-file", "blob", sha)
        if proc.returncode != 0:
            raise GitmemError(f"cannot read blob {sha}: {proc.stderr.decode().strip()}")
        return proc.stdout

    def fork_point(self, known: Callable[[str], int | None]) -> int | None:
        """The seq of the newest indexed commit on HEAD's first-parent chain, or None.

        Merges are followed through their first parent only: what a merge brings in is
        recorded at the merge commit, the moment the mainline memory started holding it.
        """
        if self.head is None:
            return None
        proc = subprocess.Popen(["git", "-C", str(self.root), "rev-list", "--first-parent",
                                 self.head], stdout=subprocess.PIPE)
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                seq = known(line.decode().strip())
                if seq is not None:
                    return seq
            return None
        finally:
            proc.kill()
            proc.wait()

    def files(self, commit_id: str | None, prefix: str,
              roots: set[str]) -> Iterator[tuple[str, str, int]]:
        """(path below ``prefix``, blob id, file mode) of every file of a commit's tree; at the
        top only the ``roots`` folders are entered (a large repository's unrelated trees are
        never read). Nothing for None (no commits) or a missing prefix folder."""
        if commit_id is None:
            return
        import pygit2

        commit = self.pygit[pygit2.Oid(hex=commit_id)]
        assert isinstance(commit, pygit2.Commit)
        tree = commit.tree
        if prefix:
            try:
                sub = tree[prefix.rstrip("/")]
            except KeyError:
                return
            if sub.type_str != "tree":
                return
            tree = self._tree(sub.id)
        yield from self._walk(tree, "", roots)

    def _tree(self, oid: pygit2.Oid) -> pygit2.Tree:
        import pygit2

        obj = self.pygit[oid]
        assert isinstance(obj, pygit2.Tree)
        return obj

    def _walk(self, tree: pygit2.Tree, base: str,
              wanted: set[str] | None) -> Iterator[tuple[str, str, int]]:
        for entry in tree:
            path = f"{base}{entry.name}"
            mode = int(entry.filemode)
            if mode == GIT_SUBMODULE:
                continue
            if entry.type_str == "tree":
                if wanted is None or entry.name in wanted:
                    yield from self._walk(self._tree(entry.id), path + "/", None)
            else:
                yield path, str(entry.id), mode

    def blob_at(self, rev: str, path: str) -> bytes:
        """The content of ``path`` (repository-relative) at revision ``rev``; clear errors for
        an unknown revision, a missing path, a symbolic link or a folder."""
        import pygit2

        try:
            commit = self.pygit.revparse_single(rev).peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError):
            # a usage error (exit 2), as for 'recall --as-of' and 'review'
            raise UsageError(f"unknown revision '{rev}'") from None
        try:
            entry = commit.tree[path]
        except KeyError:
            raise GitmemError(f"{path} does not exist at {rev}") from None
        if entry.filemode == GIT_LINK:
            raise GitmemError(f"refusing '{path}': it is a symbolic link at {rev}")
        blob = self.pygit[entry.id]
        if not isinstance(blob, pygit2.Blob):
            raise GitmemError(f"{path} is not a file at {rev}")
        return bytes(blob.data)


def read_blobs(git_dir: str, shas: Sequence[str]) -> list[bytes]:
    """Many blobs at once through one pygit2 handle (a parsing worker's input)."""
    import pygit2

    repo = pygit2.Repository(git_dir)
    out: list[bytes] = []
    for sha in shas:
        blob = repo[pygit2.Oid(hex=sha)]
        assert isinstance(blob, pygit2.Blob)
        out.append(bytes(blob.data))
    return out


# -- two revisions side by side (review) -------------------------------------------------------


def resolve_commit(repo_root: Path, rev: str) -> str | None:
    """The commit id ``rev`` names, or None when it names none (a leading '-' never names one:
    it would be read as an option)."""
    if not rev or rev.startswith("-"):
        return None
    proc = run(repo_root, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}")
    return (_out(proc) or None) if proc.returncode == 0 else None


def merge_base(repo_root: Path, a: str, b: str) -> str | None:
    """The best common ancestor of two commits, or None for unrelated histories."""
    proc = run(repo_root, "merge-base", a, b)
    return (_out(proc) or None) if proc.returncode == 0 else None


def count_commits(repo_root: Path, base: str, head: str) -> int:
    """How many commits ``head`` has that ``base`` has not (``git rev-list --count base..head``)."""
    proc = run(repo_root, "rev-list", "--count", f"{base}..{head}")
    return int(_out(proc) or 0) if proc.returncode == 0 else 0


@dataclass(frozen=True)
class TreeChange:
    """A memory file that differs between two trees (None: absent on that side)."""

    path: str
    old: MemoryFile | None
    new: MemoryFile | None


def diff_trees(repo_root: Path, old: str, new: str, prefix: str, pathspecs: Sequence[str],
               classify: Classify) -> list[TreeChange]:
    """The memory files whose blobs differ between commits ``old`` and ``new`` (one ``git
    diff-tree``; renames are a removal and an addition). Symbolic links and submodules count as
    absent: they are never memory."""
    proc = run(repo_root, "--literal-pathspecs", "diff-tree", "-r", "-z", "--raw", "--no-renames",
               "--no-abbrev", old, new, "--", *pathspecs)
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot compare {old[:7]} with {new[:7]}: {reason}")
    out: list[TreeChange] = []
    for (old_mode, new_mode, old_blob, new_blob, _), path, found in _raw_entries(
            proc.stdout, prefix, classify):
        before, after = (MemoryFile(path, blob, found[0], found[1])
                         if int(mode, 8) not in (GIT_LINK, GIT_SUBMODULE, 0) else None
                         for mode, blob in ((old_mode, old_blob), (new_mode, new_blob)))
        if before is not None or after is not None:
            out.append(TreeChange(path, before, after))
    return out


def read_objects(repo_root: Path, names: Sequence[str]) -> list[bytes | None]:
    """The contents of many objects (blob ids, or ``REV:PATH``) through one ``git cat-file
    --batch``; None for a name that is missing or not a blob. Cheaper than opening pygit2 when
    only a few dozen blobs are needed."""
    if not names:
        return []
    for name in names:
        if "\n" in name:
            raise GitmemError(f"cannot read an object named with a line break: {name!r}")
    try:
        proc = subprocess.run(["git", "-C", str(repo_root), "cat-file", "--batch"],
                              input="".join(f"{n}\n" for n in names).encode("utf-8",
                                                                         "surrogateescape"),
                              capture_output=True, check=False)
    except OSError as exc:
        raise GitmemError(f"cannot run git ({exc}); gitmem needs git on PATH") from exc
    if proc.returncode != 0:
        raise GitmemError(f"cannot read objects: {proc.stderr.decode('utf-8', 'replace').strip()}")
    data, pos = proc.stdout, 0
    out: list[bytes | None] = []
    for _ in names:
        end = data.index(b"\n", pos)
        header = data[pos:end].split(b" ")
        pos = end + 1
        if len(header) != 3 or not header[2].isdigit():  # '<name> missing' or 'ambiguous'
            out.append(None)
            continue
        size = int(header[2])
        out.append(data[pos:pos + size] if header[1] == b"blob" else None)
        pos += size + 1
    return out


def _scratch_file() -> BinaryIO:
    """An unnamed file for a child's output, gone when closed: in memory on Linux
    (``memfd_create``: no ``tempfile`` import, no disk), else a temporary file."""
    if hasattr(os, "memfd_create"):
        try:
            return os.fdopen(os.memfd_create("gitmem-out", os.MFD_CLOEXEC), "w+b")
        except OSError:
            pass
    import tempfile

    return tempfile.TemporaryFile()


class GrepJob:
    """``git grep`` at a revision, started in the background: the caller parses while git
    searches (the output goes to an unnamed file, so git never waits for a full pipe), and
    ``batches()`` hands over what git has written so far while it still searches.

    ``lines()`` gives (repository-relative path, line number, line) of every line that matches
    any of the extended regular expressions (and ``require`` too, when given), ignoring case;
    binary files are skipped. The patterns are run as Perl-compatible regular expressions
    (``-P``: the same matches for this subset of ERE, about twice as fast over a long history as
    ``-E``), and again with ``-E`` when this git was built without PCRE. git searches with one
    thread: reading the blobs is its work, and more threads add CPU, not speed (the caller
    uses the other core meanwhile)."""

    POLL_SECONDS = 0.002  # how long ``batches()`` waits for more output while git runs

    def __init__(self, repo_root: Path, rev: str, patterns: Sequence[str],
                 pathspecs: Sequence[str], require: str | None = None) -> None:
        self.rev = rev
        self._proc: subprocess.Popen[bytes] | None = None
        if not patterns:
            return
        self._git = ["git", "-C", str(repo_root), "--literal-pathspecs", "grep"]
        args = ["-n", "-z", "-I", "-i", "--no-color", "--threads", "1"]
        if require is not None:
            args += ["-e", require, "--and", "("]
        for pattern in patterns:
            args += ["-e", pattern]
        if require is not None:
            args.append(")")
        self._args = [*args, rev, "--", *pathspecs]
        self._start("-P")

    def _start(self, syntax: str) -> None:
        self._syntax = syntax
        self._out, self._err = _scratch_file(), _scratch_file()
        try:
            self._proc = subprocess.Popen([*self._git, syntax, *self._args], stdout=self._out,
                                          stderr=self._err, stdin=subprocess.DEVNULL)
        except OSError as exc:
            self._out.close()
            self._err.close()
            raise GitmemError(f"cannot run git ({exc}); gitmem needs git on PATH") from exc

    def lines(self) -> list[tuple[str, int, str]]:
        return [line for batch in self.batches() for line in batch]

    def batches(self) -> Iterator[list[tuple[str, int, str]]]:
        """The matching lines in batches, each as soon as git has written it."""
        if self._proc is None:
            return
        proc, fd, offset, rest = self._proc, self._out.fileno(), 0, b""
        try:
            while True:
                finished = proc.poll() is not None
                # pread: git's file offset (shared with this descriptor) stays where git is
                chunk = os.pread(fd, 1 << 20, offset)
                if chunk:
                    offset += len(chunk)
                    data = rest + chunk
                    cut = data.rfind(b"\n") + 1
                    rest = data[cut:]
                    if cut:
                        yield self._records(data[:cut])
                elif finished:
                    break
                else:
                    time.sleep(self.POLL_SECONDS)
            if proc.returncode == 128 and self._syntax == "-P" and not offset:  # no PCRE
                self.close()
                self._start("-E")
                yield from self.batches()
                return
            if proc.returncode not in (0, 1):  # 1: nothing matched
                reason = os.pread(self._err.fileno(), 1 << 16, 0).decode("utf-8", "replace")
                raise GitmemError(f"cannot search {self.rev[:7]}: {reason.strip()}")
            if rest:
                yield self._records(rest)
        finally:
            self.close()

    def _records(self, data: bytes) -> list[tuple[str, int, str]]:
        lead = f"{self.rev}:".encode()
        out: list[tuple[str, int, str]] = []
        for record in data.split(b"\n"):
            if record.startswith(lead):
                path, number, text = record[len(lead):].split(b"\x00", 2)
                out.append((path.decode("utf-8", "surrogateescape"), int(number),
                            text.decode("utf-8", "replace")))
        return out

    def close(self) -> None:
        """Stop git if it still runs (the caller gave up) and drop its output."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
                self._proc.wait()
            self._out.close()
            self._err.close()
            self._proc = None


def merge_file_fallback(base: Path, ours: Path, theirs: Path, path: str) -> int:
    """git's own three-way merge of one file into ``ours`` (what a clone without the gitmem
    driver would do); the number of conflicts. A file git cannot merge either (binary) is left
    as ours, byte for byte, and counts as one conflict."""
    proc = run(Path.cwd(), "merge-file", "-L", f"ours:{path}", "-L", "base", "-L",
               f"theirs:{path}", str(ours), str(base), str(theirs))
    return proc.returncode if 0 <= proc.returncode < 128 else 1


def config_get(repo_root: Path, key: str) -> str | None:
    """A local configuration value, or None when unset."""
    proc = run(repo_root, "config", "--local", "--get", key)
    return _out(proc) if proc.returncode == 0 else None


def files_containing(repo_root: Path, text: str, folder: str, revision: str | None = None
                     ) -> list[str]:
    """Repository paths of the files below ``folder`` that contain ``text``: at ``revision``,
    else in the work tree (untracked files included). One ``git grep``."""
    where = [revision] if revision is not None else ["--untracked"]
    proc = run(repo_root, "--literal-pathspecs", "grep", "-l", "-z", "-F", "-e", text, *where,
               "--", folder)
    if proc.returncode not in (0, 1):
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"git grep failed in {repo_root}: {reason}")
    names = [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    return [n.removeprefix(f"{revision}:") for n in names] if revision else names


def check_attr(repo_root: Path, attribute: str, path: str) -> str | None:
    """The value git gives ``attribute`` for ``path`` (None: unspecified)."""
    proc = run(repo_root, "check-attr", "-z", attribute, "--", path)
    if proc.returncode != 0:
        return None
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    value = fields[2] if len(fields) > 2 else "unspecified"
    return None if value == "unspecified" else value


def config_set(repo_root: Path, key: str, value: str) -> None:
    _git(repo_root, None, "config", "--local", key, value)


def current_branch(repo_root: Path) -> str | None:
    proc = run(repo_root, "symbolic-ref", "--quiet", "--short", "HEAD")
    return _out(proc) if proc.returncode == 0 else None


def is_ancestor(repo_root: Path, a: str, b: str) -> bool:
    return run(repo_root, "merge-base", "--is-ancestor", a, b).returncode == 0


def fetch(repo_root: Path, remote: str, branch: str) -> str | None:
    """Fetch ``branch`` from ``remote``; its commit there, or None when it has no such branch."""
    ref = f"refs/remotes/{remote}/{branch}"
    proc = run(repo_root, "fetch", "--quiet", remote, f"+refs/heads/{branch}:{ref}")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        if "couldn't find remote ref" in reason:
            return None
        raise GitmemError(f"git fetch {remote} failed in {repo_root}: {reason}")
    return resolve_commit(repo_root, ref)


def merge(repo_root: Path, commit: str, message: str) -> tuple[bool, str]:
    """``git merge`` of ``commit`` into HEAD (fast-forward when it can): (clean, git's output).
    A merge that stops on conflicts stays in progress, as git leaves it."""
    proc = run(repo_root, "merge", "--no-edit", "-m", message, commit)
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    if proc.returncode != 0 and not unmerged_paths(repo_root):
        raise GitmemError(f"git merge failed in {repo_root}: {text}")
    return proc.returncode == 0, text


def unmerged_paths(repo_root: Path) -> list[str]:
    proc = run(repo_root, "diff", "--name-only", "-z", "--diff-filter=U")
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def merge_in_progress(repo_root: Path) -> bool:
    return run(repo_root, "rev-parse", "--verify", "--quiet", "MERGE_HEAD").returncode == 0


def push(repo_root: Path, remote: str, branch: str, *options: str) -> tuple[bool | None, str]:
    """Push HEAD to ``remote``'s ``branch``, never forced unless ``options`` say so:
    (accepted, git's reason); accepted is None when the remote had HEAD already (nothing was
    pushed)."""
    proc = run(repo_root, "push", "--porcelain", *options, remote, f"HEAD:refs/heads/{branch}")
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    if proc.returncode == 0:  # a ref's porcelain line: flag, tab, from:to, tab, summary
        same = any(line.startswith("=\t") for line in proc.stdout.decode("utf-8", "replace")
                   .splitlines())
        return (None if same else True), text
    if any(word in text for word in ("[rejected]", "[remote rejected]", "fetch first",
                                     "stale info")):
        return False, text
    raise GitmemError(f"git push {remote} failed in {repo_root}: {text}")


# -- forgetting for good: rewriting history (gitmem forget --purge, sync --after-purge) --------

PURGED = "[forgotten]"  # what the purged text reads as in every rewritten commit


def tracked_changes(repo_root: Path) -> list[str]:
    """Tracked paths with uncommitted (staged or unstaged) changes."""
    proc = run(repo_root, "--no-optional-locks", "status", "--porcelain=v1", "-z",
               "--untracked-files=no", "--ignore-submodules=all")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot read the working tree of {repo_root}: {reason}")
    records = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [r[3:] for r in records if len(r) > 3]


def commits_containing(repo_root: Path, text: str) -> list[str]:
    """Commits of any ref whose changes add or remove ``text`` or whose message holds it
    (``git log --all -S`` and ``--grep``), newest first."""
    found: dict[str, None] = {}
    for how in (["-S", text], ["--fixed-strings", "--grep", text]):
        proc = run(repo_root, "log", "--all", "--format=%H", *how)
        if proc.returncode != 0:
            reason = proc.stderr.decode("utf-8", "replace").strip()
            raise GitmemError(f"git log failed in {repo_root}: {reason}")
        found.update(dict.fromkeys(_out(proc).split()))
    return list(found)


def objects_containing(repo_root: Path, texts: Sequence[str]) -> list[str]:
    """Ids of the objects in the repository's object store (reachable or not) whose content
    holds any of ``texts``: one ``git cat-file --batch-all-objects --batch``."""
    proc = run(repo_root, "cat-file", "--batch-all-objects", "--batch")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"git cat-file failed in {repo_root}: {reason}")
    needles = [t.encode("utf-8") for t in texts if t]
    data, at, hits = proc.stdout, 0, []
    while at < len(data):
        header_end = data.index(b"\n", at)
        oid, _, size = data[at:header_end].split(b" ")
        body = data[header_end + 1:header_end + 1 + int(size)]
        if any(n in body for n in needles):
            hits.append(oid.decode())
        at = header_end + 1 + int(size) + 1
    return hits


def filter_repo_replace(repo_root: Path, texts: Sequence[str]) -> None:
    """Rewrite every commit of every ref with git-filter-repo, each of ``texts`` (in files and
    in commit messages) replaced by ``PURGED``; then expire every reflog and prune, so no
    object holding them is left in this clone. ``--partial`` keeps the remotes and their
    tracking refs (rewritten like the rest); ``--force``: this is not a fresh clone."""
    import importlib.util
    import sys
    import tempfile

    if importlib.util.find_spec("git_filter_repo") is None:
        raise GitmemError("purging history needs git-filter-repo: pip install git-filter-repo "
                          "(it comes with gitmem-cli); nothing was rewritten")
    # Each purge stands alone: a run older than a day would otherwise be asked about (on stdin)
    # and a later one treated as its continuation.
    (_git_path(repo_root, "filter-repo") / "already_ran").unlink(missing_ok=True)
    lines = [f"literal:{t}==>{PURGED}" for t in texts if t and "\n" not in t]
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", suffix=".txt",
                                     delete=False) as spec:
        spec.write("\n".join(lines) + "\n")
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "git_filter_repo", "--force", "--partial", "--quiet",
             "--replace-refs", "delete-no-add", "--replace-text", spec.name,
             "--replace-message", spec.name],
            cwd=repo_root, capture_output=True, check=False, stdin=subprocess.DEVNULL)
    finally:
        os.unlink(spec.name)
    if proc.returncode != 0:
        reason = (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()
        raise GitmemError(f"git-filter-repo failed in {repo_root}: {reason}")
    drop_unreachable(repo_root)


def drop_unreachable(repo_root: Path) -> None:
    """Expire every reflog now and prune what no ref reaches (the old history's objects)."""
    _git(repo_root, None, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all")
    _git(repo_root, None, "gc", "--quiet", "--prune=now")


def push_with_lease(repo_root: Path, remote: str, branch: str, expected: str | None
                    ) -> tuple[bool, str]:
    """Force-push HEAD to ``remote``'s ``branch`` only if that branch still is ``expected``
    there (None: it must not exist): (accepted, git's output)."""
    accepted, text = push(repo_root, remote, branch,
                          f"--force-with-lease=refs/heads/{branch}:{expected or ''}")
    return accepted is not False, text  # None: the remote had HEAD already


def refs_containing(repo_root: Path, commit: str) -> list[str]:
    """Full names of the refs whose history holds ``commit``."""
    proc = run(repo_root, "for-each-ref", "--format=%(refname)", "--contains", commit)
    return _out(proc).split() if proc.returncode == 0 else []


def reset_keep(repo_root: Path, commit: str) -> None:
    """Move the branch and work tree to ``commit``, keeping uncommitted edits of files the move
    does not touch (``git reset --keep``; refuses, with git's reason, when it would lose one)."""
    _git(repo_root, None, "reset", "--quiet", "--keep", commit)


def rebase_onto(repo_root: Path, new_base: str, old_base: str) -> tuple[bool, str]:
    """Replay HEAD's commits after ``old_base`` on ``new_base``: (clean, git's output); a
    rebase that stops on conflicts stays in progress, as git leaves it."""
    proc = run(repo_root, "rebase", "--quiet", "--onto", new_base, old_base)
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    return proc.returncode == 0, text


def tree_of(repo_root: Path, rev: str) -> str | None:
    proc = run(repo_root, "rev-parse", "--verify", "-q", f"{rev}^{{tree}}")
    return (_out(proc) or None) if proc.returncode == 0 else None


def update_ref(repo_root: Path, ref: str, commit: str) -> None:
    _git(repo_root, None, "update-ref", ref, commit)
