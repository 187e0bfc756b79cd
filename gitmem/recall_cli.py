"""``gitmem recall``'s command: its body, shared by click's command (:mod:`gitmem.cli`), and the
path a recall process takes without click.

Agents and plugins shell out to ``gitmem [-C PATH] recall QUERY [options]`` more than to
anything else, and a cold process spent ~20 ms importing click and building every command's
options before answering. :func:`run_alone` reads that command line itself when it is plain: the
options of ``gitmem recall`` (long ones as ``--opt VALUE`` or ``--opt=VALUE``, ``-v``) with
values click would take as they are. Anything else (help, ``--version``, ``--``, an unknown or
abbreviated option, a value click would refuse or that starts with ``-``, a second QUERY, a
``-C`` that is not a readable folder) returns None, and click reads it as before, with its own
messages. Both paths then run :func:`recall_command` and end through
:func:`gitmem.terminal.exit_status`, so what they print and return is the same.

This module imports nothing heavy until it runs a command: every ``gitmem`` process reads it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from gitmem.config import Config
    from gitmem.index.watch import WarmState
    from gitmem.recall.answer import RecallRequest
    from gitmem.recall.search import Result
    from gitmem.workspace import Workspace

MODES = ("hybrid", "lexical", "semantic")  # click.Choice of gitmem recall --mode
K_RANGE = (1, 1000)  # click.IntRange of --k
_VALUED = ("--k", "--since", "--until", "--around", "--as-of", "--entity", "--kind", "--mode",
           "--min-score")
_FLAGS = ("--verbose", "-v", "--committed", "--json")


class PlainRecall:
    """A plain ``[-C PATH] recall ...`` command line, its values converted as click converts
    them (a repeated option: the last one, as click takes it)."""

    def __init__(self) -> None:
        self.folder = ""  # -C, or "" for the working folder
        self.query: str | None = None
        self.k: int | None = None
        self.min_score: float | None = None
        self.mode = "hybrid"
        self.texts: dict[str, str] = {}  # --since, --until, --around, --as-of
        self.entities: list[str] = []
        self.kinds: list[str] = []
        self.flags: set[str] = set()

    def take(self, name: str, value: str) -> bool:
        """Keep option ``name``'s ``value``; False when click is to judge it."""
        if name == "--k":
            if not (value.isascii() and value.isdigit() and len(value) <= 9):
                return False  # (int() refuses over 4,300 digits: click says what is wrong)
            self.k = int(value)
            return K_RANGE[0] <= self.k <= K_RANGE[1]
        if name == "--min-score":
            try:
                self.min_score = float(value)
            except ValueError:
                return False
            return 0.0 <= self.min_score <= 1.0  # (NaN: False)
        if name == "--mode":
            self.mode = value
            return value in MODES
        if name == "--entity":
            self.entities.append(value)
        elif name == "--kind":
            self.kinds.append(value)
        else:
            self.texts[name] = value
        return True


def parse_plain(argv: list[str]) -> PlainRecall | None:
    """The recall command of a plain command line, or None for click to read it."""
    plain = PlainRecall()
    if argv[:1] == ["-C"] and len(argv) > 2:
        plain.folder, argv = argv[1], argv[2:]
        if not (os.path.isdir(plain.folder) and os.access(plain.folder, os.R_OK)):
            return None  # click says what is wrong with it
    if argv[:1] != ["recall"]:
        return None
    rest = iter(argv[1:])
    for arg in rest:
        if not arg.startswith("-"):
            if plain.query is not None:
                return None  # click: an unexpected extra argument
            plain.query = arg
            continue
        name, eq, value = arg.partition("=")
        if name in _FLAGS and not eq:
            plain.flags.add("--verbose" if name == "-v" else name)
            continue
        if name not in _VALUED:
            return None  # help, --, an unknown option, -vv and the like
        if not eq:
            value = next(rest, "-")  # (a missing value: click says so)
            if value.startswith("-"):
                return None
        if not plain.take(name, value):
            return None
    return plain if plain.query is not None else None


def run_alone(argv: list[str]) -> int | None:
    """Run a plain ``gitmem recall`` command line without click (this process is ``gitmem``
    itself); its exit status, or None when click is to read ``argv``."""
    if "_GITMEM_COMPLETE" in os.environ:
        return None  # shell completion: click answers it
    plain = parse_plain(argv)
    if plain is None:
        return None
    from gitmem.terminal import exit_status, interrupted

    def work() -> int:
        try:
            _run_plain(plain)
        except (EOFError, KeyboardInterrupt):
            return interrupted()  # as click's main and cli.run say it
        return 0

    return exit_status(work)


