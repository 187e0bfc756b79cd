"""A 2.5 MB line pasted into a daily note (issue 37): recall's JSON and text, MCP
``memory_search`` and the warm process carry at most ``recall.max_content_chars`` of it, marked
``truncated``; ``gitmem get`` (MCP ``memory_get``) reads it whole. The OpenClaw plugin's hits are
tested with real OpenClaw in tests/test_openclaw.py."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from testing.cli import gitmem
from testing.mcp import json_of, mcp_session
from testing.repo import commit_all, make_repo, pasted_log, write

NOTE = "memory/2026-11-20.md"
DEFAULT_BOUND = 4000
FAILURE_SECONDS = 120.0  # a bound for failures only: a loaded machine is slow, not wrong


@pytest.fixture(scope="module")
def huge(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    repo = make_repo(tmp_path_factory.mktemp("huge"))
    line = pasted_log()
    write(repo, NOTE, f"# 2026-11-20\n\nThe gateway crashed; the log:\n\n{line}\n\n"
                      "## Retain\n- W @Castle: The gateway came back after a restart.\n")
    commit_all(repo, "a pasted log", "2026-11-20T21:00:00+00:00")
    return repo, line


def recall_json(repo: Path, *extra: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """``python -m gitmem recall`` in its own process (the command line a user runs)."""
    proc = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo), "recall",
                           "ECONNRESET gateway dump", "--json", *extra],
                          capture_output=True, text=True, env={**os.environ, **(env or {})},
                          check=False)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def the_log(answer: dict[str, Any]) -> dict[str, Any]:
    found = [r for r in answer["results"] if r["source"] == f"{NOTE}#L5"]
    assert found, [r["source"] for r in answer["results"]]
    return found[0]


def test_recall_json_cuts_a_huge_line_and_says_so(huge: tuple[Path, str]) -> None:
    repo, line = huge
    answer = recall_json(repo)
    hit = the_log(answer)
    assert hit["truncated"] is True and hit["content"] == line[:DEFAULT_BOUND]
    assert len(hit["snippet"]) <= 700
    # the others are whole and say so
    assert all(r["truncated"] is False for r in answer["results"] if r is not hit)
    assert len(json.dumps(answer)) < 20_000
    # a setting moves the bound, from the environment as from a file
    bigger = the_log(recall_json(repo, env={"GITMEM_RECALL_MAX_CONTENT_CHARS": "10000"}))
    assert bigger["truncated"] is True and bigger["content"] == line[:10_000]
    whole = the_log(recall_json(repo, env={"GITMEM_RECALL_MAX_CONTENT_CHARS": "3000000"}))
    assert whole["truncated"] is False and whole["content"] == line


def test_recall_text_marks_the_cut_and_names_get(huge: tuple[Path, str]) -> None:
    repo, _ = huge
    code, out, err = gitmem("-C", str(repo), "recall", "ECONNRESET gateway dump")
    assert code == 0, err
    block = out.split(f"{NOTE}#L5\n", 1)[1].split("\n\n", 1)[0]
    assert f"(truncated: longer than 4,000 characters; 'gitmem get {NOTE}#L5' prints it " \
           "whole)" in block
    assert len(out) < 5_000


def test_get_reads_the_whole_line(huge: tuple[Path, str]) -> None:
    repo, line = huge
    code, out, err = gitmem("-C", str(repo), "get", f"{NOTE}#L5")
    assert code == 0, err
    assert out == line + "\n"
    code, out, err = gitmem("-C", str(repo), "get", f"{NOTE}#L5", "--json")
    assert code == 0, err
    assert json.loads(out)["text"] == line


def test_a_bad_bound_is_an_error_naming_the_key(huge: tuple[Path, str]) -> None:
    repo, _ = huge
    write(repo, ".gitmem.toml", "[recall]\nmax_content_chars = 10\n")
    try:
        code, _, err = gitmem("-C", str(repo), "recall", "gateway")
    finally:
        (repo / ".gitmem.toml").unlink()
    assert code == 1 and "recall.max_content_chars" in err and "200 to 100000000" in err, err


def test_mcp_search_is_bounded_and_memory_get_reads_it_whole(huge: tuple[Path, str]) -> None:
    repo, line = huge

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        async with mcp_session(repo) as session:
            found = json_of(await session.call_tool(
                "memory_search", {"query": "ECONNRESET gateway dump"}))
            got = json_of(await session.call_tool("memory_get", {"path": f"{NOTE}#L5"}))
            return found, got

    found, got = asyncio.run(scenario())
    hit = the_log(found)
    assert hit["truncated"] is True and hit["content"] == line[:DEFAULT_BOUND]
    assert hit["snippet"].endswith(f"Source: {NOTE}#L5") and len(hit["snippet"]) <= 700
    assert len(json.dumps(found)) < 20_000
    assert got["text"] == line


def ask(hello: dict[str, Any], argv: list[str]) -> dict[str, Any]:
    """One request on the warm process's socket, waiting as long as it works (its heartbeats
    are skipped): the reply, however slow the machine."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(FAILURE_SECONDS)
        sock.connect(hello["socket"])
        request = {k: hello[k] for k in ("protocol", "version", "repo", "env")}
        sock.sendall(json.dumps({**request, "op": "run", "argv": argv}).encode() + b"\n")
        with sock.makefile("rb") as replies:
            for line in replies:
                reply: dict[str, Any] = json.loads(line)
                if not reply.get("working"):
                    return reply
    raise AssertionError("the warm process closed the connection without an answer")


def test_the_warm_process_answers_bounded(huge: tuple[Path, str],
                                         tmp_path_factory: pytest.TempPathFactory) -> None:
    """recall answered by 'gitmem serve' is what it prints alone: the content cut. A client
    that gave up waiting (its heartbeat came late: reading 2.5 MB holds the interpreter) does
    not take the server down with it."""
    repo, line = huge
    env = {**os.environ, "XDG_RUNTIME_DIR": str(tmp_path_factory.mktemp("run"))}
    argv = ["-C", str(repo), "recall", "ECONNRESET gateway dump", "--json"]
    server = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo), "serve",
                               "--json", "--idle-timeout", "120"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        assert server.stdout is not None
        hello = json.loads(server.stdout.readline())  # printed once it listens
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as gone:  # asks, then leaves
            gone.connect(hello["socket"])
            request = {k: hello[k] for k in ("protocol", "version", "repo", "env")}
            gone.sendall(json.dumps({**request, "op": "run", "argv": argv}).encode() + b"\n")
        reply = ask(hello, argv)
        assert reply.get("done") and reply["code"] == 0, reply
        hit = the_log(json.loads(reply["out"]))
        assert hit["truncated"] is True and hit["content"] == line[:DEFAULT_BOUND]
    finally:
        subprocess.run([sys.executable, "-m", "gitmem", "-C", str(repo), "serve", "--stop"],
                       capture_output=True, check=False, env=env)
        code = server.wait(timeout=FAILURE_SECONDS)
    assert code == 0, f"the warm process ended with {code}"
