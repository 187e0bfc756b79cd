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
from typing import Any

from gitmem.userdirs import InterpreterFile

_re_compile = re.compile  # re's own, also while :func:`routed` stands in for it
_FORMAT = 2  # of the file; a change makes older files unused
# (pattern, flags, program, groups - 1, groupindex, indexgroup): _sre.compile's arguments
Entry = tuple[str, int, list[int], int, dict[str, int], tuple[str | None, ...]]


class _Programs(InterpreterFile):
    """The cache file's programs (``regex-cpython-311.marshal``, read on first use) and those
    this process added. ``sre`` is None when patterns are compiled as ``re`` does: another
    implementation or engine, no cache folder, or an ``re`` whose programs differ."""

    def __init__(self) -> None:
        sre = _sre_module()
        super().__init__("regex", (_FORMAT, getattr(sre, "MAGIC", 0),
                                   getattr(sre, "CODESIZE", 0)))
        self.sre: Any = sre

    def load(self) -> dict[Any, Any]:
        known = super().load()
        if not self.usable:  # no home or cache folder: compile as re does
            self.sre = None
        return known

    def build(self, entry: Entry) -> re.Pattern[str] | None:
        try:
            pattern = self.sre.compile(*entry)
        except (TypeError, ValueError, RuntimeError, OverflowError):  # not this build's
            return None
        return pattern if isinstance(pattern, re.Pattern) else None


def _sre_module() -> Any:
    if sys.implementation.name != "cpython":
        return None
    import importlib

    try:
        sre = importlib.import_module("_sre")  # CPython's engine (no type stub)
    except ImportError:
        return None
    return sre if hasattr(sre, "compile") else None


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
    entry = programs.get(key)
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
    programs.add(key, entry)


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
