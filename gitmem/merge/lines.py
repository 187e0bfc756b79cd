"""The line-wise three-way merge of notes (the package docstring says what it keeps).

Each side is compared with the ancestor after their common first and last lines are set aside:
what is left is, for a side that only appended (the daily note's case), one insertion, found
without ``difflib``, which is imported only when a side changed lines in the middle.
"""

from __future__ import annotations

MARKER = 7
Hunk = tuple[int, int, tuple[str, ...]]  # ancestor lines [lo, hi) replaced by these lines
Tagged = tuple[Hunk, int]  # a hunk and its side (0 ours, 1 theirs)


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def is_heading(line: str) -> bool:
    """An ATX heading line ('#' to '######', then white space)."""
    hashes = len(line) - len(line.lstrip("#"))
    return 1 <= hashes <= 6 and line[hashes:hashes + 1].isspace()


def hunks(o: list[str], x: list[str]) -> list[Hunk]:
    """Where ``x`` differs from ``o``, in order."""
    start, end_o, end_x = 0, len(o), len(x)
    while start < end_o and start < end_x and o[start] == x[start]:
        start += 1
    while end_o > start and end_x > start and o[end_o - 1] == x[end_x - 1]:
        end_o, end_x = end_o - 1, end_x - 1
    if start in (end_o, end_x):  # one insertion or one removal (or nothing)
        return [] if start == end_o == end_x else [(start, end_o, tuple(x[start:end_x]))]
    from difflib import SequenceMatcher

    ops = SequenceMatcher(None, o[start:end_o], x[start:end_x], autojunk=False).get_opcodes()
    return [(start + i1, start + i2, tuple(x[start + j1:start + j2]))
            for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def _overlaps(h: Hunk, lo: int, hi: int) -> bool:
    if h[0] == h[1] == lo == hi:
        return True  # both inserted at one place
    if h[0] == h[1]:
        return lo < h[0] < hi
    if lo == hi:
        return h[0] < lo < h[1]
    return h[0] < hi and lo < h[1]


def merge_lines(o_text: str, a_text: str, b_text: str) -> tuple[str, int]:
    """A line-wise three-way merge (see the package docstring); (text, conflicting regions)."""
    newline = all(t.endswith("\n") or not t for t in (a_text, b_text))
    o, a, b = (_lines(t if t.endswith("\n") or not t else t + "\n")
               for t in (o_text, a_text, b_text))
    tagged = sorted([(h, 0) for h in hunks(o, a)] + [(h, 1) for h in hunks(o, b)],
                    key=lambda t: (t[0][0], t[0][1]))
    out: list[str] = []
    at, conflicts, i = 0, 0, 0
    while i < len(tagged):
        group = [tagged[i]]
        lo, hi = tagged[i][0][0], tagged[i][0][1]
        i += 1
        while i < len(tagged) and _overlaps(tagged[i][0], lo, hi):
            group.append(tagged[i])
            lo, hi = min(lo, tagged[i][0][0]), max(hi, tagged[i][0][1])
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


def _side(o: list[str], group: list[Tagged], side: int, lo: int, hi: int) -> list[str]:
    """What ``side`` made of o[lo:hi]."""
    out: list[str] = []
    at = lo
    for (h_lo, h_hi, lines), s in group:
        if s == side:
            out.extend(o[at:h_lo])
            out.extend(lines)
            at = h_hi
    out.extend(o[at:hi])
    return out


def _resolve(o: list[str], group: list[Tagged], lo: int, hi: int) -> list[str] | None:
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
        if is_heading(ln):
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
