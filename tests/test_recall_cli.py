"""``gitmem recall`` without click: a plain command line is read by gitmem.recall_cli, anything
else by click, and a ``gitmem`` process prints and returns exactly what click's command does
(the same body, the same door to the terminal, the same error handler)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from gitmem import terminal
from gitmem.recall_cli import parse_plain
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem

# (argv after -C REPO, read without click?)
COMMAND_LINES = [
    (["recall", "gateway host", "--json"], True),
    (["recall", "gateway host"], True),  # text: styles, citations, "replaced by"
    (["recall", "Marrakech", "--entity", "Peter", "--kind", "W", "--json"], True),
    (["recall", "--kind=W", "--kind", "O", "Peter", "--k=3", "-v"], True),
    (["recall", "what happened last week", "--json"], True),  # a date phrase: a window
    (["recall", "gateway", "--mode", "lexical", "--k", "2", "--min-score", "0.1"], True),
    (["recall", "gateway", "--min-score", "1", "--committed"], True),  # nothing left: a note
    (["recall", "gateway", "--since", "2025-11", "--until=2025-11-28", "--json"], True),
    (["recall", "gateway", "--as-of", "HEAD~1", "--json"], True),
    (["recall", "gateway", "--around", "2025-11-27", "--since", "2025"], True),  # click's error
    (["recall", "gateway", "--since", "last blue moon"], True),  # a usage error: exit 2
    (["recall", "gateway", "--entity", "Nobody", "--json"], True),  # exit 1
    (["recall", "gateway", "--mode", "semantic"], True),  # no provider: exit 4
    (["recall", "", "--json"], True),  # an empty query, as click passes it
    (["recall", "gateway", "--k", "0"], False),  # click's messages for what it refuses
    (["recall", "gateway", "--k", "x"], False),
    (["recall", "gateway", "--k", "1" * 4301], False),  # past int()'s limit: click's message
    (["recall", "gateway", "--k", "0000000002", "--json"], False),  # click takes it as 2
    (["recall", "gateway", "--min-score", "nan"], False),
    (["recall", "gateway", "--mode", "LEXICAL"], False),
    (["recall", "gateway", "--json=yes"], False),
    (["recall", "gateway", "--kin", "W"], False),  # no abbreviations
    (["recall", "gateway", "host"], False),  # an extra argument
    (["recall", "--", "-gateway"], False),
    (["recall", "gateway", "--since"], False),  # a missing value
    (["recall", "gateway", "--since", "-3d"], False),
    (["recall", "gateway", "-vh"], False),
    (["recall", "--help"], False),
    (["recall"], False),
]

# Run gitmem as ``gitmem`` runs it, and say whether click was imported.
_CHILD = r"""
import atexit, os, sys
atexit.register(lambda: print("click" in sys.modules, file=open(os.environ["SEEN"], "w")))
sys.argv = ["gitmem", *sys.argv[1:]]
from gitmem.__main__ import main
main()
"""


def _process(repo: Path, argv: list[str], tmp: Path) -> tuple[int, str, str, bool]:
    seen = tmp / "click-seen"
    env = {**os.environ, "SEEN": str(seen), "GITMEM_WARM": "0"}
    proc = subprocess.run([sys.executable, "-c", _CHILD, "-C", str(repo), *argv],
                          capture_output=True, text=True, env=env, check=False,
                          timeout=FAILURE_SECONDS)
    return proc.returncode, proc.stdout, proc.stderr, seen.read_text().strip() == "True"


@pytest.mark.parametrize(("argv", "plain"), COMMAND_LINES,
                         ids=[" ".join(a) or "-" for a, _ in COMMAND_LINES])
def test_a_recall_process_prints_what_clicks_command_prints(fixture_repo: Path, tmp_path: Path,
                                                            argv: list[str], plain: bool) -> None:
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    code, out, err, clicked = _process(fixture_repo, argv, tmp_path)
    assert clicked is not plain  # a plain command line never imports click
    assert (code, out, err) == gitmem("-C", str(fixture_repo), *argv)  # click's, in-process
    assert (parse_plain(["-C", str(fixture_repo), *argv]) is not None) is plain


def test_what_fails_outside_the_command_is_handled_as_clicks_path_handles_it(
        fixture_repo: Path, tmp_path: Path) -> None:
    """A working folder removed under the command: the one error handler says so (exit 3 and a
    crash log), as it does through click; shell completion is click's."""
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


def test_plain_values_are_converted_as_click_converts_them(tmp_path: Path) -> None:
    plain = parse_plain(["-C", str(tmp_path), "recall", "--k", "07", "q", "--min-score=.5",
                         "--entity", "a", "--entity=b", "--since", "1d", "--since", "2d",
                         "--mode", "lexical", "-v", "--json"])
    assert plain is not None
    assert (plain.folder, plain.query, plain.k, plain.min_score, plain.mode) == (
        str(tmp_path), "q", 7, 0.5, "lexical")
    assert plain.entities == ["a", "b"] and plain.texts == {"--since": "2d"}  # the last one
    assert plain.flags == {"--verbose", "--json"}
    assert parse_plain(["recall", "q"]) is not None  # no -C: the working folder
    for refused in (["-C", str(tmp_path / "missing"), "recall", "q"],  # click says why
                    ["-C", str(tmp_path / "f"), "recall", "q"], ["-C", "", "recall", "q"],
                    ["--version"], ["index"], ["-C", str(tmp_path), "get", "x"]):
        (tmp_path / "f").write_text("a file", encoding="utf-8")
        assert parse_plain(refused) is None, refused


STYLES = [{"bold": True}, {"fg": "cyan"}, {"fg": "yellow"}, {"fg": "cyan", "bold": True}]
TEXTS = ["plain", "日本語 and Ålborg", "an escape \x1b[31m and \u202e bidi", ""]


@pytest.mark.parametrize("color", [None, True, False])
def test_the_door_writes_what_click_echo_writes(color: bool | None) -> None:
    """Styles as click.style writes them, removed unless the stream is a terminal or color is
    forced; text from memory made visible either way."""
    from gitmem.parse.visible import visible

    for style in STYLES:
        for text in TEXTS:
            ours, theirs = io.StringIO(), io.StringIO()
            styled = terminal.style(text, **style)
            assert styled == click.style(visible(text), **style)
            with terminal.colored(color), contextlib.redirect_stdout(ours):
                terminal.echo(styled, " then ", text, nl=bool(text))
            click.echo(styled + " then " + visible(text), file=theirs, nl=bool(text),
                       color=color)
            assert ours.getvalue() == theirs.getvalue()


def test_the_door_writes_utf8_to_a_stream_that_says_ascii() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")
    with contextlib.redirect_stdout(stream):
        terminal.echo("Pétur 日本")
    assert raw.getvalue() == "Pétur 日本\n".encode()


def test_text_output_on_a_terminal_is_styled_alike(fixture_repo: Path) -> None:
    """color=True (the warm process printing for a terminal): click's path and the door agree,
    and the styles are there."""
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    from gitmem.cli import run_captured

    code, out, _ = run_captured(["-C", str(fixture_repo), "recall", "gateway host"], color=True)
    assert code == 0 and "\x1b[1m" in out and "\x1b[36m" in out
    code, plain_out, _ = run_captured(["-C", str(fixture_repo), "recall", "gateway host"],
                                      color=False)
    assert "\x1b[" not in plain_out
    assert click.unstyle(out) == plain_out
