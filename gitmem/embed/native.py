"""llama.cpp in the calling process: load a GGUF embedding model, embed texts.

This is the code that can crash natively, so gitmem runs it only inside the worker process of
``gitmem.embed.worker`` (the benchmark also runs it in-process, as the baseline). The context is
kept at 512 tokens (or the model's training context if smaller; e5 and MiniLM were trained on
512); longer texts are cut to the context, never rejected. Each text is tokenised once; texts
are sorted by length and several short ones share a decode, with flash attention so that each
attends only within itself (``PACK_TOKENS``; without flash attention packing ran at half speed).

Weights stay in llama.cpp's plain CPU buffer: its "extra" buffer types repack them for special
CPU kernels, and the AMX one crashes the process (SIGSEGV/SIGILL) on the first embedding of any
Q8_0 model on Intel CPUs with AMX (issue 10; upstream llama.cpp knows it), and the Q4_0 default
model too (checked for issue 41).
"""

from __future__ import annotations

import contextlib
import inspect
import math
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.embed.base import EmbeddingError, InputType, Vector
from gitmem.embed.cores import FreeCores
from gitmem.errors import install_hint

DEFAULT_N_CTX = 512
# Several short texts share one decode up to this many tokens, sorted by length (issue 41):
# 1.16-1.3x the throughput of one text a decode on the default model's units (mean ~50 tokens;
# bench/bench_embed_floor.py), with flash attention, which attends within each text. Without
# it llama.cpp attends over the whole batch, and packing ran at half the speed.
PACK_TOKENS = 256
_MAX_PACK = 64  # texts in one decode at most
# A token never stands for more than a few dozen characters; texts are first cut to this many
# characters per context token so a huge input costs no more than tokenizing a bounded prefix.
_CHARS_PER_TOKEN = 32

INSTALL_HINT = f"the local provider needs llama-cpp-python: {install_hint('local')}"

# Asymmetric models trained with task prompts, by the architecture their GGUF declares:
# (query prefix, document prefix), as their model cards prescribe. Others embed text as is.
# Prompts a converted file names itself (gitmem.embed.convert_e5 writes them); they win.
PROMPT_KEYS = ("gitmem.prompt.query", "gitmem.prompt.document")
_PROMPTS: dict[str, tuple[str, str]] = {
    "gemma-embedding": ("task: search result | query: ", "title: none | text: "),
    "nomic-bert": ("search_query: ", "search_document: "),
    "nomic-bert-moe": ("search_query: ", "search_document: "),
}
PROMPTS_VERSION = "prompts-1"  # in the fingerprint: changing the table changes the vectors

# "load_tensors:   CPU_Mapped model buffer size =    23.50 MiB": where the weights live.
_BUFFER_LINE = re.compile(r"(\S+) model buffer size")


@dataclass(frozen=True)
class ModelInfo:
    """What a loaded model is: vector size, context, architecture, and the llama.cpp buffer
    types holding its weights (``CPU_Mapped``/``CPU``; never ``CPU_REPACK`` or ``AMX``)."""

    n_embd: int
    n_ctx: int
    architecture: str
    buffers: tuple[str, ...]


class _Log:
    """llama.cpp's log sink. llama.cpp logs to stderr even with verbose=False (llama-cpp-python
    0.3.x maps the current ggml log levels wrongly, so warnings get through); failures surface
    as exceptions, so lines are dropped, except that a load records its buffer lines."""

    def __init__(self) -> None:
        self.callback: Any = None  # the installed ctypes callback, kept alive while installed
        self.lines: list[str] | None = None
        self.lock = threading.Lock()

    def install(self, llama_cpp: Any) -> None:
        if self.callback is not None:
            return
        try:
            self.callback = llama_cpp.llama_log_callback(self._receive)
            llama_cpp.llama_log_set(self.callback, None)
        except AttributeError:  # a binding without these names: keep its own logging
            self.callback = False

    def _receive(self, level: int, text: bytes, user_data: Any) -> None:
        lines = self.lines
        if lines is not None:
            lines.append(text.decode("utf-8", "replace"))

    @contextlib.contextmanager
    def capture(self) -> Iterator[list[str]]:
        with self.lock:
            captured: list[str] = []
            self.lines = captured
            try:
                yield captured
            finally:
                self.lines = None


_LOG = _Log()


def import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise EmbeddingError(INSTALL_HINT) from exc
    _LOG.install(llama_cpp)
    return llama_cpp


