"""Workspace discovery (SPEC §2): which files in a git tree are memory, and of what class."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from gitmem.errors import GitmemError
from gitmem.model import MemoryFile, Warn

if TYPE_CHECKING:
    import pygit2

_DAILY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")
# The memory layout (SPEC §2), in one place: files at the workspace root, and folders below it.
ROOT_FILES = {"MEMORY.md": "core", "memory.md": "core", "USER.md": "user", "DREAMS.md": "dreams"}
MEMORY_FOLDERS = ("memory", "bank")
_BANK_FILES = {"world.md", "experience.md", "opinions.md"}
GIT_LINK = 0o120000
GIT_SUBMODULE = 0o160000


@dataclass(frozen=True)
class Workspace:
    """A memory workspace: a git work tree, or a subfolder of one (``prefix``)."""

    repo_root: Path  # the work tree's top folder
    prefix: str  # '' or 'sub/dir/' — the workspace folder inside the repository
    git_dir: Path

    @property
    def root(self) -> Path:
        return self.repo_root / self.prefix if self.prefix else self.repo_root

    @property
    def memory_dir(self) -> Path:
        return self.root / ".memory"

    @property
    def index_path(self) -> Path:
        return self.memory_dir / "index.sqlite"

    def open_repo(self) -> pygit2.Repository:
        import pygit2

        return pygit2.Repository(str(self.git_dir))


def git_output(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run a read-only git command (the git CLI starts faster than importing pygit2)."""
    try:
        return subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True,
                              check=False)
    except OSError as exc:
        raise GitmemError(f"cannot run git ({exc}); gitmem needs git on PATH") from exc


def find_repo_root(start: Path) -> tuple[Path, Path]:
    """(work tree root, git dir) of the repository containing ``start``."""
    if not start.is_dir():
        raise GitmemError(f"{start} is not a folder; pass -C with the memory repository's path")
    # One git call: recall runs this on every query.
    proc = git_output(start, "rev-parse", "--is-bare-repository", "--absolute-git-dir",
                      "--show-toplevel")
    lines = proc.stdout.splitlines()
    if len(lines) < 2:
        raise GitmemError(
            f"{start} is not inside a git repository; run 'gitmem init' there, or pass -C PATH"
        )
    if proc.returncode != 0 or len(lines) < 3 or lines[0].strip() == "true":
        raise GitmemError(f"{lines[1]} has no work tree (bare, or run from inside .git); "
                          "gitmem needs a work tree")
    return Path(lines[2].strip()).resolve(), Path(lines[1].strip()).resolve()


def head_id(repo_root: Path) -> str | None:
    """HEAD's commit id, or None when the branch has no commits yet."""
    proc = git_output(repo_root, "rev-parse", "-q", "--verify", "HEAD^{commit}")
    return proc.stdout.strip() or None if proc.returncode == 0 else None


def classify(path: str, extra: Sequence[str] = ()) -> tuple[str, date | None, str | None] | None:
    """(class, daily date, problem) for a workspace-relative path, or None if not memory."""
    if not path.endswith(".md"):
        return None
    parts = PurePosixPath(path).parts
    if len(parts) == 1:
        cls = ROOT_FILES.get(parts[0])
        return (cls, None, None) if cls else _extra(path, extra)
    if parts[0] == "memory":
        m = _DAILY.match(parts[1]) if len(parts) == 2 else None
        if m is None:
            return ("note", None, None)
        try:
            return ("daily", date(int(m[1]), int(m[2]), int(m[3])), None)
        except ValueError:
            return (
                "note",
                None,
                f"'{parts[1]}' looks like a daily note but the date is invalid; "
                "indexed as an undated note",
            )
    if parts[0] == "bank":
        if len(parts) == 2 and parts[1] in _BANK_FILES:
            return ("bank", None, None)
        if len(parts) == 3 and parts[1] == "entities":
            return ("entity", None, None)
    return _extra(path, extra)


def _extra(path: str, extra: Sequence[str]) -> tuple[str, None, None] | None:
    for root in extra:
        root = root.strip("/")
        if path == root or path.startswith(root + "/"):
            return ("extra", None, None)
    return None


def _tree(repo: pygit2.Repository, oid: pygit2.Oid) -> pygit2.Tree:
    import pygit2

    obj = repo[oid]
    assert isinstance(obj, pygit2.Tree)
    return obj


def _walk(
    repo: pygit2.Repository, tree: pygit2.Tree, base: str, wanted: set[str] | None
) -> Iterator[tuple[str, str, int]]:
    """(path, blob id, file mode) of every file below ``tree``; at the top only ``wanted``
    folders are entered, so a large repository's unrelated trees are never read."""
    for entry in tree:
        path = f"{base}{entry.name}"
        mode = int(entry.filemode)
        if mode == GIT_SUBMODULE:
            continue
        if entry.type_str == "tree":
            if wanted is None or entry.name in wanted:
                yield from _walk(repo, _tree(repo, entry.id), path + "/", None)
        else:
            yield path, str(entry.id), mode


def _wanted_roots(extra: Sequence[str]) -> set[str]:
    roots = set(MEMORY_FOLDERS)
    roots.update(PurePosixPath(e.strip("/")).parts[0] for e in extra if e.strip("/"))
    return roots


def memory_files_in_tree(
    repo: pygit2.Repository, tree: pygit2.Tree | None, prefix: str = "", extra: Sequence[str] = ()
) -> tuple[dict[str, MemoryFile], list[Warn]]:
    """The memory files of a commit's tree, keyed by workspace-relative path."""
    files: dict[str, MemoryFile] = {}
    warns: list[Warn] = []
    if tree is None:
        return files, warns
    if prefix:
        try:
            sub = tree[prefix.rstrip("/")]
        except KeyError:
            return files, warns
        if sub.type_str != "tree":
            return files, warns
        tree = _tree(repo, sub.id)
    for path, blob, mode in _walk(repo, tree, "", _wanted_roots(extra)):
        found = classify(path, extra)
        if found is None:
            continue
        cls, day, _ = found
        if mode == GIT_LINK:
            warns.append(
                Warn(path, 0, "symlink", "symbolic link skipped (links are never followed)")
            )
            continue
        # A file-name problem is reported by parse.parse_file, so the warning is stored (and
        # replaced) with the file's other warnings instead of piling up on every index run.
        files[path] = MemoryFile(path=path, blob=blob, file_class=cls, day=day)
    return files, warns


def is_memory_path(path: str, extra: Sequence[str] = ()) -> bool:
    return classify(path, extra) is not None


def scope_fingerprint(prefix: str, extra: Sequence[str]) -> str:
    """Which files are memory (workspace folder, extra paths): a change re-indexes all."""
    return "\x1f".join([prefix, *sorted(extra)])
