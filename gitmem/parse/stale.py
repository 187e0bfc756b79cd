"""The markers gitmem's merge driver leaves for the next ``gitmem reflect`` (docs/sync.md).

- An entity page's generated block that both machines regenerated is kept from one side with
  the begin marker ``STALE_BEGIN``; reflect writes the block again.
- An opinion section of ``bank/opinions.md`` that both machines changed gets a line after its
  id::

      <!-- gitmem:stale from 0.70 new f-cccccccccccc f-dddddddddddd: both machines ... -->

  ``from``: the confidence at the two sides' common ancestor (``none``: neither had the opinion
  there); ``new``: the evidence either side added since. Reflect recomputes the confidence from
  ``from`` with that evidence by docs/opinions-file.md's rule, as one machine holding all of it
  would have, and removes the line. A line without ``from`` (written by an earlier gitmem) is
  recomputed from the opinion's first evidence.

They are comments reflect wrote: not memory text (never chunked, never shown as a snippet).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

STALE_BEGIN = ("<!-- gitmem:begin reflect (stale: merged from two machines; the next "
               "'gitmem reflect' of this entity writes it again) -->")
OPINION_NOTE = "both machines changed this opinion; the next 'gitmem reflect' recomputes it"
_LINE = re.compile(r"^\s*<!--\s*gitmem:stale\b(?P<body>.*?)-->\s*$")
_FROM = re.compile(r"^\s*from\s+(?P<base>none|\d+(?:\.\d+)?)\s+new\b(?P<ids>(?:\s+f-[0-9a-f]+)*)"
                 r"\s*:")
_STALE_BEGIN = re.compile(r"^\s*<!--\s*gitmem:begin\b[^>]*\(stale\b")


@dataclass(frozen=True)
class StaleMark:
    """An opinion section the driver flagged: recompute from ``base`` with ``new``."""

    line: int  # 0-based, in the file
    base: float | None  # the common ancestor's confidence (None: it had no such opinion)
    new: tuple[str, ...] | None  # evidence fact ids added since (None: an old marker, all)

    @property
    def from_history(self) -> bool:
        """Whether the confidence is recomputed from the opinion's first evidence on."""
        return self.base is None


def stale_opinion_line(base: float | None, new: Sequence[str]) -> str:
    start = "none" if base is None else f"{base:.2f}"
    ids = "".join(f" {i}" for i in new)
    return f"<!-- gitmem:stale from {start} new{ids}: {OPINION_NOTE} -->"


def is_stale_line(line: str) -> bool:
    """A ``<!-- gitmem:stale … -->`` line (of any version)."""
    return _LINE.match(line) is not None


def read_stale(line: str, n: int) -> StaleMark | None:
    """The marker on line ``n`` (0-based), or None when the line is not one."""
    m = _LINE.match(line)
    if m is None:
        return None
    found = _FROM.match(m.group("body"))
    if found is None:
        return StaleMark(n, None, None)
    base = None if found.group("base") == "none" else float(found.group("base"))
    return StaleMark(n, base, tuple(found.group("ids").split()))


def is_stale_begin(line: str) -> bool:
    """A generated block's begin marker saying the block was merged, not generated."""
    return _STALE_BEGIN.match(line) is not None
