"""``gitmem mcp``: the workspace's memory as Model Context Protocol tools, over stdio.

One server serves one workspace. Each tool calls the same typed function as the matching
command and returns exactly the JSON that command prints with ``--json``
(``memory_search`` = ``recall``, ``memory_get`` = ``get``, ``memory_retain`` = ``retain``,
``memory_entity`` = ``entity``, ``memory_opinions`` = ``opinions``, ``memory_review`` =
``review``; ``memory_forget`` = ``forget``, offered only when ``mcp.forget`` is on), so
an agent and a person see the same answers. The process stays up between calls: the embedding
model stays loaded and the index catches up with HEAD on each call (recall's cheap check).
Errors come back as tool errors with the command's message ("memory search
unavailable: ..."), never as a crash of the server.

The only module that imports the MCP SDK (the optional ``mcp`` extra: ``pip install '.[mcp]'`` in a
checkout; ``INSTALL_HINT`` names its packages).
"""

# No 'from __future__ import annotations' here: the SDK reads the tools' parameter annotations
# (pydantic Fields, imported with the SDK) when they are registered inside build_server.
import importlib.util
import inspect
import json
import sys
import threading
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from gitmem import __version__
from gitmem.config import Config, load_config
from gitmem.domain import RecallMode
from gitmem.errors import GitmemError, install_hint, option_name
from gitmem.index.session import WarmSession
from gitmem.index.watch import WarmState
from gitmem.parse.visible import visible_json
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from mcp.types import CallToolResult

INSTALL_HINT = f"gitmem mcp needs the MCP Python SDK: {install_hint('mcp')}"
INSTRUCTIONS = (
    "Long-term memory kept as Markdown in git. Before answering anything about prior work, "
    "decisions, dates, people, preferences or todos, call memory_search; then memory_get to "
    "read only the lines you need. Cite results by their 'source' (path#Lx-Ly). Record durable "
    "facts with memory_retain ('W @Entity: fact', 'B: what you did', 'O(c=0.8) @Entity: "
    "opinion', 'S: observation')."
)


# What the library calls an argument or a command, where a tool's name for it differs.
TOOL_NAMES = {"k": "max_results", "command_get": "memory_get", "command_recall": "memory_search",
              "command_entity": "memory_entity without a name"}


def tool_name(name: str) -> str:
    """How a tool spells what an error names (``GitmemError.spelled``): its argument names,
    and the tools for commands (a command with no tool stays the command a person runs)."""
    if name in TOOL_NAMES:
        return TOOL_NAMES[name]
    return option_name(name) if name.startswith("command_") else name


def _result(text: str, error: bool) -> "CallToolResult":
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)


def unknown_arguments(tool: str, arguments: Mapping[str, Any],
                      schema: Mapping[str, Any]) -> str | None:
    """The error for arguments the tool does not take (a misspelt one would be ignored)."""
    known = list(schema.get("properties", {}))
    extra = [name for name in arguments if name not in known]
    if not extra:
        return None
    listed = ", ".join(repr(name) for name in extra)
    return (f"{tool} takes no argument {listed}; its arguments are {', '.join(known)}")


def invalid_arguments(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any],
                      errors: Sequence[Mapping[str, Any]]) -> str:
    """Arguments the SDK refused (pydantic's errors), said in the tool's terms: each argument,
    what it must be (from the input schema the client was shown) and the value given."""
    problems: dict[str, str] = {}
    properties = schema.get("properties", {})
    for err in errors:
        name = str(err["loc"][0]) if err.get("loc") else "arguments"
        expected = _expected(properties.get(name, {}))
        if err.get("type") == "missing":
            problems.setdefault(name, f"{tool} needs the argument {name} ({expected})")
        else:
            given = json.dumps(arguments.get(name), ensure_ascii=False)
            given = given if len(given) <= 80 else given[:79] + "…"
            problems.setdefault(name, f"{tool}: {name} must be {expected}, not {given}")
    return "; ".join(problems.values())


