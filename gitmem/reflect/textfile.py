"""A text file as lines that keep their own line endings, so that reflect can change a few lines
and write every other byte back as it was: a byte-order mark, CRLF or lone CR endings, a missing
final newline, bytes that are not UTF-8 (carried through as surrogate escapes)."""

from __future__ import annotations

import re
from dataclasses import dataclass

_EOL = re.compile(r"\r\n|\r|\n")
_BOM = "\ufeff"


@dataclass(frozen=True)
class TextFile:
    bom: str
    lines: tuple[str, ...]  # without endings; numbered as the parser numbers them
    endings: tuple[str, ...]  # each line's own ending ('' for a last line without one)

    @property
    def newline(self) -> str:
        """The ending new lines get: CRLF when the file mostly uses it, else LF."""
        crlf = sum(e == "\r\n" for e in self.endings)
        return "\r\n" if crlf and crlf >= sum(e == "\n" for e in self.endings) else "\n"

    def encode(self) -> bytes:
        text = self.bom + "".join(a + b for a, b in zip(self.lines, self.endings, strict=True))
        return text.encode("utf-8", "surrogateescape")


def split_text(data: bytes) -> TextFile:
    text = data.decode("utf-8", "surrogateescape")
    bom = _BOM if text.startswith(_BOM) else ""
    text = text[len(bom):]
    lines: list[str] = []
    endings: list[str] = []
    pos = 0
    for m in _EOL.finditer(text):
        lines.append(text[pos:m.start()])
        endings.append(m.group())
        pos = m.end()
    if pos < len(text):
        lines.append(text[pos:])
        endings.append("")
    return TextFile(bom, tuple(lines), tuple(endings))


class Editor:
    """Line edits against the original numbering, applied all at once: replace a line's text
    (its ending is kept), drop lines, insert new lines after a line (-1: at the top), append at
    the end. New lines get the file's usual ending."""

    def __init__(self, original: TextFile) -> None:
        self.original = original
        self.replaced: dict[int, str] = {}
        self.dropped: set[int] = set()
        self.inserted: dict[int, list[str]] = {}
        self.appended: list[str] = []

    def replace(self, index: int, text: str) -> None:
        if self.original.lines[index] != text:
            self.replaced[index] = text

    def insert_after(self, index: int, lines: list[str]) -> None:
        self.inserted.setdefault(index, []).extend(lines)

    def replace_range(self, first: int, stop: int, lines: list[str]) -> None:
        """Lines ``first .. stop-1`` become ``lines``."""
        self.dropped.update(range(first, stop))
        self.insert_after(first - 1, lines)

    def append(self, lines: list[str]) -> None:
        self.appended.extend(lines)

    def result(self) -> TextFile:
        src, nl = self.original, self.original.newline
        lines: list[str] = []
        endings: list[str] = []

        def add(text: str, ending: str) -> None:
            if endings and not endings[-1]:
                endings[-1] = nl  # the old last line had no newline; a new line follows it
            lines.append(text)
            endings.append(ending)

        for text in self.inserted.get(-1, []):
            add(text, nl)
        for i, text in enumerate(src.lines):
            if i not in self.dropped:
                add(self.replaced.get(i, text), src.endings[i])
            for new in self.inserted.get(i, []):
                add(new, nl)
        for new in self.appended:
            add(new, nl)
        return TextFile(src.bom, tuple(lines), tuple(endings))
