"""The one door to the terminal (gitmem.front.terminal, on top of click.echo and click.style): memory
text is shown as text whatever the stream, gitmem's own styles only where colour is on, and a
real ``gitmem`` process prints and ends as the command line in-process does."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from gitmem.front import terminal
from gitmem.front.cli import run_captured
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem
from testing.repo import commit_all, make_repo, write

# What a memory file may hold: an OSC title with BEL, CSI clear-screen and colour, an 8-bit CSI,
# backspace, DEL, a bidi override and an isolate; and how the door shows it.
PAYLOAD = "\x1b]0;pwned\x07 \x1b[2J\x1b[31m \x9b2J \x08\x7f \u202eevil\u202c \u2066iso\u2069"
SHOWN = r"\x1b]0;pwned\x07 \x1b[2J\x1b[31m \x9b2J \x08\x7f \u202eevil\u202c \u2066iso\u2069"
OWN_STYLES = re.compile(r"\x1b\[(?:1|33|36|0)m")  # bold, yellow, cyan, reset
DRIVES_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _printed(color: bool | None, *parts: str) -> str:
    """What ``terminal.echo(*parts)`` writes to a captured stdout in a command run with
    ``color`` (click's context carries it, as ``run(color=...)`` sets it)."""
    out = io.StringIO()
    with click.Context(click.Command("x"), color=color), contextlib.redirect_stdout(out):
        terminal.echo(*parts)
    return out.getvalue()


@pytest.mark.parametrize("color", [None, True, False])
def test_memory_text_reaches_no_stream_raw(color: bool | None) -> None:
    """Text from memory is shown as escapes, in a style or not; gitmem's own styles are written
    only when colour is on (a captured stream is no terminal)."""
    printed = _printed(color, terminal.style(PAYLOAD, fg="cyan", bold=True), " | ", PAYLOAD)
    assert OWN_STYLES.sub("", printed) == f"{SHOWN} | {SHOWN}\n"
    assert not DRIVES_TERMINAL.search(OWN_STYLES.sub("", printed))
    assert ("\x1b[36m" in printed) is (color is True)


def test_styles_cannot_be_smuggled_by_joining() -> None:
    """A styled part joined with other text is plain text again, escaped as a whole."""
    joined = terminal.style("ok", fg="cyan") + "\x1b[2J"
    assert not isinstance(joined, terminal.Styled)
    printed = _printed(True, joined)
    assert "\x1b[2J" not in printed and r"\x1b[36mok\x1b[0m\x1b[2J" in printed


def test_a_stream_that_says_ascii_gets_utf8() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    with contextlib.redirect_stdout(stream):
        terminal.echo("Pétur 日本")
    stream.flush()
    assert raw.getvalue() == "Pétur 日本\n".encode()


def test_a_gitmem_process_shows_memory_text_as_text(tmp_path: Path) -> None:
    """``python -m gitmem recall`` (the process agents start): the text output shows the
    payload as escapes and equals what the command prints in-process; --json keeps the exact
    text (as JSON escapes)."""
    repo = make_repo(tmp_path)
    write(repo, "memory/2025-11-27.md", f"## Retain\n- W @Peter: The {PAYLOAD} wombat fact.\n")
    commit_all(repo, "escapes")
    env = {**os.environ, "GITMEM_WARM_AUTOSTART": "false"}
    for args, shown in ((["recall", "wombat"], True), (["recall", "wombat", "--json"], False)):
        argv = ["-C", str(repo), *args]
        proc = subprocess.run([sys.executable, "-m", "gitmem", *argv], capture_output=True,
                              text=True, env=env, check=False,
                              timeout=FAILURE_SECONDS)
        assert proc.returncode == 0, proc.stderr
        assert not DRIVES_TERMINAL.search(proc.stdout + proc.stderr)
        assert (SHOWN in proc.stdout) is shown
        assert (proc.returncode, proc.stdout) == gitmem(*argv)[:2]
    assert json.loads(proc.stdout)["results"][0]["snippet"].count(PAYLOAD) == 1


def test_what_fails_outside_the_command_is_handled_by_the_one_handler(
        fixture_repo: Path, tmp_path: Path) -> None:
    """A working folder removed under the command: the one error handler says so (exit 3 and a
    crash log); shell completion is click's."""
    gone = tmp_path / "gone"
    gone.mkdir()
    script = f'cd "{gone}" && rmdir "{gone}" && exec "{sys.executable}" -m gitmem recall gateway'
    proc = subprocess.run(["sh", "-c", script], capture_output=True, text=True, check=False,
                          env={**os.environ, "GITMEM_WARM": "0"})
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.startswith("gitmem: internal error: FileNotFoundError")
    assert "traceback written to" in proc.stderr and "Traceback" not in proc.stderr
    env = {**os.environ, "_GITMEM_COMPLETE": "bash_source", "GITMEM_WARM": "0"}
    completion = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(fixture_repo),
                                 "recall", "gateway"], capture_output=True, text=True,
                                env=env, check=False)
    assert completion.returncode == 0 and "_GITMEM_COMPLETE" in completion.stdout


def test_text_output_on_a_terminal_is_styled(fixture_repo: Path) -> None:
    """color=True (the warm process printing for a terminal): the styles are there, and they
    are all that differs from the output without colour."""
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    code, out, _ = run_captured(["-C", str(fixture_repo), "recall", "gateway host"], color=True)
    assert code == 0 and "\x1b[1m" in out and "\x1b[36m" in out
    code, plain_out, _ = run_captured(["-C", str(fixture_repo), "recall", "gateway host"],
                                      color=False)
    assert "\x1b[" not in plain_out
    assert click.unstyle(out) == plain_out
