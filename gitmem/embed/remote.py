"""Remote embedding providers: OpenAI-compatible, Gemini, Voyage and Ollama.

Each provider only builds its request and reads its answer; the HTTP path (retries, backoff,
errors naming settings, redaction) is ``gitmem.embed.http``. API keys are read from the
environment at each call and never stored on the embedder, so no repr, fingerprint or message
can carry one. Public default endpoints are used only when the user names the provider."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import httpx

from gitmem.config import DEFAULT_MODEL, Config, is_remote
from gitmem.embed.base import Embedder, EmbeddingError, InputType, Vector
from gitmem.embed.http import Sleep, new_client, post_json, safe_url


class RemoteEmbedder(Embedder):
    """What the remote providers share: endpoint, key variable, headers, limits, one client."""

    default_base_url = ""
    default_model = ""
    default_key_env: str | None = None  # None: the provider takes no key
    batch_limit = 2048  # the most texts the provider's API accepts in one request

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        headers: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        dimensions: int | None = None,
        timeout: float = 30.0,
        retries: int = 4,
        batch_size: int = 32,
        query_input_type: str | None = None,
        document_input_type: str | None = None,
        sleep: Sleep = time.sleep,
    ) -> None:
        base = (base_url or self.default_base_url).rstrip("/")
        super().__init__(model or self.default_model, endpoint=base, dimensions=dimensions)
        self.base_url = base
        self.api_key_env = api_key_env or self.default_key_env
        self._key_required = api_key_env is not None or base_url is None
        self._headers = dict(headers)
        self.timeout = timeout
        self.retries = retries
        self.max_batch = max(1, min(batch_size, self.batch_limit))
        self.input_types: dict[InputType, str | None] = {
            "query": query_input_type, "document": document_input_type,
        }
        self._sleep = sleep
        self._client: httpx.Client | None = None

    def __repr__(self) -> str:  # no headers: their values may be credentials
        return f"{type(self).__name__}(model={self.model!r}, base_url={safe_url(self.base_url)!r})"

    @property
    def fingerprint(self) -> str:
        # A configured document input type changes what stored vectors mean.
        base = super().fingerprint
        doc = self.input_types["document"]
        return base if doc is None else f"{base}+{doc}"

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _api_key(self) -> str | None:
        """The key from the environment; EmbeddingError naming the variable when it is needed."""
        if self.api_key_env is None:
            return None
        key = os.environ.get(self.api_key_env, "").strip()
        if key:
            return key
        if not self._key_required:  # a self-hosted OpenAI-compatible server may need none
            return None
        raise EmbeddingError(
            f"{self.name} needs an API key: set the environment variable {self.api_key_env} "
            "(or name another variable with embed.remote.api_key_env in your user config)"
        )

    def _auth_hint(self) -> str:
        if self.api_key_env is None:
            return "check embed.remote.headers and embed.remote.base_url"
        return (f"set the environment variable named by embed.remote.api_key_env "
                f"({self.api_key_env})")

    def _post(self, path: str, payload: Any, auth: Mapping[str, str]) -> Any:
        if self._client is None:
            self._client = new_client()
        return post_json(
            f"{self.base_url}{path}", payload,
            headers={**self._headers, **auth, "Content-Type": "application/json"},
            timeout=self.timeout, retries=self.retries, setting_hint=self._auth_hint(),
            provider=self.name, client=self._client, sleep=self._sleep,
        )

    def _check(self, vectors: Any, count: int) -> list[Vector]:
        """Every answer passes here: right count, numbers, finite, one common length."""
        if not isinstance(vectors, list) or len(vectors) != count:
            got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
            raise EmbeddingError(f"malformed response: {self.name} returned {got} vectors "
                                 f"for {count} texts")
        out: list[Vector] = []
        for i, vector in enumerate(vectors):
            if not isinstance(vector, list) or not vector or not all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in vector
            ):
                raise EmbeddingError(f"malformed response: {self.name} vector {i} is not a "
                                     "non-empty list of finite numbers")
            if out and len(vector) != len(out[0]):
                raise EmbeddingError(f"malformed response: {self.name} vectors differ in length "
                                     f"({len(out[0])} and {len(vector)})")
            out.append([float(x) for x in vector])
        if out and self.dimensions is not None and len(out[0]) != self.dimensions:
            raise EmbeddingError(f"malformed response: {self.name} returned {len(out[0])} "
                                 f"dimensions but embed.dimensions is {self.dimensions}")
        return out


def _field(body: Any, key: str) -> Any:
    if not isinstance(body, dict) or key not in body:
        raise EmbeddingError(f"malformed response: no '{key}' in the answer")
    return body[key]


def _indexed_embeddings(body: Any, name: str) -> list[Any]:
    """``data[i].embedding`` ordered by ``data[i].index`` (OpenAI and Voyage)."""
    data = _field(body, "data")
    if not isinstance(data, list) or not all(isinstance(d, dict) for d in data):
        raise EmbeddingError(f"malformed response: {name} 'data' is not a list of objects")
    try:
        ordered = sorted(data, key=lambda d: int(d.get("index", 0)))
    except (TypeError, ValueError):
        raise EmbeddingError(f"malformed response: {name} 'index' is not a number") from None
    if any("index" in d for d in data) and [d.get("index") for d in ordered] != list(
        range(len(data))
    ):
        raise EmbeddingError(f"malformed response: {name} indices are not 0..{len(data) - 1}")
    return [d.get("embedding") for d in ordered]


class OpenAIEmbedder(RemoteEmbedder):
    """OpenAI or any OpenAI-compatible server (POST {base}/embeddings)."""

    name = "openai"
    default_base_url = "https://api.openai.com/v1"
    default_model = "text-embedding-3-small"
    default_key_env = "OPENAI_API_KEY"
    batch_limit = 2048

    def embed_batch(self, texts: Sequence[str], *, input_type: InputType) -> list[Vector]:
        if not texts:
            return []
        payload: dict[str, Any] = {"model": self.model, "input": list(texts),
                                   "encoding_format": "float"}
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        if self.input_types[input_type] is not None:  # compatible servers that take one
            payload["input_type"] = self.input_types[input_type]
        key = self._api_key()
        body = self._post("/embeddings", payload, {"Authorization": f"Bearer {key}"} if key else {})
        return self._check(_indexed_embeddings(body, self.name), len(texts))


class GeminiEmbedder(RemoteEmbedder):
    """Google Gemini (POST {base}/models/{model}:batchEmbedContents)."""

    name = "gemini"
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"
    default_model = "gemini-embedding-001"
    default_key_env = "GEMINI_API_KEY"
    batch_limit = 100
    _task_types: ClassVar[dict[InputType, str]] = {"query": "RETRIEVAL_QUERY",
                                                    "document": "RETRIEVAL_DOCUMENT"}

    def embed_batch(self, texts: Sequence[str], *, input_type: InputType) -> list[Vector]:
        if not texts:
            return []
        model = self.model.removeprefix("models/")
        task = self.input_types[input_type] or self._task_types[input_type]
        requests: list[dict[str, Any]] = []
        for text in texts:
            request: dict[str, Any] = {"model": f"models/{model}",
                                       "content": {"parts": [{"text": text}]}, "taskType": task}
            if self.dimensions is not None:
                request["outputDimensionality"] = self.dimensions
            requests.append(request)
        key = self._api_key()
        body = self._post(f"/models/{model}:batchEmbedContents", {"requests": requests},
                          {"x-goog-api-key": key} if key else {})
        items = _field(body, "embeddings")
        if not isinstance(items, list):
            raise EmbeddingError("malformed response: gemini 'embeddings' is not a list")
        return self._check([i.get("values") if isinstance(i, dict) else None for i in items],
                           len(texts))


class VoyageEmbedder(RemoteEmbedder):
    """Voyage AI (POST {base}/embeddings with input_type query|document)."""

    name = "voyage"
    default_base_url = "https://api.voyageai.com/v1"
    default_model = "voyage-3.5"
    default_key_env = "VOYAGE_API_KEY"
    batch_limit = 1000

    def embed_batch(self, texts: Sequence[str], *, input_type: InputType) -> list[Vector]:
        if not texts:
            return []
        payload: dict[str, Any] = {"input": list(texts), "model": self.model,
                                   "input_type": self.input_types[input_type] or input_type}
        if self.dimensions is not None:
            payload["output_dimension"] = self.dimensions
        key = self._api_key()
        body = self._post("/embeddings", payload, {"Authorization": f"Bearer {key}"} if key else {})
        return self._check(_indexed_embeddings(body, self.name), len(texts))


class OllamaEmbedder(RemoteEmbedder):
    """A local or self-hosted Ollama (POST {base}/api/embed); takes no key."""

    name = "ollama"
    default_base_url = "http://127.0.0.1:11434"
    default_model = "embeddinggemma"
    default_key_env = None

    def embed_batch(self, texts: Sequence[str], *, input_type: InputType) -> list[Vector]:
        if not texts:
            return []
        payload: dict[str, Any] = {"model": self.model, "input": list(texts)}
        if self.dimensions is not None:
            payload["dimensions"] = self.dimensions
        auth: dict[str, str] = {}
        if self.api_key_env is not None:  # a proxy in front of Ollama may want a bearer token
            key = self._api_key()
            auth = {"Authorization": f"Bearer {key}"} if key else {}
        body = self._post("/api/embed", payload, auth)
        return self._check(_field(body, "embeddings"), len(texts))


EMBEDDERS: dict[str, type[RemoteEmbedder]] = {
    cls.name: cls for cls in (OpenAIEmbedder, GeminiEmbedder, VoyageEmbedder, OllamaEmbedder)
}


def remote_embedder(cfg: Config, provider: str, *, sleep: Sleep = time.sleep) -> Embedder:
    """The remote provider ``provider`` configured from ``cfg``.

    The [embed.remote] settings (base URL, key variable, headers) belong to the provider named by
    embed.provider when that one is remote; a remote fallback behind it gets its own defaults.
    embed.model applies unless it is still the local GGUF default."""
    cls = EMBEDDERS.get(provider)
    if cls is None:
        raise EmbeddingError(f"unknown remote provider '{provider}'; "
                             f"known: {', '.join(EMBEDDERS)}")
    owns_remote = not is_remote(cfg.embed_provider) or cfg.embed_provider == provider
    owns_model = owns_remote and cfg.embed_model != DEFAULT_MODEL
    return cls(
        cfg.embed_model if owns_model else None,
        base_url=cfg.remote_base_url if owns_remote else None,
        api_key_env=cfg.remote_api_key_env if owns_remote else None,
        headers=cfg.remote_headers if owns_remote else (),
        dimensions=cfg.embed_dimensions,
        timeout=cfg.embed_timeout,
        retries=cfg.embed_retries,
        batch_size=cfg.embed_batch_size,
        query_input_type=cfg.embed_query_input_type,
        document_input_type=cfg.embed_document_input_type,
        sleep=sleep,
    )
