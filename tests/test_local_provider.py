"""The local provider for real: model download (resume, checksum, offline, lock) from a real HTTP
server on 127.0.0.1, and a real tiny BERT GGUF run by llama-cpp-python."""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from gguf_model import N_CTX_TRAIN, N_EMBD, tiny_gguf

from gitmem.embed.base import EmbeddingError
from gitmem.embed.download import list_models, models_dir, pull, resolve_model
from testing.bounds import FAILURE_SECONDS

REF = "hf:test-org/tiny-repo/tiny-bert.gguf"
URL_PATH = "/test-org/tiny-repo/resolve/main/tiny-bert.gguf"


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_gguf(tmp_path_factory)


@pytest.fixture(scope="session")
def other_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_gguf(tmp_path_factory, seed=1)


class ModelServer(ThreadingHTTPServer):
    """Serves one file like Hugging Face's ``resolve`` endpoint, with Range support.

    ``redirect``: answer ``resolve`` with a 302 carrying ``X-Linked-Etag``/``X-Linked-Size``
    (as the Hub does) and serve the bytes from ``/cdn/…``. ``drop_after``: on the next request,
    send only that many bytes, then drop the connection. ``ignore_range``: answer 200 always."""

    daemon_threads = True

    def __init__(self, payload: bytes) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.payload = payload
        self.sha256: str | None = hashlib.sha256(payload).hexdigest()
        self.redirect = False
        self.drop_after: int | None = None
        self.ignore_range = False
        self.delay = 0.0
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def gets(self) -> list[dict[str, Any]]:
        """The requests that asked for the file's bytes (not the redirects)."""
        return [r for r in self.requests if r["serves"]]


class _Handler(BaseHTTPRequestHandler):
    server: ModelServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        srv = self.server
        serves = self.path == "/cdn/tiny-bert.gguf" or (self.path == URL_PATH and not srv.redirect)
        with srv._lock:
            srv.requests.append({"path": self.path, "range": self.headers.get("Range"),
                                 "serves": serves})
            drop, srv.drop_after = srv.drop_after, (None if serves else srv.drop_after)
        if self.path == URL_PATH and srv.redirect:
            self.send_response(302)
            self.send_header("Location", "/cdn/tiny-bert.gguf")
            if srv.sha256:
                self.send_header("X-Linked-Etag", f'"{srv.sha256}"')
            self.send_header("X-Linked-Size", str(len(srv.payload)))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if not serves:
            self.send_error(404)
            return
        if srv.delay:
            time.sleep(srv.delay)
        data, start = srv.payload, 0
        rng = self.headers.get("Range")
        if rng and not srv.ignore_range:
            start = int(rng.removeprefix("bytes=").split("-")[0])
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        if srv.sha256 and not srv.redirect:
            self.send_header("X-Linked-Etag", f'"{srv.sha256}"')
        self.end_headers()
        if drop is not None:
            self.wfile.write(body[:drop])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        self.wfile.write(body)


