"""Writing commits: exactly the files gitmem changed, under git's own index lock."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.git import process
from gitmem.git.discovery import head_id

INDEX_LOCK_SECONDS = 5.0  # git holds its index lock for milliseconds (a status, an add)


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
    index = process.git_path(repo_root, "index")
    with _index_locked(index):
        if head_id(repo_root) != base:
            raise GitmemError("another commit landed while gitmem prepared its own; nothing "
                              "was committed: run it again")
        entries = _new_entries(repo_root, files, base, paths)
        work = index.with_name(f"{index.name}.gitmem-{os.getpid()}")
        env = {**os.environ, "GIT_INDEX_FILE": str(work)}
        try:
            _index_from(index, work, base, env, repo_root)
            process.checked_output(repo_root, env, "update-index", "-z", "--index-info",
                                   stdin=entries)
            process.checked_output(repo_root, env, "commit", "-q", "--no-edit", "-m", message)
            commit = head_id(repo_root)
            if commit is None or commit == base:
                raise GitmemError(f"git commit in {repo_root} made no commit")
            # git's own index: the new blobs for these paths, every other entry as it was
            work.unlink(missing_ok=True)
            if index.exists():
                import shutil

                shutil.copyfile(index, work)
            process.checked_output(repo_root, env, "update-index", "-z", "--index-info",
                                   stdin=entries)
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
            mode, blob = "0", process.NO_BLOB
        else:
            mode = head[0] if head is not None else "100644"
            blob = process.checked_output(repo_root, None, "hash-object", "-w", "--stdin",
                                          stdin=data)
        lines.append(f"{mode} {blob}\t{path}\0".encode("utf-8", "surrogateescape"))
    return b"".join(lines)


def _listed(repo_root: Path, tree: str | None, paths: list[str]) -> dict[str, tuple[str, str]]:
    """path -> (mode, object id) in ``tree`` (``ls-tree``), or in git's index for None
    (``ls-files --stage``: an unmerged path's id carries its stage, so it never equals HEAD's)."""
    if tree is None:
        raw = process.checked_bytes(repo_root, "ls-files", "-z", "--stage", "--", *paths)
    else:
        raw = process.checked_bytes(repo_root, "ls-tree", "-z", "--full-tree", tree, "--", *paths)
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
        process.checked_output(repo_root, env, "read-tree", "--empty")
        return
    if index.exists():
        import shutil

        shutil.copyfile(index, work)
        if process.run(repo_root, "read-tree", "-m", base, env=env).returncode == 0:
            return  # (fails with unmerged entries: then a plain read)
    process.checked_output(repo_root, env, "read-tree", base)


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

