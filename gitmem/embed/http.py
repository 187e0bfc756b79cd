"""The one HTTP path every remote embedding provider takes: POST JSON, bounded retries
with exponential backoff and jitter on 429, 5xx and timeouts, and errors that name the setting to
fix. Secrets (the API key and every header value) never reach a message: they are scrubbed from
server text and URLs lose their query and user info before they are shown."""

from __future__ import annotations

import functools
import json
import math
import random
import ssl
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from gitmem.embed.base import EmbeddingError

Sleep = Callable[[float], None]

BACKOFF_BASE = 0.5  # seconds before the first retry; doubles each attempt
BACKOFF_CAP = 20.0  # longest computed backoff
RETRY_AFTER_CAP = 60.0  # longest wait a server's Retry-After can ask for
MESSAGE_LIMIT = 300  # characters of a server's error message worth showing
_REDACTED = "[redacted]"


def post_json(
    url: str,
    payload: Any,
    *,
    headers: Mapping[str, str],
    timeout: float,
    retries: int,
    setting_hint: str,
    provider: str = "the embedding server",
    client: httpx.Client | None = None,
    sleep: Sleep = time.sleep,
    secrets: Sequence[str] = (),
) -> Any:
    """POST ``payload`` as JSON to ``url`` and return the decoded JSON answer.

    ``setting_hint`` says how to fix rejected credentials (shown on 401/403). ``retries`` is the
    number of extra attempts after the first. ``secrets`` are scrubbed from every message, in
    addition to all header values. Raises EmbeddingError."""
    scrub = _Scrubber([*headers.values(), *secrets])
    shown = scrub(safe_url(url))
    own = client is None
    http = client if client is not None else new_client()
    try:
        for attempt in range(retries + 1):
            last = attempt == retries
            try:
                response = http.post(url, json=payload, headers=dict(headers), timeout=timeout)
            except httpx.TimeoutException:
                if last:
                    raise EmbeddingError(
                        f"{provider} timed out after {timeout:g} s at {shown} "
                        f"({attempt + 1} attempt{'s' if attempt else ''}); raise embed.timeout"
                    ) from None
                sleep(backoff_delay(attempt))
                continue
            except httpx.ConnectError as exc:
                raise EmbeddingError(
                    f"cannot reach {shown}: is the server running? set embed.remote.base_url "
                    f"({scrub(_reason(exc))})"
                ) from None
            except httpx.TransportError as exc:  # reset or broken connection: worth retrying
                if last:
                    raise EmbeddingError(
                        f"{provider} connection failed at {shown}: {scrub(_reason(exc))}"
                    ) from None
                sleep(backoff_delay(attempt))
                continue
            status = response.status_code
            if status == 429 or status >= 500:
                if last:
                    raise _final_status_error(response, provider, shown, attempt + 1, scrub)
                sleep(retry_after(response) or backoff_delay(attempt))
                continue
            if status in (401, 403):
                what = "rejected the API key" if status == 401 else "refused the request"
                detail = server_message(response, scrub)
                raise EmbeddingError(
                    f"{provider} {what} (HTTP {status}{': ' + detail if detail else ''}): "
                    f"{setting_hint}"
                )
            if status >= 400:
                detail = server_message(response, scrub) or response.reason_phrase
                raise EmbeddingError(f"{provider} refused the request (HTTP {status}): {detail}")
            return _decode(response, provider, shown)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover
    finally:
        if own:
            http.close()


def new_client() -> httpx.Client:
    """An HTTP client; clients share one TLS context (building one costs tens of ms)."""
    return httpx.Client(verify=_tls_context())


@functools.cache
def _tls_context() -> ssl.SSLContext:
    return httpx.create_ssl_context()


def backoff_delay(attempt: int) -> float:
    """Exponential backoff with jitter: half the nominal delay fixed, half random."""
    nominal = min(BACKOFF_CAP, BACKOFF_BASE * 2.0**attempt)
    return nominal / 2 + random.uniform(0, nominal / 2)


def retry_after(response: httpx.Response) -> float | None:
    """The server's Retry-After in seconds, capped; None when absent or not a number of seconds."""
    raw = response.headers.get("retry-after")
    if raw is None:
        return None
    try:
        seconds = float(raw.strip())
    except ValueError:  # an HTTP date: fall back to our own backoff
        return None
    if not math.isfinite(seconds) or seconds < 0:
        return None
    return min(seconds, RETRY_AFTER_CAP)


def safe_url(url: str) -> str:
    """The URL without user info, query or fragment: those may carry credentials."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def server_message(response: httpx.Response, scrub: Callable[[str], str]) -> str:
    """The server's own explanation (OpenAI, Gemini, Voyage and Ollama shapes), truncated."""
    text = response.text
    try:
        body = json.loads(text)
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error", body.get("detail", body.get("message")))
        if isinstance(error, dict):
            error = error.get("message", error)
        if error is not None:
            text = error if isinstance(error, str) else json.dumps(error)
    text = " ".join(scrub(text).split())
    return text if len(text) <= MESSAGE_LIMIT else text[: MESSAGE_LIMIT - 1] + "…"


def _final_status_error(
    response: httpx.Response, provider: str, shown: str, attempts: int,
    scrub: Callable[[str], str],
) -> EmbeddingError:
    detail = server_message(response, scrub)
    suffix = f": {detail}" if detail else ""
    tries = f"{attempts} attempt{'s' if attempts > 1 else ''}"
    if response.status_code == 429:
        return EmbeddingError(
            f"{provider} is rate-limiting requests (HTTP 429) after {tries}{suffix}; try again "
            "later, or raise embed.retries or lower embed.batch_size"
        )
    return EmbeddingError(
        f"{provider} server error (HTTP {response.status_code}) at {shown} after {tries}{suffix}"
    )


def _decode(response: httpx.Response, provider: str, shown: str) -> Any:
    try:
        return response.json()
    except ValueError:
        kind = response.headers.get("content-type", "no content type")
        raise EmbeddingError(
            f"malformed response: {provider} at {shown} answered HTTP {response.status_code} "
            f"with a body that is not JSON ({kind}, {len(response.content)} bytes)"
        ) from None


def _reason(exc: Exception) -> str:
    return str(exc) or type(exc).__name__


class _Scrubber:
    """Replaces every secret (longest first, so a secret containing another goes whole)."""

    def __init__(self, secrets: Sequence[str]) -> None:
        found = {s for s in secrets if len(s) >= 4}
        # "Bearer sk-…": scrub the token part on its own too, wherever a server echoes it
        found |= {s.split(None, 1)[1] for s in list(found) if " " in s.strip()}
        self._secrets = sorted((s for s in found if len(s) >= 4), key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, _REDACTED)
        return text
