"""A small fake of GitHub's REST API for issue comments, served on 127.0.0.1.

Enough for the review Action's script: list a pull request's comments (paginated), create one,
update one. It checks the bearer token, records every request, and can be told to refuse
writes (a fork's read-only token).

    with GitHubServer(token="t", repo="o/r") as api:
        api.seed(7, "a human comment")
        ... run the script with GITHUB_API_URL=api.url ...
        assert [c["body"] for c in api.comments[7]] == [...]
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    body: Any


class GitHubServer:
    def __init__(self, token: str, repo: str) -> None:
        self.token, self.repo = token, repo
        self.comments: dict[int, list[dict[str, Any]]] = {}
        self.requests: list[Request] = []
        self.refuse_writes = False
        self._next_id = 1000
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def seed(self, number: int, body: str, login: str = "someone") -> dict[str, Any]:
        with self._lock:
            return self._add(number, body, login)

    def _add(self, number: int, body: str, login: str) -> dict[str, Any]:
        self._next_id += 1
        comment = {"id": self._next_id, "body": body, "user": {"login": login},
                   "html_url": f"https://github.invalid/{self.repo}/pull/{number}"
                               f"#issuecomment-{self._next_id}"}
        self.comments.setdefault(number, []).append(comment)
        return comment

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet tests
                pass

            def _reply(self, status: int, data: Any) -> None:
                payload = json.dumps(data).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                body = json.loads(raw) if raw else None
                url = urlsplit(self.path)
                fake.requests.append(Request(self.command, self.path, body))
                if self.headers.get("Authorization") != f"Bearer {fake.token}":
                    self._reply(401, {"message": "Bad credentials"})
                    return
                if self.command != "GET" and fake.refuse_writes:
                    self._reply(403, {"message": "Resource not accessible by integration"})
                    return
                with fake._lock:
                    status, data = fake._route(self.command, url.path, parse_qs(url.query), body)
                self._reply(status, data)

            do_GET = do_POST = do_PATCH = _serve

        return Handler

    def _route(self, method: str, path: str, query: dict[str, list[str]],
               body: Any) -> tuple[int, Any]:
        prefix = f"/repos/{self.repo}/issues/"
        if not path.startswith(prefix):
            return 404, {"message": "Not Found"}
        rest = path[len(prefix):]
        if (m := re.fullmatch(r"(\d+)/comments", rest)) is not None:
            number = int(m.group(1))
            if method == "GET":
                per_page = int(query.get("per_page", ["30"])[0])
                page = int(query.get("page", ["1"])[0])
                items = self.comments.get(number, [])
                return 200, items[(page - 1) * per_page: page * per_page]
            if method == "POST":
                return 201, self._add(number, body["body"], "github-actions[bot]")
        if (m := re.fullmatch(r"comments/(\d+)", rest)) is not None and method == "PATCH":
            for comments in self.comments.values():
                for comment in comments:
                    if comment["id"] == int(m.group(1)):
                        comment["body"] = body["body"]
                        return 200, comment
        return 404, {"message": "Not Found"}

    def __enter__(self) -> GitHubServer:
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
