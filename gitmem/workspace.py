"""Workspace discovery (docs/memory-format.md): which files in a git tree are memory, and of what
class."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from functools import partial
from pathlib import Path, PurePosixPath

from gitmem.config import REPO_CONFIG, Config, load_config
from gitmem.domain import Classified, FileClass, MemoryFile, Warn
from gitmem.errors import GitmemError
from gitmem.git import GIT_LINK, GitRepo, blob_id, common_dir, find_repo_root, tree_status
from gitmem.userdirs import private_dir

_DAILY = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:-[^/]+)?\.md$")
# The memory layout (docs/memory-format.md), in one place: files at the workspace root, and folders
# below it. OpenClaw's workspace bootstrap files: SOUL.md (who the agent is, its values) and
# IDENTITY.md (its name and manner) are durable, curated memory like MEMORY.md; AGENTS.md, TOOLS.md,
# HEARTBEAT.md and BOOTSTRAP.md are instructions to the agent, not memory, and stay out.
ROOT_FILES: dict[str, FileClass] = {
    "MEMORY.md": "core", "memory.md": "core", "SOUL.md": "core", "IDENTITY.md": "core",
    "USER.md": "user", "DREAMS.md": "dreams"}
MEMORY_FOLDERS = ("memory", "bank")
_BANK_FILES = {"world.md", "experience.md", "opinions.md"}
OPINIONS_PATH = "bank/opinions.md"  # one section per opinion (parse.opinions reads it)


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


def classify(path: str, extra: Sequence[str] = ()) -> Classified | None:
    """(class, daily date, problem) for a workspace-relative path, or None if not memory.

    A ``README.md`` inside ``memory/`` or ``bank/`` describes the folder (older versions of
    ``gitmem init`` wrote one with placeholder entries): it is not memory."""
    if not path.endswith(".md"):
        return None
    # Paths here are normalised (git's, or made relative by the caller): a plain split is enough
    # and several times faster than PurePosixPath (review classifies thousands of grep hits).
    parts = path.split("/")
    if parts[0] in MEMORY_FOLDERS and parts[-1].lower() == "readme.md":
        return None
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


def _extra(path: str, extra: Sequence[str]) -> Classified | None:
    for root in extra:
        root = root.strip("/")
        if path == root or path.startswith(root + "/"):
            return ("extra", None, None)
    return None


def is_memory_path(path: str, extra: Sequence[str] = ()) -> bool:
    return classify(path, extra) is not None


# Which paths count as memory: a new version re-indexes existing indexes (v2: README.md files
# in memory/ and bank/ are not memory; v3: SOUL.md and IDENTITY.md are core files).
LAYOUT_VERSION = "layout-v3"


def scope_fingerprint(prefix: str, extra: Sequence[str]) -> str:
    """Which files are memory (the layout's rules, workspace folder, extra paths): a change
    re-indexes all."""
    return "\x1f".join([LAYOUT_VERSION, prefix, *sorted(extra)])


def pathspecs(prefix: str, extra: Sequence[str]) -> list[str]:
    """git pathspecs (repository-relative) that cover every memory file."""
    paths = (*ROOT_FILES, *MEMORY_FOLDERS, *extra)
    return [f"{prefix}{p.strip('/')}" for p in paths if p.strip("/")]


def _wanted_roots(extra: Sequence[str]) -> set[str]:
    roots = set(MEMORY_FOLDERS)
    roots.update(PurePosixPath(e.strip("/")).parts[0] for e in extra if e.strip("/"))
    return roots


def open_workspace(start: Path, *, lenient: bool = False) -> tuple[Workspace, Config]:
    """Find the repository around ``start`` and apply its configuration; ``lenient``: invalid
    settings read as their defaults (for status, which reports them) instead of raising."""
    repo_root, git_dir = find_repo_root(start)
    cfg = load_config(repo_root)
    if lenient:
        cfg = cfg.lenient()
    prefix = cfg.workspace_root.strip("/")
    if prefix:
        if ".." in PurePosixPath(prefix).parts:
            raise GitmemError(f"{repo_root / REPO_CONFIG}: 'workspace.root' must be a folder "
                              "inside the repository")
        prefix += "/"
    return Workspace(repo_root=repo_root, prefix=prefix, git_dir=git_dir), cfg


def classifier(cfg: Config) -> partial[Classified | None]:
    """``classify`` with the configured extra paths bound (what the git layer is given)."""
    return partial(classify, extra=cfg.extra_paths)


def memory_files_in_tree(git: GitRepo, commit_id: str | None, ws: Workspace,
                         cfg: Config) -> tuple[dict[str, MemoryFile], list[Warn]]:
    """The memory files of a commit's tree, keyed by workspace-relative path."""
    files: dict[str, MemoryFile] = {}
    warns: list[Warn] = []
    for path, blob, mode in git.files(commit_id, ws.prefix, _wanted_roots(cfg.extra_paths)):
        found = classify(path, cfg.extra_paths)
        if found is None:
            continue
        if mode == GIT_LINK:
            warns.append(Warn(path, 0, "symlink",
                              "symbolic link skipped (links are never followed)"))
            continue
        # A file-name problem is reported by the parser, so the warning is stored (and
        # replaced) with the file's other warnings instead of piling up on every index run.
        files[path] = MemoryFile(path=path, blob=blob, file_class=found[0], day=found[1])
    return files, warns


LAYER_SYMLINK = "worktree-symlink"  # the warning code of links found in the working tree


@dataclass(frozen=True)
class WorktreeLayer:
    """Memory files whose working-tree content differs from HEAD: the uncommitted layer."""

    head: str | None
    changes: dict[str, MemoryFile | None]  # workspace-relative path -> on disk (None: gone)
    data: dict[str, bytes]  # the content of each changed file on disk
    base: dict[str, str | None]  # each changed path's blob id at HEAD (None: new)
    warns: list[Warn]

    @property
    def key(self) -> str:
        """What the layer holds, as recorded in the index: equal keys need no work."""
        state = {p: [self.base.get(p), mf.blob if mf else None]
                 for p, mf in sorted(self.changes.items())}
        return json.dumps(state, sort_keys=True, separators=(",", ":"))


def worktree_layer(ws: Workspace, cfg: Config) -> WorktreeLayer:
    """HEAD and the uncommitted memory edits, from one ``git status``: only the changed files
    are read (and hashed as git would, so a file edited back to its committed text is no
    change)."""
    status = tree_status(ws.repo_root, pathspecs(ws.prefix, cfg.extra_paths))
    changes: dict[str, MemoryFile | None] = {}
    data: dict[str, bytes] = {}
    base: dict[str, str | None] = {}
    warns: list[Warn] = []
    for repo_path, (head_blob, _) in sorted(status.changed.items()):
        if not repo_path.startswith(ws.prefix):
            continue
        rel = repo_path[len(ws.prefix):]
        found = classify(rel, cfg.extra_paths)
        if found is None:
            continue
        raw = _read_plain_file(ws.root, rel, warns)
        if raw is None:
            if head_blob is not None:
                changes[rel], base[rel] = None, head_blob
            continue
        blob = blob_id(raw)
        if blob == head_blob:
            continue
        changes[rel] = MemoryFile(rel, blob, found[0], found[1])
        data[rel], base[rel] = raw, head_blob
    return WorktreeLayer(status.head, changes, data, base, warns)


def _read_plain_file(root: Path, rel: str, warns: list[Warn]) -> bytes | None:
    """A memory file's bytes on disk; None when it is gone, or is (or lies under) a symbolic
    link, which is never followed and says so."""
    path = root / rel
    if any(p.is_symlink() for p in [path, *path.parents] if p != root and p.is_relative_to(root)):
        warns.append(Warn(rel, 0, LAYER_SYMLINK,
                          "uncommitted symbolic link skipped (links are never followed)"))
        return None
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def check_memory_path(ws: Workspace, cfg: Config, raw: str) -> str:
    """A user-given path to a workspace-relative memory path, or a clear refusal.

    Citations are workspace-relative, so a relative path is read from the workspace root, unless
    it names an existing file relative to the current folder inside the workspace.
    """
    root = ws.root.resolve()
    if any(ord(c) < 32 or ord(c) == 127 for c in raw):
        raise GitmemError(f"refusing {raw!r}: a path with control characters is no memory file")
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


def ensure_memory_dir(ws: Workspace) -> None:
    """Create .memory/ (user-only) and keep it out of git via info/exclude (never a tracked
    file)."""
    private_dir(ws.memory_dir)
    exclude = common_dir(ws.git_dir) / "info" / "exclude"
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


HINTS_SHOWN = "hints-shown"  # in .memory/: the one-time hints already given in this workspace


def first_time(ws: Workspace, key: str) -> bool:
    """True the first time a hint is given in this workspace, which is then remembered in
    ``.memory/hints-shown`` (a hint repeated on every command is noise)."""
    path = ws.memory_dir / HINTS_SHOWN
    try:
        if key in path.read_text(encoding="utf-8").split():
            return False
    except FileNotFoundError:
        pass
    except OSError:
        return True
    try:
        ensure_memory_dir(ws)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(f"{key}\n")
    except OSError:
        pass
    return True
