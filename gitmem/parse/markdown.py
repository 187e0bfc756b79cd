"""Markdown parsing: bytes of one file version in, a ParsedFile out (docs/memory-format.md).

markdown-it-py gives the block structure with source line maps; only the block stage runs
(inline parsing is not needed and costs most of the time). Nothing in a file is dropped: every
line reaches the chunks, and whatever cannot be understood becomes a located warning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date

from markdown_it import MarkdownIt
from markdown_it.token import Token

from gitmem.domain import Chunk, Fact, MemoryFile, Opinion, ParsedFile, Section, Warn
from gitmem.parse.chunking import ChunkParams, chunk_lines
from gitmem.parse.opinions import OPINIONS_PATH, parse_opinions
from gitmem.parse.pages import generated_rows
from gitmem.parse.retain import EntryLines, find_entities, parse_entry
from gitmem.parse.timeparse import find_event_period
from gitmem.workspace import classify

LARGE_FILE_BYTES = 5 * 1024 * 1024
MAX_LINE_WARNINGS = 20
_ESCAPED = re.compile("[\udc80-\udcff]+")
_MD = MarkdownIt("commonmark")
_MD.core.ruler.disable(["inline", "text_join"])
# Link reference definitions and HTML blocks do not change headings or list items; skipping
# them saves a rule call (and its debug log call) on every line.
_MD.block.ruler.disable(["reference", "html_block"])
_RETAIN_TITLE = re.compile(r"^\s*retain\s*:?\s*$", re.IGNORECASE)


def decode(data: bytes, path: str) -> tuple[str | None, list[Warn]]:
    """Bytes to text. Returns None for a binary file. Warns about bad bytes, NULs and size."""
    warns: list[Warn] = []
    if len(data) > LARGE_FILE_BYTES:
        warns.append(
            Warn(
                path,
                1,
                "large-file",
                f"file is {len(data) / 1048576:.1f} MB; indexed, but it slows indexing",
            )
        )
    wide = _wide_encoding(data)
    if wide is not None:  # UTF-16/32 (Windows editors write it): its NULs are not binary
        warns.append(Warn(path, 1, "encoding", f"file is {wide}; read as such (UTF-8 is "
                          "what git and other tools expect)"))
        data = data.decode(wide, errors="replace").encode("utf-8")
    sample = data[:8192]
    # One byte in ten a NUL is no text in any 8-bit encoding, however short the file (a
    # 16-byte file of NUL and 0xFF bytes is binary); a stray NUL in a note is text (below).
    if sample.count(0) > max(1, len(sample) // 10):
        warns.append(Warn(path, 1, "binary", "file looks binary (many NUL bytes); not indexed"))
        return None, warns
    if _looks_binary(sample):
        warns.append(Warn(path, 1, "binary", "file looks binary (control bytes and invalid "
                          "UTF-8, not text in any encoding); not indexed"))
        return None, warns
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = _decode_legacy(data, path, warns)
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        warns.append(Warn(path, line, "nul-byte", "NUL bytes replaced with U+FFFD"))
        text = text.replace("\x00", "\ufffd")
    return text, warns


_WIDE_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
              (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def _wide_encoding(data: bytes) -> str | None:
    """UTF-16 or UTF-32, when ``data`` starts with its byte order mark."""
    return next((name for bom, name in _WIDE_BOMS if data.startswith(bom)), None)


# Control characters text does not contain (tab, newlines, form feed and escape are text).
_CONTROLS = bytes([*range(0x00, 0x09), *range(0x0E, 0x1B), *range(0x1C, 0x20), 0x7F])


def _looks_binary(sample: bytes) -> bool:
    """Random or compressed bytes: about one byte in nine is a control character, which text
    in an 8-bit encoding almost never holds, and the rest is not UTF-8. Valid UTF-8 is text,
    and so is a legacy-encoded file with a stray control character (a pasted terminal line)."""
    controls = len(sample) - len(sample.translate(None, _CONTROLS))
    if controls <= max(2, len(sample) // 100):
        return False
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(sample) - 3  # not just a character cut at the sample's end
    return False


def _legacy_char(byte: int) -> str:
    try:
        return bytes([byte]).decode("cp1252")
    except UnicodeDecodeError:
        return chr(byte)  # the five bytes cp1252 leaves undefined: Latin-1


def _decode_legacy(data: bytes, path: str, warns: list[Warn]) -> str:
    """UTF-8 with stray legacy bytes: each invalid byte is read as Windows-1252 (Latin-1 for
    the bytes it leaves undefined), so a Latin-1 'Kødboller' stays findable instead of becoming
    U+FFFD. One warning per affected line (up to MAX_LINE_WARNINGS, then a summary)."""
    text = data.decode("utf-8", errors="surrogateescape")
    bad_lines: list[int] = []
    line, pos = 1, 0
    for m in _ESCAPED.finditer(text):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        if not bad_lines or bad_lines[-1] != line:
            bad_lines.append(line)
    for ln in bad_lines[:MAX_LINE_WARNINGS]:
        warns.append(
            Warn(
                path,
                ln,
                "encoding",
                "invalid UTF-8 bytes on this line; read as Windows-1252/Latin-1",
            )
        )
    if len(bad_lines) > MAX_LINE_WARNINGS:
        warns.append(
            Warn(
                path,
                bad_lines[MAX_LINE_WARNINGS],
                "encoding",
                f"{len(bad_lines) - MAX_LINE_WARNINGS} more lines with invalid UTF-8 bytes "
                "from here; read as Windows-1252/Latin-1",
            )
        )
    return _ESCAPED.sub(lambda m: "".join(_legacy_char(ord(c) - 0xDC00) for c in m[0]), text)


def split_lines(text: str) -> list[str]:
    """Lines without terminators; LF, CRLF and lone CR all end a line."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def front_matter(lines: list[str], path: str) -> tuple[dict[str, object], int, list[Warn]]:
    """YAML front matter at the top. Returns (data, number of lines it spans, warnings).

    Broken front matter spans 0 lines, so its text is indexed like the rest of the file.
    """
    if not lines or lines[0].strip() != "---":
        return {}, 0, []
    for end in range(1, min(len(lines), 500)):
        if lines[end].strip() in ("---", "..."):
            break
    else:
        return (
            {},
            0,
            [Warn(path, 1, "front-matter", "front matter has no closing '---'; treated as text")],
        )
    import yaml  # only files with front matter pay for importing it

    try:
        data = yaml.safe_load("\n".join(lines[1:end]))
        # Keep only what JSON can hold: YAML dates, anchors that loop, odd types.
        data = json.loads(json.dumps(data, default=str))
    except (ValueError, RecursionError, TypeError) as exc:  # YAML's errors are ValueErrors too
        return {}, 0, [Warn(path, 2, "front-matter",
                            f"front matter cannot be read ({exc.__class__.__name__}: "
                            f"{str(exc)[:120]}); treated as text")]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = 2 + (mark.line if mark is not None else 0)
        reason = getattr(exc, "problem", None) or "invalid YAML"
        return (
            {},
            0,
            [
                Warn(
                    path,
                    line,
                    "front-matter",
                    f"front matter is not valid YAML ({reason}); treated as text",
                )
            ],
        )
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return (
            {},
            0,
            [
                Warn(
                    path,
                    2,
                    "front-matter",
                    "front matter is not a mapping of keys; treated as text",
                )
            ],
        )
    return {str(k): v for k, v in data.items()}, end + 1, []


