"""``gitmem forget --purge``: the forgotten text out of every commit (docs/forget.md).

For a secret or personal data that must not survive in history. After forget's own commit,
git-filter-repo (the tool git's documentation recommends for rewriting history) replaces each
line of the forgotten entries, in every file of every commit of every ref and in commit
messages, with ``[forgotten]``; every reflog is expired and unreachable objects are pruned, so
this clone keeps no object that holds the text; the index is rebuilt from the new history.

The remote and other clones still hold it. ``.memory/purge.json`` records what the remote's
branch was before (the lease), and ``gitmem sync --after-purge`` force-pushes the new history
with that lease: never silently, never over a push it has not seen. Other clones are told on
their next ``gitmem sync`` (their remote's branch no longer descends from what they had) and
take the new history with ``gitmem sync --after-purge``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitmem import git
from gitmem.errors import GitmemError

if TYPE_CHECKING:
    from gitmem.config import Config
    from gitmem.reflect.forget import ForgetPlan, ForgetResult, Forgotten
    from gitmem.workspace import Workspace

MARKER = "purge.json"  # in .memory/: this clone rewrote its history and has not pushed it
SHORTEST = 12  # a shorter piece of text alone is too likely to stand elsewhere: whole lines only
_SUMMARY_CHARS = 60  # retain's commit subject holds the entry's first line, this long
_DIGEST_CHARS = 200  # an entity page's digest line holds the text, this long


@dataclass(frozen=True)
class PurgePlan:
    texts: tuple[str, ...]  # what is replaced in every commit
    commits: int  # commits of any ref whose changes or message hold one of them
    remote: str | None
    branch: str
    spared: tuple[str, ...] = ()  # lines of the entries that stand elsewhere in the memory

    def preview(self) -> list[str]:
        out = [f"--purge: rewrite history so that no commit of any ref holds this text "
               f"({self.commits} commit{'s' if self.commits != 1 else ''} touch it now); each "
               f"piece becomes {git.PURGED}:"]
        out += [f"    {t}" for t in self.texts]
        out += [f"  left as they are (the memory still holds them elsewhere): {t}"
                for t in self.spared]
        if self.remote:
            out.append(f"  then 'gitmem sync --after-purge' must force-push {self.branch} to "
                       f"{self.remote}, and every other clone must take the new history")
        return out

    def to_json(self) -> dict[str, Any]:
        return {"texts": list(self.texts), "commits": self.commits, "remote": self.remote,
                "branch": self.branch, "spared": list(self.spared)}


@dataclass(frozen=True)
class PurgeReport:
    plan: PurgePlan
    head: str  # the branch's new tip
    lease: str | None  # the remote's branch before the purge, which the force-push expects
    left: tuple[str, ...]  # objects that still hold the text (none, or the purge failed)

    def lines(self) -> list[str]:
        """What the person must do next, exactly."""
        out = [f"purged: history rewritten, {self.plan.branch} is now {self.head[:7]}; no "
               "object in this clone holds the text"]
        if self.plan.remote is None:
            return [*out, "no remote: nothing else holds it (copies, backups and other clones "
                          "you made by hand still do)"]
        was = self.lease[:7] if self.lease else "absent"
        return [*out,
                f"next: 'gitmem sync --after-purge' force-pushes {self.plan.branch} to "
                f"{self.plan.remote} (with a lease: only if it is still {was} there)",
                "other clones: their next 'gitmem sync' stops and says history was rewritten; "
                "there 'gitmem sync --after-purge' takes the new history and prunes the old",
                f"the server: {self.plan.remote} keeps the old objects until it prunes them "
                "(a hosting service's pull request refs and caches too: ask its support)"]

    def to_json(self) -> dict[str, Any]:
        return {**self.plan.to_json(), "head": self.head, "lease": self.lease,
                "left": list(self.left), "next": self.lines()[1:]}


def purge_texts(entries: tuple[Forgotten, ...]) -> tuple[str, ...]:
    """The pieces to replace: each line of each entry (as written, without its indent), its
    text's lines, and the shortened forms other writers used (retain's commit subject, a
    digest line), each only when long enough not to stand for something else."""
    out: dict[str, None] = {}
    for e in entries:
        for line in e.lines:
            if line.strip():
                out[line.strip()] = None
        for piece in e.text.splitlines():
            if len(piece.strip()) >= SHORTEST:
                out[piece.strip()] = None
        first = e.lines[0].strip().removeprefix("- ") if e.lines else ""
        for cut in (first[:_SUMMARY_CHARS - 1].rstrip(), " ".join(e.text.split())[
                :_DIGEST_CHARS - 1].rstrip()):
            if len(cut) >= SHORTEST:
                out[cut] = None
    return tuple(sorted(out, key=len, reverse=True))  # longest first: each is replaced whole


def plan_purge(ws: Workspace, plan: ForgetPlan) -> PurgePlan:
    """Refuses (before anything is written) what a rewrite would hurt: uncommitted edits of
    tracked files (the rewrite resets the work tree), a merge or rebase in progress, no
    branch."""
    branch = git.current_branch(ws.repo_root)
    if branch is None:
        raise GitmemError("HEAD is detached: check out a branch before --purge")
    if git.merge_in_progress(ws.repo_root):
        raise GitmemError("a merge is in progress: finish or abort it before --purge")
    dirty = git.tracked_changes(ws.repo_root)
    if dirty:
        shown = ", ".join(dirty[:5]) + (f" and {len(dirty) - 5} more" if len(dirty) > 5 else "")
        raise GitmemError(f"--purge rewrites history and resets the work tree, and these files "
                          f"have uncommitted changes: {shown}. Commit them (or move them "
                          "aside) first; nothing was forgotten")
    texts, spared = _not_elsewhere(ws, plan, purge_texts(plan.entries))
    if not texts:
        raise GitmemError("every line of these entries also stands elsewhere in the memory, "
                          "so a purge would change other entries; nothing was forgotten")
    commits = {c for t in texts for c in git.commits_containing(ws.repo_root, t)}
    remote = git.config_get(ws.repo_root, f"branch.{branch}.remote")
    if remote is None and git.config_get(ws.repo_root, "remote.origin.url") is not None:
        remote = "origin"
    return PurgePlan(texts, len(commits), remote, branch, spared)


def _not_elsewhere(ws: Workspace, plan: ForgetPlan, texts: tuple[str, ...]
                   ) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(the texts no file holds once the entries are gone, the others). The rewrite replaces
    text in every commit, the newest too: a line another entry shares (a nested '- source:'
    item) must stay, so that the memory after the purge is exactly the memory after forget."""
    keep: list[str] = []
    spared: list[str] = []
    for text in texts:
        holders = git.files_containing(ws.repo_root, text, ".", plan.base)
        inside = {ws.prefix + rel for rel in plan.new}
        elsewhere = any(h not in inside for h in holders) or any(
            text.encode("utf-8") in data for data in plan.new.values())
        (spared if elsewhere else keep).append(text)
    return tuple(keep), tuple(spared)


