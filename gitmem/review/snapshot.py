"""The memory at one commit, read from git and parsed only where it is needed (review).

The files a range changed are given up front (``set_changed``) and parsed together
(``parse_changed``); any other memory file (the file an evidence line cites, an older fact's
daily note) is read on request, many in one batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from gitmem.domain import Fact, MemoryFile, ParsedFile
from gitmem.git import Classify, read_objects
from gitmem.lifetime import split_map
from gitmem.parse.markdown import parse_file
from gitmem.workspace import Workspace


class Snapshot:
    def __init__(self, ws: Workspace, commit: str, classify: Classify) -> None:
        self.ws, self.commit, self.classify = ws, commit, classify
        self.raw: dict[str, tuple[MemoryFile, bytes]] = {}  # the files the range changed
        self.changed: dict[str, ParsedFile] = {}  # those, parsed (``parse_changed``)
        self._others: dict[str, tuple[MemoryFile, bytes] | ParsedFile | None] = {}

    def set_changed(self, files: Sequence[tuple[MemoryFile, bytes]]) -> None:
        """The files the range changed on this side, as read (``parse_changed`` parses them:
        a search may start on the raw text meanwhile)."""
        self.raw = {mf.path: (mf, data) for mf, data in files}
        self.changed = {}

    def facts(self) -> Iterator[tuple[Fact, MemoryFile]]:
        """The Retain facts of the changed files."""
        for parsed in self.changed.values():
            for fact in parsed.facts:
                yield fact, parsed.file

    def load(self, paths: Iterable[str]) -> None:
        """Read these workspace-relative paths (memory files only) in one batch; each is parsed
        when first asked for."""
        wanted = sorted({p for p in paths if p not in self.raw and p not in self._others
                         and self.classify(p) is not None})
        if not wanted:
            return
        names = [f"{self.commit}:{self.ws.prefix}{p}" for p in wanted]
        for path, data in zip(wanted, read_objects(self.ws.repo_root, names), strict=True):
            found = self.classify(path)
            assert found is not None
            self._others[path] = (None if data is None
                                  else (MemoryFile(path, "", found[0], found[1]), data))

    def unparsed_text(self, path: str) -> str | None:
        """The text of a file loaded and not parsed yet, when it is plain UTF-8 with LF line
        ends (each line then is the line ``git grep`` saw); else None."""
        other = self._others.get(path)
        if not isinstance(other, tuple) or b"\r" in other[1]:
            return None
        try:
            return other[1].decode("utf-8")
        except UnicodeDecodeError:
            return None

    def get(self, path: str) -> ParsedFile | None:
        """A file read before (changed, or loaded), parsed; None when absent at this commit."""
        if path in self.raw:
            return self.changed[path]
        other = self._others.get(path)
        if isinstance(other, tuple):
            other = self._others[path] = parse_file(*other, chunks=False)
        return other


PARSE_SPLIT_AT = 16  # changed files from which they are parsed on two cores


def parse_changed(*sides: Snapshot) -> None:
    """Parse the files the range changed on each side now, about half of them in a forked
    child on a second core (``lifetime.split_map``) when there are many: review reads them
    all."""
    todo = [(side, path) for side in sides for path in side.raw]

    def parse(part: Sequence[tuple[Snapshot, str]]) -> list[ParsedFile]:
        return [parse_file(*side.raw[path], chunks=False) for side, path in part]

    for (side, path), parsed in zip(todo, split_map(parse, todo, minimum=PARSE_SPLIT_AT),
                                    strict=True):
        side.changed[path] = parsed
