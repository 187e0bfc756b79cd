"""``gitmem sync``: fetch, merge with the memory driver, re-index, push (docs/sync.md).

Never force-pushes. A push the remote rejects (another machine pushed meanwhile) is retried after
another fetch and merge, at most ``ATTEMPTS`` times. A real conflict stops with the files and
lines and leaves git's merge in progress, which ``git status`` explains.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitmem import git
from gitmem.errors import GitmemError
from gitmem.merge.registration import DriverState, driver_state
from gitmem.reflect.purge import clear_marker, read_marker, write_marker

if TYPE_CHECKING:
    from gitmem.config import Config
    from gitmem.workspace import Workspace

ATTEMPTS = 5
REWRITTEN = "rewritten.json"  # in .memory/: the remote's history was rewritten (a purge)
_CONFLICT = re.compile(rb"^<{7}(?: |$)", re.M)


class SyncConflict(GitmemError):
    """The merge left conflicts a person has to resolve."""

    def __init__(self, message: str, files: dict[str, list[int]]) -> None:
        super().__init__(message)
        self.files = files


@dataclass(frozen=True)
class SyncReport:
    remote: str
    branch: str
    head: str | None
    attempts: int
    driver: DriverState  # whether memory files merge with gitmem's driver in this clone
    merged: list[str] = field(default_factory=list)  # commits of the remote merged in
    pushed: bool = False  # commits went to the remote (False: it had HEAD already)
    forced: bool = False  # a force-push with lease after a purge (--after-purge)

    def to_json(self) -> dict[str, Any]:
        return {"remote": self.remote, "branch": self.branch, "head": self.head,
                "attempts": self.attempts, "merged": self.merged, "pushed": self.pushed,
                "forced": self.forced,
                "driver": self.driver.state == "registered", "conflicts": {}}


def conflict_lines(data: bytes) -> list[int]:
    """1-based line numbers where conflict markers open."""
    return [data.count(b"\n", 0, m.start()) + 1 for m in _CONFLICT.finditer(data)]


def _stop_on_conflicts(ws: Workspace, driver: DriverState) -> None:
    files = {p: conflict_lines((ws.repo_root / p).read_bytes())
             if (ws.repo_root / p).is_file() else [] for p in git.unmerged_paths(ws.repo_root)}
    where = "; ".join(f"{p}#L{lines[0]}" + (f" (+{len(lines) - 1} more)" if len(lines) > 1
                                             else "") if lines else p
                      for p, lines in files.items())
    raise SyncConflict(
        f"sync stopped: both machines changed the same lines: {where}. Edit the files (keep "
        f"what is right between the <<<<<<< and >>>>>>> markers), 'git add' them and 'git "
        f"commit', then run 'gitmem sync' again; 'git merge --abort' undoes the merge"
        + ("" if driver.state == "registered" else f". Note: {driver.line}"), files)


def _remote(ws: Workspace, branch: str, remote: str | None) -> str:
    name = remote or git.config_get(ws.repo_root, f"branch.{branch}.remote") or "origin"
    if git.config_get(ws.repo_root, f"remote.{name}.url") is None:
        raise GitmemError(f"no git remote named {name!r}: add one with 'git remote add {name} "
                          f"URL' (README, 'Memory on two machines') or pass --remote")
    return name


class HistoryRewritten(GitmemError):
    """The remote's branch no longer descends from what this clone had of it (a purge)."""


def _merge_remote(ws: Workspace, remote: str, branch: str, driver: DriverState) -> list[str]:
    """Fetch and merge; the remote commits that were new here. Stops, merging nothing, when
    the remote's history was rewritten (merging would bring the old history back)."""
    had = git.resolve_commit(ws.repo_root, f"refs/remotes/{remote}/{branch}")
    theirs = git.fetch(ws.repo_root, remote, branch)
    if had is not None and theirs is not None and not git.is_ancestor(ws.repo_root, had, theirs):
        _stop_on_rewrite(ws, remote, branch, had, theirs)
    head = git.head_id(ws.repo_root)
    if theirs is None or (head is not None and git.is_ancestor(ws.repo_root, theirs, head)):
        return []
    new = [theirs]
    clean, _ = git.merge(ws.repo_root, theirs, f"gitmem sync: merge {remote}/{branch}")
    if not clean:
        _stop_on_conflicts(ws, driver)
    return new


def _stop_on_rewrite(ws: Workspace, remote: str, branch: str, had: str, theirs: str) -> None:
    write_marker(ws, {"remote": remote, "branch": branch, "had": had, "theirs": theirs},
                 REWRITTEN)
    raise HistoryRewritten(
        f"history was rewritten on {remote}: {remote}/{branch} ({theirs[:7]}) no longer "
        f"descends from {had[:7]}, what this clone had of it. Someone removed text from every "
        f"commit ('gitmem forget --purge', docs/forget.md); merging would bring it back, so "
        f"nothing was merged or pushed. Run 'gitmem sync --after-purge' to take the new "
        f"history (your commits that {remote} has not seen are replayed on it) and prune the "
        f"old objects here")


