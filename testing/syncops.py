"""Memory on several machines at random (issue 20): clones of one bare remote append, retain
(facts and opinions), edit their own lines, now and then edit a shared line (a real conflict),
reflect (so both machines rewrite bank/opinions.md and the entity page) and sync, in random
order. After each sync the remote holds every entry and every opinion's evidence any clone has
pushed (unless its writer edited the entry), no memory file holds conflict markers unless sync
reported a conflict, and the clone's index equals a clean rebuild. At the end every clone syncs,
one reflects (settling the merge driver's stale markers) and all sync again: no marker is left
and every tree and index is equal. Used by tests/test_sync.py and bench/reliability.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from gitmem.merge.registration import register
from gitmem.parse.stale import is_stale_begin, is_stale_line
from gitmem.reflect.append import retain
from gitmem.reflect.reflect import reflect
from gitmem.scaffold import init_workspace
from gitmem.sync import SyncConflict, sync
from gitmem.workspace import open_workspace
from testing.index import dump
from testing.repo import commit_all, git, make_repo, write
from testing.rewrites import rebuilt_dump

DAY = "memory/2025-11-27.md"
SHARED = "- W @Peter: The shared line, version 0."
START = f"# 2025-11-27\n\nThe day.\n\n## Retain\n{SHARED}\n"
WEIGHTS = {"append": 22, "retain": 20, "opinion": 10, "reflect": 10, "edit": 8, "conflict": 3,
           "sync": 27}
OPINIONS = "bank/opinions.md"
_EVIDENCE = re.compile(r"^\s+- (?:for|against) (f-[0-9a-f]+) ", re.M)


@dataclass
class SyncOpsReport:
    operations: int = 0
    syncs: int = 0
    checked: int = 0  # syncs whose index was compared with a rebuild
    conflicts: int = 0  # conflicts sync reported (and the harness resolved)
    # per file, the syncs after which the remote held a merge driver's stale marker in it
    flagged: Counter[str] = field(default_factory=Counter)
    stale_before_settling: int = 0  # files with stale markers before the last reflect
    done: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"operations": self.operations, "syncs": self.syncs, "checked": self.checked,
                "conflicts": self.conflicts, "flagged": dict(sorted(self.flagged.items())),
                "stale_before_settling": self.stale_before_settling,
                "done": dict(sorted(self.done.items())),
                "failures": self.failures}


@dataclass
class _Clone:
    path: Path
    lines: list[str] = field(default_factory=list)  # lines it committed, as they stand now
    gone: list[str] = field(default_factory=list)  # lines it edited away


class SyncOps:
    def __init__(self, base: Path, clones: int, seed: int) -> None:
        self.rng = random.Random(seed)
        self.base = base
        self.bare = base / "remote.git"
        git(base, "init", "-q", "--bare", "-b", "main", str(self.bare))
        seed_repo = make_repo(base, "seed")
        init_workspace(seed_repo)
        register(seed_repo, "")
        write(seed_repo, DAY, START)
        commit_all(seed_repo, "start")
        git(seed_repo, "push", "-q", str(self.bare), "main")
        self.clones = [self._clone(f"m{n}") for n in range(clones)]
        self.pushed: set[str] = set()
        self.evidence: set[str] = set()  # evidence fact ids any clone's opinions.md has pushed
        self.report = SyncOpsReport()
        self.serial = 0

    def _clone(self, name: str) -> _Clone:
        git(self.base, "clone", "-q", str(self.bare), name)
        path = self.base / name
        init_workspace(path)
        register(path, "")
        return _Clone(path)

    def _tag(self, clone: _Clone) -> str:
        self.serial += 1
        return f"{clone.path.name} line {self.serial}"

    def op_append(self, clone: _Clone) -> None:
        line = f"- W @Peter: {self._tag(clone)} by hand."
        note = clone.path / DAY
        note.write_text(note.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")
        commit_all(clone.path, "append")
        clone.lines.append(line)

    def op_retain(self, clone: _Clone) -> None:
        entry = f"B @Peter: {self._tag(clone)} retained."
        ws, cfg = open_workspace(clone.path)
        retain(ws, cfg, entry, day=date(2025, 11, 27))
        clone.lines.append(f"- {entry}")

    def op_opinion(self, clone: _Clone) -> None:
        """An O entry stating the one opinion (a new one the first time): reflect's evidence."""
        c = self.rng.choice((0.2, 0.4, 0.6, 0.8, 0.9))
        entry = f"O(c={c}) @Peter: Prefers short replies, says {self._tag(clone)}."
        ws, cfg = open_workspace(clone.path)
        retain(ws, cfg, entry, day=date(2025, 11, 27))
        clone.lines.append(f"- {entry}")

    def op_reflect(self, clone: _Clone) -> None:
        ws, cfg = open_workspace(clone.path)
        reflect(ws, cfg, since=None, commit=True)

    def op_edit(self, clone: _Clone) -> None:
        if not clone.lines:
            return self.op_append(clone)
        at = self.rng.randrange(len(clone.lines))
        old, new = clone.lines[at], clone.lines[at].replace("@Peter:", "@Peter: (edited)", 1)
        if old == new:
            return self.op_append(clone)
        note = clone.path / DAY
        text = note.read_text(encoding="utf-8")
        if old + "\n" not in text:
            self.report.failures.append(f"op {self.report.operations}: {old!r} is missing "
                                        f"from {clone.path.name}")
            return None
        note.write_text(text.replace(old + "\n", new + "\n", 1), encoding="utf-8")
        commit_all(clone.path, "edit")
        clone.lines[at] = new
        clone.gone.append(old)
        return None

    def op_conflict(self, clone: _Clone) -> None:
        """Edit the shared line: a real conflict with any other clone that did too."""
        note = clone.path / DAY
        text = note.read_text(encoding="utf-8")
        lines = text.split("\n")
        at = next(i for i, ln in enumerate(lines) if ln.startswith("- W @Peter: The shared line"))
        lines[at] = f"- W @Peter: The shared line, version {self._tag(clone)}."
        note.write_text("\n".join(lines), encoding="utf-8")
        commit_all(clone.path, "shared line")

    def op_sync(self, clone: _Clone) -> None:
        self.report.syncs += 1
        ws, cfg = open_workspace(clone.path)
        for _ in range(3):
            try:
                sync(ws, cfg)
                break
            except SyncConflict as exc:
                self.report.conflicts += 1
                if list(exc.files) != [DAY]:
                    self.report.failures.append(f"sync {self.report.syncs}: conflicts {exc.files}")
                self._resolve(clone)
        self.pushed.difference_update(clone.gone)
        self.pushed.update(clone.lines)
        self.evidence.update(_EVIDENCE.findall(_show(clone.path, "HEAD", OPINIONS)))
        self._check(clone)

    def _resolve(self, clone: _Clone) -> None:
        """Keep our version of the shared line and every other line of both sides (what a
        person would do)."""
        note = clone.path / DAY
        out, part = [], "common"
        for line in note.read_text(encoding="utf-8").split("\n"):
            if line.startswith("<<<<<<<"):
                part = "ours"
            elif line.startswith("|||||||"):
                part = "base"
            elif line.startswith("=======") and part == "base":
                part = "theirs"
            elif line.startswith(">>>>>>>") and part == "theirs":
                part = "common"
            elif part in ("common", "ours") or (
                    part == "theirs" and not line.startswith(SHARED.split(",")[0])):
                out.append(line)
        note.write_text("\n".join(out), encoding="utf-8")
        commit_all(clone.path, "resolve the shared line")

    def _check(self, clone: _Clone) -> None:
        n = self.report.syncs
        tree = git(self.bare, "show", f"main:{DAY}").split("\n")
        missing = sorted(line for line in self.pushed if line not in tree)
        if missing:
            self.report.failures.append(f"sync {n}: lost {missing[:3]}")
        marked = git(self.bare, "grep", "-l", "-e", "^<<<<<<<", "-e", "^>>>>>>>", "main", "--",
                     "*.md", check=False).split()
        if marked:
            self.report.failures.append(f"sync {n}: conflict markers in {marked}")
        self.report.flagged.update(self._stale())
        lost = self.evidence - set(_EVIDENCE.findall(_show(self.bare, "main", OPINIONS)))
        if lost:
            self.report.failures.append(f"sync {n}: lost evidence {sorted(lost)[:3]}")
        if dump(clone.path) != rebuilt_dump(clone.path, self.base / "rebuilt"):
            self.report.failures.append(f"sync {n}: the index of {clone.path.name} differs "
                                        f"from a rebuild")
        self.report.checked += 1

    def converge(self) -> None:
        """Every clone syncs twice, in turn (all hold the same history), one reflects (settling
        what the merges flagged), every clone syncs twice more: no stale marker is left, all
        trees and indexes end up equal. (A reflect on a clone that is behind can be flagged
        again by the next merge: the reflect after it settles that.)"""
        for clone in self.clones * 2:
            self.op_sync(clone)
        self.report.stale_before_settling = len(self._stale())
        self.op_reflect(self.clones[0])
        for clone in self.clones * 2:
            self.op_sync(clone)
        if self._stale():
            self.report.failures.append(f"after settling: stale markers in {self._stale()}")
        trees = {git(c.path, "rev-parse", "HEAD^{tree}").strip() for c in self.clones}
        if len(trees) != 1:
            self.report.failures.append(f"after converging: {len(trees)} different trees")
        dumps = [dump(c.path) for c in self.clones]
        if any(d != dumps[0] for d in dumps):
            self.report.failures.append("after converging: the indexes differ")

    def _stale(self) -> list[str]:
        """The memory files of the remote that hold a merge driver's stale marker."""
        paths = git(self.bare, "ls-tree", "-r", "--name-only", "main").split()
        return [p for p in paths if p.endswith(".md") and any(
            is_stale_line(ln) or is_stale_begin(ln)
            for ln in _show(self.bare, "main", p).split("\n"))]


def _show(repo: Path, rev: str, path: str) -> str:
    """A file at a revision ('' when it has none)."""
    return git(repo, "show", f"{rev}:{path}", check=False)


def run_sync_ops(base: Path, operations: int, *, clones: int = 3, seed: int = 0
                 ) -> SyncOpsReport:
    ops = SyncOps(base, clones, seed)
    names, weights = list(WEIGHTS), list(WEIGHTS.values())
    for _ in range(operations):
        name = ops.rng.choices(names, weights)[0]
        getattr(ops, f"op_{name}")(ops.rng.choice(ops.clones))
        ops.report.operations += 1
        ops.report.done[name] += 1
    ops.converge()
    return ops.report
