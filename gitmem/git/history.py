"""Reading history: commits and their changes, trees, blobs, and the work tree against HEAD."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.domain import Classified, MemoryFile
from gitmem.errors import GitmemError, UsageError
from gitmem.git import process
from gitmem.git.discovery import head_id

if TYPE_CHECKING:
    import pygit2


GIT_LINK = 0o120000
GIT_SUBMODULE = 0o160000


# What a workspace-relative path is (class, daily date, problem), or None when it is not memory.
Classify = Callable[[str], Classified | None]


@dataclass(frozen=True)
class TreeStatus:
    """HEAD and the paths whose working-tree content may differ from it (``git status``)."""

    head: str | None  # None: no commits yet
    # repository-relative path -> (its blob id at HEAD or None, its file mode on disk; 0: gone)
    changed: dict[str, tuple[str | None, int]]


def tree_status(repo_root: Path, pathspecs: Sequence[str]) -> TreeStatus:
    """One ``git status`` over ``pathspecs``: HEAD, and each path that is modified, staged,
    deleted or untracked, with its HEAD blob id. This is recall's freshness check, so it is one
    process; ``--no-optional-locks`` keeps it from writing git's index under a running git."""
    proc = process.run(repo_root, "--no-optional-locks", "--literal-pathspecs", "status",
                       "--porcelain=v2", "-z", "--branch", "--untracked-files=all",
                       "--no-renames", "--ignore-submodules=all", "--", *pathspecs)
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
            changed[parts[8]] = (None if blob == process.NO_BLOB else blob, int(parts[5], 8))
        elif line.startswith("u "):  # u XY sub m1 m2 m3 mW h1 h2 h3 path (h2: ours, HEAD)
            parts = line.split(" ", 10)
            blob = parts[8]
            changed[parts[10]] = (None if blob == process.NO_BLOB else blob, int(parts[6], 8))
        elif line.startswith("? "):
            changed[line[2:]] = (None, 0o100644)
    return TreeStatus(head, changed)


def tracked_changes(repo_root: Path) -> list[str]:
    """Tracked paths with uncommitted (staged or unstaged) changes."""
    proc = process.run(repo_root, "--no-optional-locks", "status", "--porcelain=v1", "-z",
                       "--untracked-files=no", "--ignore-submodules=all")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"cannot read the working tree of {repo_root}: {reason}")
    records = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
    return [r[3:] for r in records if len(r) > 3]


def commit_time(repo_root: Path, rev: str) -> tuple[str, str] | None:
    """(commit id, commit time as ISO 8601 UTC) of a revision (id, branch, tag, HEAD~2), or
    None when it names no commit."""
    proc = process.run(repo_root, "show", "-s", "--format=%H %ct", "--end-of-options",
                       f"{rev}^{{commit}}")
    fields = process.output(proc).split()
    if proc.returncode != 0 or len(fields) != 2:
        return None
    at = datetime.fromtimestamp(int(fields[1]), UTC).isoformat(timespec="seconds")
    return fields[0], at


def blob_id(data: bytes) -> str:
    """The id git gives a blob with this content (for uncommitted files)."""
    import hashlib  # OpenSSL's start-up: only when a memory file is uncommitted

    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


def files_at(repo_root: Path, commit: str | None, paths: Sequence[str]) -> dict[str, bytes | None]:
    """Each path's content (repository-relative) in ``commit``; None when it is absent there,
    not a file, or there is no commit yet."""
    if commit is None:
        return dict.fromkeys(paths)
    found = read_objects(repo_root, [f"{commit}:{p}" for p in paths])
    return dict(zip(paths, found, strict=True))


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
    proc = process.run(repo_root, *args, "--", *pathspecs)
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
        proc = process.run(self.root, "cat-file", "blob", sha)
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


def resolve_commit(repo_root: Path, rev: str) -> str | None:
    """The commit id ``rev`` names, or None when it names none (a leading '-' never names one:
    it would be read as an option)."""
    if not rev or rev.startswith("-"):
        return None
    proc = process.run(repo_root, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}")
    return (process.output(proc) or None) if proc.returncode == 0 else None


def merge_base(repo_root: Path, a: str, b: str) -> str | None:
    """The best common ancestor of two commits, or None for unrelated histories."""
    proc = process.run(repo_root, "merge-base", a, b)
    return (process.output(proc) or None) if proc.returncode == 0 else None


def count_commits(repo_root: Path, base: str, head: str) -> int:
    """How many commits ``head`` has that ``base`` has not (``git rev-list --count base..head``)."""
    proc = process.run(repo_root, "rev-list", "--count", f"{base}..{head}")
    return int(process.output(proc) or 0) if proc.returncode == 0 else 0


def tree_of(repo_root: Path, rev: str) -> str | None:
    proc = process.run(repo_root, "rev-parse", "--verify", "-q", f"{rev}^{{tree}}")
    return (process.output(proc) or None) if proc.returncode == 0 else None


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
    proc = process.run(repo_root, "--literal-pathspecs", "diff-tree", "-r", "-z", "--raw",
                       "--no-renames", "--no-abbrev", old, new, "--", *pathspecs)
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
    proc = process.run(repo_root, "cat-file", "--batch",
                       stdin="".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape"))
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

