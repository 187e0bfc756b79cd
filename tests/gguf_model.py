"""A tiny but real BERT embedding model in GGUF, generated for the tests.

It mirrors what llama.cpp's ``convert_hf_to_gguf.py`` (``conversion/bert.py``) writes for a
sentence-transformers BERT such as all-MiniLM-L6-v2 or bge-small: architecture ``bert``, the same
tensor names and KV keys, a WordPiece vocabulary in llama.cpp's "phantom space" form (``▁word``
starts a word, a bare piece continues one, control tokens stay as they are), token type count,
non-causal attention and MEAN pooling stored in the file. Only the sizes are tiny (2 layers,
hidden size 64, 4 heads, context 128, ~370 tokens, float32 random weights from a fixed seed), so the
file is ~0.3 MB and is written in milliseconds.

Use ``tiny_gguf(tmp_path_factory)`` from a session fixture (built once per test session), or
``write_tiny_gguf(path, seed=...)`` for a differently weighted model. ``qtype`` Q8_0 (or Q4_0)
stores the 2-D weight matrices quantized, as ``convert_hf_to_gguf --outtype q8_0`` does (norms,
biases, position and token-type embeddings stay F32).
"""

from __future__ import annotations

import string
from pathlib import Path

import gguf
import numpy as np
import pytest

N_EMBD = 64
N_HEAD = 4
N_FF = 128
N_LAYER = 2
N_CTX_TRAIN = 128
TYPE_VOCAB = 2  # BERT's "sentence A / sentence B"

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]  # ids 0..4
PAD_ID, UNK_ID, CLS_ID, SEP_ID, MASK_ID = range(5)

_WORDS = """
the a an and or but not no yes is are was were be been being have has had do does did will would
can could should may might must shall i you he she it we they me him her us them my your his its
our their this that these those there here what which who whom whose when where why how all any
both each few more most other some such only own same so than too very just also again once
of in on at by for with about against between into through during before after above below to
from up down out off over under then now today yesterday tomorrow week month year day night
morning evening time date meeting call email message note notes memory remember recall project
work team plan planning review code bug fix test tests release deploy server model search index
git commit branch merge file files folder python rust java language languages coffee tea lunch
dinner breakfast food pizza pasta cake apple banana orange garden house home office city trip
travel flight train car bike walk run swim book books read write writing music song guitar piano
friend friends family mother father sister brother dog cat bird fish weather rain sun snow cold
warm hot summer winter spring autumn peter alice bob carol dave whatsapp reply replies concise
short long prefers prefer likes like loves love hates hate wants want needs need said says
told asked answer question questions good bad new old big small first last next best better
great happy sad busy free early late quick slow simple hard easy important decision decided
opinion fact facts entity entities confidence because while until since though although
"""
WORDS = _WORDS.split()
PUNCT = list(".,;:!?'\"()[]{}-_/\\@#$%&*+=<>|~`^")
LETTERS = list(string.ascii_lowercase)
DIGITS = list(string.digits)


def vocabulary() -> list[str]:
    """The WordPiece vocabulary as a Hugging Face ``vocab.txt`` would list it (before the
    conversion to phantom-space form)."""
    seen: dict[str, None] = {}
    for token in [*SPECIAL, *WORDS, *LETTERS, *DIGITS, *PUNCT,
                  *(f"##{c}" for c in LETTERS + DIGITS), "##s", "##ed", "##ing", "##ly"]:
        seen.setdefault(token, None)
    return list(seen)


def _phantom(token: str, control: bool) -> str:
    # What BertModel.set_vocab in convert_hf_to_gguf does to a WordPiece vocabulary.
    if control:
        return token
    if token.startswith("##"):
        return token[2:]
    return "\u2581" + token


QTYPES = {
    "f32": (gguf.GGMLQuantizationType.F32, gguf.LlamaFileType.ALL_F32),
    "q8_0": (gguf.GGMLQuantizationType.Q8_0, gguf.LlamaFileType.MOSTLY_Q8_0),
    "q4_0": (gguf.GGMLQuantizationType.Q4_0, gguf.LlamaFileType.MOSTLY_Q4_0),
}


