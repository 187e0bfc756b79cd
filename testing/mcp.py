"""Drive ``gitmem mcp`` with the MCP SDK's own client over stdio, as an agent's host does."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult, TextContent


@contextlib.asynccontextmanager
async def mcp_session(repo: Path, env: Mapping[str, str] | None = None) -> AsyncIterator[
        ClientSession]:
    """A started, initialised client session with ``python -m gitmem -C repo mcp``."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "gitmem", "-C", str(repo), "mcp"],
        env={**os.environ, **(env or {})}, cwd=str(repo),
    )
    with open(os.devnull, "w") as errlog:  # the server's log (tracebacks of surprises only)
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            yield session


def text_of(result: CallToolResult) -> str:
    """The text a tool returned (its JSON, or the error message)."""
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


def json_of(result: CallToolResult) -> dict[str, Any]:
    """A successful tool result's JSON."""
    assert not result.is_error, text_of(result)
    data: dict[str, Any] = json.loads(text_of(result))
    return data
