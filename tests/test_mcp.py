"""``gitmem mcp`` end to end, driven by the MCP SDK's own client over stdio: the tools, their
JSON (byte for byte the command line's), errors as tool errors, retain -> commit -> search, and
concurrent calls from one and from two agents."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from gguf_model import tiny_gguf

from testing.cli import gitmem
from testing.mcp import json_of, mcp_session, text_of
from testing.repo import git

CITATIONS = ".gitmem.toml"
# (name, tool, arguments, the command whose output the tool's text equals)
VIEWS_CLI = [
    ("peter", "memory_entity", {"name": "the_castle", "limit": 3},
     ("entity", "the_castle", "--limit", "3", "--json")),
    ("entities", "memory_entity", {}, ("entity", "--json")),
    ("opinions", "memory_opinions", {"min_confidence": 0.5, "history": True},
     ("opinions", "--min-confidence", "0.5", "--history", "--json")),
    ("review", "memory_review", {"range": "HEAD~3..HEAD"}, ("review", "HEAD~3..HEAD", "--json")),
    ("review-md", "memory_review", {"range": "HEAD~3..HEAD", "format": "markdown"},
     ("review", "HEAD~3..HEAD")),
]
VIEWS = [(name, tool, arguments) for name, tool, arguments, _ in VIEWS_CLI]


def cli_out(repo: Path, *args: str) -> str:
    """What ``gitmem -C repo ARGS`` prints (exit 0), without the final newline."""
    code, out, err = gitmem("-C", str(repo), *args)
    assert code == 0, err
    return out.removesuffix("\n")


def set_citations(repo: Path, value: str | None) -> None:
    path = repo / CITATIONS
    if value is None:
        path.unlink(missing_ok=True)
    else:
        path.write_text(f'[mcp]\ncitations = "{value}"\n', encoding="utf-8")


def test_tools_answer_like_the_command_line(fixture_repo: Path) -> None:
    """Each tool's text is what the command prints with --json; errors are tool errors with the
    command's message; the citation footer follows [mcp] citations. (The user's configuration
    reaches the server: without it, every search also says so, which the command line does
    not; tests/test_openclaw.py covers that.)"""
    repo = fixture_repo
    user_config = Path(os.environ["XDG_CONFIG_HOME"]) / "gitmem" / "config.toml"
    user_config.parent.mkdir(parents=True)
    user_config.write_text('[embed]\nprovider = "auto"\n', encoding="utf-8")
    assert gitmem("-C", str(repo), "index")[0] == 0

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        async with mcp_session(repo) as session:
            listed = await session.list_tools()
            seen["tools"] = {t.name: t for t in listed.tools}
            for value in ("on", "off", None):  # the server re-reads its config on each call
                set_citations(repo, value)
                seen[f"search-{value}"] = await session.call_tool(
                    "memory_search", {"query": "gateway host", "max_results": 3,
                                      "since": "2025-11", "min_score": 0.5})
            seen["get"] = await session.call_tool(
                "memory_get", {"path": "memory/2025-11-27.md#L9-L11"})
            seen["get-from"] = await session.call_tool(
                "memory_get", {"path": "MEMORY.md", "from": 2, "lines": 2})
            seen["outside"] = await session.call_tool("memory_get", {"path": "../secret.md"})
            seen["not-memory"] = await session.call_tool("memory_get", {"path": ".gitmem.toml"})
            seen["bad-time"] = await session.call_tool(
                "memory_search", {"query": "gateway", "since": "last blue moon"})
            seen["entity"] = await session.call_tool(
                "memory_search", {"query": "Marrakech", "entity": "Peter", "kind": ["W"],
                                  "mode": "lexical"})
            for name, tool, arguments in VIEWS:
                seen[name] = await session.call_tool(tool, arguments)
        return seen

    seen = asyncio.run(scenario())
    tools = seen["tools"]
    assert set(tools) == {"memory_search", "memory_get", "memory_retain", "memory_entity",
                          "memory_opinions", "memory_review"}
    assert "from" in tools["memory_get"].input_schema["properties"]
    assert tools["memory_search"].annotations.read_only_hint is True

    flags = ("recall", "gateway host", "--k", "3", "--since", "2025-11", "--min-score", "0.5",
             "--json")
    set_citations(repo, "on")
    assert text_of(seen["search-on"]) == cli_out(repo, *flags)
    set_citations(repo, "off")
    assert text_of(seen["search-off"]) == cli_out(repo, *flags)
    set_citations(repo, None)  # auto: footers for agents, none on the command line
    cited, plain = json_of(seen["search-None"]), json.loads(cli_out(repo, *flags))
    assert cited["results"] and len(cited["results"]) == len(plain["results"])
    for with_footer, without in zip(cited["results"], plain["results"], strict=True):
        assert with_footer["snippet"] == f"{without['snippet']}\n\nSource: {without['source']}"
        assert len(with_footer["snippet"]) <= 700
        assert with_footer["score"] >= 0.5
    assert cited["results"][0]["source"] == "memory/2025-11-27.md#L14"

    assert text_of(seen["get"]) == cli_out(repo, "get", "memory/2025-11-27.md#L9-L11", "--json")
    assert json_of(seen["get"])["start_line"] == 9
    assert text_of(seen["get-from"]) == cli_out(repo, "get", "MEMORY.md", "--from", "2",
                                                "--lines", "2", "--json")
    for name, words in (("outside", "outside the workspace"), ("not-memory", "not a memory file"),
                        ("bad-time", "invalid time 'last blue moon'")):
        assert seen[name].is_error and words in text_of(seen[name]), name
    for name, _, _, command in VIEWS_CLI:
        assert not seen[name].is_error, text_of(seen[name])
        code, printed, _ = gitmem("-C", str(repo), *command)
        # JSON is echoed with a final newline; the Markdown review is printed as it is.
        assert code == 0 and text_of(seen[name]) == (
            printed if name == "review-md" else printed.removesuffix("\n")), name
    entity = json_of(seen["entity"])
    assert entity["results"] and all("Peter" in r["entities"] for r in entity["results"])
    assert {r["kind"] for r in entity["results"]} == {"world"}


def test_retain_commits_and_the_next_search_cites_it(fixture_repo: Path) -> None:
    """memory_retain appends to today's note and commits that file alone; the next
    memory_search finds the entry with a correct citation; a malformed entry is refused with
    the grammar and writes nothing."""
    repo = fixture_repo
    (repo / "USER.md").write_text("staged, not for the retain commit\n", encoding="utf-8")
    git(repo, "add", "USER.md")
    head_before = git(repo, "rev-parse", "HEAD").strip()

    async def scenario() -> tuple[Any, ...]:
        async with mcp_session(repo) as session:
            bad = await session.call_tool("memory_retain", {"entry": "remember the milk"})
            low = await session.call_tool("memory_retain", {"entry": "w @Peter: lower case"})
            good = await session.call_tool(
                "memory_retain", {"entry": "W @Peter @Zanzibar: Booked the ferry to Zanzibar "
                                           "for the offsite."})
            found = await session.call_tool("memory_search", {"query": "ferry Zanzibar"})
            return bad, low, good, found

    bad, low, good, found = asyncio.run(scenario())
    for refused in (bad, low):
        assert refused.is_error
        assert "<KIND>[(c=<confidence>)] [@Entity ...]: <text>" in text_of(refused)
    kept = json_of(good)
    assert kept["kind"] == "world" and kept["entities"] == ["Peter", "Zanzibar"]
    note = repo / kept["path"]
    lines = note.read_text(encoding="utf-8").splitlines()
    assert lines[kept["start_line"] - 1] == ("- W @Peter @Zanzibar: Booked the ferry to Zanzibar "
                                             "for the offsite.")
    assert lines[kept["start_line"] - 2] == "## Retain"
    # One new commit, holding only the note; the staged USER.md stays staged.
    assert git(repo, "rev-list", f"{head_before}..HEAD").split() == [kept["commit"]]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [kept["path"]]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["USER.md"]
    top = json_of(found)["results"][0]
    assert top["source"] == kept["source"] == f"{kept['path']}#L{kept['start_line']}"
    assert top["commit"] == kept["commit"] and top["fact_id"] == kept["fact_id"]
    assert top["snippet"].endswith(f"Source: {kept['source']}")
    # The command line's retain prints the same fields.
    code, out, err = gitmem("-C", str(repo), "retain", "B: Read the ferry timetable.", "--json")
    assert code == 0, err
    assert json.loads(out).keys() == kept.keys()


def test_retain_replaces_reads_a_ref_as_the_command_line_does(fixture_repo: Path) -> None:
    """memory_retain's replaces names a fact with spaces around its ref, as 'gitmem retain
    --replaces' does (one retain for both front ends)."""
    repo = fixture_repo

    async def scenario() -> tuple[Any, Any]:
        async with mcp_session(repo) as session:
            first = await session.call_tool(
                "memory_retain", {"entry": "W @Peter: The gateway host is The Castle."})
            second = await session.call_tool(
                "memory_retain", {"entry": "W @Peter: The gateway host is The Annex.",
                                  "replaces": f" {json_of(first)['fact_id']} "})
            return first, second

    first, second = asyncio.run(scenario())
    assert not second.is_error, text_of(second)
    assert json_of(second)["replaces"] == [json_of(first)["fact_id"]]