def _expected(schema: Mapping[str, Any]) -> str:
    options = schema.get("anyOf", [schema])
    kinds = [_one_type(o) for o in options if o.get("type") != "null"]
    nullable = len(kinds) < len(options)
    return " or ".join(kinds) + (" (or null for the default)" if nullable else "")


def _one_type(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind in ("integer", "number"):
        word = "an integer" if kind == "integer" else "a number"
        low, high = schema.get("minimum"), schema.get("maximum")
        if low is not None and high is not None:
            return f"{word} from {low:g} to {high:g}"
        if low is not None:
            return f"{word} of at least {low:g}"
        return word if high is None else f"{word} of at most {high:g}"
    if kind == "array":
        return "a list of " + _one_type(schema.get("items", {})).removeprefix("a ") + "s"
    return {"string": "a string", "boolean": "true or false"}.get(str(kind), "a value")


class MemoryTools:
    """The tools' work, one call at a time (index catch-up and commits stay in order)."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._lock = threading.Lock()
        self.warm = WarmState()  # no freshness check while nothing changed (index.watch)

    def config(self) -> Config:
        return load_config(self.ws.repo_root)  # re-read each call: a few stats, picks up edits

    def _session(self, cfg: Config) -> WarmSession:
        """The session a tool's answer reads through: this server's warm state."""
        return WarmSession(self.ws, cfg, self.warm)

    def call(self, work: Callable[[Config], str]) -> "CallToolResult":
        """Run one tool: its JSON, or a tool error with the command's own message in the
        tool's terms (``max_results``, not ``--k``); a surprise likewise, with the traceback
        on stderr, the server's log."""
        try:
            with self._lock:
                text, error = work(self.config()), False
        except GitmemError as exc:
            text, error = exc.spelled(tool_name), True
        except Exception as exc:  # a front end's one error boundary: the server never crashes
            traceback.print_exc(file=sys.stderr)
            text, error = f"internal error: {exc.__class__.__name__}: {exc}", True
        return _result(text, error)

    def search(self, cfg: Config, query: str, *, max_results: int | None = None,
               min_score: float | None = None, since: str | None = None,
               until: str | None = None, as_of: str | None = None, around: str | None = None,
               entity: str | list[str] | None = None, kind: str | list[str] | None = None,
               mode: RecallMode = "hybrid") -> str:
        from gitmem.recall.answer import RecallRequest
        from gitmem.recall.present import recall

        req = RecallRequest(query=query, k=max_results, since=since, until=until,
                            around=around, as_of=as_of, entities=_listed(entity),
                            kinds=_listed(kind), mode=mode)
        response = recall(self._session(cfg), req, min_score=min_score, front="mcp")
        data = response.to_json()
        if req.mode != "lexical":
            data["warnings"] = _with_unconfigured(cfg, data["warnings"])
        return visible_json(data, indent=2)

    def get(self, cfg: Config, path: str, *, start: int | None = None,
            count: int | None = None, at: str | None = None) -> str:
        from gitmem.recall.get import get_target

        res = get_target(self.ws, cfg, path, start=start, count=count, at=at)
        return visible_json(res.to_json(), indent=None)

    def entity(self, cfg: Config, name: str | None, *, as_of: str | None = None,
               limit: int = 10) -> str:
        from gitmem.recall.entity import entity_answer

        answer = entity_answer(self._session(cfg), name, as_of=as_of, show=limit)
        return visible_json(answer.to_json(), indent=2)

    def opinions(self, cfg: Config, *, entity: str | None = None,
                 min_confidence: float | None = None, as_of: str | None = None,
                 history: bool = False) -> str:
        from gitmem.recall.opinions_view import list_opinions

        answer = list_opinions(self._session(cfg), entity=entity, min_confidence=min_confidence,
                               as_of=as_of, history=history)
        return visible_json(answer.to_json(), indent=2)

    def review(self, cfg: Config, range_spec: str, *, markdown: bool = False) -> str:
        from gitmem.review.review import review
        from gitmem.review.review_markdown import render

        result = review(self.ws, cfg, range_spec)
        return render(result) if markdown else visible_json(result.to_json(), indent=2)

    def forget(self, cfg: Config, refs: tuple[str, ...], reason: str | None) -> str:
        from gitmem.reflect.forget import forget, plan_forget

        if not cfg.mcp_forget:
            raise GitmemError("memory_forget is off: a person turns it on with 'gitmem config "
                              "set mcp.forget true' (docs/forget.md)")
        done = forget(self.ws, cfg, plan_forget(self.ws, cfg, refs), reason=reason)
        if done.not_indexed:
            print(f"gitmem mcp: committed, not indexed yet: {done.not_indexed}", file=sys.stderr)
        return visible_json(done.to_json(), indent=None)

    def retain(self, cfg: Config, entry: str, replaces: tuple[str, ...] = (),
               keeps: tuple[str, ...] = (), importance: int | None = None) -> str:
        from gitmem.reflect.append import retain_and_index

        done = retain_and_index(self.ws, cfg, entry, replaces=replaces, keeps=keeps,
                                importance=importance)
        if done.not_indexed:
            print(f"gitmem mcp: {done.not_indexed_note}", file=sys.stderr)
        return visible_json(done.to_json(), indent=None)


def _with_unconfigured(cfg: Config, warnings: list[str]) -> list[str]:
    """A server's answers say, every time, that semantic search is off because no
    configuration reached it."""
    from gitmem.embed.selection import unconfigured_warning

    warning = unconfigured_warning(cfg)
    return warnings if warning is None else [warning, *warnings]


def _listed(value: str | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, str) else tuple(value)


def _checked_server() -> type["MCPServer"]:
    """The SDK's server, with tool arguments checked in the tools' terms: an argument the tool
    does not take is refused, and one the SDK's validation refuses is explained from the input
    schema (not pydantic's report with its documentation link)."""
    from mcp.server import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from pydantic import ValidationError

    class CheckedServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any],
                            context: Any = None) -> Any:
            schema = next((t.input_schema for t in await self.list_tools() if t.name == name),
                          None)
            if schema is None:
                return await super().call_tool(name, arguments, context)
            extra = unknown_arguments(name, arguments, schema)
            if extra is not None:
                return _result(extra, True)
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if not isinstance(exc.__cause__, ValidationError):
                    raise
                return _result(invalid_arguments(name, arguments, schema,
                                                 exc.__cause__.errors()), True)

    return CheckedServer