@pytest.fixture
def server(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModelServer]:
    srv = ModelServer(tiny_model.read_bytes())
    thread = threading.Thread(target=srv.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    monkeypatch.setenv("GITMEM_HF_ENDPOINT", srv.endpoint)
    try:
        yield srv
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(5)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _target() -> Path:
    return models_dir() / "test-org" / "tiny-repo" / "tiny-bert.gguf"


# -- download -------------------------------------------------------------------------------------


@pytest.mark.parametrize("redirect", [False, True], ids=["direct", "hub-redirect"])
def test_pull_downloads_into_user_cache(server: ModelServer, tiny_model: Path,
                                        redirect: bool) -> None:
    server.redirect = redirect
    seen: list[tuple[int, int | None]] = []
    path = pull(REF, progress=lambda done, total: seen.append((done, total)))
    size = tiny_model.stat().st_size
    assert path == _target()
    assert path.is_relative_to(Path(os.environ["XDG_CACHE_HOME"]) / "gitmem" / "models")
    assert _sha(path) == _sha(tiny_model)
    assert seen[0] == (0, size) and seen[-1] == (size, size)
    assert not path.with_name(path.name + ".part").exists()
    assert list_models() == [(REF, size)]
    assert [r["range"] for r in server.gets()] == [None]
    # Present: resolve and a second pull use no network.
    assert resolve_model(REF, download=False, progress=None) == path
    assert pull(REF) == path
    assert len(server.gets()) == 1


def test_interrupted_download_resumes_with_range(server: ModelServer, tiny_model: Path) -> None:
    cut = 100_000
    server.drop_after = cut
    with pytest.raises(EmbeddingError, match="resume") as err:
        pull(REF)
    assert "cannot download" in str(err.value)
    part = _target().with_name("tiny-bert.gguf.part")
    assert part.stat().st_size == cut
    assert not _target().exists()

    path = pull(REF)
    assert server.gets()[-1]["range"] == f"bytes={cut}-"
    assert _sha(path) == _sha(tiny_model)
    assert not part.exists()


def test_interrupted_download_resumes_through_hub_redirect(server: ModelServer,
                                                           tiny_model: Path) -> None:
    server.redirect = True
    server.drop_after = 4096
    with pytest.raises(EmbeddingError):
        pull(REF)
    path = pull(REF)
    assert [r["range"] for r in server.gets()] == [None, "bytes=4096-"]
    assert _sha(path) == _sha(tiny_model)


def test_server_ignoring_range_restarts_from_zero(server: ModelServer, tiny_model: Path) -> None:
    part = _target().with_name("tiny-bert.gguf.part")
    part.parent.mkdir(parents=True)
    part.write_bytes(b"garbage that must not survive")
    server.ignore_range = True
    path = pull(REF)
    assert server.gets()[-1]["range"] == "bytes=29-"
    assert _sha(path) == _sha(tiny_model)


def test_stale_part_longer_than_file_restarts(server: ModelServer, tiny_model: Path) -> None:
    part = _target().with_name("tiny-bert.gguf.part")
    part.parent.mkdir(parents=True)
    part.write_bytes(b"x" * (tiny_model.stat().st_size + 10))
    path = pull(REF)  # 416 on the resume, then a fresh download
    assert [r["range"] for r in server.gets()][-1] is None
    assert _sha(path) == _sha(tiny_model)


def test_checksum_mismatch_is_an_error_and_leaves_nothing(server: ModelServer) -> None:
    server.sha256 = "0" * 64
    with pytest.raises(EmbeddingError, match="checksum mismatch"):
        pull(REF)
    assert not _target().exists()
    assert not _target().with_name("tiny-bert.gguf.part").exists()
    with pytest.raises(EmbeddingError, match="gitmem model pull"):
        resolve_model(REF, download=False, progress=None)


def test_without_checksum_the_size_is_checked(server: ModelServer, tiny_model: Path) -> None:
    server.sha256 = None
    assert _sha(pull(REF)) == _sha(tiny_model)


def test_offline_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, refused_port: int) -> None:
    monkeypatch.setenv("GITMEM_HF_ENDPOINT", f"http://127.0.0.1:{refused_port}")
    with pytest.raises(EmbeddingError) as err:
        pull(REF)
    message = str(err.value)
    assert message.startswith(f"cannot download {REF}: ")
    assert "file path in embed.model" in message
    assert not _target().exists()


def test_not_found_is_a_clear_error(server: ModelServer) -> None:
    with pytest.raises(EmbeddingError, match="HTTP 404"):
        pull("hf:test-org/tiny-repo/missing.gguf")


def test_missing_model_without_download_names_the_pull_command() -> None:
    with pytest.raises(EmbeddingError) as err:
        resolve_model(REF, download=False, progress=None)
    assert f"gitmem model pull {REF}" in str(err.value)


def test_present_model_needs_no_network(server: ModelServer, tiny_model: Path,
                                        monkeypatch: pytest.MonkeyPatch, refused_port: int) -> None:
    path = pull(REF)
    server.shutdown()
    monkeypatch.setenv("GITMEM_HF_ENDPOINT", f"http://127.0.0.1:{refused_port}")
    assert resolve_model(REF, download=False, progress=None) == path
    assert resolve_model(REF, download=True, progress=None) == path
    assert pull(REF) == path


def test_resolve_download_true_pulls(server: ModelServer, tiny_model: Path) -> None:
    path = resolve_model(REF, download=True, progress=None)
    assert _sha(path) == _sha(tiny_model)


def test_two_pulls_of_one_model_do_not_collide(server: ModelServer, tiny_model: Path) -> None:
    server.delay = 0.3
    results: list[Path | BaseException] = []

    def run() -> None:
        try:
            results.append(pull(REF))
        except BaseException as exc:  # pragma: no cover - reported by the assert below
            results.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(FAILURE_SECONDS)
    assert results == [_target(), _target()]
    assert len(server.gets()) == 1  # the second waited for the lock, then found the file
    assert _sha(_target()) == _sha(tiny_model)