# (tool, arguments, what the error says, in the tool's terms)
REFUSED = [
    ("memory_search", {"query": "gateway", "max_results": 0},
     "memory_search: max_results must be an integer from 1 to 1000 (or null for the default), "
     "not 0"),
    ("memory_search", {"query": "gateway", "max_results": "lots"},
     'max_results must be an integer from 1 to 1000 (or null for the default), not "lots"'),
    ("memory_search", {"query": "gateway", "mode": "fuzzy"},
     'memory_search: mode must be one of "hybrid", "lexical", "semantic", not "fuzzy"'),
    ("memory_search", {"query": "gateway", "min_score": "high"},
     'min_score must be a number from 0 to 1 (or null for the default), not "high"'),
    ("memory_search", {"query": "gateway", "min_score": 2},  # scores are in [0, 1]
     "memory_search: min_score must be a number from 0 to 1 (or null for the default), not 2"),
    ("memory_search", {}, "memory_search needs the argument query (a string)"),
    ("memory_search", {"query": "gateway", "limit": 3},
     "memory_search takes no argument 'limit'; its arguments are query, max_results, "),
    ("memory_search", {"query": "gateway", "kind": "X"}, "invalid kind 'X': use W, B, O, S"),
    ("memory_search", {"query": "gateway", "kind": "{as_of}"}, "invalid kind '{as_of}': use"),
    ("memory_search", {"query": "gateway", "since": "soon"}, "invalid time 'soon' for since:"),
    ("memory_search", {"query": "gateway", "around": "soon", "until": "2025-11"},
     "around cannot be combined with since or until"),
    ("memory_search", {"query": "gateway", "since": "2025-12", "until": "2025-11"},
     "since '2025-12' is not before until '2025-11'"),
    ("memory_search", {"query": "gateway", "as_of": "soon"}, "invalid as_of 'soon': use"),
    ("memory_search", {"query": "gateway", "entity": "Peterr"},
     "? (memory_entity without a name lists them)"),
    ("memory_search", {"query": "gateway", "mode": "semantic"},
     "mode semantic needs an embedding provider"),
    ("memory_get", {"path": "MEMORY.md", "from": 0},
     "memory_get: from must be an integer of at least 1 (or null for the default), not 0"),
    ("memory_get", {"path": "MEMORY.md", "from": 900},
     "memory_get with at set to a commit reads the earlier version of MEMORY.md#L900; "
     "memory_search cites the current lines"),
    ("memory_entity", {"limit": 0}, "memory_entity: limit must be an integer from 1 to 1000, "
                                    "not 0"),
    ("memory_entity", {"name": "Peter", "as_of": "soon"}, "invalid as_of 'soon': use"),
    ("memory_opinions", {"min_confidence": 2},
     "memory_opinions: min_confidence must be a number from 0 to 1 (or null for the default), "
     "not 2"),
    ("memory_retain", {"entry": "W @Peter: New host.", "replaces": "f-000000000000"},
     "replaces f-000000000000: names no current fact (give a fact id such as f-3fa9c2e11aa0 "
     "or a citation such as memory/2025-11-10.md#L14, as memory_search shows them in its "
     "JSON); nothing was written"),
    ("memory_review", {"range": "HEAD~1..HEAD", "format": "html"},
     'memory_review: format must be one of "json", "markdown", not "html"'),
]
# What only the command line may say: its flags, its commands, pydantic's report.
CLI_TERMS = re.compile(r"--[a-z]|'gitmem (get|recall|entity)|validation error|pydantic|https?:")


