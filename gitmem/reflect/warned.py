"""Warnings about a file's content said once, not on every cron run (issue 18): a malformed
opinion section, evidence held back because of it, an entity page with unbalanced markers.

``.memory/reflect-warned.json`` keeps a digest of each such warning together with the text it
is about (the opinion's section, the page). A later run says it again only when that text has
changed since (a person edited it, and it is still wrong) or the warning is a new one (another
entry held back). ``gitmem status`` lists the file's parse warnings whenever it is asked; a dry
run always says everything.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from gitmem.domain import Warn

NAME = "reflect-warned.json"
ONCE = frozenset({"opinion-malformed", "opinion-confidence", "reflect-skipped",
                  "reflect-markers"})
KEEP = 2000  # digests remembered (the oldest go first)


def _digest(w: Warn, context: str) -> str:
    raw = "\x1f".join((w.path, w.code, w.message, context))
    return hashlib.sha256(raw.encode("utf-8", "surrogateescape")).hexdigest()[:24]


def _load(path: Path) -> list[str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return []  # unreadable: warn again rather than never
    return [str(d) for d in data] if isinstance(data, list) else []


def new_only(memory_dir: Path, warnings: Sequence[Warn],
             contexts: Mapping[Warn, str]) -> list[Warn]:
    """The warnings to say: every one not in ``ONCE``, and those of ``ONCE`` not said before
    about the same text (remembered from now on)."""
    path = memory_dir / NAME
    said = _load(path)
    known, before = set(said), len(said)
    out: list[Warn] = []
    for w in warnings:
        if w.code not in ONCE:
            out.append(w)
            continue
        digest = _digest(w, contexts.get(w, ""))
        if digest not in known:
            known.add(digest)
            said.append(digest)
            out.append(w)
    if len(said) > before:
        tmp = path.with_name(f".{NAME}.{os.getpid()}")
        try:
            tmp.write_text(json.dumps(said[-KEEP:]), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass  # not remembered: said again next time, which is the safe side
        finally:
            tmp.unlink(missing_ok=True)
    return out