@contextlib.contextmanager
def _model_params(llama_cpp: Any, extra_buffers: bool) -> Iterator[dict[str, Any]]:
    """``use_extra_bufts`` for the model about to be created: a ``Llama`` argument when the
    binding has one. llama-cpp-python 0.3.x has none (and drops unknown keyword arguments
    silently), so the defaults that ``Llama`` starts from are adjusted while it loads."""
    if "use_extra_bufts" in inspect.signature(llama_cpp.Llama.__init__).parameters:
        yield {"use_extra_bufts": extra_buffers}
        return
    lowlevel = llama_cpp.llama_cpp
    original = lowlevel.llama_model_default_params
    if not hasattr(original(), "use_extra_bufts"):  # an older llama.cpp: nothing to switch off
        yield {}
        return

    def params() -> Any:
        p = original()
        p.use_extra_bufts = extra_buffers
        return p

    lowlevel.llama_model_default_params = params
    try:
        yield {}
    finally:
        lowlevel.llama_model_default_params = original


def _n_ctx_train(llama: Any) -> int:
    """The model's training context from the GGUF metadata (0 if it does not say)."""
    meta = getattr(llama, "metadata", None) or {}
    arch = meta.get("general.architecture", "")
    try:
        return int(meta.get(f"{arch}.context_length", 0))
    except (TypeError, ValueError):
        return 0


def _mean(rows: Sequence[Sequence[float]]) -> list[float]:
    width = len(rows[0])
    return [sum(row[i] for row in rows) / len(rows) for i in range(width)]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [float(x) for x in vector]