def sections_from(tokens: Sequence[Token], n_lines: int) -> list[Section]:
    heads: list[tuple[int, str, int]] = []
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.map:
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            heads.append((int(tok.tag[1]), title, tok.map[0] + 1))
    sections: list[Section] = []
    for idx, (level, title, start) in enumerate(heads):
        end = n_lines
        for level2, _, start2 in heads[idx + 1 :]:
            if level2 <= level:
                end = start2 - 1
                break
        sections.append(Section(level=level, title=title, start_line=start, end_line=end))
    return sections


def retain_sections(text: str, path: str) -> list[Section]:
    """The Retain sections of a file's text, as the indexer sees them (for writers that append
    an entry to one)."""
    lines = split_lines(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    _, fm_lines, _ = front_matter(lines, path)
    body = [""] * fm_lines + lines[fm_lines:]
    tokens = _parse_blocks(body, path, [])
    return [s for s in sections_from(tokens, len(lines))
            if s.level >= 2 and _RETAIN_TITLE.match(s.title)]


def retain_items(
    tokens: Sequence[Token], sections: Sequence[Section], lines: Sequence[str]
) -> list[EntryLines]:
    """Top-level list items inside Retain sections, as their source lines."""
    ranges = [
        (s.start_line, s.end_line)
        for s in sections
        if s.level >= 2 and _RETAIN_TITLE.match(s.title)
    ]
    if not ranges:
        return []
    items: list[EntryLines] = []
    list_depth = 0
    for tok in tokens:
        if tok.type in ("bullet_list_open", "ordered_list_open"):
            list_depth += 1
        elif tok.type in ("bullet_list_close", "ordered_list_close"):
            list_depth -= 1
        elif tok.type == "list_item_open" and list_depth == 1 and tok.map:
            first, stop = tok.map[0] + 1, tok.map[1]
            if not any(a < first <= b for a, b in ranges):
                continue
            while stop > first and not lines[stop - 1].strip():
                stop -= 1
            items.append(EntryLines(first, tuple(lines[first - 1 : stop])))
    return items


def _indent(line: str) -> int:
    return len(line.expandtabs(4)) - len(line.expandtabs(4).lstrip())


def _parse_blocks(body: list[str], path: str, warns: list[Warn]) -> list[Token]:
    """Block tokens of ``body``. markdown-it stops at ``maxNesting`` levels and then swallows
    the rest of the enclosing block, which would silently hide later Retain items and headings.
    So the over-deep lines (the container at the limit and everything indented below it) are
    blanked for the parser only (chunks still index them) and a located warning says so."""
    src = list(body)
    limit = int(_MD.options["maxNesting"])
    tokens: list[Token] = []
    for _ in range(50):
        try:
            tokens = _MD.parse("\n".join(src))
        except RecursionError:
            warns.append(Warn(path, 1, "structure", "nesting too deep to parse; indexed as text"))
            return []
        deep = next((t for t in tokens if t.nesting == 1 and t.level >= limit - 1 and t.map), None)
        if deep is None or deep.map is None:
            return tokens
        first = deep.map[0]
        base, stop = _indent(src[first]), first + 1
        while stop < len(src) and (not src[stop].strip() or _indent(src[stop]) > base):
            stop += 1
        while stop > first + 1 and not src[stop - 1].strip():
            stop -= 1
        span = f"line {first + 1}" if stop == first + 1 else f"lines {first + 1}-{stop}"
        warns.append(
            Warn(
                path,
                first + 1,
                "structure",
                f"nested more than {limit} levels deep; {span} indexed as text only "
                "(not parsed for structure or Retain items)",
            )
        )
        for i in range(first, stop):
            src[i] = ""
    return tokens


def parse_file(mf: MemoryFile, data: bytes, params: ChunkParams | None = None, *,
               chunks: bool = True) -> ParsedFile:
    """Parse one file version. Never raises on any input; problems become warnings.
    ``chunks=False``: no search chunks (a reader of facts and opinions only: review).

    History is replayed on every rebuild, so a parser failure on one old file version would
    stop indexing for good; as a last line of defence the file is then indexed as plain text
    with a located warning."""
    try:
        return _parse_file(mf, data, params, chunks)
    except Exception as exc:  # isolation boundary: one bad file never stops the history
        text, warns = decode(data, mf.path)
        lines = split_lines(text or "")
        warns.append(Warn(mf.path, 1, "parse-error", f"could not parse the Markdown "
                          f"({exc.__class__.__name__}: {str(exc)[:120]}); indexed as plain text"))
        return ParsedFile(file=mf, text=text or "", front_matter={}, title="", facts=(),
                          chunks=tuple(chunk_lines(lines, [], params=params)) if chunks else (),
                          warnings=tuple(warns))


def _parse_file(mf: MemoryFile, data: bytes, params: ChunkParams | None,
                chunks: bool) -> ParsedFile:
    text, warns = decode(data, mf.path)
    named = classify(mf.path)
    if named is not None and named[2]:
        warns.insert(0, Warn(mf.path, 1, "file-name", named[2]))
    if text is None:
        return ParsedFile(
            file=mf,
            text="",
            front_matter={},
            title="",
            facts=(),
            chunks=(),
            warnings=tuple(warns),
        )
    lines = split_lines(text)
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the final newline ends the last line; it does not start another
    meta, fm_lines, fm_warns = front_matter(lines, mf.path)
    warns.extend(fm_warns)
    body = [""] * fm_lines + lines[fm_lines:]  # keep line numbers, hide front matter
    tokens = _parse_blocks(body, mf.path, warns)
    sections = sections_from(tokens, len(lines))
    facts: list[Fact] = []
    for entry in retain_items(tokens, sections, lines):
        fact, entry_warns = entry_fact(entry, mf.path, mf.day)
        warns.extend(entry_warns)
        if fact is not None:
            facts.append(fact)
    found_chunks: list[Chunk] = []
    if chunks:
        hidden = generated_rows(body)  # reflect's blocks: not a source, not chunked
        text_body = ([("" if n in hidden else line) for n, line in enumerate(body)] if hidden
                     else body)
        found_chunks = chunk_lines(text_body, sections, first_line=fm_lines + 1, params=params)
    title = next((s.title for s in sections if s.level == 1), "")
    opinions: list[Opinion] = []
    if mf.path == OPINIONS_PATH:
        opinions, opinion_warns = parse_opinions(lines, mf.path)
        warns.extend(opinion_warns)
    return ParsedFile(
        file=mf,
        text=text,
        front_matter=meta,
        title=title,
        facts=tuple(facts),
        chunks=tuple(found_chunks),
        warnings=tuple(warns),
        opinions=tuple(opinions),
    )


def entry_fact(entry: EntryLines, path: str, day: date | None) -> tuple[Fact | None, list[Warn]]:
    """The fact of one Retain item of a file of ``day``, as ``parse_file`` gives it (with its
    event period), and the item's warnings."""
    fact, warns = parse_entry(entry, path, day)
    return (None if fact is None else _with_event_time(fact, day)), warns


def _with_event_time(fact: Fact, day: date | None) -> Fact:
    period = find_event_period(fact.text, default_year=day.year if day else None)
    if period is not None:
        return replace(fact, event_start=period[0], event_end=period[1])
    if day is not None:
        return replace(fact, event_start=day, event_end=day)
    return fact


__all__ = ["decode", "entry_fact", "find_entities", "parse_file", "split_lines"]
