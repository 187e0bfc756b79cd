"""``gitmem merge-file``: git's merge driver for memory files (issue 20, docs/sync.md).

git calls ``gitmem merge-file %O %A %B %P`` (``merge.gitmem.driver``) with the common ancestor,
ours and theirs; the result goes to %A, exit 0 when clean, 1 with conflict markers left.

- Notes (daily notes, MEMORY.md, other append-mostly files): a line-wise three-way merge. Lines
  only one side changed are taken; lines both sides *added* at the same place are all kept, each
  once, in an order that does not depend on which side is ours (the two blocks sorted by their
  text), and a heading both sides added (``## Retain``) stays one section. Both sides changing
  the same existing lines differently is a real conflict, left as one.
- Entity pages: a generated block (``<!-- gitmem:begin … -->`` … ``<!-- gitmem:end -->``) both
  sides regenerated is taken from one side (the greater text, so either order of merge gives the
  same bytes) and its begin marker says ``stale``: the next ``gitmem reflect`` that touches the
  entity writes the block again. Human text around it merges as a note.
- ``bank/opinions.md``: merged per opinion section by id. A section only one side changed is that
  side's; a section both changed keeps the greater side's text, gains the other side's evidence
  lines it lacks, and a ``<!-- gitmem:stale … -->`` line after its id: the next reflect recomputes
  it (nothing is recomputed here; the confidence shown is one side's until then).
- Anything else (not UTF-8, a NUL byte, over ``MAX_BYTES``): git's own ``git merge-file``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from pathlib import Path

from gitmem.parse.opinions import opinion_id_for

MAX_BYTES = 8 * 1024 * 1024
MARKER = 7
STALE_BEGIN = ("<!-- gitmem:begin reflect (stale: merged from two machines; the next "
               "'gitmem reflect' of this entity writes it again) -->")
STALE_OPINION = ("<!-- gitmem:stale both machines changed this opinion; the next "
                 "'gitmem reflect' recomputes it -->")
_BEGIN = re.compile(r"^\s*<!--\s*gitmem:begin\b.*-->\s*$")
_END = re.compile(r"^\s*<!--\s*gitmem:end\s*-->\s*$")
_HEADING = re.compile(r"^#{1,6}\s")
_SECTION = re.compile(r"^##\s+(?P<statement>.+?)\s*#*\s*$")
_ID = re.compile(r"<!--\s*opinion:\s*(?P<id>o-[0-9a-f]{4,})\s*-->")
_EVIDENCE = re.compile(r"^\s+[-*+]\s*(?:for|against)\b", re.I)


@dataclass(frozen=True)
class MergeOutcome:
    """What the driver did to one file."""

    path: str
    conflicts: int  # conflicting regions left with markers
    stale: int = 0  # generated blocks or opinions flagged for the next reflect
    fallback: bool = False  # git's merge-file did it (a file gitmem does not read)

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "conflicts": self.conflicts, "stale": self.stale,
                "fallback": self.fallback}


def merge_file(base: Path, ours: Path, theirs: Path, path: str) -> MergeOutcome:
    """Merge ``theirs`` into ``ours`` (written in place) from their ancestor ``base``."""
    texts = [_text(p.read_bytes()) for p in (base, ours, theirs)]
    if any(t is None for t in texts):
        from gitmem.git import merge_file_fallback  # (git's module costs the driver's start-up)

        return MergeOutcome(path, merge_file_fallback(base, ours, theirs, path), fallback=True)
    o, a, b = (t for t in texts if t is not None)
    merged, conflicts, stale = merge_text(o, a, b, path)
    ours.write_bytes(merged.encode("utf-8"))
    return MergeOutcome(path, conflicts, stale)


def run_driver(base: str, ours: str, theirs: str, path: str = "") -> int:
    """``gitmem merge-file``'s exit status: 0 clean, 1 with conflict markers left in ``ours``."""
    outcome = merge_file(Path(base), Path(ours), Path(theirs), path or Path(ours).name)
    return 1 if outcome.conflicts else 0


def _text(data: bytes) -> str | None:
    if len(data) > MAX_BYTES or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def merge_text(o: str, a: str, b: str, path: str) -> tuple[str, int, int]:
    """(merged text, conflicts, stale flags) for the file at ``path``."""
    if a == b or o == b:
        return a, 0, 0
    if o == a:
        return b, 0, 0
    if path.endswith("bank/opinions.md"):
        return _merge_opinions(o, a, b)
    stale = 0
    if "bank/entities/" in path:
        a, b, stale = _settle_blocks(o, a, b)
    text, conflicts = merge_lines(o, a, b)
    return text, conflicts, stale


