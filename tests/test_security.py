"""Security (docs/configuration.md; issue 10): path-taking commands refuse attack strings, hooks are safe in
hostile repository paths, a repository config cannot redirect embeddings or headers, an API key
never appears anywhere, gitmem's files are user-only, and remote providers verify TLS."""

from __future__ import annotations

import datetime as dt
import ipaddress
import json
import os
import re
import ssl
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from embed_server import EmbedServer, Fault
from gguf_model import tiny_gguf

from gitmem.config import Config
from gitmem.embed.base import EmbeddingError
from gitmem.embed.download import models_dir, pull
from gitmem.embed.remote import remote_embedder
from gitmem.front.cli import run_captured
from gitmem.hooks import install
from gitmem.parse.visible import visible_json
from gitmem.userdirs import user_cache_dir
from testing.bounds import FAILURE_SECONDS
from testing.chaos import wait_gone
from testing.cli import gitmem
from testing.contract import GOOD_DAILY, GOOD_TEXT
from testing.gitenv import model_from_files
from testing.repo import commit_all, git, make_repo, write

CANARY = "sk-canary-SECURITY-9c1e"
SECRET = "TOPSECRET-5d2f"
GITMEM_SOURCE = Path(__file__).resolve().parent.parent / "gitmem"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A workspace with a secret file beside it, one in .git, links pointing out."""
    (tmp_path / "secret.md").write_text(f"{SECRET} outside\n", encoding="utf-8")
    repo = make_repo(tmp_path, "ws")
    write(repo, GOOD_DAILY, GOOD_TEXT)
    write(repo, "README.md", f"{SECRET} readme\n")
    write(repo, ".git/info/secret.md", f"{SECRET} git\n")
    os.symlink(str(tmp_path / "secret.md"), repo / "memory" / "link.md")
    os.symlink(str(tmp_path), repo / "memory" / "dirlink")
    commit_all(repo, "with links")
    return repo


def attack_strings(outside: Path) -> list[str]:
    return [
        "..", "../secret.md", "../../secret.md", "memory/../../secret.md", str(outside),
        "/etc/passwd", "/etc/passwd.md", "/proc/self/environ", "%2e%2e/secret.md",
        "..%2fsecret.md", "....//secret.md", "memory/..\\..\\secret.md", "memory/\x00.md",
        "memory/2025-11-27.md\x00.txt", "memory\n/../secret.md", "~/secret.md",
        "$HOME/secret.md", "memory/link.md", "memory/dirlink/secret.md",
        "memory/dirlink/ws/memory/2025-11-27.md", ".git/config", ".git/info/secret.md",
        ".memory/index.sqlite", ".gitmem.toml", "README.md", "memory/../README.md",
        "MEMORY.md/../README.md", "file:///etc/passwd", "\\\\server\\share\\x.md", "C:\\x.md",
        "memory\uff0f..\uff0fsecret.md", "memory/%00.md", ".", "", " ", "memory/",
        "bank/entities/../../../secret.md", "memory/./../../secret.md",
        "memory/2025-11-27.md/..", "-rf",
        "memory/2025-11-27.md#L1@--output=pwned", "memory/2025-11-27.md#L1@HEAD:../secret.md",
        "memory/2025-11-27.md#L1@$(touch pwned)",
    ]


def test_get_refuses_every_attack_string(victim: Path, tmp_path: Path) -> None:
    attacks = attack_strings(tmp_path / "secret.md")
    assert len(attacks) >= 30
    for target in attacks:
        code, out, err = gitmem("-C", str(victim), "get", target)
        assert code in (1, 2), (target, code, out, err)
        assert SECRET not in out + err, target
        assert "internal error" not in err and "Traceback" not in err, (target, err)
        assert err.strip(), f"{target!r}: a refusal must say why"
    for rev in ("--output=pwned", "HEAD:../secret.md", "-p", "$(touch pwned)", "HEAD~99999"):
        code, out, err = gitmem("-C", str(victim), "get", GOOD_DAILY, "--at", rev)
        assert code == 2 and "unknown revision" in err, (rev, err)
    assert not list(tmp_path.rglob("pwned*")) and not Path("pwned").exists()
    code, out, _ = gitmem("-C", str(victim), "get", GOOD_DAILY)
    assert code == 0 and "gateway" in out  # and the real thing still works


def test_get_at_a_revision_never_follows_a_committed_link(victim: Path) -> None:
    _, out, err = gitmem("-C", str(victim), "get", "memory/link.md", "--at", "HEAD")
    assert SECRET not in out + err


@pytest.mark.parametrize("ref", [
    "hf:org/repo/../../x.gguf", "hf:../../etc/x.gguf", "hf:org/repo/sub/../../../x.gguf",
    "hf:org/../x.gguf", "hf:/org/repo/x.gguf", "hf:org/repo/..", "hf:org/repo//etc/x.gguf",
    "hf:org/repo/x.gguf\x00", "hf:org/re\npo/x.gguf", "hf:o rg/repo/x.gguf",
    "hf:org/repo/%2e%2e/x.gguf", "hf:org/repo/x.gguf?download=1", "hf:org/repo/C:\\x.gguf",
    "hf:org/repo/x.bin",
])
def test_model_pull_refuses_attack_references(ref: str, tmp_path: Path) -> None:
    code, _, err = gitmem("model", "pull", ref)
    assert code == 1, err
    assert "invalid model reference" in err
    assert not models_dir().exists() or not any(models_dir().rglob("*"))


@pytest.mark.parametrize("extra", ['["../outside"]', '["/etc"]', '["a/../../x"]',
                                   '["memory\\\\..\\\\.."]', '[""]'])
def test_repository_config_cannot_reach_outside(victim: Path, extra: str) -> None:
    write(victim, ".gitmem.toml", f"[index]\nextra_paths = {extra}\n")
    code, _, err = gitmem("-C", str(victim), "index")
    assert code == 1, err
    assert "extra_paths" in err and ".gitmem.toml" in err
    assert SECRET not in err


# -- hooks in hostile repository paths ------------------------------------------------------


HOSTILE_NAMES = ["sp ace", "it's \"quoted\"", "$(touch PWNED-subst)", "`touch PWNED-tick`",
                 "new\nline", "semi;colon & amp | pipe", "glob*?[x]", "-dash", "$HOME",
                 "trailing space ", "tab\there", "line\u2028separator"]


def test_hooks_work_in_hostile_repository_paths(tmp_path: Path) -> None:
    repos = []
    for n, name in enumerate(HOSTILE_NAMES):
        repo = make_repo(tmp_path / f"case{n}", name)
        install(repo)
        write(repo, GOOD_DAILY, GOOD_TEXT.replace("gateway", f"gateway{n}"))
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "first")  # the real post-commit hook runs
        repos.append(repo)
    deadline = time.monotonic() + FAILURE_SECONDS
    pending = list(repos)
    while pending and time.monotonic() < deadline:
        pending = [r for r in pending if not _indexed(r)]
        time.sleep(0.1)
    assert not pending, [str(p) for p in pending]
    for repo in repos:
        assert not wait_gone(str(repo), FAILURE_SECONDS)
        assert [p.name for p in repo.parent.iterdir()] == [repo.name]  # nothing written beside
        log = (repo / ".memory" / "hook.log").read_text(encoding="utf-8")
        assert "post-commit: indexed" in log and "failed" not in log, log
    assert not list(tmp_path.rglob("PWNED*")) and not list(Path.cwd().glob("PWNED*"))
    assert not list(Path.home().glob("PWNED*"))


def _indexed(repo: Path) -> bool:
    log = repo / ".memory" / "hook.log"
    return log.is_file() and "post-commit: indexed" in log.read_text(encoding="utf-8")


# -- the trust rule: a repository's config cannot redirect embeddings or headers -------------


@pytest.fixture
def good_server() -> Iterator[EmbedServer]:
    with EmbedServer(dim=8) as srv:
        yield srv


@pytest.fixture
def evil_server() -> Iterator[EmbedServer]:
    with EmbedServer(dim=8) as srv:
        yield srv


def test_repository_config_cannot_redirect_embeddings_or_headers(
        victim: Path, good_server: EmbedServer, evil_server: EmbedServer,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("GITMEM_EMBED_BASE_URL", good_server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("STOLEN_KEY", "other-secret")
    write(victim, ".gitmem.toml", (
        '[embed]\nprovider = "ollama"\nfallback = "gemini"\n'
        f'[embed.remote]\nbase_url = "{evil_server.url}/v1"\napi_key_env = "STOLEN_KEY"\n'
        'headers = { "X-Evil" = "1", "Authorization" = "Bearer planted" }\n'))
    commit_all(victim, "a hostile config", "2025-11-28T21:00:00+00:00")
    code, _, err = gitmem("-C", str(victim), "index")
    assert code == 0, err
    code, out, _ = gitmem("-C", str(victim), "recall", "gateway", "--json")
    assert code == 0
    assert evil_server.requests == []
    assert good_server.requests
    for request in good_server.requests:
        assert "x-evil" not in request.headers
        assert request.headers["authorization"] == f"Bearer {CANARY}"
    warnings = " ".join(__import__("json").loads(out)["warnings"])
    for setting in ("embed.provider", "embed.fallback", "embed.remote.base_url",
                    "embed.remote.headers", "embed.remote.api_key_env"):
        assert setting in warnings or setting.rsplit(".", 1)[1] in warnings, setting


# -- a canary key never appears anywhere ----------------------------------------------------


def test_a_canary_key_never_appears_anywhere(victim: Path, good_server: EmbedServer,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    header_secret = "hdr-SECURITY-77aa"
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "gitmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[embed.remote]\nheaders = {{ "X-Team" = "{header_secret}" }}\n',
                      encoding="utf-8")
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("GITMEM_EMBED_BASE_URL", good_server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    outputs: list[str] = []

    def run(*args: str) -> int:
        code, out, err = gitmem("-C", str(victim), *args)
        outputs.extend([out, err])
        return code

    assert run("index") == 0
    assert run("recall", "gateway", "--json") == 0
    assert run("status", "--deep", "--json") == 0
    good_server.script(*[Fault(status=401)] * 3)
    assert run("recall", "gateway", "--json") == 4  # the server echoes the key it got
    good_server.script(*[Fault(status=500)] * 10)
    assert run("recall", "gateway") == 4
    good_server.script(Fault(status=403))
    write(victim, "memory/2025-11-28.md", "## Retain\n- W @Peter: Another day, another key.\n")
    commit_all(victim, "more", "2025-11-28T21:00:00+00:00")
    assert run("index") == 4
    assert run("hooks", "run", "post-commit") == 0  # logs to hook.log
    monkeypatch.setattr("gitmem.index.status.status",
                        lambda *a, **k: (_ for _ in ()).throw(RuntimeError(f"boom {CANARY}")))
    assert run("status") == 3  # an internal error writes a crash log
    assert all(CANARY not in text and header_secret not in text for text in outputs[:-2])
    crash = re.search(r"traceback written to (\S+)", outputs[-1])
    assert crash, outputs[-1]
    files = [*victim.joinpath(".memory").rglob("*"), *user_cache_dir().rglob("*")]
    for path in files:
        if path.is_file() and path != Path(crash.group(1)):
            data = path.read_bytes()
            assert CANARY.encode() not in data and header_secret.encode() not in data, path


def test_remote_providers_verify_tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ca_file, server_ctx = _self_signed(tmp_path)
    with EmbedServer(dim=8, tls=server_ctx) as server:
        cfg = Config(embed_provider="openai", remote_base_url=server.url + "/v1",
                     remote_api_key_env="OPENAI_API_KEY", embed_retries=0,
                     embed_timeout=FAILURE_SECONDS)
        monkeypatch.setenv("OPENAI_API_KEY", CANARY)
        with pytest.raises(EmbeddingError, match=r"(?i)certificate"):
            remote_embedder(cfg, "openai").embed_batch(["x"], input_type="query")
        assert server.requests == []  # the handshake failed before any request was sent
        # The same server, trusted explicitly (SSL_CERT_FILE): verification, not a broken
        # server, refused it above.
        import gitmem.embed.http as http

        monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
        http._tls_context.cache_clear()
        try:
            vectors = remote_embedder(cfg, "openai").embed_batch(["x"], input_type="query")
        finally:
            http._tls_context.cache_clear()
        assert len(vectors) == 1 and len(server.requests) == 1


def test_tls_verification_is_never_turned_off() -> None:
    """Every HTTP client gitmem makes verifies certificates (httpx's default, or the shared
    default context); no source turns verification off."""
    for path in GITMEM_SOURCE.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"verify\s*=\s*(False|0|None)", source), path
        assert "CERT_NONE" not in source and "check_hostname = False" not in source, path
        assert "_create_unverified_context" not in source, path
        for call in re.findall(r"httpx\.(?:Client|AsyncClient|get|post|stream)\((.*?)\)",
                               source, re.S):
            assert "verify" not in call or "verify=_tls_context(" in call, (path, call)


def _self_signed(tmp_path: Path) -> tuple[Path, ssl.SSLContext]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert_file, key_file)
    return cert_file, ctx


# -- user-only files ------------------------------------------------------------------------


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_gitmem_files_are_user_only(victim: Path, good_server: EmbedServer,
                                    tmp_path_factory: pytest.TempPathFactory,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    old = os.umask(0o022)
    try:
        monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "openai")
        monkeypatch.setenv("GITMEM_EMBED_BASE_URL", good_server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", CANARY)
        assert gitmem("-C", str(victim), "index")[0] == 0
        assert gitmem("-C", str(victim), "hooks", "run")[0] == 0
        memory = victim / ".memory"
        assert _mode(memory) == 0o700
        for name in ("index.sqlite", "embeddings.sqlite", "index.lock", "embed.lock",
                     "hook.log"):
            assert _mode(memory / name) == 0o600, name
        # an index made by an older version, readable by all, is tightened on the next write
        (memory / "index.sqlite").chmod(0o644)
        memory.chmod(0o755)
        assert gitmem("-C", str(victim), "index", "--force")[0] == 0
        assert _mode(memory) == 0o700 and _mode(memory / "index.sqlite") == 0o600
        # the model cache
        model = tiny_gguf(tmp_path_factory).read_bytes()
        path = _pull_from_local_hub(model, monkeypatch)
        assert _mode(user_cache_dir()) == 0o700 and _mode(models_dir()) == 0o700
        assert _mode(path) == 0o600
        # a crash log
        monkeypatch.setattr("gitmem.index.status.status",
                            lambda *a, **k: (_ for _ in ()).throw(RuntimeError("boom")))
        code, _, err = gitmem("-C", str(victim), "status")
        assert code == 3
        crash = Path(re.search(r"traceback written to (\S+)", err).group(1))  # type: ignore[union-attr]
        assert _mode(crash) == 0o600 and _mode(crash.parent) == 0o700
    finally:
        os.umask(old)


def _pull_from_local_hub(payload: bytes, monkeypatch: pytest.MonkeyPatch) -> Path:
    from test_local_provider import ModelServer

    srv = ModelServer(payload)
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("GITMEM_HF_ENDPOINT", srv.endpoint)
    try:
        return pull("hf:test-org/tiny-repo/tiny-bert.gguf")
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


def test_hook_scripts_quote_the_python_path(tmp_path: Path) -> None:
    """A Python in a hostile path (a venv in a folder with spaces and '$(...)') still runs."""
    folder = tmp_path / "venv $(touch PWNED-py) 'q'"
    folder.mkdir()
    python = folder / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    python.chmod(0o755)
    repo = make_repo(tmp_path, "repo")
    install(repo, python=str(python))
    write(repo, GOOD_DAILY, GOOD_TEXT)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    deadline = time.monotonic() + FAILURE_SECONDS
    while not _indexed(repo) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _indexed(repo)
    assert not list(tmp_path.rglob("PWNED*"))
    hook = (repo / ".git" / "hooks" / "post-commit").read_text(encoding="utf-8")
    assert subprocess.run(["sh", "-n"], input=hook, text=True).returncode == 0


# -- memory text cannot drive the terminal ----------------------------------------

# What a memory file may hold: an OSC title with BEL, CSI clear-screen and colour, an 8-bit CSI,
# backspace, DEL, a bidi override and an isolate ("Trojan Source").
PAYLOAD = "\x1b]0;pwned\x07 \x1b[2J\x1b[31m \x9b2J \x08\x7f \u202eevil\u202c \u2066iso\u2069"
SHOWN = r"\x1b]0;pwned\x07 \x1b[2J\x1b[31m \x9b2J \x08\x7f \u202eevil\u202c \u2066iso\u2069"
# The styles gitmem itself prints on a terminal (bold, cyan, yellow, reset); nothing else may be.
OWN_STYLES = re.compile(r"\x1b\[(?:1|33|36|0)m")
DRIVES_TERMINAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
ODD_NAME = "memory/odd\x1b]0;name\x07.md"


def _terminal_run(repo: Path, *args: str) -> tuple[int, str]:
    """``gitmem -C repo ARGS`` as on a terminal (colour on: click strips nothing); stdout and
    stderr together, with gitmem's own styles removed."""
    code, out, err = run_captured(["-C", str(repo), *args], True)
    return code, OWN_STYLES.sub("", out + err)