def build_server(ws: Workspace) -> "MCPServer":
    """The MCP server for one workspace, with its tools registered."""
    if importlib.util.find_spec("mcp") is None:
        raise GitmemError(INSTALL_HINT)
    from mcp.types import CallToolResult, ToolAnnotations
    from pydantic import Field

    server = _checked_server()("gitmem", instructions=INSTRUCTIONS, version=__version__,
                               log_level="WARNING")
    tools = MemoryTools(ws)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(name="memory_search", annotations=read_only, structured_output=False)
    def memory_search(
        query: Annotated[str, Field(description="What to find: words, ids, phrases; a date "
                                                "phrase ('last week') becomes a time window")],
        max_results: Annotated[int | None, Field(ge=1, le=1000, description="How many "
                                                 "results (default 8, recall.k)")] = None,
        min_score: Annotated[float | None, Field(ge=0.0, le=1.0, description="Leave out "
                                                 "results scoring below this (scores are in "
                                                 "[0, 1])")] = None,
        since: Annotated[str | None, Field(description="Event time (or the daily note's "
                                           "date) on or after: 30d, 2w, 2025-11, "
                                           "2025-11-27, today")] = None,
        until: Annotated[str | None, Field(description="Event time (or the daily note's "
                                           "date) on or before")] = None,
        as_of: Annotated[str | None, Field(description="Answer from the memory as it stood "
                                           "then: a time (2025-11 = end of November 2025) "
                                           "or a commit (id, branch, tag, HEAD~2)")] = None,
        around: Annotated[str | None, Field(description="A window of +-3 days around a "
                                            "date")] = None,
        entity: Annotated[str | list[str] | None, Field(description="Only results about "
                                                        "this entity (or these)")] = None,
        kind: Annotated[str | list[str] | None, Field(description="W, B, O, S, or note "
                                                      "(plain text)")] = None,
        mode: Annotated[RecallMode,
                        Field(description="Search mode")] = "hybrid",
    ) -> CallToolResult:
        """Search long-term memory (MEMORY.md, daily notes, bank pages). Returns the JSON of
        'gitmem recall --json': results with snippet (at most 700 characters, ending with a
        'Source: path#Lx-Ly' citation unless [mcp] citations = "off"), content (at most
        recall.max_content_chars, 4,000 by default; truncated: true when cut, and memory_get
        of the source reads it whole), path, start_line, end_line, commit, score, kind,
        timestamp, entities and source (the citation)."""
        return tools.call(lambda cfg: tools.search(
            cfg, query, max_results=max_results, min_score=min_score, since=since,
            until=until, as_of=as_of, around=around, entity=entity, kind=kind, mode=mode))

    def memory_get_parameters(
        path: Annotated[str, Field(description="A memory file (MEMORY.md, memory/2025-11-27.md, "
                                               "bank/...), or a citation path#L12-L20[@commit]")],
        from_: Annotated[int | None, Field(alias="from", ge=1,
                                           description="First line (1-based)")] = None,
        lines: Annotated[int | None, Field(ge=1, description="How many lines")] = None,
        at: Annotated[str | None, Field(description="Read the file as of a revision "
                                        "(commit, branch, tag)")] = None,
    ) -> CallToolResult:
        """memory_get with its parameters as the tool schema shows them ('from' is a keyword)."""
        return memory_get(path, lines, at, **{"from": from_})

    def memory_get(path: str, lines: int | None = None, at: str | None = None,
                   **named: Any) -> CallToolResult:
        """Read memory text by line (memory files only; other paths, paths outside the
        workspace and symbolic links are refused). Returns the JSON of 'gitmem get --json':
        path, start_line, end_line, revision, text."""
        start = named.get("from")
        return tools.call(lambda cfg: tools.get(cfg, path, start=start, count=lines, at=at))

    # 'from' is a Python keyword: the SDK passes the argument under its alias, so the tool
    # takes it from **named and shows the schema of memory_get_parameters.
    setattr(memory_get, "__signature__", inspect.signature(memory_get_parameters))  # noqa: B010
    server.add_tool(memory_get, name="memory_get", annotations=read_only,
                    structured_output=False)

    @server.tool(name="memory_retain", structured_output=False,
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                             idempotent_hint=False, open_world_hint=False))
    def memory_retain(
        entry: Annotated[str, Field(description="One Retain entry: '<KIND>[(c=0.9)] "
                                                "[@Entity ...]: <text>', KIND W|B|O|S")],
        replaces: Annotated[str | list[str] | None, Field(
            description="Facts this entry replaces (a knowledge update you know of): fact ids "
                        "(f-3fa9c2e11aa0) or citations (memory/2025-11-10.md#L14), as "
                        "memory_search and memory_retain's may_replace show them. Given for an "
                        "entry retained already today, it is added under that entry")] = None,
        keeps: Annotated[str | list[str] | None, Field(
            description="Facts this entry does NOT replace, whatever the knowledge-update rule "
                        "says (a correction of a wrong 'replaced' mark, written as a nested "
                        "'- keeps:' item): fact ids or citations")] = None,
        importance: Annotated[int | None, Field(
            ge=1, le=10, description="How much the entry matters, 1 to 10 (5 is neutral): "
                                     "scales its search score, set once now")] = None,
    ) -> CallToolResult:
        """Write a durable fact to memory: appends the entry to today's daily note
        (memory/YYYY-MM-DD.md, '## Retain' section), commits that file and indexes it, so the
        next memory_search finds it. Malformed entries
        are refused with the grammar. Returns the JSON of 'gitmem retain --json': path,
        start_line, end_line, source, commit, fact_id, kind, text, entities, replaces (the fact
        ids it declares it replaces) and may_replace (earlier facts about the same subjects,
        those the knowledge-update rule finds replaced first, each with fact_id, source, text,
        date, rule): confirm one with a second call that passes it as replaces, or correct a
        wrong mark with keeps."""
        return tools.call(lambda cfg: tools.retain(cfg, entry, _listed(replaces),
                                                   _listed(keeps), importance))

    if tools.config().mcp_forget:  # a person's choice (mcp.forget); never offered otherwise
        @server.tool(name="memory_forget", structured_output=False,
                     annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                                 idempotent_hint=False, open_world_hint=False))
        def memory_forget(
            refs: Annotated[str | list[str], Field(
                description="The entries to remove: fact ids (f-3fa9c2e11aa0) or citations "
                            "(memory/2025-11-10.md#L14), as memory_search shows them")],
            reason: Annotated[str, Field(description="Why (written into the commit "
                                                     "message)")],
        ) -> CallToolResult:
            """Remove entries (with their nested items) from memory in one commit that says
            why, and re-index: memory_search stops returning them. History keeps them (a
            person can purge it with 'gitmem forget --purge'). Returns the JSON of 'gitmem
            forget --json': commit, reason, entries (fact_id, source, text, lines),
            page_lines."""
            return tools.call(lambda cfg: tools.forget(cfg, _listed(refs), reason))

    @server.tool(name="memory_entity", annotations=read_only, structured_output=False)
    def memory_entity(
        name: Annotated[str | None, Field(description="The entity: @The-Castle, the_castle, "
                                          "'The Castle' or an alias; none lists every "
                                          "entity")] = None,
        as_of: Annotated[str | None, Field(description="As the memory stood then: a time "
                                           "or a commit")] = None,
        limit: Annotated[int, Field(ge=1, le=1000, description="Current facts shown per "
                                    "kind")] = 10,
    ) -> CallToolResult:
        """Tell me about an entity: its page's text, facts by kind (newest first, each cited),
        opinions with confidence, first and last mention, a timeline and related entities.
        Returns the JSON of 'gitmem entity NAME --json' (without a name: every entity)."""
        return tools.call(lambda cfg: tools.entity(cfg, name, as_of=as_of, limit=limit))

    @server.tool(name="memory_opinions", annotations=read_only, structured_output=False)
    def memory_opinions(
        entity: Annotated[str | None, Field(description="Only opinions about this "
                                            "entity")] = None,
        min_confidence: Annotated[float | None, Field(ge=0.0, le=1.0, description="Only "
                                                      "opinions held at least this "
                                                      "strongly")] = None,
        as_of: Annotated[str | None, Field(description="The confidence as it stood "
                                           "then: a time or a commit")] = None,
        history: Annotated[bool, Field(description="Each opinion's evidence over time "
                                       "(every entry it cited, with its day, c and "
                                       "citation) and how its confidence moved, commit by "
                                       "commit")] = False,
    ) -> CallToolResult:
        """The opinions of bank/opinions.md, strongest first: statement, confidence, updated
        date, evidence for and against, each cited. Returns the JSON of 'gitmem opinions
        --json'."""
        return tools.call(lambda cfg: tools.opinions(cfg, entity=entity,
                                                     min_confidence=min_confidence,
                                                     as_of=as_of, history=history))

    @server.tool(name="memory_review", annotations=read_only, structured_output=False)
    def memory_review(
        range: Annotated[str, Field(description="BASE..HEAD, BASE...HEAD (against the merge "
                                    "base) or BASE, e.g. origin/main..HEAD")],
        format: Annotated[Literal["json", "markdown"], Field(
            description="json (as 'gitmem review --json') or markdown (a pull request "
                        "comment)")] = "json",
    ) -> CallToolResult:
        """How the memory changed between two revisions: opinions added, removed and changed
        (with the evidence that moved them), facts added and removed per entity, superseded
        facts, entity pages changed."""
        return tools.call(lambda cfg: tools.review(cfg, range, markdown=format == "markdown"))

    return server


def serve_stdio(ws: Workspace) -> None:
    """Serve over stdin/stdout until the client closes the connection."""
    build_server(ws).run("stdio")