def write_tiny_gguf(path: Path, *, seed: int = 0,
                    pooling: gguf.PoolingType = gguf.PoolingType.MEAN,
                    qtype: str = "f32") -> Path:
    """Write the tiny BERT to ``path``; the same arguments give the same bytes. ``pooling``
    NONE makes a model that returns one vector per token; ``qtype`` is f32, q8_0 or q4_0."""
    tensor_type, file_type = QTYPES[qtype]
    rng = np.random.default_rng(seed)
    vocab = vocabulary()
    n_vocab = len(vocab)

    def rand(*shape: int, scale: float = 0.2) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    def zeros(n: int) -> np.ndarray:
        return np.zeros(n, dtype=np.float32)

    writer = gguf.GGUFWriter(str(path), "bert")
    writer.add_name("gitmem-tiny-bert")
    writer.add_block_count(N_LAYER)
    writer.add_context_length(N_CTX_TRAIN)
    writer.add_embedding_length(N_EMBD)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_layer_norm_eps(1e-12)
    writer.add_file_type(file_type)
    writer.add_causal_attention(False)
    writer.add_pooling_type(pooling)

    toktypes = [gguf.TokenType.CONTROL if t in SPECIAL else gguf.TokenType.NORMAL for t in vocab]
    writer.add_token_type_count(TYPE_VOCAB)
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre("bert-bge")
    writer.add_token_list([_phantom(t, tt == gguf.TokenType.CONTROL)
                           for t, tt in zip(vocab, toktypes, strict=True)])
    writer.add_token_types(toktypes)
    # llama.cpp's BERT defaults are the bert-base ids (CLS 101, UNK 100, ...); this vocabulary
    # is compact, so every special id is written (bos = [CLS], as llama.cpp prepends bos).
    writer.add_unk_token_id(UNK_ID)
    writer.add_sep_token_id(SEP_ID)
    writer.add_pad_token_id(PAD_ID)
    writer.add_mask_token_id(MASK_ID)
    writer.add_bos_token_id(CLS_ID)
    writer.add_uint32("tokenizer.ggml.cls_token_id", CLS_ID)

    # numpy shapes are ggml's reversed: ggml {n_embd, n_vocab} is numpy (n_vocab, n_embd), and a
    # Linear weight keeps the Hugging Face (out, in) layout.
    def add_matrix(name: str, data: np.ndarray) -> None:
        if tensor_type == gguf.GGMLQuantizationType.F32:
            writer.add_tensor(name, data)
        else:
            writer.add_tensor(name, gguf.quants.quantize(data, tensor_type), raw_dtype=tensor_type)

    add_matrix("token_embd.weight", rand(n_vocab, N_EMBD, scale=1.0))
    writer.add_tensor("token_types.weight", rand(TYPE_VOCAB, N_EMBD, scale=0.1))
    writer.add_tensor("position_embd.weight", rand(N_CTX_TRAIN, N_EMBD, scale=0.1))
    writer.add_tensor("token_embd_norm.weight", ones(N_EMBD))
    writer.add_tensor("token_embd_norm.bias", zeros(N_EMBD))
    for i in range(N_LAYER):
        blk = f"blk.{i}"
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            add_matrix(f"{blk}.{name}.weight", rand(N_EMBD, N_EMBD))
            writer.add_tensor(f"{blk}.{name}.bias", rand(N_EMBD, scale=0.02))
        writer.add_tensor(f"{blk}.attn_output_norm.weight", ones(N_EMBD))
        writer.add_tensor(f"{blk}.attn_output_norm.bias", zeros(N_EMBD))
        add_matrix(f"{blk}.ffn_up.weight", rand(N_FF, N_EMBD))
        writer.add_tensor(f"{blk}.ffn_up.bias", rand(N_FF, scale=0.02))
        add_matrix(f"{blk}.ffn_down.weight", rand(N_EMBD, N_FF))
        writer.add_tensor(f"{blk}.ffn_down.bias", rand(N_EMBD, scale=0.02))
        writer.add_tensor(f"{blk}.layer_output_norm.weight", ones(N_EMBD))
        writer.add_tensor(f"{blk}.layer_output_norm.bias", zeros(N_EMBD))

    path.parent.mkdir(parents=True, exist_ok=True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def tiny_gguf(tmp_path_factory: pytest.TempPathFactory, *, seed: int = 0,
              pooling: gguf.PoolingType = gguf.PoolingType.MEAN, qtype: str = "f32") -> Path:
    """The tiny model for this test session (written once per variant, then reused)."""
    name = f"tiny-bert-{seed}-{pooling.name.lower()}-{qtype}.gguf"
    path = tmp_path_factory.getbasetemp() / "tiny-gguf" / name
    if not path.is_file():
        tmp = path.with_name(path.name + ".tmp")
        write_tiny_gguf(tmp, seed=seed, pooling=pooling, qtype=qtype)
        tmp.replace(path)
    return path