def _strings(data: object) -> Iterator[str]:
    """Every string in decoded JSON."""
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict | list):
        for value in data.values() if isinstance(data, dict) else data:
            yield from _strings(value)


def _escape_workspace(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", f"# Memory\n\nThe core {PAYLOAD} numbat line.\n")
    write(repo, "bank/entities/Peter.md", f"---\naliases: [{json.dumps('Pete' + PAYLOAD)}]\n---\n# Peter\n\n"
                f"Page {PAYLOAD} text.\n")
    write(repo, "memory/2025-11-27.md", f"## Retain\n- W @Peter: The {PAYLOAD} wombat fact.\n"
                f"- O(c=0.8) @Peter: Likes {PAYLOAD} loud tea.\n- Q @Peter: {PAYLOAD} bad kind.\n")
    write(repo, ODD_NAME, "An oddly named note about the quokka.\n")
    write(repo, ".gitmem.toml", f"[embed]\nmodel = {json.dumps(PAYLOAD + '.gguf')}\n")
    model_from_files()
    commit_all(repo, "escapes")
    return repo


def test_no_command_lets_memory_text_drive_the_terminal(tmp_path: Path) -> None:
    """Every command that prints memory text (or file names, config values, errors quoting
    them) shows control characters and bidi overrides as visible escapes, on stdout and
    stderr alike; --json keeps the exact text, as JSON escapes."""
    repo = _escape_workspace(tmp_path)
    write(repo, ODD_NAME, "An oddly named note about the quokka, edited.\n")  # uncommitted
    shown: dict[str, str] = {}
    commands: list[tuple[str, ...]] = [
        ("index",), ("status",), ("recall", "wombat"), ("recall", "quokka"),
        ("recall", "numbat", "--json"), ("get", "MEMORY.md"), ("get", "memory/2025-11-27.md#L2"),
        ("get", "MEMORY.md", "--json"), ("entity", "Peter"), ("entity",),
        ("entity", "Peter", "--json"), ("reflect", "--since", "2025-01", "--dry-run"),
        ("reflect", "--since", "2025-01", "--commit"), ("opinions",), ("opinions", "--history"),
        ("recall", "tea", "--kind", "O"), ("review", "HEAD~1..HEAD"),
        ("review", "HEAD~1..HEAD", "--json"), ("config", "list"), ("config", "get", "embed.model"),
        ("retain", f"W @Peter: Retained {PAYLOAD} text."),
    ]
    for args in commands:
        code, text = _terminal_run(repo, *args)
        assert code == 0, (args, text)
        shown[" ".join(args)] = text
    assert [c for c, text in shown.items() if DRIVES_TERMINAL.search(text)] == []
    for args, code in ((("entity", f"Nobody{PAYLOAD}"), 1), (("get", f"memory/{PAYLOAD}.md"), 1)):
        got, text = _terminal_run(repo, *args)
        assert got == code and "gitmem:" in text and not DRIVES_TERMINAL.findall(text), text
        assert r"\x1b]0;pwned\x07" in text
    for command in ("recall wombat", "recall tea --kind O", "get MEMORY.md", "entity Peter",
                    "opinions", "opinions --history", "review HEAD~1..HEAD", "status",
                    "config get embed.model", "get memory/2025-11-27.md#L2"):
        assert SHOWN in shown[command], (command, shown[command])  # every character shown
    assert f"@Peter Likes {SHOWN[:40]}" in shown["reflect --since 2025-01 --dry-run"]
    assert r"odd\x1b]0;name\x07.md" in shown["recall quokka"]
    assert r"odd\x1b]0;name\x07.md" in shown["status"]  # its uncommitted file, named
    assert r"aliases: Pete\x1b]0;pwned\x07 " in shown["entity Peter"]  # as the page writes it
    assert "pwned" in shown["config list"]  # as a TOML string, escapes and all
    assert "wombat" in shown["recall wombat"] and "line." in shown["get MEMORY.md"]
    for command in ("recall numbat --json", "get MEMORY.md --json", "entity Peter --json",
                    "review HEAD~1..HEAD --json"):
        assert any(PAYLOAD in text for text in _strings(json.loads(shown[command]))), command
    assert "memory/2025-11-27.md#L2: the entry holds control" in shown[
        "reflect --since 2025-01 --commit"]


def test_reflect_writes_an_entrys_control_characters_as_escapes(tmp_path: Path) -> None:
    """docs/opinions-file.md 'the heading is the statement as written' and docs/memory-format.md 'nothing silent': reflect keeps
    every character of the entry, written visibly in the heading and the entity page, says so
    with path#Lline, and a later entry with the same raw text still matches that opinion."""
    repo = _escape_workspace(tmp_path)
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-01", "--json")
    assert code == 0, err
    warned = {w["location"] for w in json.loads(out)["warnings"]
              if w["code"] == "control-characters"}
    assert warned == {"memory/2025-11-27.md#L2", "memory/2025-11-27.md#L3"}
    for rel in ("bank/opinions.md", "bank/entities/Peter.md"):
        written = (repo / rel).read_text(encoding="utf-8")
        generated = written.split("gitmem:begin")[-1]  # the page's own text is the person's
        assert not DRIVES_TERMINAL.findall(generated), rel
    assert f"## @Peter Likes {SHOWN} loud tea\n" in (repo / "bank/opinions.md").read_text(
        encoding="utf-8")
    commit_all(repo, "reflected")
    write(repo, "memory/2025-11-28.md", f"## Retain\n- O(c=0.4) @Peter: Likes {PAYLOAD} loud "
                "tea.\n")
    commit_all(repo, "again", date="2025-11-28T21:00:00+00:00")
    code, out, err = gitmem("-C", str(repo), "reflect", "--since", "2025-01", "--json")
    assert code == 0, err
    [change] = json.loads(out)["opinions"]
    assert not change["created"] and change["after"] < change["before"]


@pytest.mark.parametrize("data", [PAYLOAD, {"k": [PAYLOAD, "\u009b", "\x7f"]}, "plain ü 日本"])
def test_json_output_is_the_same_data_without_raw_controls(data: object) -> None:
    text = visible_json(data, 2)
    assert json.loads(text) == data and not DRIVES_TERMINAL.findall(text)