def test_path_references(tiny_model: Path, tmp_path: Path) -> None:
    assert resolve_model(str(tiny_model), download=False, progress=None) == tiny_model
    with pytest.raises(EmbeddingError, match="does not exist"):
        resolve_model(str(tmp_path / "nope.gguf"), download=False, progress=None)
    other = tmp_path / "model.bin"
    other.write_bytes(b"GGUF....")
    with pytest.raises(EmbeddingError, match=r"\.gguf"):
        resolve_model(str(other), download=False, progress=None)
    fake = tmp_path / "fake.gguf"
    fake.write_bytes(b"not a model")
    with pytest.raises(EmbeddingError, match="not a GGUF file"):
        resolve_model(str(fake), download=False, progress=None)
    for bad in ("hf:org/model.gguf", "hf:org/repo/../x.gguf", "hf:org/repo/file.bin", "  "):
        with pytest.raises(EmbeddingError):
            resolve_model(bad, download=False, progress=None)


def test_list_models_empty_cache() -> None:
    assert list_models() == []


# -- the model itself -----------------------------------------------------------------------------


def _norm(v: list[float]) -> float:
    return math.sqrt(sum(x * x for x in v))


# A text's vector packed with others against alone (issue 41): flash attention keeps keys and
# values in f16, and its result moves in the fourth decimal with the texts beside it.
PACKED_TOL = 1e-3


def _close(a: list[float], b: list[float], tol: float = 1e-5) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


@pytest.fixture(scope="module")
def embedder(tiny_model: Path) -> Iterator[Any]:
    pytest.importorskip("llama_cpp")
    from gitmem.embed.local import LocalEmbedder

    emb = LocalEmbedder(tiny_model, ref=str(tiny_model), threads=2)
    yield emb
    emb.close()


def test_local_embedder_embeds_a_batch(embedder: Any) -> None:
    texts = ["peter prefers concise whatsapp replies", "alice likes coffee in the morning",
             "the release was decided on monday", "peter prefers concise whatsapp replies"]
    vectors = embedder.embed_batch(texts, input_type="document")
    assert len(vectors) == len(texts)
    assert embedder.dimension == N_EMBD
    for v in vectors:
        assert len(v) == N_EMBD
        assert all(math.isfinite(x) for x in v)
        assert abs(_norm(v) - 1.0) < 1e-5
    assert vectors[0] == vectors[3]  # identical texts, identical vectors
    assert not _close(vectors[0], vectors[1], 1e-3)
    assert not _close(vectors[1], vectors[2], 1e-3)
    # Deterministic across calls; across batch composition and input type within float
    # tolerance (texts share a decode, packed by length: issue 41).
    assert embedder.embed_batch(texts, input_type="document") == vectors
    again = embedder.embed_batch([texts[2], texts[1]], input_type="query")
    assert _close(again[0], vectors[2], PACKED_TOL) and _close(again[1], vectors[1], PACKED_TOL)


def test_local_embedder_cuts_long_and_handles_empty_input(embedder: Any) -> None:
    assert embedder.n_ctx == N_CTX_TRAIN  # the model's training context is below 512
    long_text = " ".join(["alice likes coffee and long walks in the garden"] * 400)
    huge_word = "x" * 100_000
    vectors = embedder.embed_batch([long_text, huge_word, "", "   ", "ünïcödé 🙂 文字"],
                                   input_type="document")
    assert len(vectors) == 5
    for v in vectors:
        assert len(v) == N_EMBD and all(math.isfinite(x) for x in v)
    # Only the first n_ctx tokens count: a longer tail does not change the vector.
    longer = embedder.embed_batch([long_text + " pizza" * 500], input_type="document")
    assert _close(longer[0], vectors[0])


def _lengths_texts() -> list[str]:
    """Texts of 1 to ~3x the tiny model's context in tokens, in no order of length."""
    words = ["alice", "likes", "coffee", "and", "long", "walks", "in", "the", "garden"]
    lengths = [1, 40, 2, 120, 5, 63, 200, 17, 90, 3, 130, 33, 64, 8, 400, 11]
    return [" ".join(words[i % len(words)] for i in range(n)) + f" {n}" for n in lengths]


def test_texts_of_every_length_in_one_call_get_their_own_vectors(embedder: Any) -> None:
    """Issue 41: texts share decodes, packed by length. Each still gets the vector it gets
    alone (float tolerance), texts near and over the context included (a pack never holds
    more tokens than one decode takes: llama.cpp's batch would overflow)."""
    texts = _lengths_texts()
    together = embedder.embed_batch(texts, input_type="document")
    for text, vector in zip(texts, together, strict=True):
        [alone] = embedder.embed_batch([text], input_type="document")
        assert _close(vector, alone, PACKED_TOL), text


