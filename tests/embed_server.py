"""A real HTTP embedding server on 127.0.0.1 for the remote provider tests.

It speaks the request and response shapes of the OpenAI-compatible, Voyage, Gemini and Ollama
embedding APIs, answers with deterministic hash-based vectors (equal texts, equal vectors), records
every request, and can be scripted to misbehave: each queued ``Fault`` answers one request, then
normal service resumes.

    with EmbedServer(dim=8) as server:
        server.script(Fault(status=429, retry_after="2"), Fault(status=500))
        ... point a provider at server.url ...
        assert len(server.requests) == 3
"""

from __future__ import annotations

import hashlib
import json
import re
import ssl
import struct
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from testing.bounds import FAILURE_SECONDS


def fake_vector(text: str, dim: int) -> list[float]:
    """The vector the server returns for ``text``: sha256 bytes mapped into [-1, 1]."""
    out: list[float] = []
    counter = 0
    while len(out) < dim:
        digest = hashlib.sha256(f"{counter}\x1f{text}".encode()).digest()
        out.extend(x / 2**31 for x in struct.unpack(">8i", digest))
        counter += 1
    return out[:dim]


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # decoded JSON, or None when the body was not JSON


@dataclass(frozen=True)
class Gate:
    """Holds one answer back: ``arrived`` is set when its request is in, the answer is sent once
    ``release`` is set (or after ``timeout`` seconds). Nothing is set after the answer is sent:
    the client may see the answer before the server's thread runs on, so a test can only wait on
    what happens before it."""

    arrived: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    timeout: float = FAILURE_SECONDS


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour. ``status``: answer that HTTP status with an error body that
    echoes the credentials received (so tests can check the client scrubs them). ``delay``: wait
    that many seconds before answering (normally, or with the other fault). ``body``: send these
    raw bytes as a 200 answer. ``drop_vectors``: a normal answer with that many vectors missing.
    ``nan``: a normal answer whose first vector holds a NaN. ``gate``: held back by it (``Gate``)."""

    status: int | None = None
    retry_after: str | None = None
    delay: float = 0.0
    body: bytes | None = None
    drop_vectors: int = 0
    nan: bool = False
    gate: Gate | None = None


class EmbedServer:
    def __init__(self, dim: int = 8, tls: ssl.SSLContext | None = None) -> None:
        """``tls``: serve HTTPS with this server-side context (certificate tests)."""
        self.dim = dim
        self.scheme = "https" if tls is not None else "http"
        self.requests: list[Recorded] = []
        self._faults: deque[Fault] = deque()
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)  # notified as each request is recorded
        self._closing = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        if tls is not None:
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
            self._httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self._httpd.server_address[1]}"

    def script(self, *faults: Fault) -> None:
        with self._lock:
            self._faults.extend(faults)

    def wait_for_requests(self, count: int, timeout: float = FAILURE_SECONDS) -> int:
        """How many requests have been recorded once ``count`` have (or ``timeout`` passed, a
        bound for failures only). A client that gave up on an answer (its timeout) can be back
        before the server's thread has even read its request: count them this way, not by
        ``len(requests)`` at once."""
        with self._arrived:
            self._arrived.wait_for(lambda: len(self.requests) >= count, timeout)
            return len(self.requests)

    def heal(self) -> None:
        """Drop the faults still queued: normal service from now on."""
        with self._lock:
            self._faults.clear()

    def __enter__(self) -> EmbedServer:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._closing.set()  # wakes handlers still "sleeping" past a client timeout
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def _next_fault(self, recorded: Recorded) -> Fault | None:
        with self._lock:
            self.requests.append(recorded)
            self._arrived.notify_all()
            return self._faults.popleft() if self._faults else None

    def answer(self, path: str, body: Any, drop: int) -> dict[str, Any]:
        """The normal answer for ``path`` in that API's shape; raises KeyError for a bad request."""
        if path.endswith(":batchEmbedContents"):  # Gemini
            reqs = body["requests"]
            vectors = [fake_vector(r["content"]["parts"][0]["text"],
                                   r.get("outputDimensionality", self.dim)) for r in reqs]
            return {"embeddings": [{"values": v} for v in vectors[drop:]]}
        if path.endswith("/api/embed"):  # Ollama
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            dim = body.get("dimensions", self.dim)
            return {"model": body["model"],
                    "embeddings": [fake_vector(t, dim) for t in texts][drop:]}
        if path.endswith("/embeddings"):  # OpenAI-compatible and Voyage
            dim = body.get("dimensions", body.get("output_dimension", self.dim))
            data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)}
                    for i, t in enumerate(body["input"])][drop:]
            # Out of order on purpose: clients must sort by index.
            return {"object": "list", "data": data[::-1], "model": body["model"],
                    "usage": {"prompt_tokens": 0, "total_tokens": 0}}
        raise KeyError(path)


_CREDENTIAL_HEADERS = ("authorization", "x-goog-api-key")


def _poison(answer: dict[str, Any]) -> None:
    """Put a NaN into the first vector of an answer (any of the four shapes)."""
    rows = answer.get("data") or answer.get("embeddings") or []
    if rows:
        first = rows[0]
        vector = first["embedding"] if "embedding" in first else (
            first["values"] if isinstance(first, dict) else first)
        vector[0] = float("nan")


def _handler_for(server: EmbedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            fault = server._next_fault(Recorded("POST", self.path, headers, body)) or Fault()
            if fault.delay and server._closing.wait(fault.delay):
                return
            if fault.gate is not None:
                fault.gate.arrived.set()
                fault.gate.release.wait(fault.gate.timeout)
            if fault.status is not None:
                creds = " ".join(headers.get(h, "") for h in _CREDENTIAL_HEADERS).strip()
                message = f"scripted {fault.status}; credentials received: {creds or 'none'}"
                extra = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                self._send(fault.status, json.dumps({"error": {"message": message}}).encode(),
                           extra)
            elif fault.body is not None:
                self._send(200, fault.body, {"Content-Type": "text/html"})
            else:
                try:
                    answer = server.answer(re.sub(r"\?.*", "", self.path), body,
                                           fault.drop_vectors)
                except (KeyError, TypeError, IndexError) as exc:
                    self._send(400, json.dumps({"error": {"message": f"bad request: {exc}"}})
                               .encode(), {})
                else:
                    if fault.nan:
                        _poison(answer)
                    self._send(200, json.dumps(answer).encode(), {})

        def _send(self, status: int, payload: bytes, extra: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", extra.pop("Content-Type", "application/json"))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

    return Handler
