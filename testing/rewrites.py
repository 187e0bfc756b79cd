"""History rewrites at scale (issue 10): random git operations (commit, amend, rebase,
reset, checkout, merge, cherry-pick, branch delete) on a generated workspace, re-indexing after
each; the incremental index must equal a clean rebuild after every sampled step. Used by
tests/test_rewrites.py (~30 operations) and bench/reliability (500).
"""

from __future__ import annotations

import random
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from gitmem.index.replay import index_workspace
from gitmem.workspace import open_workspace
from testing import synth
from testing.index import dump
from testing.repo import GitFailed, git

WORDS = ("gateway", "kayak", "Zeppelin", "castle", "ledger", "orchid", "tram", "violin")
PEOPLE = ("Peter", "Andy", "Mara", "Jonas")


@dataclass
class RewriteReport:
    operations: int = 0
    checked: int = 0  # steps compared with a rebuild
    done: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)  # conflicts, nothing to do
    mismatches: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"operations": self.operations, "checked": self.checked,
                "done": dict(sorted(self.done.items())),
                "skipped": dict(sorted(self.skipped.items())),
                "mismatches": self.mismatches, "errors": self.errors}


class History:
    """A generated workspace and the random operations applied to it."""

    def __init__(self, repo: Path, rng: random.Random) -> None:
        self.repo, self.rng = repo, rng
        self.clock = datetime(2027, 1, 1, tzinfo=UTC)
        self.branches = ["main"]
        self.serial = 0

    # -- helpers ----------------------------------------------------------------------------

    def tick(self) -> str:
        self.clock += timedelta(hours=self.rng.randint(1, 30))
        return self.clock.isoformat()

    def git(self, *args: str) -> str:
        return git(self.repo, *args, date=self.tick())

    def current(self) -> str:
        return self.git("rev-parse", "--abbrev-ref", "HEAD").strip()

    def memory_files(self) -> list[str]:
        out = self.git("ls-files", "memory", "bank", "MEMORY.md", "USER.md")
        return [p for p in out.splitlines() if p.endswith(".md")]

    def edit_files(self) -> None:
        """One to three edits of memory files: add, change, delete or rename."""
        for _ in range(self.rng.randint(1, 3)):
            self.serial += 1
            files = self.memory_files()
            choice = self.rng.random()
            fact = (f"- {self.rng.choice('WBOS')} @{self.rng.choice(PEOPLE)}: "
                    f"{self.rng.choice(WORDS)} note {self.serial}.\n")
            if choice < 0.35 or not files:
                day = (self.clock + timedelta(days=self.rng.randint(0, 900))).date()
                path = self.repo / "memory" / f"{day.isoformat()}.md"
                path.parent.mkdir(parents=True, exist_ok=True)
                with path.open("a", encoding="utf-8") as fh:
                    fh.write(f"# {day}\n\n## Retain\n{fact}" if not path.exists() else fact)
            elif choice < 0.75:
                path = self.repo / self.rng.choice(files)
                lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
                if lines and self.rng.random() < 0.5:
                    lines[self.rng.randrange(len(lines))] = fact
                else:
                    lines.append(fact)
                path.write_text("".join(lines), encoding="utf-8")
            elif choice < 0.9:
                (self.repo / self.rng.choice(files)).unlink()
            else:
                source = self.rng.choice(files)
                self.git("mv", source, f"memory/moved-{self.serial}.md")
        self.git("add", "-A")

    def commit(self) -> bool:
        self.edit_files()
        self.git("commit", "-q", "--allow-empty", "-m", f"edit {self.serial}")
        return True

    # -- the operations ---------------------------------------------------------------------

    def op_commit(self) -> bool:
        return self.commit()

    def op_amend(self) -> bool:
        self.edit_files()
        self.git("commit", "-q", "--amend", "--allow-empty", "-m", f"amended {self.serial}")
        return True

    def op_reset(self) -> bool:
        depth = int(self.git("rev-list", "--count", "--first-parent", "HEAD").strip())
        if depth < 3:
            return False
        self.git("reset", "-q", "--hard", f"HEAD~{self.rng.randint(1, min(4, depth - 2))}")
        return True

    def op_checkout(self) -> bool:
        if self.rng.random() < 0.5 or len(self.branches) == 1:
            name = f"b{self.serial}-{self.rng.randrange(10_000)}"
            depth = int(self.git("rev-list", "--count", "--first-parent", "HEAD").strip())
            back = self.rng.randint(0, min(5, depth - 1))
            self.git("checkout", "-q", "-b", name, f"HEAD~{back}")
            self.branches.append(name)
        else:
            others = [b for b in self.branches if b != self.current()]
            self.git("checkout", "-q", self.rng.choice(others))
        return True

    def _other_branch(self) -> str | None:
        others = [b for b in self.branches if b != self.current()]
        return self.rng.choice(others) if others else None

    def _try(self, args: tuple[str, ...], abort: tuple[str, ...]) -> bool:
        try:
            self.git(*args)
        except GitFailed:
            try:
                self.git(*abort)
            except GitFailed:
                self.git("reset", "-q", "--hard")
            return False
        return True

    def op_merge(self) -> bool:
        other = self._other_branch()
        return other is not None and self._try(
            ("merge", "-q", "--no-ff", "-X", "theirs", "-m", f"merge {other}", other),
            ("merge", "--abort"))

    def op_rebase(self) -> bool:
        other = self._other_branch()
        return other is not None and self._try(("rebase", "-q", "-X", "theirs", other),
                                               ("rebase", "--abort"))

    def op_cherry_pick(self) -> bool:
        other = self._other_branch()
        if other is None:
            return False
        picks = self.git("rev-list", "--no-merges", "-n", "5", other).split()
        return bool(picks) and self._try(
            ("cherry-pick", "-X", "theirs", "--allow-empty", self.rng.choice(picks)),
            ("cherry-pick", "--abort"))

    def op_branch_delete(self) -> bool:
        other = self._other_branch()
        if other is None or other == "main":
            return False
        self.git("branch", "-q", "-D", other)
        self.branches.remove(other)
        return True