def test_short_texts_share_a_decode(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("llama_cpp")
    from gitmem.embed.native import NativeModel

    decodes: list[int] = []
    real = NativeModel._decode

    def counted(self: Any, seqs: Any) -> Any:
        decodes.append(sum(len(s) for s in seqs))
        return real(self, seqs)

    monkeypatch.setattr(NativeModel, "_decode", counted)
    packed = NativeModel(tiny_model)
    alone = NativeModel(tiny_model, pack_tokens=0)
    tokenised: list[bytes] = []
    tokenize = packed._llama.tokenize

    def count_tokenize(text: bytes, *args: Any, **kwargs: Any) -> Any:
        tokenised.append(text)
        return tokenize(text, *args, **kwargs)

    monkeypatch.setattr(packed._llama, "tokenize", count_tokenize)
    try:
        texts = _lengths_texts()
        got = packed.embed(texts, "document")
        assert len(tokenised) == len(texts)  # each text tokenised once
        packed_decodes = list(decodes)
        want = alone.embed(texts, "document")
        distinct = {tuple(packed.tokens(t, "document")) for t in texts}  # cut at the context
    finally:
        packed.close()
        alone.close()
    assert len(decodes) - len(packed_decodes) == len(distinct)  # the reference: one a decode
    assert len(packed_decodes) < len(distinct) / 2  # shared decodes ...
    assert max(packed_decodes) <= N_CTX_TRAIN  # ... of at most one context
    for g, w in zip(got, want, strict=True):
        assert _close(g, w, PACKED_TOL)


def test_local_embedder_uses_max_batch(embedder: Any) -> None:
    texts = [f"note {i} about the project" for i in range(embedder.max_batch)]
    assert len(embedder.embed_batch(texts, input_type="document")) == embedder.max_batch


def test_local_fingerprint_follows_the_model_file(tiny_model: Path, other_model: Path,
                                                  tmp_path: Path) -> None:
    from gitmem.embed.local import LocalEmbedder

    a = LocalEmbedder(tiny_model)
    copy = tmp_path / "elsewhere.gguf"
    shutil.copyfile(tiny_model, copy)
    assert a.fingerprint.startswith("local:")
    assert LocalEmbedder(copy, ref="hf:x/y/z.gguf").fingerprint == a.fingerprint
    assert LocalEmbedder(other_model).fingerprint != a.fingerprint
    assert LocalEmbedder(tiny_model, n_ctx=256).fingerprint != a.fingerprint


def test_local_embedder_close_and_reload(tiny_model: Path) -> None:
    pytest.importorskip("llama_cpp")
    from gitmem.embed.local import LocalEmbedder

    emb = LocalEmbedder(tiny_model, threads=1)
    first = emb.embed_batch(["git commit"], input_type="query")
    emb.close()
    emb.close()  # idempotent
    assert _close(emb.embed_batch(["git commit"], input_type="query")[0], first[0])
    emb.close()


def test_a_different_model_gives_different_vectors(tiny_model: Path, other_model: Path) -> None:
    pytest.importorskip("llama_cpp")
    from gitmem.embed.local import LocalEmbedder

    a, b = LocalEmbedder(tiny_model), LocalEmbedder(other_model)
    try:
        va = a.embed_batch(["coffee"], input_type="query")[0]
        vb = b.embed_batch(["coffee"], input_type="query")[0]
        assert not _close(va, vb, 1e-3)
    finally:
        a.close()
        b.close()


def test_token_level_output_is_mean_pooled(tmp_path_factory: pytest.TempPathFactory,
                                           tiny_model: Path) -> None:
    pytest.importorskip("llama_cpp")
    import gguf

    from gitmem.embed.local import LocalEmbedder

    # The same weights without pooling in the file: llama.cpp returns one vector per token.
    unpooled = tiny_gguf(tmp_path_factory, pooling=gguf.PoolingType.NONE)
    a, b = LocalEmbedder(unpooled), LocalEmbedder(tiny_model)
    try:
        texts = ["alice likes coffee", "git commit"]
        va = a.embed_batch(texts, input_type="document")
        vb = b.embed_batch(texts, input_type="document")
        assert [len(v) for v in va] == [N_EMBD, N_EMBD]
        for x, y in zip(va, vb, strict=True):
            assert abs(_norm(x) - 1.0) < 1e-5
            assert _close(x, y, 1e-4)  # our mean equals llama.cpp's MEAN pooling
    finally:
        a.close()
        b.close()


def test_bad_model_file_is_an_embedding_error(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from gitmem.embed.local import LocalEmbedder

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\0" * 64)
    with pytest.raises(EmbeddingError, match="cannot load the local embedding model"):
        LocalEmbedder(bad).embed_batch(["x"], input_type="query")


def test_missing_llama_cpp_explains_how_to_install(tiny_model: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.embed.local import LocalEmbedder

    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # makes `import llama_cpp` fail
    with pytest.raises(EmbeddingError, match=r"-m pip install 'llama-cpp-python>=0\.3,<0\.4' 'numpy>=2\.0'"):
        LocalEmbedder(tiny_model).embed_batch(["x"], input_type="query")