def test_arguments_are_refused_in_the_tools_terms(fixture_repo: Path) -> None:
    """A bad argument is a tool error that names the tool's argument, what it must be and the
    value given, never pydantic's report, a CLI flag or a command; an argument the tool does
    not take is refused instead of ignored. The command line keeps its own terms."""
    repo = fixture_repo
    assert gitmem("-C", str(repo), "index")[0] == 0

    async def scenario() -> list[Any]:
        async with mcp_session(repo, {"GITMEM_EMBED_PROVIDER": "none"}) as session:
            return [await session.call_tool(tool, arguments) for tool, arguments, _ in REFUSED]

    for (tool, arguments, words), result in zip(REFUSED, asyncio.run(scenario()), strict=True):
        text = text_of(result)
        assert result.is_error and words in text, (tool, arguments, text)
        assert not CLI_TERMS.search(text), (tool, arguments, text)
    for args, words in ((("recall", "gateway", "--kind", "X"), "invalid --kind 'X'"),
                        (("recall", "gateway", "--since", "soon"), "for --since:"),
                        (("recall", "gateway", "--entity", "Peterr"), "('gitmem entity' lists"),
                        (("get", "MEMORY.md", "--from", "900"), "'gitmem get' with --at set")):
        code, _, err = gitmem("-C", str(repo), *args)
        assert code in (1, 2) and words in err, (args, err)