def purge(ws: Workspace, cfg: Config, plan: PurgePlan, done: ForgetResult) -> PurgeReport:
    """Rewrite, prune, check, rebuild the index; record the lease for ``sync --after-purge``."""
    from gitmem.index.replay import index_workspace
    from gitmem.index.store import remove_index_files

    lease = None
    if plan.remote is not None:
        lease = git.resolve_commit(ws.repo_root, f"refs/remotes/{plan.remote}/{plan.branch}")
        earlier = read_marker(ws)  # an earlier purge not pushed yet: its lease still holds
        if earlier is not None and earlier.get("remote") == plan.remote:
            lease = earlier.get("lease")
        write_marker(ws, {"remote": plan.remote, "branch": plan.branch, "lease": lease,
                          "forget_commit": done.commit})
    tree = git.tree_of(ws.repo_root, "HEAD")
    git.filter_repo_replace(ws.repo_root, plan.texts)
    if git.tree_of(ws.repo_root, "HEAD") != tree:  # cannot be, by _not_elsewhere; said if so
        raise GitmemError("the purge changed the memory as it stands (a purged line stood "
                          "elsewhere too): compare 'git show HEAD' with your files")
    left = tuple(git.objects_containing(ws.repo_root, plan.texts))
    head = git.head_id(ws.repo_root) or ""
    remove_index_files(ws.index_path)
    index_workspace(ws, cfg, force=True)
    if left:
        raise GitmemError(f"history was rewritten but {len(left)} object(s) still hold the "
                          f"text ({', '.join(o[:10] for o in left[:5])}): another ref or a "
                          "linked worktree keeps them; see docs/forget.md")
    return PurgeReport(plan, head, lease, left)


def read_marker(ws: Workspace, name: str = MARKER) -> dict[str, Any] | None:
    path = ws.memory_dir / name
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise GitmemError(f"cannot read {path}: {exc}; remove it if no purge is pending") from exc
    return data if isinstance(data, dict) else None


def write_marker(ws: Workspace, data: dict[str, Any], name: str = MARKER) -> None:
    ws.memory_dir.mkdir(parents=True, exist_ok=True)
    (ws.memory_dir / name).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def clear_marker(ws: Workspace, name: str = MARKER) -> None:
    (ws.memory_dir / name).unlink(missing_ok=True)
