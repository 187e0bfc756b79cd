"""gitmem as OpenClaw's memory, tested against the real OpenClaw (pinned in
``integrations/openclaw-toolchain``): ``openclaw plugins install --link`` of the plugin,
``openclaw memory search`` and ``reflect --since 7d`` answered by gitmem, the gateway's
``POST /tools/invoke`` for ``memory_search`` / ``memory_get`` / ``memory_retain``, staged flush
entries committed by ``gitmem retain``, the gateway's memory status and embedding probe, and an
agent turn whose stub model (127.0.0.1) calls ``memory_search`` and gets gitmem's citations,
with gitmem's prompt section in its system prompt. Also the plugin's own tests (node's test
runner) and the warning a server gives when no configuration reached it.

Without the toolchain these tests fail under CI (``CI=true``) and are skipped with the reason
elsewhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from testing.bounds import FAILURE_SECONDS
from testing.chat_stub import ChatStub, chat_stub
from testing.cli import gitmem
from testing.gitenv import TEST_GITCONFIG, hermetic_environ
from testing.openclaw import (
    PLUGIN_DIR,
    Gateway,
    OpenClawHome,
    find_toolchain,
    gitmem_command,
    install_plugin,
    new_home,
)
from testing.repo import commit_all, git, pasted_log, write

UNCONFIGURED = "no gitmem configuration reached this process"


def toolchain() -> tuple[Path, Path]:
    found = find_toolchain()
    if isinstance(found, str):
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs the OpenClaw toolchain: {found}")
        pytest.skip(found)
    return found


@pytest.fixture(scope="module")
def stub() -> Iterator[ChatStub]:
    with chat_stub("memory_search", {"query": "gateway host"}) as running:
        yield running


@pytest.fixture(scope="module")
def claw(tmp_path_factory: pytest.TempPathFactory, built_fixture: Path,
         stub: ChatStub) -> OpenClawHome:
    """OpenClaw with the plugin installed (--link) for a copy of the sample workspace; gitmem
    gets its user configuration through the plugin's 'env' (recall.k = 3)."""
    node, entry = toolchain()
    root = tmp_path_factory.mktemp("openclaw")
    home = root / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(TEST_GITCONFIG, encoding="utf-8")
    env = hermetic_environ(home)
    workspace = root / "ws"
    shutil.copytree(built_fixture, workspace, symlinks=True)
    user_config = root / "gitmem-config"
    (user_config / "gitmem").mkdir(parents=True)
    (user_config / "gitmem" / "config.toml").write_text("[recall]\nk = 3\n", encoding="utf-8")
    claw = new_home(node, entry, root, workspace, env, stub.base_url)
    install_plugin(claw, {"command": gitmem_command(),
                          "env": {"XDG_CONFIG_HOME": str(user_config)}})
    return claw


@pytest.fixture(scope="module")
def gateway(claw: OpenClawHome) -> Iterator[Gateway]:
    with claw.gateway() as running:
        yield running


def gm_json(ws: Path, *args: str) -> Any:
    code, out, err = gitmem("-C", str(ws), *args, "--json")
    assert code == 0, err
    return json.loads(out)


def details(reply: tuple[int, dict[str, Any]]) -> dict[str, Any]:
    status, body = reply
    assert status == 200 and body.get("ok"), body
    data: dict[str, Any] = body["result"]["details"]
    return data


def test_install_link_takes_the_memory_slot(claw: OpenClawHome) -> None:
    plugins = claw.config()["plugins"]
    assert plugins["slots"]["memory"] == "gitmem"
    assert str(PLUGIN_DIR) in plugins["load"]["paths"]
    assert plugins["entries"]["gitmem"]["enabled"] is True


def test_openclaw_memory_search_is_gitmem_recall(claw: OpenClawHome) -> None:
    """The design's command, 'openclaw memory search … --k 25 --since …', prints what
    'gitmem recall' prints, cited (OpenClaw's --max-results is --k)."""
    proc = claw.run("memory", "search", "gateway host", "--k", "25", "--since", "2025-11",
                    "--max-results", "2", "--json")
    printed = json.loads(proc.stdout)
    direct = gm_json(claw.workspace, "recall", "gateway host", "--k", "25", "--since",
                     "2025-11", "--k", "2")
    assert printed["results"] == direct["results"]
    assert len(printed["results"]) == 2
    assert printed["results"][0]["source"] == "memory/2025-11-27.md#L14"