def test_concurrent_calls_and_two_agents_retaining_at_once(fixture_repo: Path) -> None:
    """Two servers (two agents) retain at the same time, while searches run concurrently on
    one of them: every entry lands exactly once, one commit each, and every call answers."""
    repo = fixture_repo
    assert gitmem("-C", str(repo), "index")[0] == 0
    head_before = git(repo, "rev-parse", "HEAD").strip()

    async def agent(name: str) -> list[Any]:
        async with mcp_session(repo) as session:
            calls = [session.call_tool("memory_retain", {"entry": f"B @{name}: Step {n} done."})
                     for n in range(3)]
            calls += [session.call_tool("memory_search", {"query": "gateway host"})
                      for _ in range(3)]
            return list(await asyncio.gather(*calls))

    async def both() -> list[list[Any]]:
        return list(await asyncio.gather(agent("alpha"), agent("beta")))

    results = [r for per_agent in asyncio.run(both()) for r in per_agent]
    assert not [text_of(r) for r in results if r.is_error]
    retained = [json_of(r) for r in results if "fact_id" in json_of(r) and "results" not in
                json_of(r)]
    assert len(retained) == 6
    note = (repo / retained[0]["path"]).read_text(encoding="utf-8")
    for name in ("alpha", "beta"):
        for n in range(3):
            assert note.count(f"- B @{name}: Step {n} done.") == 1
    commits = git(repo, "rev-list", f"{head_before}..HEAD").split()
    assert sorted(commits) == sorted(r["commit"] for r in retained)
    searches = [json_of(r) for r in results if "results" in json_of(r)]
    assert len(searches) == 6 and all(s["results"] for s in searches)


def test_failing_provider_is_a_tool_error_with_the_spec_wording(fixture_repo: Path,
                                                                 tmp_path: Path,
                                                                 refused_port: int) -> None:
    """An explicitly named provider that cannot be reached: 'memory search unavailable: ...'
    as a tool error, and the server keeps answering."""
    port = refused_port  # nothing listens on it
    config = tmp_path / "user-config"
    (config / "gitmem").mkdir(parents=True)
    (config / "gitmem" / "config.toml").write_text(
        f'[embed]\nprovider = "ollama"\nmodel = "nomic-embed-text"\nretries = 0\ntimeout = 2\n'
        f'[embed.remote]\nbase_url = "http://127.0.0.1:{port}"\n', encoding="utf-8")

    async def scenario() -> tuple[Any, Any]:
        async with mcp_session(fixture_repo, {"XDG_CONFIG_HOME": str(config)}) as session:
            failed = await session.call_tool("memory_search", {"query": "gateway host"})
            lexical = await session.call_tool("memory_search", {"query": "gateway host",
                                                                "mode": "lexical"})
            return failed, lexical

    failed, lexical = asyncio.run(scenario())
    assert failed.is_error
    assert text_of(failed).startswith("memory search unavailable: ")
    assert json_of(lexical)["results"]


def test_hybrid_search_with_the_model_loaded(fixture_repo: Path,
                                             tmp_path_factory: pytest.TempPathFactory) -> None:
    """With the local model: memory_search is hybrid and byte for byte the command line's, and a
    retained entry is embedded at once (nothing left pending)."""
    model = tiny_gguf(tmp_path_factory)
    env = {"GITMEM_EMBED_PROVIDER": "local", "GITMEM_EMBED_MODEL": str(model)}
    set_citations(fixture_repo, "off")
    mp = pytest.MonkeyPatch()
    for key, value in env.items():
        mp.setenv(key, value)
    try:
        assert gitmem("-C", str(fixture_repo), "index")[0] == 0

        async def scenario() -> tuple[Any, str, Any, Any]:
            async with mcp_session(fixture_repo, env) as session:
                found = await session.call_tool("memory_search", {"query": "gateway host"})
                expected = cli_out(fixture_repo, "recall", "gateway host", "--json")
                kept = await session.call_tool("memory_retain",
                                               {"entry": "W @Peter: The ferry leaves at nine."})
                later = await session.call_tool("memory_search", {"query": "ferry nine"})
                return found, expected, kept, later

        found, expected, kept, later = asyncio.run(scenario())
        assert json_of(found)["mode"] == "hybrid"
        assert text_of(found) == expected
        assert not json_of(later)["warnings"]  # embedded before retain answered
        assert json_of(kept)["path"] in [r["path"] for r in json_of(later)["results"]]
        status = json.loads(cli_out(fixture_repo, "status", "--json"))
        assert status["semantic"]["pending"] == 0
    finally:
        mp.undo()


def test_mcp_without_the_sdk_names_the_extra(fixture_repo: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "mcp" else real(name, *a))
    code, _, err = gitmem("-C", str(fixture_repo), "mcp")
    assert code == 1
    assert f"{sys.executable} -m pip install 'mcp>=2.3'" in err, err
