"""What other memory tools keep, read into items for ``gitmem import`` (docs/import.md).

Each reader follows its project's own code or documentation:

- ``mcp-memory``: the MCP reference memory server (modelcontextprotocol/servers,
  ``src/memory/index.ts``): ``memory.json`` holds one JSON object a line, ``{"type":
  "entity", "name", "entityType", "observations": [...]}`` or ``{"type": "relation", "from",
  "to", "relationType"}``. Each observation is a fact about its entity, each relation a fact
  about both.
- ``mem0``: mem0's ``get_all`` answer (mem0ai/mem0, ``mem0/memory/main.py``, ``MemoryItem``):
  a list, or ``{"results": [...]}``, of ``{"id", "memory", "hash", "created_at",
  "updated_at", "user_id"?, "agent_id"?, "metadata"?}``; the user or agent is the entity.
- ``hermes``: Hermes Agent's curated memory (NousResearch/hermes-agent,
  ``tools/memory_tool.py``): ``MEMORY.md`` and ``USER.md`` in ``~/.hermes/memories``,
  entries separated by a line holding ``§``.
- ``codex``: Codex's memories folder (openai/codex, ``codex-rs/core/src/memories``):
  the consolidated ``MEMORY.md`` and ``memory_summary.md`` (what OpenClaw imports too), and
  ``raw_memories.md`` when named, whose ``## Thread`` sections carry ``updated_at``.
- ``claude-code``: Claude Code's memory (code.claude.com/docs/en/memory): ``CLAUDE.md``
  files and the auto memory folder ``~/.claude/projects/<project>/memory/`` (``MEMORY.md``,
  an index, and topic files).
- ``openclaw``: an OpenClaw workspace whose ``memory/imports/<tool>/`` holds the files
  OpenClaw's memory import copied (OpenClaw's docs, concepts/memory.md).

Markdown notes (all but the JSON formats) become one item per list item or paragraph;
headings, front matter and blank lines are not knowledge. An item carries the day its source
gives it (mem0's ``created_at``, a thread's ``updated_at``), else the file's modification day,
and says which.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path

from gitmem.errors import UsageError

FORMATS = ("claude-code", "codex", "hermes", "mem0", "mcp-memory", "openclaw")
HERMES_DELIMITER = "\n§\n"
_LIST_ITEM = re.compile(r"^( {0,3})(?:[-*+]|\d{1,9}[.)])\s+(.*)$")
_HEADING = re.compile(r"^ {0,3}#{1,6}(\s|$)")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_THREAD = re.compile(r"^## Thread `([^`]+)`\s*$")
_SLUG_CHARS = re.compile(r"[^\w.\-]+")


@dataclass(frozen=True)
class Imported:
    """One piece of knowledge from another tool, ready to become a Retain entry."""

    tool: str  # claude-code, codex, hermes, mem0, mcp-memory (openclaw: the copied tool)
    text: str  # may hold several lines
    day: date
    dated_by: str  # what gave the day: "created", "updated", "file"
    source: str  # where it stands in the source: "USER.md entry 3", "memory.json line 4"
    entities: tuple[str, ...] = ()


def read_source(fmt: str, path: Path) -> list[Imported]:
    """The items a source holds; UsageError naming what was expected when it holds none."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    if not path.exists():
        raise UsageError(f"{path}: no such file or folder")
    reader = {"claude-code": _claude, "codex": _codex, "hermes": _hermes, "mem0": _mem0,
              "mcp-memory": _mcp_memory, "openclaw": _openclaw}[fmt]
    return list(reader(path))


def slug(name: str) -> str | None:
    """An entity slug for a name from another tool ('John Smith' -> 'John-Smith'), or None."""
    text = _SLUG_CHARS.sub("-", name.strip()).strip("-._")
    return text if text and (text[0].isalnum()) else None


# -- JSON sources ------------------------------------------------------------------------------


