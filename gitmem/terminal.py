"""The one door to the terminal, and the one place where an outcome becomes an exit status.

Both front ends that print go through here: the command line (:mod:`gitmem.cli`, click) and the
path ``gitmem recall`` takes without click (:mod:`gitmem.recall_cli`), so what they print and
how they end cannot drift. Standard library only above :mod:`gitmem.parse.visible`: importing
click costs a cold command ~20 ms.

What reaches a stream is what ``click.echo`` would write: every part that is not
:func:`style`'s own is passed through :func:`~gitmem.parse.visible.visible` first (no control
character, escape sequence or bidirectional override from a memory file reaches the terminal);
styles (ANSI codes, written as ``click.style`` writes them) are removed when the stream is not a
terminal, unless :func:`colored` says otherwise (the warm process prints for its caller's
terminal); each write is flushed; a stream that says it is ASCII gets UTF-8 (``replace`` for
what cannot be encoded), as click does for a misconfigured locale.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from gitmem.errors import GitmemError, InternalError
from gitmem.parse.visible import visible, visible_json

if TYPE_CHECKING:
    from pathlib import Path


class _Color(threading.local):
    """None: styles only on a terminal; True / False: always / never (``run(color=...)``), for
    the thread that runs the command (the warm process runs each on a thread of its own)."""

    value: bool | None = None


_COLOR = _Color()
_CODES = {"bold": 1, "yellow": 33, "cyan": 36}  # what gitmem prints with; click.style's codes
_RESET = "\x1b[0m"


class Styled(str):
    """Text already made visible and styled by :func:`style` (joining it with other text
    gives a plain ``str`` again, which :func:`echo` escapes: styles cannot be smuggled)."""


def style(text: str, *, fg: str | None = None, bold: bool = False) -> Styled:
    """``text`` made visible, in ``fg`` and/or bold: the codes ``click.style`` writes."""
    codes = "".join(f"\x1b[{_CODES[name]}m" for name in (fg, "bold" if bold else None) if name)
    return Styled(f"{codes}{visible(text)}{_RESET}")


@contextlib.contextmanager
def colored(color: bool | None) -> Iterator[None]:
    """Styles on (True), off (False) or only on a terminal (None) for what is printed meanwhile
    in this thread."""
    saved, _COLOR.value = _COLOR.value, color
    try:
        yield
    finally:
        _COLOR.value = saved


def echo(*parts: str, err: bool = False, nl: bool = True) -> None:
    """Print ``parts`` (made visible, but :func:`style`'s) to stdout, or stderr with ``err``."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # no stream to write to (pythonw, a closed descriptor)
        return
    text = "".join(p if isinstance(p, Styled) else visible(p) for p in parts)
    if nl:
        text += "\n"
    color = _COLOR.value
    if "\x1b" in text and not (_isatty(stream) if color is None else color):
        text = _ansi().sub("", text)  # (only style's codes: visible escaped any other)
    _write(stream, text)


@functools.cache
def _ansi() -> re.Pattern[str]:
    return re.compile(r"\033\[[;?0-9]*[a-zA-Z]")  # click's strip_ansi


def print_json(data: Any, *, indent: int | None = 2) -> None:
    echo(visible_json(data, indent))


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):  # a replaced or closed stream: not a terminal
        return False


def _write(stream: Any, text: str) -> None:
    if text and _is_ascii(getattr(stream, "encoding", None)) and hasattr(stream, "buffer"):
        stream.flush()
        stream.buffer.write(text.encode("utf-8", "replace"))
        stream.buffer.flush()
        return
    if text:
        stream.write(text)
    stream.flush()


def _is_ascii(encoding: str | None) -> bool:
    if not encoding:
        return False
    import codecs

    try:
        return codecs.lookup(encoding).name == "ascii"
    except LookupError:
        return False


def interrupted() -> int:
    """What Ctrl-C prints and returns: click's empty line, then the command line's own."""
    echo("", err=True)
    echo("", err=True)
    return 130


def exit_status(work: Callable[[], int]) -> int:
    """Run ``work`` and map every outcome to an exit status (the README lists them): the one
    error handler of the front ends. ``work`` maps its own front end's (click's usage errors)."""
    try:
        return work()
    except GitmemError as exc:
        echo(f"gitmem: {exc}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        echo("\ngitmem: interrupted", err=True)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except Exception as exc:  # the one place that turns surprises into exit status 3
        log = crash_log(exc)
        err = InternalError(f"internal error: {exc.__class__.__name__}: {exc}")
        echo(f"gitmem: {err}\n  traceback written to {log}", err=True)
        return err.exit_code


def crash_log(exc: BaseException) -> Path:
    """Write ``exc``'s traceback to a user-only log file in the cache folder; its path."""
    import tempfile
    import traceback
    from datetime import UTC, datetime
    from pathlib import Path

    from gitmem.userdirs import private_dir, private_file, user_cache_dir

    try:
        base = private_dir(user_cache_dir())
    except OSError:
        base = Path(tempfile.gettempdir())
    path = base / f"crash-{datetime.now(UTC).strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.log"
    private_file(path).write_text("".join(traceback.format_exception(exc)), encoding="utf-8")
    return path
