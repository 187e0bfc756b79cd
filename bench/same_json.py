"""Whether two checkouts answer alike: the JSON of recall, entity, opinions, status, index and
review from each, on one workspace, compared with timing fields left out.

    python bench/same_json.py --before /tmp/before --after . --workspace WS [--entity Peter]

For a refactor that must not change behaviour (issue 40: "byte-identical before and after"). Both
checkouts must read the same index (same schema and rule version): each command runs in a
process of its own with that checkout on ``PYTHONPATH``, ``GITMEM_WARM=0`` and no embedding
provider. Prints one line per command and exits 1 when any differs.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

TIMING = re.compile(r"seconds|_at$|elapsed|duration|took|_ms$")


def commands(entity: str) -> dict[str, list[str]]:
    return {
        "recall": ["recall", "gateway host", "--json"],
        "recall k=20": ["recall", f"where does {entity} live", "--json", "--k", "20"],
        "recall as-of": ["recall", "backup disk", "--json", "--as-of", "2030-01-01"],
        "recall window": ["recall", "what happened", "--json", "--since", "2035-12-01",
                          "--until", "2035-12-03"],
        "entity": ["entity", entity, "--json"],
        "opinions": ["opinions", "--json"],
        "status": ["status", "--json"],
        "index": ["index", "--json"],
        "review": ["review", "HEAD~30..HEAD", "--format", "json"],
    }


def scrub(value: Any) -> Any:
    """``value`` without the fields that say when or how long."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if not TIMING.search(k)}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def answer(code: Path, workspace: Path, args: list[str]) -> Any:
    env = {**os.environ, "PYTHONPATH": str(code), "GITMEM_WARM": "0",
           "GITMEM_EMBED_PROVIDER": "none"}
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(workspace), *args],
                          capture_output=True, text=True, env=env, check=False)
    try:
        return proc.returncode, scrub(json.loads(proc.stdout))
    except json.JSONDecodeError:
        return proc.returncode, proc.stdout + proc.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the old code")
    parser.add_argument("--after", type=Path, required=True, help="a checkout of the new code")
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--entity", default="Peter")
    args = parser.parse_args(argv)
    differ = 0
    for name, cmd in commands(args.entity).items():
        old = answer(args.before.resolve(), args.workspace, cmd)
        new = answer(args.after.resolve(), args.workspace, cmd)
        same = old == new
        differ += not same
        print(f"{name:14} {'identical' if same else 'DIFFERENT'} (exit {old[0]} / {new[0]})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
