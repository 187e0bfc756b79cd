"""Regular expressions compiled once per interpreter, not once per process.

``re`` compiles a pattern in pure Python (``re._parser``, ``re._compiler``): the knowledge-update
tables, the CJK character classes and the date phrases take tens of milliseconds, more than a
cold recall's query, and every ``gitmem`` process paid them again. What compiling produces is
an SRE program (a list of integers) that ``_sre.compile`` makes a pattern of in microseconds.
So :func:`compiled` keeps the programs in the user's cache folder, one file per interpreter
(``regex-cpython-311.marshal``, stamped with the exact version), and builds a pattern found there
from its program; any other pattern is compiled by ``re``, checked to equal what its program
builds (``==`` compares the program), and added to the file when the process ends.

The patterns are the very objects ``re.compile`` makes. Anything unexpected (another Python
implementation, a file from another build, a damaged file, no cache folder) falls back to
``re.compile``; the file is derived data, like ``__pycache__``, and may be deleted at any time.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_re_compile = re.compile  # re's own, also while :func:`routed` stands in for it
_FORMAT = 1  # of the file; a change makes older files unused
_MAX_ENTRIES = 2000  # a file past this (patterns of many versions) starts again
# (pattern, flags, program, groups - 1, groupindex, indexgroup): _sre.compile's arguments
Entry = tuple[str, int, list[int], int, dict[str, int], tuple[str | None, ...]]


class _Programs:
    """The cache file's programs (read on first use) and those this process added."""

    def __init__(self) -> None:
        self.known: dict[tuple[str, int], Entry] | None = None
        self.added: dict[tuple[str, int], Entry] = {}
        self.sre: Any = _sre_module()
        self.path: Path | None = None

    def load(self) -> dict[tuple[str, int], Entry]:
        if self.known is None:
            self.known = {}
            try:
                self.path = _cache_path()
                self.known = _read(self.path)
            except OSError:  # no home or cache folder: compile as re does
                self.sre = None
        return self.known

    def build(self, entry: Entry) -> re.Pattern[str] | None:
        try:
            pattern = self.sre.compile(*entry)
        except (TypeError, ValueError, RuntimeError, OverflowError):  # not this build's
            return None
        return pattern if isinstance(pattern, re.Pattern) else None

    def save(self) -> None:
        """Add this process's programs to the file (merged with what others wrote since)."""
        if not self.added or self.path is None:
            return
        try:
            merged = _read(self.path)
            if len(merged) + len(self.added) > _MAX_ENTRIES:
                merged = {}
            merged.update(self.added)
            _write(self.path, merged)
        except OSError:
            pass  # a cache that cannot be written is only slower
        self.added.clear()


def _sre_module() -> Any:
    if sys.implementation.name != "cpython":
        return None
    import importlib

    try:
        sre = importlib.import_module("_sre")  # CPython's engine (no type stub)
    except ImportError:
        return None
    return sre if hasattr(sre, "compile") else None


def _stamp() -> tuple[int, str, int, int]:
    sre = _sre_module()
    return (_FORMAT, sys.version, getattr(sre, "MAGIC", 0), getattr(sre, "CODESIZE", 0))


def _cache_path() -> Path:
    from gitmem.config import user_cache_dir

    return user_cache_dir() / f"regex-{sys.implementation.cache_tag}.marshal"


def _read(path: Path) -> dict[tuple[str, int], Entry]:
    import marshal

    try:
        data = marshal.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except (ValueError, EOFError, TypeError):  # damaged: written again at the end
        return {}
    if not (isinstance(data, tuple) and len(data) == 2 and data[0] == _stamp()
            and isinstance(data[1], dict)):
        return {}
    return data[1]


def _write(path: Path, entries: dict[tuple[str, int], Entry]) -> None:
    import marshal
    import os

    from gitmem.config import private_dir

    private_dir(path.parent)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(marshal.dumps((_stamp(), entries)))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _program(pattern: str, flags: int) -> Entry:
    """What ``re._compiler.compile`` passes to ``_sre.compile`` for ``pattern``."""
    import importlib

    parser: Any = importlib.import_module("re._parser")
    compiler: Any = importlib.import_module("re._compiler")
    parsed = parser.parse(pattern, flags)
    state = parsed.state
    index: list[str | None] = [None] * state.groups
    for name, i in state.groupdict.items():
        index[i] = name
    return (pattern, int(flags | state.flags), [int(op) for op in compiler._code(parsed, flags)],
            state.groups - 1, dict(state.groupdict), tuple(index))


@functools.cache
def _programs() -> _Programs:
    return _Programs()


def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, from the interpreter's cached program when there is one."""
    flags = int(flags)
    programs = _programs()
    if programs.sre is None or flags & re.DEBUG:
        return _re_compile(pattern, flags)
    key = (pattern, flags)
    entry = programs.load().get(key)
    if entry is not None:
        built = programs.build(entry)
        if built is not None and built.pattern == pattern:
            return built
    made = _re_compile(pattern, flags)
    if programs.sre is not None:
        _learn(programs, key, made)
    return made


def _learn(programs: _Programs, key: tuple[str, int], made: re.Pattern[str]) -> None:
    try:
        entry = _program(*key)
    except (AttributeError, TypeError, ValueError, ImportError):  # re's internals differ
        programs.sre = None
        return
    if programs.build(entry) != made:  # not what re made: this interpreter's re differs
        programs.sre = None
        return
    if not programs.added:
        import atexit

        atexit.register(programs.save)
    programs.added[key] = entry


def _any_compile(pattern: Any, flags: int = 0) -> Any:
    if isinstance(pattern, str):
        return compiled(pattern, flags)
    return _re_compile(pattern, flags)  # bytes, or a pattern already compiled


@contextlib.contextmanager
def routed() -> Iterator[None]:
    """``re.compile`` answered by :func:`compiled` meanwhile: for importing a library that
    compiles its patterns at import (markdown-it's sixty, on every index run). The patterns are
    equal to re's, so a thread that compiles meanwhile gets what it would have got."""
    re.compile = _any_compile  # type: ignore[assignment]
    try:
        yield
    finally:
        re.compile = _re_compile
