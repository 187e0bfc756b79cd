"""The ``local`` provider: a GGUF embedding model run by llama-cpp-python.

Nothing leaves the machine. llama.cpp runs in a worker process that the embedder starts on first
use and keeps, with the model loaded, until ``close`` (``gitmem.embed.worker``; the llama.cpp
code is ``gitmem.embed.native``). A native crash there — a CPU-specific kernel, a model file that
shrinks while mapped — is then a provider failure (``EmbeddingError``: ``auto``/``local`` fall
back to lexical, an explicitly named provider exits 4), never a dead ``gitmem index`` or
``recall``. A worker that dies is restarted once and the request repeated; if the new one dies
too before it has answered, the model is given up for this embedder's life. A worker that does
not answer in time is killed and given up at once (it already cost the wait).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gitmem.embed.base import Embedder, EmbeddingError, InputType, Vector
from gitmem.embed.native import DEFAULT_N_CTX, INSTALL_HINT, PROMPTS_VERSION, ModelInfo
from gitmem.embed.worker import Worker, WorkerLost

__all__ = ["DEFAULT_N_CTX", "LocalEmbedder", "ModelInfo", "file_identity"]

_HEAD_BYTES = 1 << 20  # the model's identity: its size and the sha256 of its first MiB
# Bounds on one answer from the worker, in seconds: a load (a cold disk, a big model), and an
# embedding call (a batch of 16 full-context texts is a few seconds for MiniLM on 2 cores).
LOAD_TIMEOUT = 300.0
EMBED_TIMEOUT = 60.0
EMBED_TIMEOUT_PER_TEXT = 15.0
_DOING = {"load": "loading", "embed": "embedding"}


def file_identity(path: Path) -> str:
    """``<size>:<sha256 of the first MiB>`` — changes when the model file does, cheap to get."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError as exc:
        raise EmbeddingError(f"cannot read embedding model {path}: {exc.strerror}") from exc
    return f"{size}:{hashlib.sha256(head).hexdigest()}"


class LocalEmbedder(Embedder):
    """A GGUF embedding model, loaded lazily on first use (in a worker process) and kept until
    ``close``."""

    name = "local"
    max_batch = 16

    def __init__(self, model_path: str | os.PathLike[str], *, ref: str | None = None,
                 threads: int | None = None, n_ctx: int = DEFAULT_N_CTX) -> None:
        path = Path(model_path)
        super().__init__(ref or str(path))
        self.path = path
        self.threads = threads  # None: the cores others leave free (gitmem.embed.cores)
        self.n_ctx_limit = max(8, n_ctx)
        self._identity: str | None = None
        self._worker: Worker | None = None
        self._info: ModelInfo | None = None
        self._deaths = 0  # worker deaths since the last answer
        self._given_up: str | None = None  # why the model is not tried again
        self._lock = threading.RLock()

    # -- identity -------------------------------------------------------------------------------

    @property
    def fingerprint(self) -> str:
        """Provider, the model file's identity (size + hash of its head, not its path: the same
        file anywhere gives the same vectors, a different file under the same name does not) and
        the context cap (it decides where long texts are cut)."""
        if self._identity is None:
            self._identity = file_identity(self.path)
        raw = "\x1f".join([self.name, self._identity, str(self.n_ctx_limit), PROMPTS_VERSION])
        return f"{self.name}:{hashlib.sha256(raw.encode('utf-8')).hexdigest()[:16]}"

    # -- model ----------------------------------------------------------------------------------

    @property
    def model_info(self) -> ModelInfo:
        """What the loaded model is (loads it): size, context, architecture, buffer types."""
        info = self._request(None, LOAD_TIMEOUT)
        assert isinstance(info, ModelInfo)
        return info

    @property
    def dimension(self) -> int:
        """The vector size (loads the model)."""
        return self.model_info.n_embd

    @property
    def n_ctx(self) -> int:
        """The context in tokens (loads the model); longer texts are cut to it."""
        return self.model_info.n_ctx

    @property
    def worker_pid(self) -> int | None:
        """The worker process running the model, if one is running."""
        worker = self._worker
        return worker.pid if worker is not None and worker.owner == os.getpid() else None

    def _loaded(self) -> tuple[Worker, ModelInfo]:
        """The worker with the model loaded; started (and the model loaded) if need be."""
        if self._worker is not None and (self._worker.owner != os.getpid()
                                         or self._worker.stopped):
            # Inherited through fork (the parent's own), or stopped by a call interrupted
            # half-way (Ctrl-C): a new worker is needed.
            self._drop_worker()
        if self._worker is not None and self._info is not None:
            return self._worker, self._info
        if importlib.util.find_spec("llama_cpp") is None:
            raise EmbeddingError(INSTALL_HINT)
        if not self.path.is_file():
            raise EmbeddingError(f"embedding model file {self.path} does not exist; set "
                                 "embed.model or run 'gitmem model pull'")
        try:
            self._worker = worker = Worker()
        except OSError as exc:  # no process to be had (limits, a broken interpreter path)
            raise EmbeddingError(f"cannot start the local embedding worker: {exc}") from exc
        try:
            self._info = worker.call(("load", str(self.path), self.n_ctx_limit, self.threads),
                                     LOAD_TIMEOUT)
        except BaseException:
            self._drop_worker()
            raise
        return worker, self._info

    def _attempt(self, request: tuple[Any, ...] | None, timeout: float) -> Any:
        worker, info = self._loaded()
        result = info if request is None else worker.call(request, timeout)
        self._deaths = 0
        return result

    def _request(self, request: tuple[Any, ...] | None, timeout: float) -> Any:
        """Ask the worker (``None``: just have the model loaded), restarting it once if it
        dies; every way the worker can fail ends as an EmbeddingError."""
        with self._lock:
            if self._given_up is not None:
                raise EmbeddingError(self._given_up)
            crash: str | None = None
            while True:
                try:
                    return self._attempt(request, timeout)
                except WorkerLost as lost:
                    self._drop_worker()
                    self._deaths += 1
                    crash = (f"the local embedding model {self.path} {lost.reason} while "
                             f"{_DOING.get(lost.op, lost.op)} (llama.cpp runs in a worker "
                             "process)")
                    if lost.hung or self._deaths > 1:
                        again = "" if lost.hung else ", again after a restart"
                        self._given_up = f"{crash}{again}; not tried again in this process"
                        raise EmbeddingError(self._given_up) from None
                except EmbeddingError as exc:
                    if crash is not None:  # the restarted worker answered, with an error
                        raise EmbeddingError(f"{crash}; after a restart: {exc}") from exc
                    raise

    def _drop_worker(self) -> None:
        worker, self._worker, self._info = self._worker, None, None
        if worker is not None:
            worker.stop()

    # -- embedding ------------------------------------------------------------------------------

    def embed_batch(self, texts: Sequence[str], *, input_type: InputType) -> list[Vector]:
        if not texts:
            return []
        timeout = EMBED_TIMEOUT + EMBED_TIMEOUT_PER_TEXT * len(texts)
        vectors = self._request(("embed", list(texts), input_type), timeout)
        if not isinstance(vectors, list) or len(vectors) != len(texts):
            count = len(vectors) if isinstance(vectors, list) else 0
            raise EmbeddingError(f"the local embedding model returned {count} vectors "
                                 f"for {len(texts)} texts")
        return vectors

    def close(self) -> None:
        """Stop the worker (the model is loaded again on the next use)."""
        with self._lock:
            self._drop_worker()
