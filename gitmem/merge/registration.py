"""Registering ``gitmem merge-file`` in a clone (docs/sync.md), and saying whether it is.

The driver needs two halves: ``.gitattributes`` lines naming it for the memory files
(committed, so every clone shares them) and this clone's ``merge.gitmem.*`` config (git copies
no config between clones). A clone that has the first half and not the second merges memory
files with git's own merge: still correct, with conflicts where both machines appended. That
state is reported (``gitmem status``, ``gitmem hooks status``, ``gitmem sync``), never silent.
"""

from __future__ import annotations

import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from gitmem.git import check_attr, config_get, config_set

DRIVER = "gitmem"
ATTRIBUTES_HEADER = "# gitmem: memory files merge with 'gitmem merge-file' (docs/sync.md)"
MEMORY_PATTERNS = ("MEMORY.md", "USER.md", "DREAMS.md", "memory/**/*.md", "bank/**/*.md")
# The file whose attributes stand for all of them (a daily note: the file both machines write).
PROBE = "memory/2000-01-01.md"
INSTALL = "'gitmem hooks install'"

DriverStateName = Literal["registered", "unregistered", "broken", "off"]


def attribute_lines(prefix: str) -> list[str]:
    """The .gitattributes lines for a workspace at ``prefix`` ('' or 'sub/') in the repository."""
    return [f"{prefix}{pattern} merge={DRIVER}" for pattern in MEMORY_PATTERNS]


def driver_command(python: str, package_parent: str | None = None) -> str:
    """git runs one driver per file both sides changed, so it starts Python without ``site``
    (``-S``: no .pth files, no site-packages scan; two thirds of a bare start-up in a virtual
    environment) and finds gitmem through ``PYTHONPATH``: the driver needs nothing else."""
    parent = package_parent or str(Path(__file__).resolve().parents[2])
    return (f"PYTHONPATH={shlex.quote(parent)} {shlex.quote(python)} -S -m gitmem merge-file "
            f"%O %A %B %P")


def register(repo_root: Path, prefix: str, python: str | None = None) -> list[str]:
    """Add the missing .gitattributes lines (to commit) and set this clone's merge.gitmem.*
    config; returns what was done, one line each."""
    done: list[str] = []
    attributes = repo_root / ".gitattributes"
    text = attributes.read_text(encoding="utf-8") if attributes.exists() else ""
    have = {ln.strip() for ln in text.splitlines()}
    missing = [ln for ln in attribute_lines(prefix) if ln not in have]
    if missing:
        gap = "" if not text or text.endswith("\n") else "\n"
        header = [] if ATTRIBUTES_HEADER in have else [ATTRIBUTES_HEADER]
        attributes.write_text(text + gap + "\n".join([*header, *missing]) + "\n", encoding="utf-8")
        done.append(f"merge: wrote {len(missing)} lines to .gitattributes (commit it: every clone "
                    f"then merges memory files with gitmem)")
    command = driver_command(python or sys.executable)
    if config_get(repo_root, f"merge.{DRIVER}.driver") != command:
        config_set(repo_root, f"merge.{DRIVER}.name", "gitmem memory files")
        config_set(repo_root, f"merge.{DRIVER}.driver", command)
        done.append(f"merge: set merge.{DRIVER}.driver in this clone's .git/config")
    return done


@dataclass(frozen=True)
class DriverState:
    """Whether memory files merge with gitmem's driver in this clone, and why not."""

    attributes: bool  # .gitattributes names merge=gitmem for the memory files
    configured: bool  # this clone's merge.gitmem.driver is set
    runnable: bool  # ... and the Python it names still exists

    @property
    def state(self) -> DriverStateName:
        if not self.attributes:
            return "off"
        if not self.configured:
            return "unregistered"
        return "registered" if self.runnable else "broken"

    @property
    def line(self) -> str:
        """One line for a person: the state and, unless all is well, what to run."""
        return {
            "registered": "merge driver: registered (memory files merge with gitmem merge-file)",
            "unregistered": (f"merge driver: not registered in this clone (.gitattributes names "
                             f"it, this clone's .git/config does not): memory files merge with "
                             f"git's own merge, with conflicts where both machines appended; "
                             f"{INSTALL} registers it"),
            "broken": (f"merge driver: merge.{DRIVER}.driver runs a Python that is gone; run "
                       f"{INSTALL} again"),
            "off": (f"merge driver: not set up (memory files merge with git's own merge); "
                    f"{INSTALL} sets it up for memory on several machines"),
        }[self.state]

    def to_json(self) -> dict[str, object]:
        return {"state": self.state, "attributes": self.attributes,
                "configured": self.configured, "runnable": self.runnable, "message": self.line}


def driver_state(repo_root: Path, prefix: str) -> DriverState:
    """The driver's state in the clone at ``repo_root`` (two git calls)."""
    attributes = check_attr(repo_root, "merge", prefix + PROBE) == DRIVER
    command = config_get(repo_root, f"merge.{DRIVER}.driver")
    return DriverState(attributes, command is not None,
                       command is not None and _runnable(command))


def _runnable(command: str) -> bool:
    """Whether the command's program exists and, when it names gitmem's folder
    (``PYTHONPATH=``), gitmem is still there."""
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    paths = [w.removeprefix("PYTHONPATH=") for w in words if w.startswith("PYTHONPATH=")]
    program = next((w for w in words if "=" not in w), "")
    if any(not (Path(p) / "gitmem" / "merge" / "driver.py").is_file() for p in paths):
        return False
    if "/" not in program:
        import shutil

        return bool(program) and shutil.which(program) is not None
    return Path(program).exists()