def test_openclaw_memory_reflect_runs_gitmem_reflect(claw: OpenClawHome) -> None:
    code, _, err = gitmem("-C", str(claw.workspace), "retain",
                          "O(c=0.9) @Peter: Prefers the gateway on The Castle.")
    assert code == 0, err
    proc = claw.run("memory", "reflect", "--since", "7d", "--dry-run", "--json")
    printed = json.loads(proc.stdout)
    direct = gm_json(claw.workspace, "reflect", "--since", "7d", "--dry-run")
    assert printed["facts_read"] == direct["facts_read"] == 1
    assert printed["dry_run"] is True and printed["opinions"] == direct["opinions"]


def test_gateway_tools_answer_from_gitmem(claw: OpenClawHome, gateway: Gateway) -> None:
    found = details(gateway.invoke("memory_search", {"query": "gateway host"}))
    direct = gm_json(claw.workspace, "recall", "gateway host", "--k", "3")
    assert [h["citation"] for h in found["results"]] == [r["source"] for r in direct["results"]]
    assert len(found["results"]) == 3  # recall.k = 3: the plugin's env brought the config
    assert not any(UNCONFIGURED in w for w in found.get("warnings", []))
    top = found["results"][0]
    assert top["snippet"].endswith("\n\nSource: memory/2025-11-27.md#L14")
    assert (top["path"], top["startLine"], top["source"]) == ("memory/2025-11-27.md", 14, "memory")

    read = details(gateway.invoke("memory_get", {"path": top["citation"]}))
    want = gm_json(claw.workspace, "get", top["citation"])
    assert (read["status"], read["text"], read["from"]) == ("ok", want["text"], 14)
    assert details(gateway.invoke("memory_get", {"path": "memory/1999-01-01.md"}))[
        "status"] == "not_found"
    status, body = gateway.invoke("memory_get", {"path": "../outside.md"})
    assert status == 400 and "outside the workspace" in body["error"]["message"], body


def test_retain_and_a_staged_flush_land_in_git(claw: OpenClawHome, gateway: Gateway) -> None:
    """memory_retain commits; entries a memory flush staged are committed through
    'gitmem retain' before the next search answers, and found by it."""
    before = git(claw.workspace, "rev-list", "--count", "HEAD").strip()
    kept = details(gateway.invoke("memory_retain", {"entry": "W @Peter: The NUC went to Lisbon."}))
    assert kept["source"].startswith("memory/") and kept["commit"]
    day = datetime.now(UTC).date().isoformat()
    staged = claw.workspace / ".memory" / "flush" / f"{day}.md"
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.write_text("- W @Castle: The Castle runs Debian 13 now.\n", encoding="utf-8")
    found = details(gateway.invoke("memory_search", {"query": "Debian 13"}))
    assert found["results"][0]["path"] == f"memory/{day}.md"
    assert not staged.exists()
    after = git(claw.workspace, "rev-list", "--count", "HEAD").strip()
    assert int(after) == int(before) + 2
    assert git(claw.workspace, "status", "--porcelain").strip() == ""


def test_gateway_memory_status_and_probe_are_gitmem(claw: OpenClawHome,
                                                    gateway: Gateway) -> None:
    proc = claw.run("gateway", "call", "doctor.memory.status", "--params",
                    json.dumps({"probe": True}), "--json")
    status = json.loads(proc.stdout)
    assert status["provider"] == "gitmem"
    assert status["embedding"]["ok"] is False  # no model in the test: gitmem says how
    assert "gitmem model pull" in status["embedding"]["error"]


def test_agent_turn_calls_memory_search_and_gets_citations(gateway: Gateway,
                                                           stub: ChatStub) -> None:
    status, body = gateway.post("/v1/chat/completions", {
        "model": "openclaw", "messages": [{"role": "user", "content": "Where is the gateway?"}]})
    assert status == 200, body
    reply = body["choices"][0]["message"]["content"]
    assert reply == "From memory: memory/2025-11-27.md#L14"
    assert any('"citation": "memory/2025-11-27.md#L14"' in r for r in stub.tool_results())
    offered = {t["function"]["name"] for t in stub.requests[0].get("tools", [])}
    assert {"memory_search", "memory_get", "memory_retain"} <= offered  # not behind tool_search
    system = "\n".join(stub.system_prompts())
    assert "## Memory (gitmem: Markdown in git)" in system
    assert "- O(c=0.8) @Peter:" in system


