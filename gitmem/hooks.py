"""Git hooks: re-index in the background after anything that moves HEAD.

The hooks live in the repository's real hooks directory (``git rev-parse --git-path hooks``
honours ``core.hooksPath`` and linked worktrees). A hook that was already there is moved aside
and chained: it runs first, with the same arguments and standard input, and its exit status is
the hook's (post-checkout's status becomes git's). gitmem's own part never fails the command:
it starts ``gitmem hooks run`` detached and returns at once.
"""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.domain import HookFileState
from gitmem.errors import GitmemError, LockBusy
from gitmem.git import find_repo_root, hooks_dir
from gitmem.locks import QUEUE_LOCK, file_lock, writer_lock
from gitmem.userdirs import private_dir, private_file

if TYPE_CHECKING:
    from gitmem.workspace import Workspace

HOOK_NAMES = ("post-commit", "post-merge", "post-checkout", "post-rewrite")
MARKER = "# gitmem-hook v1"
CHAINED_SUFFIX = ".gitmem-chained"
LOG_NAME = "hook.log"
LOG_MAX_BYTES = 1_000_000
COALESCED = "another hook run is waiting to index; it includes this commit"

_TEMPLATE = """#!/bin/sh
{marker} ({name}): re-index gitmem memory in the background.
# Installed by 'gitmem hooks install'; 'gitmem hooks uninstall' restores the previous hook.
status=0
chained="$(dirname "$0")/{name}{suffix}"
if [ -x "$chained" ]; then
    "$chained" "$@" || status=$?
fi
( {command} -C "$PWD" hooks run {name} </dev/null >/dev/null 2>&1 & ) >/dev/null 2>&1
exit $status
"""


@dataclass(frozen=True)
class HookState:
    name: str
    path: Path
    state: HookFileState
    chained: bool
    python_ok: bool

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "path": str(self.path), "state": self.state,
                "chained": self.chained, "python_ok": self.python_ok}


def hook_script(name: str, python: str | None) -> str:
    """The hook ``name``: it runs gitmem with ``python`` (the interpreter gitmem is installed
    in, so a hook works whatever PATH git gives it), or the ``gitmem`` command on PATH when
    ``python`` is None (the copies in the repository's hooks/ folder, for hook managers)."""
    import shlex

    command = "gitmem" if python is None else f"{shlex.quote(python)} -m gitmem"
    return _TEMPLATE.format(marker=MARKER, name=name, suffix=CHAINED_SUFFIX, command=command)


def is_ours(path: Path) -> bool:
    try:
        return MARKER in path.read_text(encoding="utf-8", errors="replace")[:400]
    except OSError:
        return False


def _runner_ok(path: Path) -> bool:
    """Whether the program a gitmem hook runs still exists: its Python, or ``gitmem`` on PATH."""
    import shlex
    import shutil

    try:
        for line in path.read_text(encoding="utf-8").splitlines():
            if " hooks run " in line:
                program = shlex.split(line.strip("( "))[0]
                return Path(program).exists() if "/" in program else bool(shutil.which(program))
    except (OSError, ValueError):
        return False
    return False


def install(repo_root: Path, python: str | None = None) -> list[str]:
    """Install (or refresh) every hook; returns what was done, one line each."""
    python = python or sys.executable
    directory = hooks_dir(repo_root)
    directory.mkdir(parents=True, exist_ok=True)
    done: list[str] = []
    for name in HOOK_NAMES:
        path = directory / name
        chained = directory / f"{name}{CHAINED_SUFFIX}"
        if (path.exists() or path.is_symlink()) and not is_ours(path):
            if chained.exists():
                raise GitmemError(
                    f"{chained} already exists: move it away (it is an earlier hook that "
                    f"gitmem chained) and run 'gitmem hooks install' again"
                )
            path.rename(chained)
            done.append(f"{name}: kept your existing hook as {chained.name}; it runs first")
        path.write_text(hook_script(name, python), encoding="utf-8")
        path.chmod(0o755)
        done.append(f"{name}: installed in {directory}")
    return done


