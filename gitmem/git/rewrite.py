"""Forgetting for good: every commit rewritten without a text, and what held it pruned."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.git import process

PURGED = "[forgotten]"  # what the purged text reads as in every rewritten commit


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
    (process.git_path(repo_root, "filter-repo") / "already_ran").unlink(missing_ok=True)
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
    process.checked_output(repo_root, None, "reflog", "expire", "--expire=now",
                           "--expire-unreachable=now", "--all")
    process.checked_output(repo_root, None, "gc", "--quiet", "--prune=now")

