"""Configuration (docs/configuration.md): layers, the trust rule, and errors that name file, key and fix."""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import pytest

from gitmem.config import load_config, user_config_path
from testing.cli import gitmem, gitmem_json, recall_json, sources, status_json
from testing.contract import GOOD_DAILY, GOOD_TEXT
from testing.repo import commit_all, make_repo, write

FALCONS = [
    "Falcon seen over the harbour with a red tag.",
    "Falcon nesting on the old crane.",
    "Falcon chased pigeons near the station.",
    "Falcon photographed by the ferry captain.",
    "Falcon ringed by volunteers in spring.",
]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    write(repo, GOOD_DAILY, GOOD_TEXT)
    commit_all(repo, "memory")
    return repo


def user_config(text: str) -> Path:
    path = user_config_path()
    assert str(path).startswith(os.environ["XDG_CONFIG_HOME"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def falcons(repo: Path) -> None:
    for n, text in enumerate(FALCONS, 20):
        write(repo, f"memory/2025-11-{n}.md", f"## Retain\n- W @Peter: {text}\n")
    commit_all(repo, "falcons")


# -- invalid config -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "key"),
    [("[recall]\nkk = 3\n", "recall.kk"), ("[bogus]\nx = 1\n", "bogus.x"), ("k = 3\n", "'k'")],
)
def test_unknown_key_names_file_and_key(repo: Path, toml: str, key: str) -> None:
    write(repo, ".gitmem.toml", toml)
    code, out, err = gitmem("-C", str(repo), "recall", "gateway")
    assert code == 1
    assert out == ""
    assert str(repo / ".gitmem.toml") in err
    assert key in err
    assert "recall.k" in err  # the known settings are listed


@pytest.mark.parametrize(
    ("toml", "key", "allowed"),
    [
        ('[recall]\nk = "many"\n', "recall.k", "1 to 1000"),
        ("[recall]\nk = 0\n", "recall.k", "1 to 1000"),
        ("[recall]\nk = true\n", "recall.k", "1 to 1000"),
        ('[embed]\nprovider = "magic"\n', "embed.provider", "none | auto | local"),
        ('[index]\nextra_paths = "notes"\n', "index.extra_paths", "a list of paths"),
        ("[recall]\nhalf_life_days = -1\n", "recall.half_life_days", "positive"),
    ],
)
def test_bad_value_names_key_and_what_is_allowed(
    repo: Path, toml: str, key: str, allowed: str
) -> None:
    write(repo, ".gitmem.toml", toml)
    code, out, err = gitmem("-C", str(repo), "recall", "gateway")  # reads every one of them
    assert (code, out) == (1, "")
    assert str(repo / ".gitmem.toml") in err
    assert f"'{key}'" in err
    assert allowed in err
    # status and config still run, and name the same error, so it can be fixed
    code, out, _ = gitmem("-C", str(repo), "status")
    assert code == 0 and f"config error: {repo / '.gitmem.toml'}" in out and allowed in out
    assert status_json(repo)["config_errors"] == [err.strip().removeprefix("gitmem: ")]
    code, _, listed_err = gitmem("-C", str(repo), "config", "list")
    assert code == 0 and f"'{key}'" in listed_err and allowed in listed_err


def test_invalid_toml_names_the_file(repo: Path) -> None:
    write(repo, ".gitmem.toml", "[recall\nk = 3\n")
    code, out, err = gitmem("-C", str(repo), "recall", "gateway")
    assert code == 1
    assert out == ""
    assert str(repo / ".gitmem.toml") in err
    assert "invalid TOML" in err
    assert "internal error" not in err


def test_invalid_user_config_names_the_user_file(repo: Path) -> None:
    path = user_config("[recall]\nk = 'lots'\n")
    code, _, err = gitmem("-C", str(repo), "recall", "gateway")
    assert code == 1
    assert str(path) in err
    assert "'recall.k'" in err


def test_bad_environment_value_names_the_variable(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "bogus")
    code, out, err = gitmem("-C", str(repo), "recall", "gateway")
    assert code == 1
    assert out == ""
    assert "GITMEM_EMBED_PROVIDER" in err
    assert "'bogus'" in err
    assert "none | auto | local" in err


def test_a_bad_value_blocks_only_the_commands_that_read_it(repo: Path) -> None:
    """docs/configuration.md: one bad value in .gitmem.toml does not stop every command: status and config
    run (the bad value shown with its error), a command that reads the key fails with the
    error naming file, key and what is allowed, and one that does not read it works."""
    write(repo, ".gitmem.toml", '# tuned for the team\n[recall]\nk = "lots"\n')
    code, out, err = gitmem("-C", str(repo), "recall", "gateway")
    assert (code, out) == (1, "") and "'recall.k'" in err and "1 to 1000" in err
    assert recall_json(repo, "gateway", "--k", "2")["results"]  # --k: recall.k is not read
    assert gitmem("-C", str(repo), "config", "get", "embed.provider")[:2] == (0, "auto\n")
    code, out, err = gitmem("-C", str(repo), "config", "get", "recall.k")
    assert (code, out) == (1, "lots\n") and "1 to 1000" in err
    code, out, err = gitmem("-C", str(repo), "config", "list")
    assert code == 0 and f'recall.k = "lots"  (repository {repo / ".gitmem.toml"}; invalid)' in out
    assert f"error: {repo / '.gitmem.toml'}: invalid value 'lots' for 'recall.k'" in err
    assert gitmem("-C", str(repo), "config", "set", "--repo", "recall.k", "3")[0] == 0
    assert (repo / ".gitmem.toml").read_text(encoding="utf-8") == (
        "# tuned for the team\n[recall]\nk = 3\n")
    assert recall_json(repo, "gateway")["results"]
    assert "config error" not in gitmem("-C", str(repo), "status")[1]


def test_a_bad_value_a_higher_layer_overrides_is_a_warning(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    falcons(repo)
    write(repo, ".gitmem.toml", '[recall]\nk = "lots"\n')
    monkeypatch.setenv("GITMEM_RECALL_K", "2")
    data = recall_json(repo, "falcon")
    assert len(data["results"]) == 2
    assert any("'recall.k'" in w and "the environment value applies" in w
               for w in data["warnings"]), data["warnings"]


def test_unknown_settings_and_broken_files_still_let_status_and_config_run(repo: Path) -> None:
    write(repo, ".gitmem.toml", "[recall\nk = 3\n")
    assert gitmem("-C", str(repo), "recall", "gateway")[0] == 1
    assert any("invalid TOML" in e for e in status_json(repo)["config_errors"])
    assert gitmem("-C", str(repo), "config", "get", "recall.k")[:2] == (0, "8\n")
    write(repo, ".gitmem.toml", "[recall]\nkk = 3\n")
    code, _, err = gitmem("-C", str(repo), "get", "memory/2025-11-27.md#L2")
    assert code == 1 and "unknown setting 'recall.kk'" in err  # a typo is never ignored
    assert any("'recall.kk'" in e for e in status_json(repo)["config_errors"])


# -- every layer, and which one wins -------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "env", "raw", "value"),
    [
        ("recall.k", "GITMEM_RECALL_K", "2", 2),
        ("reflect.step", "GITMEM_REFLECT_STEP", "0.25", 0.25),
        ("index.extra_paths", "GITMEM_INDEX_EXTRA_PATHS", "notes, docs", ["notes", "docs"]),
        ("index.worktree", "GITMEM_WORKTREE", "off", False),
        ("embed.remote.base_url", "GITMEM_EMBED_BASE_URL", "http://127.0.0.1:9/v1",
         "http://127.0.0.1:9/v1"),
        ("embed.remote.api_key_env", "GITMEM_EMBED_REMOTE_API_KEY_ENV", "MY_KEY", "MY_KEY"),
        ("mcp.citations", "GITMEM_MCP_CITATIONS", "on", "on"),
    ],
)
def test_every_setting_has_an_environment_variable(
        repo: Path, monkeypatch: pytest.MonkeyPatch, key: str, env: str, raw: str,
        value: object) -> None:
    from gitmem.config import env_name, setting_attr

    assert env_name(key) == env
    monkeypatch.setenv(env, raw)
    got = gitmem_json("-C", str(repo), "config", "get", key, "--json")
    assert (got["value"], got["source"], got["where"], got["env"]) == (value, "environment",
                                                                       env, env)
    expected = tuple(value) if isinstance(value, list) else value
    assert getattr(load_config(repo), setting_attr(key)) == expected


def test_a_bad_environment_value_names_the_variable_for_every_setting(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_RECALL_K", "lots")
    code, _, err = gitmem("-C", str(repo), "recall", "gateway")
    assert code == 1 and "environment variable GITMEM_RECALL_K" in err and "1 to 1000" in err
    monkeypatch.setenv("GITMEM_EMBED_REMOTE_HEADERS", "Authorization: Bearer sk-canary-9")
    code, out, err = gitmem("-C", str(repo), "config", "list", "--json")
    assert code == 0 and "GITMEM_EMBED_REMOTE_HEADERS" in err + out
    assert "sk-canary-9" not in out + err + "".join(gitmem("-C", str(repo), "status")[1:])


def test_config_shows_every_layer_and_which_one_wins(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo, ".gitmem.toml", "[recall]\nk = 5\n")
    upath = user_config("[recall]\nk = 7\n")
    assert gitmem("-C", str(repo), "config", "get", "recall.k")[1] == "7\n"
    monkeypatch.setenv("GITMEM_RECALL_K", "2")
    assert gitmem("-C", str(repo), "config", "get", "recall.k")[1] == "2\n"
    got = gitmem_json("-C", str(repo), "config", "get", "recall.k", "--json")
    assert [(v["source"], v["value"], v["applies"]) for v in got["layers"]] == [
        ("default", 8, False), ("repository", 5, False), ("user", 7, False),
        ("environment", 2, True)]
    assert [v["where"] for v in got["layers"]] == [None, str(repo / ".gitmem.toml"), str(upath),
                                                   "GITMEM_RECALL_K"]
    out = gitmem("-C", str(repo), "config", "list")[1]
    assert "recall.k = 2  (environment GITMEM_RECALL_K)\n" in out
    assert f"    also repository {repo / '.gitmem.toml'}: 5 (the environment value wins)\n" in out
    assert f"    also user {upath}: 7 (the environment value wins)\n" in out
    assert "recall.around_days = 3  (default)\n" in out
    falcons(repo)
    assert len(recall_json(repo, "falcon")["results"]) == 2


def test_the_configuration_reference_lists_every_environment_variable() -> None:
    from gitmem.config import env_name, setting_names

    text = (Path(__file__).parent.parent / "docs" / "configuration.md").read_text("utf-8")
    missing = [env_name(n) for n in setting_names() if f"`{env_name(n)}`" not in text]
    assert not missing, f"docs/configuration.md does not list {missing}"


def test_unset_removes_a_table_it_leaves_empty(repo: Path) -> None:
    path = repo / ".gitmem.toml"
    write(repo, ".gitmem.toml", '[embed]\nprovider = "none"\n\n[recall]\nk = 3\n')
    assert gitmem("-C", str(repo), "config", "unset", "--repo", "recall.k")[0] == 0
    assert path.read_text(encoding="utf-8") == '[embed]\nprovider = "none"\n'
    write(repo, ".gitmem.toml", "[recall]\nk = 3\n\n[mcp]\ncitations = \"on\"\n")
    assert gitmem("-C", str(repo), "config", "unset", "--repo", "recall.k")[0] == 0
    assert path.read_text(encoding="utf-8") == '[mcp]\ncitations = "on"\n'
    write(repo, ".gitmem.toml", "[recall]\n# the team's choice\nk = 3\n")
    assert gitmem("-C", str(repo), "config", "unset", "--repo", "recall.k")[0] == 0
    assert path.read_text(encoding="utf-8") == "[recall]\n# the team's choice\n"  # kept
    assert gitmem("-C", str(repo), "config", "unset", "--repo", "recall.around_days")[0] == 0
    assert path.read_text(encoding="utf-8") == "[recall]\n# the team's choice\n"
    assert gitmem("-C", str(repo), "config", "set", "--repo", "recall.k", "4")[0] == 0
    assert gitmem("-C", str(repo), "config", "unset", "--repo", "recall.k")[0] == 0
    assert path.read_text(encoding="utf-8") == "[recall]\n# the team's choice\n"
    write(repo, ".gitmem.toml", "[recall]\nk = 3\n")
    assert gitmem("-C", str(repo), "config", "unset", "--repo", "recall.k")[0] == 0
    assert path.read_text(encoding="utf-8") == ""


# -- the trust rule -------------------------------------------------------------------------------


def test_repo_config_may_not_set_remote_endpoints(repo: Path) -> None:
    write(
        repo,
        ".gitmem.toml",
        '[embed.remote]\nbase_url = "https://evil.example/v1"\napi_key_env = "AWS_SECRET"\n'
        'headers = { "X-Exfil" = "1" }\n',
    )
    data = recall_json(repo, "gateway host")
    assert sources(data)[0] == "memory/2025-11-27.md#L2"
    for setting in ("embed.remote.base_url", "embed.remote.api_key_env", "embed.remote.headers"):
        recall_hits = [w for w in data["warnings"] if setting in w and "ignored" in w]
        assert len(recall_hits) == 1, f"{setting} not warned about in {data['warnings']}"
        assert str(repo / ".gitmem.toml") in recall_hits[0]
        status_hits = [w for w in status_json(repo)["config_warnings"] if setting in w]
        assert len(status_hits) == 1
    assert not any("evil.example" in w for w in data["warnings"])

    cfg = load_config(repo)
    assert cfg.remote_base_url is None
    assert cfg.remote_api_key_env is None
    assert cfg.remote_headers == ()

    code, out, _ = gitmem("-C", str(repo), "status")
    assert code == 0
    assert "embed.remote.base_url" in out


def test_user_config_may_set_remote_endpoints(repo: Path) -> None:
    user_config('[embed.remote]\nbase_url = "https://embed.example/v1"\n')
    assert load_config(repo).remote_base_url == "https://embed.example/v1"
    data = recall_json(repo, "gateway host")
    assert not any("embed.remote" in w for w in data["warnings"])
    assert status_json(repo)["config_warnings"] == []


# -- layers ---------------------------------------------------------------------------------------


def test_user_config_overrides_repo_config_and_flags_override_both(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, ".gitmem.toml", "[recall]\nk = 1\n")
    falcons(repo)

    assert len(recall_json(repo, "falcon")["results"]) == 1
    user_config("[recall]\nk = 3\n")
    assert len(recall_json(repo, "falcon")["results"]) == 3
    assert len(recall_json(repo, "falcon", "--k", "2")["results"]) == 2
    assert load_config(repo).recall_k == 3


def test_environment_overrides_user_config(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(repo, ".gitmem.toml", '[embed]\nprovider = "local"\n')
    user_config('[embed]\nprovider = "none"\n')
    assert load_config(repo).embed_provider == "none"
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "auto")
    assert load_config(repo).embed_provider == "auto"
    assert status_json(repo)["semantic"]["provider"] == "auto"


# -- workspace and extra paths --------------------------------------------------------------------


def test_workspace_root_subfolder(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, ".gitmem.toml", '[workspace]\nroot = "agent"\n')
    write(repo, "agent/" + GOOD_DAILY, GOOD_TEXT)
    write(repo, "agent/MEMORY.md", "# Memory\n\nThe agent keeps a marmot.\n")
    write(repo, GOOD_DAILY, "## Retain\n- W @Peter: Outside the workspace: a wolverine.\n")
    commit_all(repo, "agent workspace")

    data = recall_json(repo, "gateway host")
    top = data["results"][0]
    assert top["source"] == "memory/2025-11-27.md#L2"
    assert top["path"] == "memory/2025-11-27.md"
    assert sources(recall_json(repo, "marmot")) == ["MEMORY.md#L1-L3"]
    assert recall_json(repo, "wolverine")["results"] == []
    assert (repo / "agent" / ".memory" / "index.sqlite").is_file()
    assert not (repo / ".memory" / "index.sqlite").exists()
    exclude = (repo / ".git" / "info" / "exclude").read_text(encoding="utf-8").splitlines()
    assert "/agent/.memory/" in exclude

    # Started inside the subfolder, the answer is the same.
    assert sources(recall_json(repo / "agent" / "memory", "gateway host"))[0] == top["source"]
    code, out, _ = gitmem("-C", str(repo), "get", "memory/2025-11-27.md#L2")
    assert (code, out) == (0, "- W @Peter: Moved the gateway host to The Castle.\n")
    status = status_json(repo)
    assert status["workspace"] == str(repo / "agent")
    assert status["files"] == 2


def test_workspace_root_outside_the_repository_is_refused(repo: Path) -> None:
    write(repo, ".gitmem.toml", '[workspace]\nroot = "../elsewhere"\n')
    code, _, err = gitmem("-C", str(repo), "status")
    assert code == 1
    assert "workspace.root" in err
    assert str(repo / ".gitmem.toml") in err


def test_extra_paths_are_indexed_as_extra(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, GOOD_DAILY, GOOD_TEXT)
    write(repo, ".gitmem.toml", '[index]\nextra_paths = ["notes"]\n')
    write(repo, "notes/a.md", "# Runbook\n\nRestart the heron service first.\n")
    write(repo, "notes/deep/b.md", "## Retain\n- W @Peter: The egret queue drains at night.\n")
    write(repo, "notes/c.txt", "heron egret in a text file\n")
    write(repo, "other/d.md", "heron egret outside the extra paths\n")
    commit_all(repo, "extra notes")

    heron = recall_json(repo, "heron", "--k", "20")
    assert sources(heron) == ["notes/a.md#L1-L3"]
    assert heron["results"][0]["kind"] == "note"
    egret = recall_json(repo, "egret", "--k", "20")
    assert sources(egret)[0] == "notes/deep/b.md#L2"
    assert egret["results"][0]["kind"] == "world"
    assert {r["path"] for r in egret["results"]} == {"notes/deep/b.md"}

    conn = apsw.Connection(str(repo / ".memory" / "index.sqlite"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        classes = dict(conn.execute("SELECT path, class FROM files ORDER BY path").fetchall())
    finally:
        conn.close()
    assert classes == {
        "memory/2025-11-27.md": "daily",
        "notes/a.md": "extra",
        "notes/deep/b.md": "extra",
    }

    assert (
        gitmem("-C", str(repo), "get", "notes/a.md#L3")[1] == "Restart the heron service first.\n"
    )
    code, _, err = gitmem("-C", str(repo), "get", "other/d.md")
    assert code == 1
    assert "not a memory file" in err


def test_repo_config_cannot_name_a_remote_provider(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/configuration.md: a committed .gitmem.toml may not send memory (or the user's key) anywhere."""
    from gitmem.config import load_config

    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-repo-config")
    (tmp_path / ".gitmem.toml").write_text('[embed]\nprovider = "openai"\nfallback = "gemini"\n',
                                           encoding="utf-8")
    cfg = load_config(tmp_path)
    assert cfg.embed_provider == "auto" and cfg.embed_fallback == "none"
    assert any("embed.provider" in w and "openai" in w for w in cfg.warnings)
    assert any("embed.fallback" in w and "gemini" in w for w in cfg.warnings)
    user = Path.home() / ".config" / "gitmem" / "config.toml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('[embed]\nprovider = "openai"\n', encoding="utf-8")
    assert load_config(tmp_path).embed_provider == "openai"  # the user may


@pytest.mark.parametrize("env", [
    {"XDG_CONFIG_HOME": "/x/config", "XDG_CACHE_HOME": "/x/cache", "HOME": "/home/u"},
    {"HOME": "/home/u"},
    {"XDG_CONFIG_HOME": "relative/config", "XDG_CACHE_HOME": "", "HOME": "/home/u"},
    {"HOME": "relative"},
])
def test_user_folders_are_where_platformdirs_puts_them(env: dict[str, str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The user config and cache folders are platformdirs' (found without importing it when
    the XDG rule applies plainly: it costs every command start-up time)."""
    import platformdirs

    from gitmem.config import user_config_path
    from gitmem.userdirs import user_cache_dir

    for name in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert user_config_path() == \
        Path(platformdirs.user_config_dir("gitmem", appauthor=False)) / "config.toml"
    assert user_cache_dir() == Path(platformdirs.user_cache_dir("gitmem", appauthor=False))