class NativeModel:
    """A GGUF embedding model loaded by llama-cpp-python in this process.

    ``extra_buffers=True`` restores llama.cpp's default (weights repacked for special CPU
    kernels); only the benchmark uses it, to measure what the default did. ``flash_attn=False``
    and ``pack_tokens=0`` (one text per decode) give the path gitmem took before issue 41: the
    tests and the benchmark compare against it."""

    def __init__(self, path: Path, *, n_ctx: int = DEFAULT_N_CTX, threads: int | None = 1,
                 extra_buffers: bool = False, flash_attn: bool = True,
                 pack_tokens: int = PACK_TOKENS) -> None:
        llama_cpp = import_llama_cpp()
        if not path.is_file():
            raise EmbeddingError(f"embedding model file {path} does not exist; set "
                                 "embed.model or run 'gitmem model pull'")
        # threads None: as many as other processes leave free, looked at before every call
        self.free = FreeCores() if threads is None else None
        self.threads = threads if self.free is None else self.free.threads
        self.path, self.extra_buffers = path, extra_buffers
        self.flash_attn, self.pack_tokens = flash_attn, pack_tokens
        llama, buffers = self._open(llama_cpp, n_ctx)
        trained = _n_ctx_train(llama)
        if 0 < trained < n_ctx:  # positions past the training context do not exist: reopen
            llama.close()
            n_ctx = trained
            llama, buffers = self._open(llama_cpp, n_ctx)
        meta = getattr(llama, "metadata", None) or {}
        in_file = (str(meta.get(PROMPT_KEYS[0], "")), str(meta.get(PROMPT_KEYS[1], "")))
        arch = str(meta.get("general.architecture", ""))
        self._llama, self._llama_cpp = llama, llama_cpp
        self._prompts = in_file if any(in_file) else _PROMPTS.get(arch, ("", ""))
        self.info = ModelInfo(int(llama.n_embd()), n_ctx, arch, buffers)
        self._n_special = len(llama.tokenize(b""))  # the start/end tokens every text gets
        self._token_level = llama.pooling_type() == llama_cpp.LLAMA_POOLING_TYPE_NONE
        self._max_seqs = max(1, min(_MAX_PACK, int(llama.context_params.n_seq_max)))

    def _open(self, llama_cpp: Any, n_ctx: int) -> tuple[Any, tuple[str, ...]]:
        try:
            with _LOG.capture() as lines, _model_params(llama_cpp, self.extra_buffers) as extra:
                # n_batch = n_ubatch = n_ctx: an encoder needs a whole sequence in one
                # micro-batch, and a text is cut to n_batch tokens.
                settings = dict(model_path=str(self.path), embedding=True, n_ctx=n_ctx,
                                n_batch=n_ctx, n_ubatch=n_ctx, n_threads=self.threads,
                                n_threads_batch=self.threads, verbose=False, **extra)
                try:
                    llama = llama_cpp.Llama(**settings, flash_attn=self.flash_attn)
                except Exception:
                    if not self.flash_attn:
                        raise
                    # a build or model without flash attention: the plain kernels, one text
                    # a decode (packing without it attends over the whole batch)
                    self.flash_attn, self.pack_tokens = False, 0
                    llama = llama_cpp.Llama(**settings, flash_attn=False)
        except Exception as exc:  # llama.cpp raises assorted types; all mean "unusable model"
            raise EmbeddingError(f"cannot load the local embedding model {self.path}: {exc}; "
                                 "embed.model must name a GGUF embedding model") from exc
        buffers = tuple(m.group(1) for line in lines for m in _BUFFER_LINE.finditer(line))
        return llama, buffers

    def tokens(self, text: str, input_type: InputType) -> list[int]:
        """The text as the model sees it, tokenised once: task prompt, the model's start and end
        tokens, cut to the context; never empty (a text of no tokens becomes a lone full stop,
        which matches nothing: a model without a BOS token could not pool an empty sequence)."""
        prefix = self._prompts[0] if input_type == "query" else self._prompts[1]
        text = prefix + text[: self.info.n_ctx * _CHARS_PER_TOKEN]
        tokens = self._llama.tokenize(text.encode("utf-8")) if text.strip() else []
        if len(tokens) <= self._n_special:
            tokens = self._llama.tokenize(b".")
        return list(tokens[: self.info.n_ctx])

    def embed(self, texts: Sequence[str], input_type: InputType) -> list[Vector]:
        """One unit vector per text, in order. Texts are sorted by length and packed several to
        a decode, up to ``pack_tokens`` tokens (flash attention attends within each text, so a
        packed decode costs what its texts cost alone, less the per-decode overhead); a text's
        vector then differs from its vector alone in the fourth decimal at most, and equal
        texts in one call get equal vectors."""
        if self.free is not None:
            self._use_threads(self.free.next_threads())
        try:
            seqs = [self.tokens(t, input_type) for t in texts]
            distinct = list(dict.fromkeys(tuple(s) for s in seqs))
            vectors: dict[tuple[int, ...], Vector] = {}
            for group in self._packs(distinct):
                vectors.update(zip(group, self._decode(group), strict=True))
        except EmbeddingError:
            raise
        except Exception as exc:  # any llama.cpp failure is a provider failure
            raise EmbeddingError(f"the local embedding model failed: {exc}") from exc
        return [vectors[tuple(s)] for s in seqs]

    def _use_threads(self, threads: int) -> None:
        if threads != self.threads:
            self._llama_cpp.llama_set_n_threads(self._llama._ctx.ctx, threads, threads)
            self.threads = threads

    def _packs(self, seqs: Sequence[tuple[int, ...]]) -> Iterator[list[tuple[int, ...]]]:
        """Groups of token sequences for one decode each: shortest first, up to
        ``pack_tokens`` tokens and ``_MAX_PACK`` texts a group (0: one text a decode)."""
        group: list[tuple[int, ...]] = []
        total = 0
        budget = min(self.pack_tokens, self.info.n_ctx)  # one decode holds n_batch = n_ctx
        for seq in sorted(seqs, key=len):
            if group and (total + len(seq) > budget or len(group) >= self._max_seqs):
                yield group
                group, total = [], 0
            group.append(seq)
            total += len(seq)
        if group:
            yield group

    def _decode(self, seqs: Sequence[Sequence[int]]) -> list[Vector]:
        """One llama.cpp decode of several sequences (what ``Llama.embed`` does for a batch,
        with tokens given): their pooled vectors, or their tokens' vectors mean-pooled when
        the file asks for no pooling."""
        llama, llama_cpp = self._llama, self._llama_cpp
        batch, ctx = llama._batch, llama._ctx
        batch.reset()
        for seq_id, tokens in enumerate(seqs):
            batch.add_sequence(tokens, seq_id, True)
        ctx.kv_cache_clear()
        ctx.decode(batch)
        batch.reset()
        n = self.info.n_embd
        raw: list[list[float]] = []
        if self._token_level:
            ptr, at = llama_cpp.llama_get_embeddings(ctx.ctx), 0
            for tokens in seqs:
                raw.append(_mean([ptr[(at + j) * n:(at + j + 1) * n] for j in range(len(tokens))]))
                at += len(tokens)
        else:
            raw = [llama_cpp.llama_get_embeddings_seq(ctx.ctx, i)[:n] for i in range(len(seqs))]
        for vector in raw:
            if not vector or not all(math.isfinite(x) for x in vector):
                raise EmbeddingError("the local embedding model returned an empty or "
                                     "non-finite vector")
        return [_unit(v) for v in raw]

    def close(self) -> None:
        self._llama.close()
