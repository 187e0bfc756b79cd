"""A scripted OpenAI-compatible chat model on 127.0.0.1, for driving an agent's turn in tests.

``POST /v1/chat/completions`` (streamed or not): while the conversation has no tool result
yet, the model calls the tool ``tool`` with ``arguments``; once it has one, it answers with a
reply that quotes the tool result's first ``path#L…`` citation. Every request body is kept in
``requests``, so a test can read the system prompt and the tool results the agent sent.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CITATION = re.compile(r"[\w./-]+\.md#L\d+(?:-L?\d+)?(?:@[0-9a-f]{7,40})?")


@dataclass
class ChatStub:
    tool: str
    arguments: dict[str, Any]
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message for a request: a tool call, or the final answer."""
        results = [m for m in body.get("messages", []) if m.get("role") == "tool"]
        if not results:
            return {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{len(self.requests)}", "type": "function",
                "function": {"name": self.tool, "arguments": json.dumps(self.arguments)}}]}
        text = _text(results[-1].get("content"))
        found = CITATION.search(text)
        return {"role": "assistant",
                "content": f"From memory: {found.group(0) if found else 'no citation'}"}

    def tool_results(self) -> list[str]:
        """The text of every tool result the agent sent back."""
        return [_text(m.get("content")) for body in self.requests
                for m in body.get("messages", []) if m.get("role") == "tool"]

    def system_prompts(self) -> list[str]:
        return [_text(m.get("content")) for body in self.requests
                for m in body.get("messages", []) if m.get("role") in ("system", "developer")]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _handler(stub: ChatStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._json({"object": "list", "data": [{"id": "stub", "object": "model"}]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            stub.requests.append(body)
            message = stub.reply(body)
            finish = "tool_calls" if message.get("tool_calls") else "stop"
            if body.get("stream"):
                self._stream(body, message, finish)
            else:
                self._json({"id": "chatcmpl-stub", "object": "chat.completion",
                            "model": body.get("model", "stub"),
                            "choices": [{"index": 0, "message": message,
                                         "finish_reason": finish}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                      "total_tokens": 2}})

        def _stream(self, body: dict[str, Any], message: dict[str, Any], finish: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            delta: dict[str, Any] = {"role": "assistant"}
            if message.get("tool_calls"):
                delta["tool_calls"] = [{**call, "index": i}
                                       for i, call in enumerate(message["tool_calls"])]
            else:
                delta["content"] = message["content"]
            chunks = [{"index": 0, "delta": delta, "finish_reason": None},
                      {"index": 0, "delta": {}, "finish_reason": finish}]
            for choice in chunks:
                self._event({"id": "chatcmpl-stub", "object": "chat.completion.chunk",
                             "model": body.get("model", "stub"), "choices": [choice]})
            self._event({"id": "chatcmpl-stub", "object": "chat.completion.chunk",
                         "model": body.get("model", "stub"), "choices": [],
                         "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                   "total_tokens": 2}})
            self.wfile.write(b"data: [DONE]\n\n")

        def _event(self, data: dict[str, Any]) -> None:
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        def _json(self, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    return Handler


@contextmanager
def chat_stub(tool: str, arguments: dict[str, Any]) -> Iterator[ChatStub]:
    """A running stub model on 127.0.0.1 (an unused port), stopped on exit."""
    stub = ChatStub(tool, arguments)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(stub))
    stub.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
