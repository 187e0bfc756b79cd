"""``gitmem init``: the memory layout in a new or existing repository."""

from __future__ import annotations

from pathlib import Path

from gitmem.config import REPO_CONFIG
from gitmem.git import init_or_open
from gitmem.parse.opinions import OPINIONS_TEMPLATE
from gitmem.workspace import Workspace, ensure_memory_dir

# Scaffolding holds headings only: every line of a memory file is indexed, and explanations
# or placeholder entries ("@Entity") would come back as results. The how-to is printed instead.
MEMORY_TEMPLATE = "# Memory\n\n## Retain\n"

HOW_TO = """how to write memory:
  MEMORY.md             curated, durable facts and decisions
  memory/YYYY-MM-DD.md  one log per day; facts go in a '## Retain' section, one per line:
      ## Retain
      - W @Peter: an objective fact about the world.
      - B @Peter: something I did.
      - O(c=0.8) @Peter: an opinion, with confidence.
      - S @Peter: an observation or summary.
  bank/entities/<Name>.md  one page per entity ('aliases: [...]' in front matter)"""


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
    (ws.root / "memory").mkdir(parents=True, exist_ok=True)
    (ws.root / "bank" / "entities").mkdir(parents=True, exist_ok=True)
    ensure_memory_dir(ws)
    done.append("kept .memory/ out of git (.git/info/exclude)")
    if any(line.startswith("created") for line in done):  # the first init: say how
        done.append(HOW_TO)
    done.append("next: write memory files; 'gitmem recall' finds them at once (commit them to "
                "keep their history)")
    return done
