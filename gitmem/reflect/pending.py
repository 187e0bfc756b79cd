"""What a ``reflect --commit`` run wrote and could not commit (a hook refused it, another commit
landed first): kept in ``.memory/reflect-pending.json`` so that the next ``--commit`` run starts
from it and commits it, whatever that run's window (reflect commits only what it wrote).

Each file is kept with the blob HEAD held for it when the commit failed. Once HEAD holds
another version of it (a person committed the file, reflect's output or their edit of it), the
kept copy is stale and dropped: it would undo what was committed since.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from gitmem.errors import GitmemError
from gitmem.git import blob_id

NAME = "reflect-pending.json"
Committed = Callable[[Sequence[str]], Mapping[str, "bytes | None"]]  # rel paths -> HEAD's bytes


@dataclass(frozen=True)
class Pending:
    files: dict[str, bytes | None]  # workspace-relative path -> what reflect wrote (None: removed)
    message: str  # the commit message of the run that wrote them


def _blob(data: bytes | None) -> str | None:
    return None if data is None else blob_id(data)


def save(memory_dir: Path, files: Mapping[str, bytes | None],
         at_head: Mapping[str, bytes | None], message: str) -> None:
    record = {
        "message": message,
        "files": {rel: {"data": None if data is None else base64.b64encode(data).decode(),
                        "head": _blob(at_head.get(rel))}
                  for rel, data in sorted(files.items())},
    }
    path = memory_dir / NAME
    tmp = path.with_name(f".{NAME}.{os.getpid()}")
    try:
        tmp.write_text(json.dumps(record, indent=1), encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise GitmemError(f"cannot write {path}: {exc.strerror or exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def load(memory_dir: Path, committed: Committed) -> Pending | None:
    """The kept files HEAD still holds as it did when their commit failed (None: nothing kept,
    or nothing of it still applies). An unreadable record is dropped: the files it named are
    still in the work tree, where ``git status`` shows them."""
    path = memory_dir / NAME
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        kept = {str(rel): (None if v["data"] is None else base64.b64decode(v["data"]), v["head"])
                for rel, v in record["files"].items()}
        message = str(record["message"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        clear(memory_dir)
        return None
    now = committed(sorted(kept))
    files = {rel: data for rel, (data, head) in kept.items() if _blob(now.get(rel)) == head}
    if not files:
        clear(memory_dir)
        return None
    return Pending(files, message)


def clear(memory_dir: Path) -> None:
    (memory_dir / NAME).unlink(missing_ok=True)