def _mcp_memory(path: Path) -> Iterator[Imported]:
    day = _file_day(path)
    rel = path.name
    records = _json_lines(path)
    for number, item in records:
        kind, name, observations = item.get("type"), item.get("name"), item.get("observations")
        if kind == "entity" and isinstance(name, str):
            ent = _entities(name)
            typed = item.get("entityType")
            what = f" ({typed})" if isinstance(typed, str) else ""
            for obs in observations if isinstance(observations, list) else []:
                if isinstance(obs, str) and obs.strip():
                    yield Imported("mcp-memory", obs.strip(), day, "file",
                                   f"{rel} line {number}, entity {name}{what}", ent)
        elif kind == "relation":
            start, end, how = item.get("from"), item.get("to"), item.get("relationType")
            if isinstance(start, str) and isinstance(end, str) and isinstance(how, str):
                text = f"{start} {how.replace('_', ' ')} {end}."
                yield Imported("mcp-memory", text, day, "file",
                               f"{rel} line {number}, relation", _entities(start, end))


def _json_lines(path: Path) -> list[tuple[int, dict[str, object]]]:
    """memory.json as the reference server writes it (JSON lines), or one JSON document
    ``{"entities": [...], "relations": [...]}`` as older copies hold it."""
    text = _read_text(path)
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict) and ("entities" in whole or "relations" in whole):
        return [(0, {"type": "entity", **e}) for e in whole.get("entities") or []
                if isinstance(e, dict)] + [(0, {"type": "relation", **r})
                                           for r in whole.get("relations") or []
                                           if isinstance(r, dict)]
    out: list[tuple[int, dict[str, object]]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise UsageError(f"{path}#L{number}: not a JSON line ({exc.args[0]}); the MCP "
                             "memory server writes one JSON object a line") from exc
        if isinstance(item, dict):
            out.append((number, item))
    return out


def _mem0(path: Path) -> Iterator[Imported]:
    try:
        data = json.loads(_read_text(path))
    except ValueError as exc:
        raise UsageError(f"{path}: not JSON ({exc}); expected mem0's get_all answer") from exc
    items = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise UsageError(f"{path}: expected a list of memories or {{\"results\": [...]}} (mem0's "
                         "get_all answer)")
    fallback = _file_day(path)
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            continue
        text = item.get("memory") or item.get("text") or item.get("data")
        if not isinstance(text, str) or not text.strip():
            continue
        day, how = fallback, "file"
        for key, word in (("created_at", "created"), ("updated_at", "updated")):
            found = _iso_day(item.get(key))
            if found is not None:
                day, how = found, word
                break
        names = [str(item[k]) for k in ("user_id", "agent_id") if isinstance(item.get(k), str)]
        ident = str(item.get("id") or f"#{n}")
        yield Imported("mem0", text.strip(), day, how, f"{path.name}, memory {ident}",
                       _entities(*names))


# -- Markdown sources --------------------------------------------------------------------------


def _hermes(path: Path) -> Iterator[Imported]:
    files = [path] if path.is_file() else [p for p in (
        path / "MEMORY.md", path / "USER.md", path / "memories" / "MEMORY.md",
        path / "memories" / "USER.md") if p.is_file()]
    if not files:
        raise UsageError(f"{path}: no MEMORY.md or USER.md (Hermes keeps them in "
                         "~/.hermes/memories)")
    for file in files:
        yield from _hermes_entries(file, file.name)


def _hermes_entries(file: Path, name: str) -> Iterator[Imported]:
    day = _file_day(file)
    head, sep, tail = name.partition(", ")
    raw = _read_text(file)
    for n, entry in enumerate((e.strip() for e in raw.split(HERMES_DELIMITER)), 1):
        if entry:
            yield Imported("hermes", entry, day, "file", f"{head} entry {n}{sep}{tail}")


def _codex(path: Path) -> Iterator[Imported]:
    if path.is_file():
        files = [path]
    else:
        root = path / "memories" if (path / "memories").is_dir() else path
        files = [p for p in (root / "MEMORY.md", root / "memory_summary.md") if p.is_file()]
    if not files:
        raise UsageError(f"{path}: no MEMORY.md or memory_summary.md (Codex keeps them in "
                         "~/.codex/memories)")
    for file in files:
        if file.name == "raw_memories.md":
            yield from _codex_threads(file)
        else:
            yield from _markdown("codex", file, file.name)


def _codex_threads(file: Path) -> Iterator[Imported]:
    """raw_memories.md: '## Thread `id`', 'updated_at: <RFC 3339>', then the memory."""
    lines = _read_text(file).splitlines()
    thread, day = "", _file_day(file)
    how = "file"
    body: list[tuple[int, str]] = []

    def flush() -> Iterator[Imported]:
        for item in _blocks([(n, t) for n, t in body]):
            start, text = item
            yield Imported("codex", text, day, how, f"{file.name}#L{start} (thread {thread})")

    for number, line in enumerate(lines, 1):
        found = _THREAD.match(line)
        if found:
            yield from flush()
            thread, body, day, how = found.group(1), [], _file_day(file), "file"
        elif thread and line.startswith("updated_at:") and not body:
            stated = _iso_day(line.split(":", 1)[1].strip())
            if stated is not None:
                day, how = stated, "updated"
        elif thread:
            body.append((number, line))
    yield from flush()


def _claude(path: Path) -> Iterator[Imported]:
    if path.is_file():
        files = [path]
    else:
        files = sorted(p for p in path.glob("*.md") if p.is_file())
        files += [p for p in (path / ".claude" / "CLAUDE.md",) if p.is_file()]
    if not files:
        raise UsageError(f"{path}: no Markdown files (CLAUDE.md, or the auto memory folder "
                         "~/.claude/projects/<project>/memory/)")
    for file in files:
        yield from _markdown("claude-code", file, file.name)


def _openclaw(path: Path) -> Iterator[Imported]:
    imports = next((p for p in (path / "memory" / "imports", path / "imports", path)
                    if p.is_dir() and p.name == "imports"), None)
    if imports is None:
        raise UsageError(f"{path}: no memory/imports/<tool>/ folder (an OpenClaw workspace "
                         "keeps imported memory there)")
    top = imports.parent.parent if imports.parent.name == "memory" else imports.parent
    for tool_dir in sorted(p for p in imports.iterdir() if p.is_dir()):
        for file in sorted(tool_dir.rglob("*.md")):
            if not file.is_file() or file.is_symlink():
                continue
            where = f"{file.relative_to(top).as_posix()}, copied by OpenClaw"
            if tool_dir.name == "hermes":
                yield from _hermes_entries(file, where)
            else:
                yield from _markdown(tool_dir.name, file, where)


def _markdown(tool: str, file: Path, name: str) -> Iterator[Imported]:
    """``name``: how the source cites the file ('MEMORY.md', or 'memory/imports/codex/MEMORY.md,
    copied by OpenClaw'); the line goes after its first part."""
    day = _file_day(file)
    lines = list(enumerate(_read_text(file).splitlines(), 1))
    head, sep, tail = name.partition(", ")
    for start, text in _blocks(_without_front_matter(lines)):
        yield Imported(tool, text, day, "file", f"{head}#L{start}{sep}{tail}")


def _without_front_matter(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    if lines and lines[0][1].strip() == "---":
        for i, (_, line) in enumerate(lines[1:], 1):
            if line.strip() in ("---", "..."):
                return lines[i + 1:]
    return lines


def _blocks(lines: list[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """(first line, text) of each top-level list item (with what is indented under it) and
    each paragraph; a fenced code block goes with the item before it, else stands alone."""
    current: list[str] = []
    start = 0
    fence: str | None = None

    def done() -> Iterator[tuple[int, str]]:
        item = _LIST_ITEM.match(current[0]) if current else None
        lines = [item.group(2), *current[1:]] if item else current
        text = "\n".join(lines).strip()
        if text:
            yield start, text

    for number, line in lines:
        if fence is not None:
            current.append(line)
            if line.strip().startswith(fence):
                fence = None
            continue
        opened = _FENCE.match(line)
        if opened:
            fence = opened.group(1)
            if not current:
                start = number
            current.append(line)
            continue
        item = _LIST_ITEM.match(line)
        if _HEADING.match(line) or not line.strip():
            if not line.strip() and current and _LIST_ITEM.match(current[0]):
                continue  # a blank line inside a list item: the item may go on
            yield from done()
            current = []
        elif item and len(item.group(1)) < 2:
            yield from done()
            current, start = [line], number
        elif current and _LIST_ITEM.match(current[0]) and not line.startswith((" ", "\t")):
            yield from done()  # an unindented paragraph after a list
            current, start = [line], number
        else:
            if not current:
                start = number
            current.append(line)
    yield from done()


# -- small helpers -----------------------------------------------------------------------------


def _entities(*names: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for s in (slug(n) for n in names) if s))


def _iso_day(value: object) -> date | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        stamp = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp.date()  # the day where the source wrote it (its own offset)


def _file_day(path: Path) -> date:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).date()


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (at byte {exc.start})") from exc
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