# --- lines -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Hunk:
    lo: int
    hi: int
    lines: tuple[str, ...]


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def _hunks(o: list[str], x: list[str]) -> list[_Hunk]:
    ops = SequenceMatcher(None, o, x, autojunk=False).get_opcodes()
    return [_Hunk(i1, i2, tuple(x[j1:j2])) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def _overlaps(h: _Hunk, lo: int, hi: int) -> bool:
    if h.lo == h.hi == lo == hi:
        return True  # both inserted at one place
    if h.lo == h.hi:
        return lo < h.lo < hi
    if lo == hi:
        return h.lo < lo < h.hi
    return h.lo < hi and lo < h.hi


def merge_lines(o_text: str, a_text: str, b_text: str) -> tuple[str, int]:
    """A line-wise three-way merge (see the module docstring); (text, conflicting regions)."""
    newline = all(t.endswith("\n") or not t for t in (a_text, b_text))
    o, a, b = (_lines(t if t.endswith("\n") or not t else t + "\n")
               for t in (o_text, a_text, b_text))
    tagged = sorted([(h, 0) for h in _hunks(o, a)] + [(h, 1) for h in _hunks(o, b)],
                    key=lambda t: (t[0].lo, t[0].hi))
    out: list[str] = []
    at, conflicts, i = 0, 0, 0
    while i < len(tagged):
        group = [tagged[i]]
        lo, hi = tagged[i][0].lo, tagged[i][0].hi
        i += 1
        while i < len(tagged) and _overlaps(tagged[i][0], lo, hi):
            group.append(tagged[i])
            lo, hi = min(lo, tagged[i][0].lo), max(hi, tagged[i][0].hi)
            i += 1
        out.extend(o[at:lo])
        at = hi
        merged = _resolve(o, group, lo, hi)
        if merged is None:
            conflicts += 1
            merged = _conflict(o[lo:hi], _side(o, group, 0, lo, hi), _side(o, group, 1, lo, hi))
        out.extend(merged)
    out.extend(o[at:])
    text = "".join(out)
    if not newline and text.endswith("\n"):
        text = text[:-1]
    return text, conflicts


def _side(o: list[str], group: list[tuple[_Hunk, int]], side: int, lo: int, hi: int
          ) -> list[str]:
    """What ``side`` made of o[lo:hi]."""
    out: list[str] = []
    at = lo
    for h, s in group:
        if s == side:
            out.extend(o[at:h.lo])
            out.extend(h.lines)
            at = h.hi
    out.extend(o[at:hi])
    return out


def _resolve(o: list[str], group: list[tuple[_Hunk, int]], lo: int, hi: int
             ) -> list[str] | None:
    sides = {s for _, s in group}
    if len(sides) == 1:
        return _side(o, group, group[0][1], lo, hi)
    a, b = _side(o, group, 0, lo, hi), _side(o, group, 1, lo, hi)
    if a == b:
        return a
    if lo == hi:  # both added lines at one place: keep them all
        return union_blocks(a, b)
    return None


def _conflict(base: list[str], a: list[str], b: list[str]) -> list[str]:
    bar = "".join
    end = [] if not a or a[-1].endswith("\n") else ["\n"]
    return [f"{'<' * MARKER} ours\n", bar(a), *end, f"{'|' * MARKER} base\n", bar(base),
            f"{'=' * MARKER}\n", bar(b), *(["\n"] if b and not b[-1].endswith("\n") else []),
            f"{'>' * MARKER} theirs\n"]


def union_blocks(a: list[str], b: list[str]) -> list[str]:
    """Two blocks of added lines as one: the block whose text sorts first goes first; a line of
    the second already in the first is dropped; what the second adds under a heading the first
    has goes at the end of that heading's section (one ``## Retain``, not two)."""
    first, second = sorted((a, b), key="".join)
    sections = _sections(first)
    seen = {ln.strip() for ln in first if ln.strip()}
    for heading, body in _sections(second):
        body = [ln for ln in body if not ln.strip() or ln.strip() not in seen]
        target = next((s for s in sections if s[0] is not None and heading is not None
                       and s[0].strip() == heading.strip()), None)
        if target is None and heading is None:
            target = sections[0] if sections and sections[0][0] is None else None
        if target is None:
            sections.append((heading, body))
        elif any(ln.strip() for ln in body):
            _append_body(target[1], body)
        seen.update(ln.strip() for ln in body if ln.strip())
    return [ln for heading, body in sections for ln in ([heading] if heading else []) + body]


def _sections(lines: list[str]) -> list[tuple[str | None, list[str]]]:
    out: list[tuple[str | None, list[str]]] = [(None, [])]
    for ln in lines:
        if _HEADING.match(ln):
            out.append((ln, []))
        else:
            out[-1][1].append(ln)
    return out if out[0][1] else out[1:]


def _append_body(body: list[str], extra: list[str]) -> None:
    """``extra`` after the last non-blank line of ``body`` (its trailing blank lines stay last)."""
    end = len(body)
    while end and not body[end - 1].strip():
        end -= 1
    while extra and not extra[0].strip():
        extra = extra[1:]
    tail = body[end:]
    content = list(extra)
    while content and not content[-1].strip():
        content.pop()
    body[end:] = [*content, *tail]


# --- generated blocks ------------------------------------------------------------------------

def _block(text: str) -> tuple[int, int] | None:
    lines = _lines(text)
    begins = [i for i, ln in enumerate(lines) if _BEGIN.match(ln)]
    ends = [i for i, ln in enumerate(lines) if _END.match(ln)]
    if len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0]:
        return begins[0], ends[0] + 1
    return None


