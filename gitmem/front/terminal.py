"""The one door to the terminal, and the one place where an outcome becomes an exit status.

Everything gitmem prints goes through :func:`echo`, on top of ``click.echo``: every part that is
not :func:`style`'s own is passed through :func:`~gitmem.parse.visible.visible` first, so no
control character, escape sequence or bidirectional override from a memory file reaches the
terminal (docs/memory-format.md, "Shown as text"). ``click.echo`` does the rest: styles removed
when the stream is not a terminal (unless the command runs with ``color``, as the warm process
does for its caller's terminal), UTF-8 for a stream that says it is ASCII.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from gitmem.errors import GitmemError, InternalError
from gitmem.parse.visible import visible, visible_json

if TYPE_CHECKING:
    from pathlib import Path


class Styled(str):
    """Text already made visible and styled by :func:`style` (joining it with other text
    gives a plain ``str`` again, which :func:`echo` escapes: styles cannot be smuggled)."""


def style(text: str, *, fg: str | None = None, bold: bool = False) -> Styled:
    """``text`` made visible, in ``fg`` and/or bold (not bold: no code, not click's "normal")."""
    return Styled(click.style(visible(text), fg=fg, bold=bold or None))  # noqa: TID251


def echo(*parts: str, err: bool = False, nl: bool = True) -> None:
    """Print ``parts`` (made visible, but :func:`style`'s) to stdout, or stderr with ``err``."""
    text = "".join(p if isinstance(p, Styled) else visible(p) for p in parts)
    click.echo(text, err=err, nl=nl)  # noqa: TID251 (the one door)


def print_json(data: Any, *, indent: int | None = 2) -> None:
    echo(visible_json(data, indent))


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