def _run_plain(plain: PlainRecall) -> None:
    from pathlib import Path

    from gitmem.recall.answer import RecallRequest

    texts = plain.texts
    req = RecallRequest(query=str(plain.query), k=plain.k, since=texts.get("--since"),
                        until=texts.get("--until"), around=texts.get("--around"),
                        as_of=texts.get("--as-of"), entities=tuple(plain.entities),
                        kinds=tuple(plain.kinds), mode=plain.mode,  # type: ignore[arg-type]
                        committed="--committed" in plain.flags,
                        verbose="--verbose" in plain.flags)
    start = Path(plain.folder) if plain.folder else Path.cwd()  # (a removed folder: exit 3)
    recall_command(start, req, min_score=plain.min_score, as_json="--json" in plain.flags,
                   warm=None, process=True)


def recall_command(start: Path, req: RecallRequest, *, min_score: float | None, as_json: bool,
                   warm: WarmState | None, process: bool) -> None:
    """``gitmem recall``: answer ``req`` in the workspace at ``start`` and print it. ``warm``:
    the warm process's memory of its workspace; ``process``: this is the ``gitmem`` process
    itself, which then starts a warm process for the next command."""
    from gitmem.recall.present import recall as recall_answer
    from gitmem.terminal import echo, print_json
    from gitmem.workspace import first_time

    ws, cfg = open_for(start, warm)
    response = recall_answer(ws, cfg, req, min_score=min_score, warm=warm)
    if as_json:
        print_json(response.to_json())
    else:
        tw = response.time_window
        if tw and tw.source == "query":
            span = f"{tw.since or '...'} .. {tw.until or '...'}"
            how = "preferring results near" if tw.applied_as == "boost" else "only"
            echo(f"{how} {span} ('{tw.phrase}')", err=True)
        elif tw and response.listing == "window":  # the flags' window, and no words to search
            echo(f"listing what was written {tw.since or '...'} .. {tw.until or '...'}, newest "
                 "first (no words to search for)", err=True)
        print_results(response.results, response.warnings)
        notice = response.provider.notice
        if notice and (req.verbose or first_time(ws, "lexical")):  # JSON has it every time
            echo(f"note: {notice}", err=True)
    autostart_after(ws, cfg, process=process, warm=warm)


def open_for(start: Path, warm: WarmState | None, *,
             lenient: bool = False) -> tuple[Workspace, Config]:
    """The workspace at ``start``: as the warm process keeps it, or opened now."""
    if warm is not None:
        return warm.open_workspace(start, lenient=lenient)
    from gitmem.workspace import open_workspace

    return open_workspace(start, lenient=lenient)


def autostart_after(ws: Workspace, cfg: Config, *, process: bool,
                    warm: WarmState | None) -> None:
    """After a command that no warm process answered, in the ``gitmem`` process itself, start
    one in the background for the next (warm.autostart; never in CI, a git hook, or a caller
    of ``run`` in-process)."""
    if process and warm is None:
        from gitmem.warm.client import may_autostart

        if may_autostart(cfg.warm_autostart):
            from gitmem.warm.registry import autostart

            autostart(str(ws.repo_root), str(ws.root), cap=cfg.warm_max_servers)


def print_results(results: list[Result], warnings: list[str]) -> None:
    from gitmem.recall.timing import shown_dates
    from gitmem.terminal import echo, style

    if not results:
        echo("no results")
    for r in results:
        ents = " ".join(f"@{e}" for e in r.entities)
        conf = f" c={r.confidence:.2f}" if r.confidence is not None else ""
        weak = "  (weak match)" if r.weak else ""
        echo(style(f"{r.score:.3f}  {r.kind}{conf}  {shown_dates(r)}  {ents}{weak}", bold=True))
        echo(style(r.source + ("  (uncommitted)" if r.uncommitted else ""), fg="cyan"))
        if r.superseded_by:
            why = ("declared" if r.superseded_basis == "declared" else
                   ": ".join(p for p in (r.superseded_attribute, r.superseded_reason) if p))
            echo(style(f"replaced by {r.superseded_by} ({r.superseded_on}"
                       f"{'; ' + why if why else ''})", fg="yellow"))
        elif r.newer:
            about = f" about @{r.newer.about}" if r.newer.about else ""
            echo(style(f"newer{about}: {r.newer.source} ({r.newer.date})", fg="yellow"))
        for e in r.opinion.evidence if r.opinion else ():
            c = "" if e.confidence is None else f" (c={e.confidence:.2f})"
            echo(f"  {e.stance:<7} {e.source}{c}  {e.fact_id}")
        for line in r.snippet.split("\n"):  # splitlines() would turn \x0c or \x85 into breaks
            echo(f"  {line}")
        if r.truncated:
            echo(style(f"  (truncated: longer than {len(r.content):,} characters; 'gitmem get "
                       f"{r.source}' prints it whole)", fg="yellow"))
        echo("")
    for w in warnings:
        echo(f"note: {w}", err=True)


