"""Entity pages: the generated block is derived, so it is settled before the text merges.

Only one side regenerated it: that side's. Both did: the one whose text sorts last (either order
of merge gives the same bytes), its begin marker ``STALE_BEGIN``; the next ``gitmem reflect``
writes the block again. Either way both sides then hold the same block, and only the human
text around it is left for the line merge.
"""

from __future__ import annotations

from gitmem.parse.pages import BEGIN, END
from gitmem.parse.stale import STALE_BEGIN


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _block(text: str) -> tuple[int, int] | None:
    lines = _lines(text)
    begins = [i for i, ln in enumerate(lines) if BEGIN.match(ln)]
    ends = [i for i, ln in enumerate(lines) if END.match(ln)]
    if len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0]:
        return begins[0], ends[0] + 1
    return None


def settle_blocks(o: str, a: str, b: str) -> tuple[str, str, int]:
    """(ours, theirs) with the same generated block, and 1 when it was flagged stale."""
    spans = [_block(t) for t in (o, a, b)]
    if spans[1] is None or spans[2] is None:
        return a, b, 0
    old = "" if spans[0] is None else "".join(_lines(o)[spans[0][0]:spans[0][1]])
    ours = "".join(_lines(a)[spans[1][0]:spans[1][1]])
    theirs = "".join(_lines(b)[spans[2][0]:spans[2][1]])
    if ours == theirs:
        return a, b, 0
    if old in (ours, theirs):
        chosen, stale = (theirs if ours == old else ours), 0
    else:
        chosen, stale = max(ours, theirs), 1
        rest = _lines(chosen)
        chosen = STALE_BEGIN + "\n" + "".join(rest[1:])
    return _put_block(a, spans[1], chosen), _put_block(b, spans[2], chosen), stale


def _put_block(text: str, span: tuple[int, int], block: str) -> str:
    lines = _lines(text)
    return "".join([*lines[:span[0]], block, *lines[span[1]:]])
