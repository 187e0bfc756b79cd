"""The ``local`` provider (SPEC §9): a GGUF embedding model run in-process by llama-cpp-python.

Nothing leaves the machine. ``llama_cpp`` is imported only when the model is first used, so gitmem
works without it (the provider then explains how to install it). The context is kept at 512 tokens
(or the model's training context if smaller): larger contexts make llama.cpp pack chunks together
and ran 2-3x slower for MiniLM; longer texts are cut to the context, never rejected.
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gitmem.embed.base import Embedder, EmbeddingError, InputType, Vector

DEFAULT_N_CTX = 512
_HEAD_BYTES = 1 << 20  # the model's identity: its size and the sha256 of its first MiB
# A token never stands for more than a few dozen characters; texts are first cut to this many
# characters per context token so a huge input costs no more than tokenizing a bounded prefix.
_CHARS_PER_TOKEN = 32

_INSTALL_HINT = "the local provider needs llama-cpp-python: pip install 'gitmem-cli[local]'"

# Asymmetric models trained with task prompts, by the architecture their GGUF declares:
# (query prefix, document prefix), as their model cards prescribe. Others embed text as is.
_PROMPTS: dict[str, tuple[str, str]] = {
    "gemma-embedding": ("task: search result | query: ", "title: none | text: "),
    "nomic-bert": ("search_query: ", "search_document: "),
    "nomic-bert-moe": ("search_query: ", "search_document: "),
}
_PROMPTS_VERSION = "prompts-1"  # in the fingerprint: changing the table changes the vectors
# Prompts a converted file names itself (gitmem.embed.convert_e5 writes them); they win.
PROMPT_KEYS = ("gitmem.prompt.query", "gitmem.prompt.document")


_quiet: Any = None  # the installed llama.cpp log callback (kept alive while it is installed)


def _import_llama_cpp() -> Any:
    global _quiet
    try:
        import llama_cpp
    except ImportError as exc:
        raise EmbeddingError(_INSTALL_HINT) from exc
    if _quiet is None:
        # llama.cpp logs to stderr even with verbose=False (llama-cpp-python 0.3.x maps the
        # current ggml log levels wrongly, so warnings get through). Failures surface as
        # exceptions, so its log lines are dropped.
        try:
            _quiet = llama_cpp.llama_log_callback(lambda level, text, user_data: None)
            llama_cpp.llama_log_set(_quiet, None)
        except Exception:  # a binding without these names: keep its own logging
            _quiet = False
    return llama_cpp


def _n_ctx_train(llama: Any) -> int:
    """The model's training context from the GGUF metadata (0 if it does not say)."""
    meta = getattr(llama, "metadata", None) or {}
    arch = meta.get("general.architecture", "")
    try:
        return int(meta.get(f"{arch}.context_length", 0))
    except (TypeError, ValueError):
        return 0


