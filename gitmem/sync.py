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
from gitmem.mergedriver import DriverState, driver_state

if TYPE_CHECKING:
    from gitmem.config import Config
    from gitmem.workspace import Workspace

ATTEMPTS = 5
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
    pushed: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"remote": self.remote, "branch": self.branch, "head": self.head,
                "attempts": self.attempts, "merged": self.merged, "pushed": self.pushed,
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


def _merge_remote(ws: Workspace, remote: str, branch: str, driver: DriverState) -> list[str]:
    """Fetch and merge; the remote commits that were new here."""
    theirs = git.fetch(ws.repo_root, remote, branch)
    head = git.head_id(ws.repo_root)
    if theirs is None or (head is not None and git.is_ancestor(ws.repo_root, theirs, head)):
        return []
    new = [theirs]
    clean, _ = git.merge(ws.repo_root, theirs, f"gitmem sync: merge {remote}/{branch}")
    if not clean:
        _stop_on_conflicts(ws, driver)
    return new


def sync(ws: Workspace, cfg: Config, remote: str | None = None) -> SyncReport:
    """Bring this clone and ``remote`` to the same history (see the module docstring)."""
    from gitmem.index.replay import index_workspace

    branch = git.current_branch(ws.repo_root)
    if branch is None:
        raise GitmemError("HEAD is detached: check out the branch to sync ('git switch main')")
    driver = driver_state(ws.repo_root, ws.prefix)
    if git.merge_in_progress(ws.repo_root):
        _stop_on_conflicts(ws, driver)
    name = _remote(ws, branch, remote)
    merged: list[str] = []
    for attempt in range(1, ATTEMPTS + 1):
        merged += _merge_remote(ws, name, branch, driver)
        index_workspace(ws, cfg)
        head = git.head_id(ws.repo_root)
        if head is None:
            return SyncReport(name, branch, None, attempt, driver, merged)
        accepted, _ = git.push(ws.repo_root, name, branch)
        if accepted:
            return SyncReport(name, branch, head, attempt, driver, merged, True)
    raise GitmemError(f"{name} kept moving: the push was rejected {ATTEMPTS} times after "
                      f"fetching and merging; run 'gitmem sync' again")
