"""Remote embedding providers against a real HTTP server on 127.0.0.1 (tests/embed_server.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from embed_server import EmbedServer, Fault, fake_vector

from gitmem.config import Config
from gitmem.embed.base import Embedder, EmbeddingError
from gitmem.embed.http import RETRY_AFTER_CAP, post_json
from gitmem.embed.remote import (
    GeminiEmbedder,
    OpenAIEmbedder,
    VoyageEmbedder,
    remote_embedder,
)
from testing.bounds import FAILURE_SECONDS

CANARY = "sk-canary-DO-NOT-LEAK-123"
HEADER_SECRET = "hdr-secret-DO-NOT-LEAK-456"
KEY_ENVS = ("OPENAI_API_KEY", "GEMINI_API_KEY", "VOYAGE_API_KEY", "CANARY_KEY")
PROVIDERS = ("openai", "gemini", "voyage", "ollama")
TEXTS = ["alpha", "beta", "gamma", "alpha"]


@dataclass
class Sleeps:
    calls: list[float] = field(default_factory=list)

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture(autouse=True)
def canary_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in KEY_ENVS:
        monkeypatch.setenv(name, CANARY)


@pytest.fixture
def server() -> Iterator[EmbedServer]:
    with EmbedServer(dim=8) as srv:
        yield srv


def base_for(provider: str, url: str) -> str:
    return url + ("/v1" if provider in ("openai", "voyage") else "/v1beta" if provider == "gemini"
                  else "")


def make(provider: str, server: EmbedServer, sleeps: Sleeps | None = None,
         **overrides: object) -> Embedder:
    settings: dict[str, object] = {
        "embed_provider": provider, "remote_base_url": base_for(provider, server.url),
        "remote_api_key_env": None if provider == "ollama" else "CANARY_KEY",
        "remote_headers": (("X-Project", HEADER_SECRET),), "embed_timeout": FAILURE_SECONDS,
        "embed_retries": 2, "embed_batch_size": 16,
    }
    settings.update(overrides)
    cfg = Config(**settings)  # type: ignore[arg-type]
    return remote_embedder(cfg, provider, sleep=sleeps or Sleeps())


def assert_no_leak(exc: BaseException, embedder: Embedder) -> None:
    for text in (str(exc), repr(exc), embedder.fingerprint, repr(embedder)):
        assert CANARY not in text
        assert HEADER_SECRET not in text
    cause = exc.__cause__ or exc.__context__
    if cause is not None:
        assert CANARY not in str(cause) and CANARY not in repr(cause)


# --- success and request shapes ------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_embeds_a_batch_in_order(provider: str, server: EmbedServer) -> None:
    embedder = make(provider, server)
    vectors = embedder.embed_batch(TEXTS, input_type="document")
    assert vectors == [fake_vector(t, 8) for t in TEXTS]
    assert vectors[0] == vectors[3] and vectors[0] != vectors[1]
    assert len(server.requests) == 1
    request = server.requests[0]
    assert request.headers["x-project"] == HEADER_SECRET
    assert embedder.embed_batch([], input_type="query") == []
    assert len(server.requests) == 1
    embedder.close()


def test_openai_request_shape(server: EmbedServer) -> None:
    embedder = make("openai", server, embed_model="text-embedding-3-large", embed_dimensions=8,
                    embed_query_input_type="search_query")
    embedder.embed_batch(["q"], input_type="query")
    embedder.embed_batch(["d"], input_type="document")
    query, doc = server.requests
    assert query.path == "/v1/embeddings"
    assert query.headers["authorization"] == f"Bearer {CANARY}"
    assert query.body == {"model": "text-embedding-3-large", "input": ["q"], "dimensions": 8,
                          "encoding_format": "float", "input_type": "search_query"}
    assert "input_type" not in doc.body  # no document input type configured


def test_gemini_request_shape(server: EmbedServer) -> None:
    embedder = make("gemini", server, embed_model="gemini-embedding-001", embed_dimensions=8)
    embedder.embed_batch(["q1", "q2"], input_type="query")
    embedder.embed_batch(["d"], input_type="document")
    query, doc = server.requests
    assert query.path == "/v1beta/models/gemini-embedding-001:batchEmbedContents"
    assert query.headers["x-goog-api-key"] == CANARY
    assert "authorization" not in query.headers
    assert query.body == {"requests": [
        {"model": "models/gemini-embedding-001", "content": {"parts": [{"text": t}]},
         "taskType": "RETRIEVAL_QUERY", "outputDimensionality": 8} for t in ("q1", "q2")]}
    assert doc.body["requests"][0]["taskType"] == "RETRIEVAL_DOCUMENT"


def test_voyage_request_shape(server: EmbedServer) -> None:
    embedder = make("voyage", server, embed_model="voyage-3.5", embed_dimensions=8)
    embedder.embed_batch(["q"], input_type="query")
    embedder.embed_batch(["d"], input_type="document")
    query, doc = server.requests
    assert query.path == "/v1/embeddings"
    assert query.headers["authorization"] == f"Bearer {CANARY}"
    assert query.body == {"input": ["q"], "model": "voyage-3.5", "input_type": "query",
                          "output_dimension": 8}
    assert doc.body["input_type"] == "document"


def test_ollama_request_shape(server: EmbedServer) -> None:
    embedder = make("ollama", server, embed_model="nomic-embed-text")
    embedder.embed_batch(["a", "b"], input_type="document")
    (request,) = server.requests
    assert request.path == "/api/embed"
    assert request.body == {"model": "nomic-embed-text", "input": ["a", "b"]}
    assert "authorization" not in request.headers  # Ollama takes no key


def test_ollama_defaults_to_the_local_port() -> None:
    embedder = remote_embedder(Config(embed_provider="ollama"), "ollama")
    assert embedder.endpoint == "http://127.0.0.1:11434"


def test_fingerprint_names_endpoint_not_key(server: EmbedServer) -> None:
    a = make("openai", server)
    b = OpenAIEmbedder("text-embedding-3-small", base_url=server.url + "/other")
    c = OpenAIEmbedder("text-embedding-3-small", base_url=server.url + "/other")
    assert a.fingerprint != b.fingerprint and b.fingerprint == c.fingerprint
    assert a.fingerprint.startswith("openai:") and CANARY not in a.fingerprint


def test_remote_settings_belong_to_the_named_provider(server: EmbedServer) -> None:
    cfg = Config(embed_provider="openai", embed_fallback="ollama",
                 remote_base_url=server.url + "/v1", remote_headers=(("X-Project", "p"),))
    fallback = remote_embedder(cfg, "ollama")
    assert fallback.endpoint == "http://127.0.0.1:11434"
    assert remote_embedder(cfg, "openai").endpoint == server.url + "/v1"


# --- missing keys ----------------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "variable"), [
    (OpenAIEmbedder, "OPENAI_API_KEY"), (GeminiEmbedder, "GEMINI_API_KEY"),
    (VoyageEmbedder, "VOYAGE_API_KEY"),
])
def test_missing_key_names_the_variable(cls: type[OpenAIEmbedder], variable: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(variable)
    embedder = cls()  # public endpoint: the key check fails before any request is made
    with pytest.raises(EmbeddingError, match=variable):
        embedder.embed_batch(["x"], input_type="query")


def test_missing_named_key_variable(server: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CANARY_KEY")
    with pytest.raises(EmbeddingError, match="CANARY_KEY"):
        make("openai", server).embed_batch(["x"], input_type="query")
    assert server.requests == []


def test_openai_compatible_server_without_key(server: EmbedServer,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    embedder = OpenAIEmbedder("m", base_url=server.url + "/v1")  # e.g. llama-server, vLLM
    assert embedder.embed_batch(["x"], input_type="query") == [fake_vector("x", 8)]
    assert "authorization" not in server.requests[0].headers


# --- retries -------------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_then_success_honours_retry_after(provider: str, server: EmbedServer) -> None:
    sleeps = Sleeps()
    server.script(Fault(status=429, retry_after="2"), Fault(status=429, retry_after="1.5"))
    vectors = make(provider, server, sleeps).embed_batch(["a", "b"], input_type="query")
    assert vectors == [fake_vector("a", 8), fake_vector("b", 8)]
    assert sleeps.calls == [2.0, 1.5]
    assert len(server.requests) == 3


@pytest.mark.parametrize("provider", PROVIDERS)
def test_500_then_success_backs_off(provider: str, server: EmbedServer) -> None:
    sleeps = Sleeps()
    server.script(Fault(status=500), Fault(status=503))
    assert len(make(provider, server, sleeps).embed_batch(["a"], input_type="query")) == 1
    assert len(sleeps.calls) == 2 and len(server.requests) == 3
    assert 0.25 <= sleeps.calls[0] <= 0.5 and 0.5 <= sleeps.calls[1] <= 1.0  # doubling + jitter


def test_retry_after_is_capped(server: EmbedServer) -> None:
    sleeps = Sleeps()
    server.script(Fault(status=429, retry_after="86400"))
    make("openai", server, sleeps).embed_batch(["a"], input_type="query")
    assert sleeps.calls == [RETRY_AFTER_CAP]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_retries_are_bounded(provider: str, server: EmbedServer) -> None:
    sleeps = Sleeps()
    server.script(*[Fault(status=429, retry_after="0")] * 5)
    embedder = make(provider, server, sleeps)
    with pytest.raises(EmbeddingError, match=r"HTTP 429.*3 attempts.*embed\.retries") as info:
        embedder.embed_batch(["a"], input_type="query")
    assert len(server.requests) == 3 and len(sleeps.calls) == 2
    assert_no_leak(info.value, embedder)


# --- failures --------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "gemini", "voyage"])
@pytest.mark.parametrize("status", [401, 403])
def test_rejected_key_names_the_setting(provider: str, status: int, server: EmbedServer) -> None:
    server.script(Fault(status=status))
    embedder = make(provider, server)
    with pytest.raises(EmbeddingError) as info:
        embedder.embed_batch(["a"], input_type="query")
    message = str(info.value)
    assert f"HTTP {status}" in message and provider in message
    assert "embed.remote.api_key_env (CANARY_KEY)" in message
    assert "[redacted]" in message  # the server echoed the key; the client scrubbed it
    assert len(server.requests) == 1  # never retried
    assert_no_leak(info.value, embedder)


def test_ollama_401_points_at_headers(server: EmbedServer) -> None:
    server.script(Fault(status=401))
    with pytest.raises(EmbeddingError, match=r"embed\.remote\.headers"):
        make("ollama", server).embed_batch(["a"], input_type="query")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_other_4xx_carries_the_server_message(provider: str, server: EmbedServer) -> None:
    server.script(Fault(status=400))
    embedder = make(provider, server)
    with pytest.raises(EmbeddingError, match=r"HTTP 400\): scripted 400") as info:
        embedder.embed_batch(["a"], input_type="query")
    assert len(server.requests) == 1
    assert_no_leak(info.value, embedder)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_timeout_names_embed_timeout(provider: str, server: EmbedServer) -> None:
    sleeps = Sleeps()
    server.script(Fault(delay=2.0), Fault(delay=2.0))
    embedder = make(provider, server, sleeps, embed_timeout=0.2, embed_retries=1)
    with pytest.raises(EmbeddingError, match=r"timed out after 0\.2 s.*embed\.timeout") as info:
        embedder.embed_batch(["a"], input_type="query")
    assert len(sleeps.calls) == 1  # one retry
    # The client gave up on both before the server's threads need have read them: wait for the
    # server to have both (a loaded machine was seen to be slower than the 0.2 s), and no more.
    assert server.wait_for_requests(2) == 2
    assert_no_leak(info.value, embedder)


def test_slow_answer_within_timeout_succeeds(server: EmbedServer) -> None:
    server.script(Fault(delay=0.5))
    assert make("openai", server, embed_timeout=FAILURE_SECONDS).embed_batch(["a"], input_type="query")
    assert len(server.requests) == 1  # answered late, not retried


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("fault", [
    Fault(body=b"<html>gateway</html>"),
    Fault(body=b"{\"data\": 5, \"embeddings\": 5}"),
    Fault(body=b"[]"),
    Fault(drop_vectors=1),
])
def test_malformed_response(provider: str, fault: Fault, server: EmbedServer) -> None:
    server.script(fault)
    embedder = make(provider, server)
    with pytest.raises(EmbeddingError, match="malformed response") as info:
        embedder.embed_batch(["a", "b"], input_type="document")
    assert_no_leak(info.value, embedder)


@pytest.mark.parametrize("body", [
    b'{"embeddings": [[1.0, 2.0], [1.0]]}',  # lengths differ
    b'{"embeddings": [[1.0, NaN], [1.0, 2.0]]}',  # not finite
    b'{"embeddings": [[1.0, "x"], [1.0, 2.0]]}',  # not a number
    b'{"embeddings": [[], []]}',  # empty
])
def test_bad_vectors_are_malformed(body: bytes, server: EmbedServer) -> None:
    server.script(Fault(body=body))
    with pytest.raises(EmbeddingError, match="malformed response"):
        make("ollama", server).embed_batch(["a", "b"], input_type="document")


def test_wrong_dimensions_are_malformed(server: EmbedServer) -> None:
    server.script(Fault(body=b'{"embeddings": [[1.0, 2.0]]}'))
    with pytest.raises(EmbeddingError, match=r"embed\.dimensions is 8"):
        make("ollama", server, embed_dimensions=8).embed_batch(["a"], input_type="query")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_connection_refused(provider: str, refused_port: int) -> None:
    url = f"http://127.0.0.1:{refused_port}"
    cfg = Config(embed_provider=provider, remote_base_url=url, remote_api_key_env="CANARY_KEY",
                 remote_headers=(("X-Project", HEADER_SECRET),))
    sleeps = Sleeps()
    embedder = remote_embedder(cfg, provider, sleep=sleeps)
    with pytest.raises(EmbeddingError, match=r"cannot reach http://127\.0\.0\.1:\d+/.*"
                                             r"is the server running\? set embed\.remote\.base_url"
                       ) as info:
        embedder.embed_batch(["a"], input_type="query")
    assert sleeps.calls == []  # refused is not transient: fail at once
    assert_no_leak(info.value, embedder)


def test_urls_in_messages_lose_credentials(refused_port: int) -> None:
    url = f"http://user:{CANARY}@127.0.0.1:{refused_port}/v1/embeddings?key={CANARY}"
    with pytest.raises(EmbeddingError) as info:
        post_json(url, {}, headers={"Authorization": f"Bearer {CANARY}"}, timeout=1.0,
                  retries=0, setting_hint="-")
    assert CANARY not in str(info.value) and "/v1/embeddings" in str(info.value)


def test_unknown_provider() -> None:
    with pytest.raises(EmbeddingError, match="unknown remote provider"):
        remote_embedder(Config(), "local")