def file_identity(path: Path) -> str:
    """``<size>:<sha256 of the first MiB>`` — changes when the model file does, cheap to get."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError as exc:
        raise EmbeddingError(f"cannot read embedding model {path}: {exc.strerror}") from exc
    return f"{size}:{hashlib.sha256(head).hexdigest()}"


def _mean(rows: Sequence[Sequence[float]]) -> list[float]:
    if not rows:
        return []
    width = len(rows[0])
    return [sum(row[i] for row in rows) / len(rows) for i in range(width)]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [float(x) for x in vector]


class LocalEmbedder(Embedder):
    """A GGUF embedding model, loaded lazily on first use and kept until ``close``."""

    name = "local"
    max_batch = 16

    def __init__(self, model_path: str | os.PathLike[str], *, ref: str | None = None,
                 threads: int | None = None, n_ctx: int = DEFAULT_N_CTX) -> None:
        path = Path(model_path)
        super().__init__(ref or str(path))
        self.path = path
        self.threads = threads or os.cpu_count() or 1
        self.n_ctx_limit = max(8, n_ctx)
        self._llama: Any = None
        self._n_ctx = 0
        self._identity: str | None = None
        self._prompts = ("", "")
        self._lock = threading.RLock()

    # -- identity -------------------------------------------------------------------------------

    @property
    def fingerprint(self) -> str:
        """Provider, the model file's identity (size + hash of its head, not its path: the same
        file anywhere gives the same vectors, a different file under the same name does not) and
        the context cap (it decides where long texts are cut)."""
        if self._identity is None:
            self._identity = file_identity(self.path)
        raw = "\x1f".join([self.name, self._identity, str(self.n_ctx_limit), _PROMPTS_VERSION])
        return f"{self.name}:{hashlib.sha256(raw.encode('utf-8')).hexdigest()[:16]}"

    # -- model ----------------------------------------------------------------------------------

    def _load(self) -> Any:
        with self._lock:
            if self._llama is not None:
                return self._llama
            llama_cpp = _import_llama_cpp()
            if not self.path.is_file():
                raise EmbeddingError(f"embedding model file {self.path} does not exist; set "
                                     "embed.model or run 'gitmem model pull'")
            n_ctx = self.n_ctx_limit
            llama = self._open(llama_cpp, n_ctx)
            trained = _n_ctx_train(llama)
            if 0 < trained < n_ctx:  # positions past the training context do not exist: reopen
                llama.close()
                n_ctx = trained
                llama = self._open(llama_cpp, n_ctx)
            meta = getattr(llama, "metadata", None) or {}
            in_file = (str(meta.get(PROMPT_KEYS[0], "")), str(meta.get(PROMPT_KEYS[1], "")))
            arch = str(meta.get("general.architecture", ""))
            self._prompts = in_file if any(in_file) else _PROMPTS.get(arch, ("", ""))
            self._llama, self._n_ctx = llama, n_ctx
            return llama

    def _open(self, llama_cpp: Any, n_ctx: int) -> Any:
        try:
            # n_batch = n_ubatch = n_ctx: an encoder needs a whole sequence in one micro-batch,
            # and a text is cut to n_batch tokens.
            return llama_cpp.Llama(
                model_path=str(self.path), embedding=True, n_ctx=n_ctx, n_batch=n_ctx,
                n_ubatch=n_ctx, n_threads=self.threads, n_threads_batch=self.threads,
                verbose=False,
            )
        except Exception as exc:  # llama.cpp raises assorted types; all mean "unusable model"
            raise EmbeddingError(f"cannot load the local embedding model {self.path}: {exc}; "
                                 "embed.model must name a GGUF embedding model") from exc

    @property
    def dimension(self) -> int:
        """The vector size (loads the model)."""
        return int(self._load().n_embd())

    @property
    def n_ctx(self) -> int:
        """The context in tokens (loads the model); longer texts are cut to it."""
        self._load()
        return self._n_ctx

    # -- embedding ------------------------------------------------------------------------------

    def _prepare(self, llama: Any, text: str, prefix: str) -> str:
        text = prefix + text[: self._n_ctx * _CHARS_PER_TOKEN]
        if not text.strip() or not llama.tokenize(text.encode("utf-8"), add_bos=False):
            # Nothing to embed: a model without a BOS token would get an empty sequence, which
            # llama.cpp cannot pool. A lone full stop stands in; such a text matches nothing.
            text = "."
        return text

    def embed_batch(self, texts: Sequence[str], *, input_type: InputType) -> list[Vector]:
        if not texts:
            return []
        llama = self._load()
        with self._lock:
            prefix = self._prompts[0] if input_type == "query" else self._prompts[1]
            try:
                # One text per decode: a text's vector then does not depend on what else is in
                # the batch (packed sequences differ in the last float bits), so the cache and
                # a fresh embedding always agree. Chunks near n_ctx fill a batch alone anyway.
                raw = [llama.embed([self._prepare(llama, t, prefix)], normalize=False,
                                   truncate=True)[0] for t in texts]
            except EmbeddingError:
                raise
            except Exception as exc:  # any llama.cpp failure is a provider failure (SPEC §9)
                raise EmbeddingError(f"the local embedding model failed: {exc}") from exc
        if len(raw) != len(texts):
            raise EmbeddingError(f"the local embedding model returned {len(raw)} vectors "
                                 f"for {len(texts)} texts")
        out: list[Vector] = []
        for item in raw:
            # A model without pooling in its file gives one vector per token: mean-pool them.
            vector = _mean(item) if item and isinstance(item[0], list) else item
            if not vector or not all(math.isfinite(x) for x in vector):
                raise EmbeddingError("the local embedding model returned an empty or "
                                     "non-finite vector")
            out.append(_unit(vector))
        return out

    def close(self) -> None:
        with self._lock:
            llama, self._llama = self._llama, None
            if llama is not None:
                close = getattr(llama, "close", None)
                if callable(close):
                    close()
