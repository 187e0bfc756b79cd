"""``gitmem init``: the memory layout in a new or existing repository."""

from __future__ import annotations

from pathlib import Path

from gitmem.config import REPO_CONFIG
from gitmem.git import init_or_open
from gitmem.parse.opinions import OPINIONS_TEMPLATE
from gitmem.workspace import Workspace, ensure_memory_dir

MEMORY_TEMPLATE = """# Memory

Curated, durable facts and decisions. Daily logs live in memory/YYYY-MM-DD.md.

## Retain
"""

DAILY_HINT = """# Daily notes

One file per day: memory/YYYY-MM-DD.md. Facts go in a '## Retain' section:

    ## Retain
    - W @Entity: an objective fact about the world.
    - B @Entity: something I did.
    - O(c=0.8) @Entity: an opinion, with confidence.
    - S @Entity: an observation or summary.
"""


def _workspace_prefix(root: Path, target: Path, done: list[str]) -> str:
    """A target folder below the repository root becomes the workspace (workspace.root)."""
    if target == root:
        return ""
    rel = target.relative_to(root).as_posix()
    config = root / REPO_CONFIG
    if not config.exists():
        config.write_text(f'[workspace]\nroot = "{rel}"\n', encoding="utf-8")
        done.append(f"created {REPO_CONFIG}: the memory lives in {rel}/")
    elif f'root = "{rel}"' not in config.read_text(encoding="utf-8"):
        done.append(f"note: set [workspace] root = \"{rel}\" in {config} so gitmem finds it")
    return rel + "/"


def init_workspace(target: Path) -> list[str]:
    """Create what is missing; never overwrite. Returns lines describing what was done."""
    done: list[str] = []
    target.mkdir(parents=True, exist_ok=True)
    root, git_dir, created = init_or_open(target)
    if created:
        done.append(f"created git repository in {target}")
    prefix = _workspace_prefix(root, target.resolve(), done)
    ws = Workspace(repo_root=root, prefix=prefix, git_dir=git_dir)
    files = {
        ws.root / "MEMORY.md": MEMORY_TEMPLATE,
        ws.root / "memory" / "README.md": DAILY_HINT,
        ws.root / "bank" / "opinions.md": OPINIONS_TEMPLATE,
    }
    if (ws.root / "memory.md").exists():
        del files[ws.root / "MEMORY.md"]
    for path, text in files.items():
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        done.append(f"created {path.relative_to(ws.root)}")
    (ws.root / "bank" / "entities").mkdir(parents=True, exist_ok=True)
    ensure_memory_dir(ws)
    done.append("kept .memory/ out of git (.git/info/exclude)")
    done.append("next: commit your memory files, then run 'gitmem index' and 'gitmem recall'")
    return done