def uninstall(repo_root: Path) -> list[str]:
    directory = hooks_dir(repo_root)
    done: list[str] = []
    for name in HOOK_NAMES:
        path = directory / name
        chained = directory / f"{name}{CHAINED_SUFFIX}"
        if path.exists() and not is_ours(path):
            done.append(f"{name}: not gitmem's hook; left alone")
            continue
        if path.exists():
            path.unlink()
            done.append(f"{name}: removed")
        if chained.exists() or chained.is_symlink():
            chained.rename(path)
            done.append(f"{name}: restored your previous hook")
    return done


def status(repo_root: Path) -> list[HookState]:
    directory = hooks_dir(repo_root)
    states: list[HookState] = []
    for name in HOOK_NAMES:
        path = directory / name
        chained = (directory / f"{name}{CHAINED_SUFFIX}").exists()
        if not path.exists():
            states.append(HookState(name, path, "missing", chained, False))
            continue
        ours = is_ours(path)
        states.append(HookState(name, path, "installed" if ours else "foreign", chained,
                                ours and _runner_ok(path)))
    return states


def log_line(memory_dir: Path, message: str) -> None:
    """Append to .memory/hook.log, keeping it under LOG_MAX_BYTES (one old copy kept)."""
    private_dir(memory_dir)
    log = memory_dir / LOG_NAME
    if log.exists() and log.stat().st_size > LOG_MAX_BYTES:
        log.replace(memory_dir / f"{LOG_NAME}.1")
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    with private_file(log).open("a", encoding="utf-8") as fh:
        fh.write(f"{stamp} {message}\n")


def log_exception(memory_dir: Path, name: str, exc: BaseException) -> None:
    import traceback  # a failure only: a hook run imports what indexing needs

    detail = "".join(traceback.format_exception(exc)).rstrip()
    log_line(memory_dir, f"{name}: re-index failed: {exc}\n{detail}")


def _my_turn(ws: Workspace) -> bool:
    """Wait until no other run is writing, unless another hook run is already waiting: that one
    reads HEAD after this commit was made, so it indexes it too, and this run can stop (a
    rebase or twenty quick commits start one index run or two, not twenty)."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(file_lock(ws.memory_dir / QUEUE_LOCK, wait=False))
        except LockBusy:
            return False
        with writer_lock(ws):  # the queue is left before indexing reads HEAD
            return True


def run_hook(start: Path, name: str) -> None:
    """Re-index as a hook does: wait for the index lock, log to .memory/hook.log, fill in
    embeddings, and never raise (a hook must never fail the git command)."""
    from gitmem.workspace import open_workspace

    # git points hooks at the index it committed from; gitmem's own commits (retain, reflect)
    # use a temporary one, gone by the time this runs: the uncommitted layer is always the
    # work tree against git's own index.
    os.environ.pop("GIT_INDEX_FILE", None)
    try:
        ws, cfg = open_workspace(start)
    except GitmemError as exc:  # e.g. a broken .gitmem.toml: say so where hooks log
        with contextlib.suppress(GitmemError, OSError):
            root, _ = find_repo_root(start)
            log_line(root / ".memory", f"{name}: not indexed: {exc}")
        return
    try:
        if not _my_turn(ws):
            log_line(ws.memory_dir, f"{name}: {COALESCED}")
            return
        from gitmem.index.run import index_and_embed

        outcome = index_and_embed(ws, cfg, check_current=False, hint=False)
        report, emb = outcome.report, outcome.embed
        log_line(ws.memory_dir, f"{name}: indexed {report.commit or '-'} ({report.commits} "
                 f"commits, {len(report.plan.to_parse)} files parsed) in {report.seconds:.2f}s")
        if emb is not None and (emb.done or emb.skipped):
            log_line(ws.memory_dir, f"{name}: " + (emb.skipped or (
                f"embedded {emb.done} items ({emb.pending} pending) in {emb.seconds:.2f}s")))
        if outcome.embed_error:
            log_line(ws.memory_dir, f"{name}: embedding failed: {outcome.embed_error}")
    except Exception as exc:  # a hook logs every failure and never fails git
        log_exception(ws.memory_dir, name, exc)
