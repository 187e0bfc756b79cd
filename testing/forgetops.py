"""Forgetting on several machines at random (issue 42): the sync harness (``testing.syncops``)
with two more operations: a clone forgets one of its own pushed lines (``gitmem forget``, then
syncs), and now and then purges one (``gitmem forget --purge``, then ``sync --after-purge``);
every other clone meets the rewritten history on its next sync and follows it
(``sync --after-purge``). After each sync the remote holds every pushed line except the ones
named, and none of those; at the end every clone and the remote (after the server's own gc)
hold no object with a purged line. Used by tests/test_forget.py and bench/bench_forget.py.
"""

from __future__ import annotations

from pathlib import Path

from gitmem.git import objects_containing
from gitmem.reflect.forget import forget, plan_forget
from gitmem.reflect.purge import plan_purge, purge
from gitmem.sync import HistoryRewritten, SyncConflict, sync
from gitmem.workspace import open_workspace
from testing.repo import git
from testing.syncops import DAY, SyncOps, SyncOpsReport, _Clone

WEIGHTS = {"append": 22, "retain": 20, "opinion": 6, "reflect": 6, "edit": 6, "conflict": 2,
           "sync": 26, "forget": 8, "purge": 4}


class ForgetOps(SyncOps):
    def __init__(self, base: Path, clones: int, seed: int) -> None:
        super().__init__(base, clones, seed)
        self.named: set[str] = set()  # lines forgotten and pushed: never on the remote again
        self.unpushed: dict[Path, set[str]] = {}  # forgotten, the forget not pushed yet
        self.purged: set[str] = set()
        self.followed = 0  # syncs that met a rewritten history and followed it

    def _own_line(self, clone: _Clone) -> str | None:
        """One of the clone's own lines that the remote holds, untouched since."""
        tree = git(self.bare, "show", f"main:{DAY}").split("\n")
        mine = [line for line in clone.lines if line in tree and line in self.pushed]
        return self.rng.choice(mine) if mine else None

    def op_forget(self, clone: _Clone, *, purging: bool = False) -> None:
        self.op_sync(clone)  # the line's place as the remote has it; a purge's lease too
        line = self._own_line(clone)
        if line is None:
            return self.op_append(clone)
        tag = line.split(": ", 1)[1]
        ws, cfg = open_workspace(clone.path)
        plan = plan_forget(ws, cfg, [], entity="Peter", match=tag)
        texts = plan_purge(ws, plan) if purging else None
        done = forget(ws, cfg, plan, reason="harness")
        if texts is not None:
            purge(ws, cfg, texts, done)
            sync(ws, cfg, after_purge=True)
            self.purged.add(line)
        clone.lines.remove(line)
        self.pushed.discard(line)
        if purging:
            self.named.add(line)
            self._check(clone)
        else:
            self.unpushed.setdefault(clone.path, set()).add(line)
        return None

    def op_purge(self, clone: _Clone) -> None:
        self.op_forget(clone, purging=True)

    def op_sync(self, clone: _Clone) -> None:
        """A sync that meets a purge elsewhere follows it, as its error says, then syncs as
        usual (the parent's op_sync: conflicts resolved, the remote checked)."""
        ws, cfg = open_workspace(clone.path)
        try:
            sync(ws, cfg)
        except HistoryRewritten:
            self.followed += 1
            sync(ws, cfg, after_purge=True)
        except SyncConflict:
            pass  # left in progress: the parent's op_sync resolves it
        self.named |= self.unpushed.pop(clone.path, set())
        super().op_sync(clone)

    def _check(self, clone: _Clone) -> None:
        super()._check(clone)
        tree = set(git(self.bare, "show", f"main:{DAY}").split("\n"))
        back = sorted(line for line in self.named if line in tree)
        if back:
            self.report.failures.append(f"sync {self.report.syncs}: forgotten lines are back "
                                        f"{back[:3]}")

    def leftovers(self) -> list[str]:
        """Repositories (clones, then the remote after its gc) with an object holding a purged
        line."""
        if not self.purged:
            return []
        git(self.bare, "gc", "-q", "--prune=now")
        texts = sorted(self.purged)
        return [repo.name for repo in [*(c.path for c in self.clones), self.bare]
                if objects_containing(repo, texts)]


def run_forget_ops(base: Path, operations: int, *, clones: int = 3, seed: int = 0
                   ) -> tuple[SyncOpsReport, ForgetOps]:
    ops = ForgetOps(base, clones, seed)
    names, weights = list(WEIGHTS), list(WEIGHTS.values())
    for _ in range(operations):
        name = ops.rng.choices(names, weights)[0]
        getattr(ops, f"op_{name}")(ops.rng.choice(ops.clones))
        ops.report.operations += 1
        ops.report.done[name] += 1
    ops.converge()
    ops.report.failures += [f"{name} still holds a purged line" for name in ops.leftovers()]
    return ops.report, ops