def sync(ws: Workspace, cfg: Config, remote: str | None = None, *,
         after_purge: bool = False) -> SyncReport:
    """Bring this clone and ``remote`` to the same history (see the module docstring)."""
    from gitmem.index.replay import index_workspace

    branch = git.current_branch(ws.repo_root)
    if branch is None:
        raise GitmemError("HEAD is detached: check out the branch to sync ('git switch main')")
    driver = driver_state(ws.repo_root, ws.prefix)
    if git.merge_in_progress(ws.repo_root):
        _stop_on_conflicts(ws, driver)
    purged = read_marker(ws)
    if purged is not None:
        if not after_purge:
            raise GitmemError(
                "this clone's history was rewritten by 'gitmem forget --purge' and not pushed "
                "yet: 'gitmem sync --after-purge' force-pushes it (with a lease); a plain sync "
                "would fetch the old history back")
        return _push_purged(ws, cfg, purged, driver)
    name = _remote(ws, branch, remote)
    if after_purge:
        _follow_rewrite(ws, cfg, name, branch)
    merged: list[str] = []
    for attempt in range(1, ATTEMPTS + 1):
        merged += _merge_remote(ws, name, branch, driver)
        index_workspace(ws, cfg)
        head = git.head_id(ws.repo_root)
        if head is None:
            return SyncReport(name, branch, None, attempt, driver, merged)
        accepted, _ = git.push(ws.repo_root, name, branch)
        if accepted is not False:  # None: the remote had this commit already (fast-forward)
            return SyncReport(name, branch, head, attempt, driver, merged, bool(accepted))
    raise GitmemError(f"{name} kept moving: the push was rejected {ATTEMPTS} times after "
                      f"fetching and merging; run 'gitmem sync' again")


def _push_purged(ws: Workspace, cfg: Config, marker: dict[str, Any],
                 driver: DriverState) -> SyncReport:
    """The clone that purged: force-push its new history, only over the remote branch it saw
    before the purge (the lease), then prune anything the push left behind."""
    remote, branch = str(marker["remote"]), str(marker["branch"])
    lease = marker.get("lease")
    if git.current_branch(ws.repo_root) != branch:
        raise GitmemError(f"the purge rewrote {branch}: switch to it ('git switch {branch}') "
                          "and run 'gitmem sync --after-purge' again")
    accepted, text = git.push_with_lease(ws.repo_root, remote, branch,
                                         str(lease) if lease else None)
    if not accepted:
        raise GitmemError(
            f"{remote}/{branch} moved since the purge (someone pushed to it), so the "
            f"force-push was refused and nothing was overwritten. Fetching that push would "
            f"bring the old history back: on the clone that pushed, run 'gitmem sync "
            f"--after-purge' once this push is through; here, get their new commits in by hand "
            f"(git fetch {remote} {branch} && git rebase --onto {branch} "
            f"{str(lease or '')[:12]} FETCH_HEAD), repeat the purge, then run this again. "
            f"git said: {text}")
    head = git.head_id(ws.repo_root) or ""
    git.update_ref(ws.repo_root, f"refs/remotes/{remote}/{branch}", head)
    clear_marker(ws)
    return SyncReport(remote, branch, head, 1, driver, [], True, forced=True)


def _follow_rewrite(ws: Workspace, cfg: Config, remote: str, branch: str) -> None:
    """Another clone purged: take the remote's new history. This clone's own commits since
    the old history (``had``) are replayed on the new one; then the old objects are pruned
    and the index rebuilt."""
    from gitmem.index.replay import index_workspace
    from gitmem.index.store import remove_index_files

    marker = read_marker(ws, REWRITTEN)
    had = (str(marker["had"]) if marker and marker.get("remote") == remote
           and marker.get("branch") == branch else
           git.resolve_commit(ws.repo_root, f"refs/remotes/{remote}/{branch}"))
    theirs = git.fetch(ws.repo_root, remote, branch)
    if theirs is None or had is None or git.is_ancestor(ws.repo_root, had, theirs):
        clear_marker(ws, REWRITTEN)
        return  # nothing was rewritten: an ordinary sync
    head = git.head_id(ws.repo_root)
    if head is None or git.is_ancestor(ws.repo_root, head, had):
        git.reset_keep(ws.repo_root, theirs)
    else:
        if git.tracked_changes(ws.repo_root):
            raise GitmemError("this clone has commits of its own to replay on the new history, "
                              "and uncommitted changes: commit them first, then run 'gitmem "
                              "sync --after-purge' again")
        base = git.merge_base(ws.repo_root, head, had) or had
        clean, text = git.rebase_onto(ws.repo_root, theirs, base)
        if not clean:
            raise GitmemError(
                f"replaying this clone's commits on {remote}'s new history stopped on a "
                f"conflict (a commit of yours touches the purged lines?): resolve it, 'git "
                f"rebase --continue', then run 'gitmem sync --after-purge' again ('git rebase "
                f"--abort' goes back). git said: {text}")
    kept = git.refs_containing(ws.repo_root, had)
    git.drop_unreachable(ws.repo_root)
    remove_index_files(ws.index_path)
    index_workspace(ws, cfg, force=True)
    clear_marker(ws, REWRITTEN)
    if kept:
        raise GitmemError(f"took the new history, but these refs still hold the old one (and "
                          f"the purged text): {', '.join(kept)}; delete or rewrite them, then "
                          f"'git gc --prune=now'")
