"""Finding the repository: its work tree, git dir, hooks and HEAD, without git where it can."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.git import process


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
    proc = process.run(start, "rev-parse", "--is-bare-repository", "--show-cdup",
                       "--absolute-git-dir")
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
    proc = process.run(repo_root, "rev-parse", "-q", "--verify", "HEAD^{commit}")
    return (process.output(proc) or None) if proc.returncode == 0 else None


def hooks_dir(repo_root: Path) -> Path:
    """The directory git runs hooks from, for this work tree (honours core.hooksPath and
    linked worktrees)."""
    proc = process.run(repo_root, "rev-parse", "--git-path", "hooks")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot ask git for the hooks directory of {repo_root}: {reason}")
    path = Path(process.path_output(proc))
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