def test_a_huge_line_comes_back_cut_and_memory_get_reads_it_whole(claw: OpenClawHome,
                                                                  gateway: Gateway) -> None:
    """A 2.5 MB log line in a daily note: the hit's snippet is within OpenClaw's budget and
    says it was cut (gitmem's content bound, recall.max_content_chars); memory_get of its
    citation reads the line whole."""
    line = pasted_log()
    note = "memory/2026-11-20.md"
    write(claw.workspace, note, f"# 2026-11-20\n\nThe gateway crashed; the log:\n\n{line}\n")
    commit_all(claw.workspace, "a pasted log")
    status, body = gateway.invoke("memory_search", {"query": "gateway dump frame0000001"})
    assert status == 200 and body.get("ok"), str(body)[:2000]
    hits = body["result"]["details"]["results"]
    cut = [h for h in hits if h["citation"] == f"{note}#L5"]
    assert cut, [h["citation"] for h in hits]
    hit = cut[0]
    assert hit["truncated"] is True and len(hit["snippet"]) <= 700
    assert hit["snippet"].endswith(f"(truncated: memory_get {note}#L5 reads it whole)\n\n"
                                   f"Source: {note}#L5"), hit["snippet"][-300:]
    assert len(json.dumps(body)) < 50_000
    read = details(gateway.invoke("memory_get", {"path": hit["citation"]}))
    assert read["status"] == "ok" and read["text"] == line


def test_plugin_unit_tests_pass_under_node(tmp_path: Path) -> None:
    node, entry = toolchain()
    proc = subprocess.run([str(node), "--test", "--test-reporter=tap", *sorted(str(p) for p in
                           (PLUGIN_DIR / "test").glob("*.test.js"))],
                          capture_output=True, text=True, cwd=PLUGIN_DIR, timeout=600,
                          env={**os.environ, "GITMEM_COMMAND": gitmem_command(),
                               "OPENCLAW_DIR": str(entry.parent), "TMPDIR": str(tmp_path)})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "# skipped 0" in proc.stdout and "# fail 0" in proc.stdout


# -- the warning of a server that no configuration reached (no OpenClaw needed) --------------


def test_mcp_says_with_every_answer_that_no_configuration_reached_it(
        fixture_repo: Path, without_default_model: None) -> None:
    from testing.mcp import json_of, mcp_session

    async def two_searches() -> list[dict[str, Any]]:
        async with mcp_session(fixture_repo) as session:
            return [json_of(await session.call_tool("memory_search", {"query": "gateway"}))
                    for _ in range(2)]

    for answer in asyncio.run(two_searches()):
        assert any(UNCONFIGURED in w and "XDG_CONFIG_HOME" in w and "mcp.servers.gitmem" in w
                   for w in answer["warnings"]), answer["warnings"]
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "gitmem" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[recall]\nk = 2\n", encoding="utf-8")
    (answer,) = asyncio.run(two_searches())[:1]
    assert not any(UNCONFIGURED in w for w in answer["warnings"])
    assert len(answer["results"]) == 2


def test_serve_json_hands_over_its_socket_and_warning(
        fixture_repo: Path, tmp_path: Path, without_default_model: None) -> None:
    import sys

    from gitmem.front.warm.client import exchange

    runtime = tmp_path / "run"
    runtime.mkdir()
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime)}
    proc = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(fixture_repo), "serve",
                             "--json", "--idle-timeout", str(int(FAILURE_SECONDS))], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        hello = json.loads(proc.stdout.readline())
        assert UNCONFIGURED in hello["warning"]
        reply = exchange(hello["socket"], {k: hello[k] for k in ("protocol", "version", "repo",
                                                                  "env")}
                         | {"op": "run", "argv": ["-C", str(fixture_repo), "get",
                                                  "memory/2025-11-27.md#L14", "--json"]})
        assert reply is not None and reply["code"] == 0
        assert json.loads(reply["out"])["text"].startswith("- W @Peter @The-Castle:")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=FAILURE_SECONDS)
    assert f"warning: semantic search is off: {UNCONFIGURED}" in err


def test_openclaw_bootstrap_files_are_classified(tmp_path: Path) -> None:
    """OpenClaw leaves AGENTS.md, SOUL.md, IDENTITY.md (and TOOLS.md, HEARTBEAT.md) in a new
    workspace: SOUL.md and IDENTITY.md are core memory, the instructions are not memory."""
    from testing.repo import commit_all, make_repo, write

    repo = make_repo(tmp_path)
    write(repo, "SOUL.md", "# SOUL\n\nBe genuinely helpful; keep the lighthouse log.\n")
    write(repo, "IDENTITY.md", "# IDENTITY\n\n- Name: Quillon, a lighthouse keeper\n")
    for name in ("AGENTS.md", "TOOLS.md", "HEARTBEAT.md"):
        write(repo, name, f"# {name}\n\nRead the lighthouse manual before each session.\n")
    commit_all(repo, "openclaw's first run")
    answer = gm_json(repo, "recall", "lighthouse")
    assert sorted(r["path"] for r in answer["results"]) == ["IDENTITY.md", "SOUL.md"]
    assert gm_json(repo, "status")["files"] == 2