def _settle_blocks(o: str, a: str, b: str) -> tuple[str, str, int]:
    """Both sides with the same generated block, so only the human text is left to merge."""
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


# --- bank/opinions.md ------------------------------------------------------------------------

def _opinion_sections(text: str) -> tuple[list[str], dict[str, list[str]]]:
    """(the lines before the first section, {opinion id: its lines}) in file order."""
    lines = _lines(text if text.endswith("\n") or not text else text + "\n")
    preamble: list[str] = []
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for ln in lines:
        heading = _SECTION.match(ln)
        if heading:
            current = [ln]
            sections[f"?{len(sections)}"] = current
        elif current is None:
            preamble.append(ln)
        else:
            current.append(ln)
    named: dict[str, list[str]] = {}
    for section in sections.values():
        found = next((m.group("id") for ln in section if (m := _ID.search(ln))), None)
        key = found or opinion_id_for(_SECTION.match(section[0]).group("statement"))  # type: ignore[union-attr]
        while key in named:
            key += "+"
        named[key] = section
    return preamble, named


def _merge_opinions(o: str, a: str, b: str) -> tuple[str, int, int]:
    (po, so), (pa, sa), (pb, sb) = (_opinion_sections(t) for t in (o, a, b))
    preamble, conflicts = merge_lines("".join(po), "".join(pa), "".join(pb))
    out, stale = [preamble], 0
    order = [k for k in so if k in sa or k in sb]
    order += sorted(k for k in {**sa, **sb} if k not in so)
    for key in order:
        base, ours, theirs = so.get(key), sa.get(key), sb.get(key)
        if ours == theirs or theirs == base:
            chosen = ours
        elif ours == base:
            chosen = theirs
        elif ours is None or theirs is None:  # one side removed it, the other changed it
            chosen = ours or theirs
        else:
            chosen, stale = _stale_opinion(ours, theirs), stale + 1
        if chosen is not None:
            out.append(_spaced("".join(chosen)))
    return "".join(out), conflicts, stale


def _spaced(section: str) -> str:
    """A section ends with one blank line, wherever it now sits."""
    return section.rstrip("\n") + "\n\n"


def _stale_opinion(ours: list[str], theirs: list[str]) -> list[str]:
    keep, other = sorted((ours, theirs), key="".join, reverse=True)
    have = {ln.strip() for ln in keep}
    extra = [ln for ln in other if _EVIDENCE.match(ln) and ln.strip() not in have]
    out = [ln for ln in keep if ln.strip() != STALE_OPINION]
    last = max((i for i, ln in enumerate(out) if _EVIDENCE.match(ln)), default=None)
    if last is None:
        last = next((i for i, ln in enumerate(out)
                     if ln.lstrip("- ").lower().startswith("evidence")), len(out) - 1)
    out[last + 1:last + 1] = extra
    id_at = next((i for i, ln in enumerate(out) if _ID.search(ln)), 0)
    out.insert(id_at + 1, STALE_OPINION + "\n")
    return out
