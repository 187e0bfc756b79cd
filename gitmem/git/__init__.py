"""The one door to git: every git command gitmem runs and every pygit2 call live behind it.

Other modules import this package and call what it names in ``__all__``; never one of its
modules, each of which has one concern:

- ``process``: running git and reading what it prints (shared by the others)
- ``discovery``: finding the repository, its git dir, hooks folder and HEAD
- ``history``: reading commits, trees and blobs, and the work tree against HEAD
- ``commits``: writing the commits gitmem makes itself (retain, reflect --commit)
- ``branches``: sync with other clones (fetch, merge, rebase, push) and the merge driver's
  settings
- ``grep``: searching content at a revision, in the work tree, in every commit and object
- ``rewrite``: forgetting for good (gitmem forget --purge, sync --after-purge)

The git CLI starts in a few milliseconds, where importing pygit2 alone costs ~60 ms, so the hot
paths (recall's freshness check, an incremental index after one commit) only run ``git``;
pygit2 is imported on first use for tree walks, full builds and reads at a revision.

One ``git log --raw -z`` process lists every commit of the first-parent chain with its changed
paths and blob ids; git computes those tree diffs far faster than diffing tree objects one by one
from Python (0.6 s against 2.5 s for 3,650 daily commits).

Nothing here knows which files are memory: callers pass a ``classify`` function (the
workspace's), so this package depends on nothing but the domain types.
"""

from __future__ import annotations

from gitmem.git.branches import (
    check_attr,
    config_get,
    config_set,
    current_branch,
    fetch,
    is_ancestor,
    merge,
    merge_file_fallback,
    merge_in_progress,
    push,
    push_with_lease,
    rebase_onto,
    refs_containing,
    reset_keep,
    unmerged_paths,
    update_ref,
)
from gitmem.git.commits import INDEX_LOCK_SECONDS, commit_files
from gitmem.git.discovery import (
    asked_repo_root,
    common_dir,
    find_repo_root,
    head_files,
    head_from_files,
    head_id,
    hooks_dir,
    init_or_open,
    plain_repo_root,
)
from gitmem.git.grep import GrepJob, commits_containing, files_containing, objects_containing
from gitmem.git.history import (
    GIT_LINK,
    GIT_SUBMODULE,
    Classify,
    CommitChanges,
    GitRepo,
    TreeChange,
    TreeStatus,
    blob_id,
    chain_changes,
    commit_time,
    count_commits,
    diff_trees,
    files_at,
    merge_base,
    read_blobs,
    read_objects,
    resolve_commit,
    tracked_changes,
    tree_of,
    tree_status,
)
from gitmem.git.process import run
from gitmem.git.rewrite import PURGED, drop_unreachable, filter_repo_replace

__all__ = [
    "GIT_LINK", "GIT_SUBMODULE", "INDEX_LOCK_SECONDS", "PURGED", "Classify", "CommitChanges",
    "GitRepo", "GrepJob", "TreeChange", "TreeStatus", "asked_repo_root", "blob_id",
    "chain_changes", "check_attr", "commit_files", "commit_time", "commits_containing",
    "common_dir", "config_get", "config_set", "count_commits", "current_branch", "diff_trees",
    "drop_unreachable", "fetch", "files_at", "files_containing", "filter_repo_replace",
    "find_repo_root", "head_files", "head_from_files", "head_id", "hooks_dir", "init_or_open",
    "is_ancestor", "merge", "merge_base", "merge_file_fallback", "merge_in_progress",
    "objects_containing", "plain_repo_root", "push", "push_with_lease", "read_blobs",
    "read_objects", "rebase_onto", "refs_containing", "reset_keep", "resolve_commit", "run",
    "tracked_changes", "tree_of", "tree_status", "unmerged_paths", "update_ref",
]
