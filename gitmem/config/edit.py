"""``gitmem config list|get|set|unset``: settings set once, in the user config (or, with
``repo``, the repository's ``.gitmem.toml``), and read by every command and every hook.

The trust rule (docs/configuration.md) holds for writing too: the repository config cannot be made
to name remote providers, endpoints, headers or key variables. Files are edited line by line, so
comments and layout survive; a file too unusual for that (a value over several lines, dotted
keys) is rewritten from its settings, and the result says so.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from gitmem.config import (
    REPO_CONFIG,
    Config,
    LayerValue,
    check_setting,
    env_name,
    parse_value,
    read_config_file,
    read_config_text,
    read_layers,
    repo_may_set,
    setting_attr,
    setting_names,
    setting_type,
    user_config_path,
)
from gitmem.errors import GitmemError

_SECRET_LIKE = ("embed.remote.headers",)  # values may carry tokens: never printed


@dataclass(frozen=True)
class Setting:
    key: str  # section.name, as written in the TOML files
    layers: tuple[LayerValue, ...]  # the default, then every layer that sets it, lowest first
    applies: LayerValue  # the one whose value counts

    @property
    def value(self) -> Any:
        return self.applies.value

    @property
    def source(self) -> str:  # default | repository | user | environment
        return self.applies.source

    @property
    def error(self) -> str | None:
        """The value that applies is invalid: the error commands that read it give."""
        return self.applies.error

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": _shown(self.key, self.value), "source": self.source,
                "where": self.applies.where or None, "error": self.error,
                "env": env_name(self.key),
                "layers": [{"source": v.source, "where": v.where or None,
                            "value": _shown(self.key, v.value), "applies": v is self.applies,
                            "error": v.error, "ignored": v.ignored} for v in self.layers]}

    def overridden(self) -> list[str]:
        """The layers that set the key but do not count, as ``list`` prints them."""
        out = []
        for v in self.layers[1:]:
            if v is self.applies:
                continue
            why = ("ignored: a repository config may not set it" if v.ignored
                   else "invalid" if v.error else f"the {self.source} value wins")
            out.append(f"{v.source} {v.where}: {_rendered(self.key, _shown(self.key, v.value))}"
                       f" ({why})")
        return out

    def text(self) -> str:
        """The value as ``get`` prints it: a string as it is, others as TOML writes them."""
        value = _shown(self.key, self.value)
        if value is None:
            return ""
        return value if isinstance(value, str) else _rendered(self.key, value)

    def listed(self) -> str:
        """The value as ``list`` prints it: as TOML writes it, or '(not set)'; then where it
        comes from, and 'invalid' when it is."""
        value = _shown(self.key, self.value)
        shown = "(not set)" if value is None else _rendered(self.key, value)
        where = f" {self.applies.where}" if self.applies.where else ""
        return f"{shown}  ({self.source}{where}{'; invalid' if self.error else ''})"


@dataclass
class SettingsReport:
    settings: list[Setting]
    files: dict[str, str]  # source -> config file path
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)  # invalid values, unreadable files

    def to_json(self) -> dict[str, Any]:
        return {"settings": [s.to_json() for s in self.settings], "files": self.files,
                "warnings": self.warnings, "errors": self.errors}


@dataclass(frozen=True)
class SettingChange:
    path: Path
    key: str
    value: Any  # None: removed
    rewritten: bool  # the file was rewritten from its settings (comments not kept)
    found: bool = True  # unset: the file set the key (else nothing was written)
    still_from: str | None = None  # unset: the layer that sets the key now, if not a default

    def to_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "key": self.key, "value": _shown(self.key, self.value),
                "rewritten": self.rewritten, "found": self.found, "still_from": self.still_from}

    def text(self) -> str:
        if self.value is None:
            done = "removed" if self.found else "was not set there"
            where = {"environment": "the environment"}.get(str(self.still_from),
                                                           f"the {self.still_from} config")
            still = f"; it is still set in {where}" if self.still_from else ""
            return f"{self.path}: {self.key} {done}{still}"
        return f"{self.path}: {self.key} = {_rendered(self.key, _shown(self.key, self.value))}"


def _shown(key: str, value: Any) -> Any:
    if key in _SECRET_LIKE and isinstance(value, (dict, tuple)) and value:
        return {name: "***" for name, _ in _pairs(value)}
    if key in _SECRET_LIKE and value:
        return "***"  # an invalid value may still hold a token
    if isinstance(value, tuple):
        return [list(v) if isinstance(v, tuple) else v for v in value]
    return value


def _pairs(value: Any) -> list[tuple[str, Any]]:
    return list(value.items()) if isinstance(value, dict) else [tuple(p) for p in value]


def list_settings(repo_root: Path | None) -> SettingsReport:
    """Every setting with its effective value, every layer that sets it and which one wins;
    an invalid value is reported (``errors``), never a reason not to list."""
    layers = read_layers(repo_root)
    defaults = Config()
    out = []
    warnings: list[str] = []
    for name in setting_names():
        default = LayerValue("default", "", getattr(defaults, setting_attr(name)))
        stack = layers.values.get(name, [])
        warnings.extend(v.ignored for v in stack if v.ignored)
        out.append(Setting(name, (default, *stack), layers.winner(name) or default))
    files = {"user": str(user_config_path())}
    if repo_root is not None:
        files["repository"] = str(repo_root / REPO_CONFIG)
    errors = layers.errors + [v.error for s in out for v in s.layers if v.error]
    return SettingsReport(out, files, warnings, errors)


def get_setting(repo_root: Path | None, key: str) -> Setting:
    _known(key)
    return next(s for s in list_settings(repo_root).settings if s.key == key)


def set_setting(repo_root: Path | None, key: str, raw: str, *, repo: bool = False) -> SettingChange:
    """Write ``key = raw`` (parsed as the setting's type and checked) into the user config, or
    the repository config with ``repo``."""
    _known(key)
    path = _target(repo_root, repo)
    _, value = check_setting(str(path), key, parse_value(key, raw))
    section, _, name = key.rpartition(".")
    if repo and not repo_may_set(section, name, value):
        raise GitmemError(f"{path}: a repository config may not set '{key} = {raw}' (remote "
                          f"providers, endpoints, headers and keys); set it in "
                          f"{user_config_path()} (without --repo)")
    return _write(path, section, name, value)


def unset_setting(repo_root: Path | None, key: str, *, repo: bool = False) -> SettingChange:
    """Remove ``key`` from the user (or repository) config; a file that does not set it is
    left as it is, and the answer says so (and which layer still sets the key, if one does)."""
    _known(key)
    section, _, name = key.rpartition(".")
    path = _target(repo_root, repo)
    if (section, name) in read_config_file(path):
        change = _write(path, section, name, None)
    else:
        change = SettingChange(path, key, None, rewritten=False, found=False)
    source = get_setting(repo_root, key).source
    return replace(change, still_from=None if source == "default" else source)


def _known(key: str) -> None:
    if key not in setting_names():
        allowed = ", ".join(sorted(setting_names()))
        raise GitmemError(f"unknown setting '{key}'; known settings: {allowed}")


def _target(repo_root: Path | None, repo: bool) -> Path:
    if not repo:
        return user_config_path()
    if repo_root is None:
        raise GitmemError("--repo needs a repository; run it inside one or pass -C PATH")
    return repo_root / REPO_CONFIG


def _toml_value(value: Any, *, table: bool = False) -> str:
    if table:
        inner = ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in _pairs(value))
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a valid TOML basic string
    if isinstance(value, dict):
        return _toml_value(value, table=True)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)  # a TOML date or time, as written (not a valid setting)


def _rendered(key: str, value: Any) -> str:
    """As TOML writes it (an invalid value too: as it was written)."""
    return _toml_value(value, table=setting_type(key) is dict and isinstance(value, dict))


_HEADER = re.compile(r"^\s*\[([^\[\]]+)\]\s*(#.*)?$")


def _write(path: Path, section: str, name: str, value: Any) -> SettingChange:
    """Set (or, with None, remove) one setting in a config file, keeping everything else."""
    try:
        text = path.read_text(encoding="utf-8") if path.exists() else ""
    except OSError as exc:
        raise GitmemError(f"{path}: cannot read config ({exc.strerror})") from exc
    wanted = read_config_file(path)  # also: an invalid file is an error naming it
    wanted.pop((section, name), None)
    if value is not None:
        wanted[(section, name)] = value
    edited = _edit_lines(text, section, name,
                         None if value is None else _rendered(f"{section}.{name}", value))
    rewritten = not _same(edited, wanted)
    if rewritten:
        edited = _render(wanted)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(edited, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise GitmemError(f"{path}: cannot write config ({exc.strerror})") from exc
    return SettingChange(path, f"{section}.{name}", value, rewritten)


def _same(text: str, wanted: dict[tuple[str, str], Any]) -> bool:
    try:
        got = read_config_text(text)
    except tomllib.TOMLDecodeError:
        return False
    return {k: _normal(v) for k, v in got.items()} == {
        k: _normal(v) for k, v in wanted.items()}


def _normal(value: Any) -> Any:
    if isinstance(value, tuple):
        return [list(v) if isinstance(v, tuple) else v for v in value]
    if isinstance(value, dict):
        return sorted([k, v] for k, v in value.items())
    return value


def _edit_lines(text: str, section: str, name: str, rendered: str | None) -> str:
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines)
                  if (m := _HEADER.match(ln)) and m[1].strip() == section), None)
    if start is None:
        if rendered is None:
            return text
        sep = "" if not text or text.endswith("\n\n") else ("\n" if text.endswith("\n") else "\n\n")
        return f"{text}{sep}[{section}]\n{name} = {rendered}\n"
    end = next((i for i in range(start + 1, len(lines)) if _HEADER.match(lines[i])), len(lines))
    key = re.compile(rf"^\s*{re.escape(name)}\s*=")
    at = next((i for i in range(start + 1, end) if key.match(lines[i])), None)
    if at is not None:
        comment = _trailing_comment(lines[at])
        if rendered is None:
            del lines[at]
            if not any(ln.strip() for ln in lines[start + 1:end - 1]):
                del lines[start:end - 1]  # nothing left in the table: no empty [recall]
                while lines and not lines[-1].strip():
                    lines.pop()
                return "\n".join(lines) + "\n" if lines else ""
        else:
            lines[at] = f"{name} = {rendered}{comment}"
    elif rendered is not None:
        last = max((i for i in range(start, end) if lines[i].strip()), default=start)
        lines.insert(last + 1, f"{name} = {rendered}")
    return "\n".join(lines) + "\n"


def _trailing_comment(line: str) -> str:
    """`` # comment`` after a simple value (strings without '#' inside), else nothing."""
    m = re.match(r'^[^#"\']*=\s*(?:"[^"#]*"|[^"#\'\s]+)(\s+#.*)$', line)
    return m[1] if m else ""


def _render(settings: dict[tuple[str, str], Any]) -> str:
    sections: dict[str, list[str]] = {}
    for (section, name), value in settings.items():
        sections.setdefault(section, []).append(f"{name} = {_rendered(f'{section}.{name}', value)}")
    return "\n".join(f"[{s}]\n" + "\n".join(lines) + "\n" for s, lines in sections.items())
