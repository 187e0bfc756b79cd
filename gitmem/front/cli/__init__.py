"""The command line: with its door to the terminal (:mod:`gitmem.front.terminal`), the only code
that imports click; errors map to exit codes here and in the door's one handler only.

The group is click's lazily loading one (click's documentation, "Lazily Loading Subcommands"):
a command's module is imported when that command runs, so ``gitmem recall`` builds only
recall's options (:mod:`gitmem.front.cli.recall`) and every other command's stay in
:mod:`gitmem.front.cli.commands`. What the commands share is here: the context a warm process or a
test passes in (``ctx.obj``), and :func:`run`, which maps every outcome to an exit status.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

from gitmem import __version__
from gitmem.front import terminal
from gitmem.front.terminal import echo

if TYPE_CHECKING:
    from gitmem.config import Config
    from gitmem.index.session import Session
    from gitmem.index.watch import WarmState
    from gitmem.workspace import Workspace

CONTEXT: dict[str, Any] = {"help_option_names": ["-h", "--help"], "max_content_width": 100}

# Each command's module and name in it, imported when the command runs (or help lists it).
COMMANDS = {
    "recall": "gitmem.front.cli.recall:recall",
    **{name: f"gitmem.front.cli.commands:{attribute}" for name, attribute in (
        ("init", "init"), ("index", "index"), ("status", "status"), ("entity", "entity"),
        ("opinions", "opinions"), ("get", "get"), ("reflect", "reflect_command"),
        ("review", "review"), ("retain", "retain"), ("mcp", "mcp"), ("serve", "serve"),
        ("reset", "reset"), ("hooks", "hooks"), ("merge-file", "merge_file"), ("sync", "sync"),
        ("model", "model"), ("config", "config_group"), ("forget", "forget_command"),
        ("import", "import_command"), ("triggers", "triggers"))},
}


class LazyGroup(click.Group):
    """A group whose commands are named in :data:`COMMANDS` and imported when asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return super().get_command(ctx, cmd_name)
        module, _, name = COMMANDS[cmd_name].partition(":")
        command: click.Command = getattr(importlib.import_module(module), name)
        return command


@click.group(cls=LazyGroup, context_settings=CONTEXT)
@click.option(
    "-C",
    "path",
    metavar="PATH",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run as if started in PATH, a folder in the memory repository (like git -C).",
)
@click.version_option(__version__, prog_name="gitmem")
@click.pass_context
def cli(ctx: click.Context, path: Path | None) -> None:
    """gitmem: recall for agent memory kept as Markdown in git.

    Memory is MEMORY.md, USER.md, daily notes memory/YYYY-MM-DD.md with '## Retain' facts, and
    bank/ pages. gitmem keeps a derived index in .memory/index.sqlite and answers recall with
    path#Lline citations.
    """
    ctx.ensure_object(dict)
    ctx.obj["path"] = path


def ctx_path(ctx: click.Context) -> Path:
    """The folder the command runs in: ``-C PATH``, or the working folder."""
    return Path(ctx.obj["path"]) if ctx.obj and ctx.obj.get("path") else Path.cwd()


def warm_of(ctx: click.Context) -> WarmState | None:
    """What the warm process remembers between requests (None in a command run alone)."""
    return ctx.obj.get("warm") if ctx.obj else None


def session_of(ctx: click.Context) -> Session:
    """The command's session (``index.session``): the warm process's, or one of its own."""
    from gitmem.index.session import Session, WarmSession

    ws, cfg = workspace_of(ctx)
    warm = warm_of(ctx)
    return Session(ws, cfg) if warm is None else WarmSession(ws, cfg, warm)


def is_process(ctx: click.Context) -> bool:
    """Whether this is the ``gitmem`` process itself (not ``run`` in-process or a warm one)."""
    return bool(ctx.obj and ctx.obj.get("process"))


def workspace_of(ctx: click.Context, *, lenient: bool = False) -> tuple[Workspace, Config]:
    """The command's workspace: as the warm process keeps it, or opened now."""
    warm = warm_of(ctx)
    if warm is not None:
        return warm.open_workspace(ctx_path(ctx), lenient=lenient)
    from gitmem.workspace import open_workspace

    return open_workspace(ctx_path(ctx), lenient=lenient)


def autostart_after(ctx: click.Context, ws: Workspace, cfg: Config) -> None:
    """After a command that no warm process answered, in the ``gitmem`` process itself, start
    one in the background for the next (warm.autostart; never in CI, a git hook, or a caller
    of ``run`` in-process)."""
    if is_process(ctx) and warm_of(ctx) is None:
        from gitmem.front.warm.client import may_autostart

        if may_autostart(cfg.warm_autostart):
            from gitmem.front.warm.registry import autostart

            autostart(str(ws.repo_root), str(ws.root), cap=cfg.warm_max_servers)


def run(args: list[str] | None = None, color: bool | None = None,
        warm: WarmState | None = None, *, process: bool = False) -> int:
    """Run the CLI and map every outcome to an exit status (click's here, the rest in
    ``terminal.exit_status``, the one error handler). ``warm``: the warm process's memory of
    its workspace (``gitmem serve``); ``process``: this is the ``gitmem`` process itself (which
    may start a warm process for the next one)."""

    def invoke() -> int:
        try:
            # Without standalone mode click returns an Exit's status instead of raising it.
            code = cli.main(args=args, prog_name="gitmem", standalone_mode=False, color=color,
                            obj={"warm": warm, "process": process})
        except click.exceptions.Exit as exc:
            return int(exc.exit_code)
        except click.exceptions.Abort:
            echo("", err=True)
            return 130
        except click.UsageError as exc:
            exc.show()
            return 2
        except click.ClickException as exc:
            exc.show()
            return 1
        return code if isinstance(code, int) else 0

    return terminal.exit_status(invoke)


def run_captured(args: list[str], color: bool | None,
                 warm: WarmState | None = None) -> tuple[int, str, str]:
    """``run`` with its output captured: what a warm process answers a thin client with (and
    what tests run in-process, testing.cli.gitmem)."""
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run(args, color=color, warm=warm)
    return code, out.getvalue(), err.getvalue()


def main() -> NoReturn:
    sys.exit(run(process=True))
