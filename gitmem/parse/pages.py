"""Entity pages (docs/memory-format.md): the text people wrote, apart from what gitmem generated.

Generated text lives only between ``<!-- gitmem:begin ... -->`` and ``<!-- gitmem:end -->``
lines; everything outside them (front matter aside) belongs to people.
"""

from __future__ import annotations

import re

BEGIN = re.compile(r"^\s*<!--\s*gitmem:begin\b.*-->\s*$")
END = re.compile(r"^\s*<!--\s*gitmem:end\s*-->\s*$")
# reflect's own one-line comments outside the blocks (a new page's hint to its reader); the
# second form is the hint pages written before it said "gitmem:"
OWN_COMMENT = re.compile(r"^\s*<!--\s*(?:gitmem:(?!begin\b|end\b)|Notes about .*: write "
                       r"anything outside the gitmem markers; reflect keeps it\.).*-->\s*$")


def page_aliases(front_matter: object) -> list[str]:
    """The aliases an entity page's front matter (parsed YAML) gives: ``aliases: [Pete]`` or
    ``aliases: Pete``."""
    raw = front_matter.get("aliases") if isinstance(front_matter, dict) else None
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        return [str(a) for a in raw if isinstance(a, (str, int))]
    return []


def _body_start(lines: list[str]) -> int:
    """The first line after YAML front matter (0 when there is none)."""
    if not lines or lines[0].strip() != "---":
        return 0
    for n, line in enumerate(lines[1:], start=1):
        if line.strip() in ("---", "..."):
            return n + 1
    return 0  # unterminated: not front matter


def generated_rows(lines: list[str]) -> set[int]:
    """The 0-based indexes of the lines of generated blocks, markers included (an unterminated
    block runs to the end), and of reflect's own one-line comments (the merge driver's
    ``<!-- gitmem:stale … -->`` lines among them). Generated text is not a source: it
    summarises facts that are indexed where they were written, so it is not indexed as text of
    its own."""
    rows: set[int] = set()
    generated = False
    for n, line in enumerate(lines):
        if generated:
            rows.add(n)
            generated = not END.match(line)
        elif BEGIN.match(line):
            rows.add(n)
            generated = True
        elif OWN_COMMENT.match(line):
            rows.add(n)
    return rows


def human_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line number, line) of the human part of a page: front matter, generated
    blocks and reflect's own comments left out. An unterminated generated block runs to the
    end of the page."""
    lines = text.splitlines()
    start = _body_start(lines)
    hidden = generated_rows(lines[start:])
    out = [(n, line) for n, line in enumerate(lines[start:], start=start + 1)
           if n - start - 1 not in hidden]
    while out and not out[0][1].strip():
        out.pop(0)
    while out and not out[-1][1].strip():
        out.pop()
    return out


def human_text(data: bytes) -> tuple[str, int, int]:
    """The human text of a page (blank runs left by removed blocks squeezed to one blank
    line), with its first and last line numbers (0, 0 when there is none)."""
    text = data.decode("utf-8-sig", "replace")
    kept = human_lines(text)
    if not kept:
        return "", 0, 0
    squeezed: list[str] = []
    for _, line in kept:
        if line.strip() or (squeezed and squeezed[-1].strip()):
            squeezed.append(line.rstrip())
    return "\n".join(squeezed), kept[0][0], kept[-1][0]
