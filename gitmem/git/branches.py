"""Sync with other clones: fetch, merge, rebase and push, refs, and the merge driver's settings."""

from __future__ import annotations

from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.git import process
from gitmem.git.history import resolve_commit


def current_branch(repo_root: Path) -> str | None:
    proc = process.run(repo_root, "symbolic-ref", "--quiet", "--short", "HEAD")
    return process.output(proc) if proc.returncode == 0 else None


def is_ancestor(repo_root: Path, a: str, b: str) -> bool:
    return process.run(repo_root, "merge-base", "--is-ancestor", a, b).returncode == 0


def fetch(repo_root: Path, remote: str, branch: str) -> str | None:
    """Fetch ``branch`` from ``remote``; its commit there, or None when it has no such branch."""
    ref = f"refs/remotes/{remote}/{branch}"
    proc = process.run(repo_root, "fetch", "--quiet", remote, f"+refs/heads/{branch}:{ref}")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        if "couldn't find remote ref" in reason:
            return None
        raise GitmemError(f"git fetch {remote} failed in {repo_root}: {reason}")
    return resolve_commit(repo_root, ref)


def merge(repo_root: Path, commit: str, message: str) -> tuple[bool, str]:
    """``git merge`` of ``commit`` into HEAD (fast-forward when it can): (clean, git's output).
    A merge that stops on conflicts stays in progress, as git leaves it."""
    proc = process.run(repo_root, "merge", "--no-edit", "-m", message, commit)
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    if proc.returncode != 0 and not unmerged_paths(repo_root):
        raise GitmemError(f"git merge failed in {repo_root}: {text}")
    return proc.returncode == 0, text


def unmerged_paths(repo_root: Path) -> list[str]:
    proc = process.run(repo_root, "diff", "--name-only", "-z", "--diff-filter=U")
    return [p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p]


def merge_in_progress(repo_root: Path) -> bool:
    proc = process.run(repo_root, "rev-parse", "--verify", "--quiet", "MERGE_HEAD")
    return proc.returncode == 0


def push(repo_root: Path, remote: str, branch: str, *options: str) -> tuple[bool | None, str]:
    """Push HEAD to ``remote``'s ``branch``, never forced unless ``options`` say so:
    (accepted, git's reason); accepted is None when the remote had HEAD already (nothing was
    pushed)."""
    proc = process.run(repo_root, "push", "--porcelain", *options, remote,
                       f"HEAD:refs/heads/{branch}")
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    if proc.returncode == 0:  # a ref's porcelain line: flag, tab, from:to, tab, summary
        same = any(line.startswith("=\t") for line in proc.stdout.decode("utf-8", "replace")
                   .splitlines())
        return (None if same else True), text
    if any(word in text for word in ("[rejected]", "[remote rejected]", "fetch first",
                                     "stale info")):
        return False, text
    raise GitmemError(f"git push {remote} failed in {repo_root}: {text}")


def push_with_lease(repo_root: Path, remote: str, branch: str, expected: str | None
                    ) -> tuple[bool, str]:
    """Force-push HEAD to ``remote``'s ``branch`` only if that branch still is ``expected``
    there (None: it must not exist): (accepted, git's output)."""
    accepted, text = push(repo_root, remote, branch,
                          f"--force-with-lease=refs/heads/{branch}:{expected or ''}")
    return accepted is not False, text  # None: the remote had HEAD already


def refs_containing(repo_root: Path, commit: str) -> list[str]:
    """Full names of the refs whose history holds ``commit``."""
    proc = process.run(repo_root, "for-each-ref", "--format=%(refname)", "--contains", commit)
    return process.output(proc).split() if proc.returncode == 0 else []


def reset_keep(repo_root: Path, commit: str) -> None:
    """Move the branch and work tree to ``commit``, keeping uncommitted edits of files the move
    does not touch (``git reset --keep``; refuses, with git's reason, when it would lose one)."""
    process.checked_output(repo_root, None, "reset", "--quiet", "--keep", commit)


def rebase_onto(repo_root: Path, new_base: str, old_base: str) -> tuple[bool, str]:
    """Replay HEAD's commits after ``old_base`` on ``new_base``: (clean, git's output); a
    rebase that stops on conflicts stays in progress, as git leaves it."""
    proc = process.run(repo_root, "rebase", "--quiet", "--onto", new_base, old_base)
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace").strip()
    return proc.returncode == 0, text


def update_ref(repo_root: Path, ref: str, commit: str) -> None:
    process.checked_output(repo_root, None, "update-ref", ref, commit)


def config_get(repo_root: Path, key: str) -> str | None:
    """A local configuration value, or None when unset."""
    proc = process.run(repo_root, "config", "--local", "--get", key)
    return process.output(proc) if proc.returncode == 0 else None


def config_set(repo_root: Path, key: str, value: str) -> None:
    process.checked_output(repo_root, None, "config", "--local", key, value)


def check_attr(repo_root: Path, attribute: str, path: str) -> str | None:
    """The value git gives ``attribute`` for ``path`` (None: unspecified)."""
    proc = process.run(repo_root, "check-attr", "-z", attribute, "--", path)
    if proc.returncode != 0:
        return None
    fields = proc.stdout.decode("utf-8", "replace").split("\0")
    value = fields[2] if len(fields) > 2 else "unspecified"
    return None if value == "unspecified" else value


def merge_file_fallback(base: Path, ours: Path, theirs: Path, path: str) -> int:
    """git's own three-way merge of one file into ``ours`` (what a clone without the gitmem
    driver would do); the number of conflicts. A file git cannot merge either (binary) is left
    as ours, byte for byte, and counts as one conflict."""
    proc = process.run(Path.cwd(), "merge-file", "-L", f"ours:{path}", "-L", "base", "-L",
                       f"theirs:{path}", str(ours), str(base), str(theirs))
    return proc.returncode if 0 <= proc.returncode < 128 else 1

