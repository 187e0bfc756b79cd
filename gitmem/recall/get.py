"""``gitmem get``: memory text by line, from the working tree or from a revision."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gitmem.config import Config
from gitmem.errors import GitmemError, UsageError
from gitmem.git import GitRepo
from gitmem.workspace import Workspace, check_memory_path


@dataclass(frozen=True)
class GetResult:
    path: str
    start_line: int
    end_line: int
    lines: tuple[str, ...]
    revision: str | None
    note: str | None = None  # lines asked for that the file no longer has

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "revision": self.revision,
            "text": "\n".join(self.lines),
            "note": self.note,
            "warnings": [self.note] if self.note else [],  # as every command's JSON has
        }


def split_target(target: str) -> tuple[str, int | None, int | None, str | None]:
    """PATH[#Lx[-Ly]][@REV], a citation as recall prints it (history included), as
    (path, first line, line count, revision)."""
    path, _, anchor = target.partition("#")
    if not anchor:
        return path, None, None, None
    anchor, _, rev = anchor.partition("@")
    try:
        first, _, last = anchor.partition("-")
        start = int(first.lstrip("Ll"))
        end = int(last.lstrip("Ll")) if last else start
    except ValueError:
        raise UsageError(f"invalid line anchor '#{anchor}': use PATH#L12 or PATH#L12-L20") from None
    if end < start:
        raise UsageError(f"invalid line anchor '#{anchor}': the end is before the start")
    return path, start, end - start + 1, rev or None


def get_target(ws: Workspace, cfg: Config, target: str, *, start: int | None = None,
               count: int | None = None, at: str | None = None) -> GetResult:
    """``gitmem get`` and ``memory_get``: TARGET as a citation (``PATH[#Lx[-Ly]][@REV]``);
    ``start``, ``count`` and ``at``, when given, win over the citation's own."""
    path, cited_start, cited_count, cited_at = split_target(target)
    return get_lines(ws, cfg, path, start=start or cited_start, count=count or cited_count,
                     at=at or cited_at)


def get_lines(
    ws: Workspace,
    cfg: Config,
    raw: str,
    *,
    start: int | None = None,
    count: int | None = None,
    at: str | None = None,
) -> GetResult:
    """Memory text by line, from the working tree or from a revision (``at``)."""
    rel = check_memory_path(ws, cfg, raw)
    if at is None:
        path = ws.root / rel
        for parent in [path, *path.parents]:
            if parent == ws.root:
                break
            if parent.is_symlink():
                raise GitmemError(f"refusing '{raw}': {parent} is a symbolic link")
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise GitmemError(f"no such memory file: {rel}") from None
    else:
        data = GitRepo(ws.repo_root, ws.git_dir).blob_at(at, ws.prefix + rel)
    from gitmem.parse.markdown import decode, split_lines

    text, _ = decode(data, rel)
    lines = split_lines(text or "")
    if lines and lines[-1] == "":
        lines.pop()
    first = max(1, start or 1)
    asked = len(lines) if count is None else first + count - 1
    last = min(len(lines), asked)
    where = f" at {at}" if at else ""
    if first > max(len(lines), 1):
        raise GitmemError.naming("{rel} has {n} lines{where}; line {first} is past its end"
                                 + _changed_hint(at), rel=rel, n=len(lines), where=where,
                                 first=first, citation=f"{rel}#L{first}")
    note = None
    if asked > last:
        past = f"line {asked} is" if asked == last + 1 else f"lines {last + 1}-{asked} are"
        note = str(GitmemError.naming("{past} past the end: {rel} has {n} lines{where}"
                                      + _changed_hint(at), past=past, rel=rel, n=len(lines),
                                      where=where, citation=f"{rel}#L{last + 1}"))
    return GetResult(rel, first, last, tuple(lines[first - 1 : last]), at, note)


def _changed_hint(at: str | None) -> str:
    """A citation made before the file shrank: its text is in history (a ``naming`` template
    part)."""
    if at is not None:
        return ""
    return (" (it changed since it was cited? {command_get} with {at} set to a commit reads the "
            "earlier version of {citation}; {command_recall} cites the current lines)")