OPERATIONS: dict[str, Callable[[History], bool]] = {
    "commit": History.op_commit,
    "amend": History.op_amend,
    "rebase": History.op_rebase,
    "reset": History.op_reset,
    "checkout": History.op_checkout,
    "merge": History.op_merge,
    "cherry-pick": History.op_cherry_pick,
    "branch delete": History.op_branch_delete,
}
WEIGHTS = (30, 10, 10, 10, 15, 10, 10, 5)


def rebuilt_dump(repo: Path, scratch: Path) -> list[tuple[Any, ...]]:
    """The dump of a clean rebuild of ``repo``'s HEAD, made in a copy."""
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.copytree(repo, scratch, symlinks=True, ignore=shutil.ignore_patterns(".memory"))
    ws, cfg = open_workspace(scratch)
    index_workspace(ws, cfg, force=True)
    return dump(scratch)


def run_rewrites(base: Path, operations: int, *, every: int = 1, seed: int = 0,
                 days: int = 30) -> RewriteReport:
    """Apply ``operations`` random operations, re-indexing after each; compare with a rebuild
    after every ``every``-th one and after the last."""
    repo = base / "ws"
    synth.generate(repo, days=days, seed=seed)
    history = History(repo, random.Random(seed))
    ws, cfg = open_workspace(repo)
    index_workspace(ws, cfg)
    report = RewriteReport()
    names = list(OPERATIONS)
    for step in range(1, operations + 1):
        name = history.rng.choices(names, WEIGHTS)[0]
        try:
            applied = OPERATIONS[name](history)
        except GitFailed as exc:
            report.errors.append(f"step {step} {name}: {exc}")
            continue
        report.operations += 1
        (report.done if applied else report.skipped)[name] += 1
        index_workspace(ws, cfg)
        if step % every == 0 or step == operations:
            report.checked += 1
            if dump(repo) != rebuilt_dump(repo, base / "rebuild"):
                report.mismatches.append(f"step {step} ({name})")
    return report
