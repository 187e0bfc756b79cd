"""Entity pages (SPEC §4): the text people wrote, apart from what gitmem generated.

Generated text lives only between ``<!-- gitmem:begin ... -->`` and ``<!-- gitmem:end -->``
lines; everything outside them (front matter aside) belongs to people.
"""

from __future__ import annotations

import re

BEGIN = re.compile(r"^\s*<!--\s*gitmem:begin\b.*-->\s*$")
END = re.compile(r"^\s*<!--\s*gitmem:end\s*-->\s*$")


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
    block runs to the end). Generated text is not a source (SPEC §8): it summarises facts that
    are indexed where they were written, so it is not indexed as text of its own."""
    rows: set[int] = set()
    generated = False
    for n, line in enumerate(lines):
        if generated:
            rows.add(n)
            generated = not END.match(line)
        elif BEGIN.match(line):
            rows.add(n)
            generated = True
    return rows


def human_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line number, line) of the human part of a page: front matter and generated
    blocks left out. An unterminated generated block runs to the end of the page."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    generated = False
    for n, line in enumerate(lines[_body_start(lines):], start=_body_start(lines) + 1):
        if generated:
            generated = not END.match(line)
        elif BEGIN.match(line):
            generated = True
        else:
            out.append((n, line))
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
