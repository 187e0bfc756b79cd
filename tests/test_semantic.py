"""Semantic and hybrid recall end to end, against a real OpenAI-compatible HTTP server on
127.0.0.1: embedding after the lexical index, the cache, vectors in sqlite-vec, the failure
and trust rules (docs/configuration.md)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from embed_server import EmbedServer, Fault, Gate

from fixtures.build_fixture import DEFAULT_SOURCE, build_fixture
from gitmem.embed.selection import select
from gitmem.errors import GitmemError
from gitmem.hooks import COALESCED
from gitmem.index.replay import index_workspace
from gitmem.index.session import Session, WarmSession
from gitmem.index.store import Store, open_store
from gitmem.index.vectors import BATCH_ITEMS, embed_pending
from gitmem.index.watch import WarmState
from gitmem.locks import EMBED_LOCK, file_lock
from gitmem.recall import search
from gitmem.recall.answer import RecallRequest, answer
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.chaos import gitmem_process, kill_when, wait_gone
from testing.cli import gitmem, recall_json, sources
from testing.index import read_index
from testing.repo import commit_all, git, write

CANARY = "sk-canary-DO-NOT-LEAK-7f3a"


@pytest.fixture
def server() -> Iterator[EmbedServer]:
    with EmbedServer(dim=16) as srv:
        yield srv


@pytest.fixture
def openai_env(server: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> EmbedServer:
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("GITMEM_EMBED_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    return server


def index_json(repo: Path, *extra: str) -> dict[str, Any]:
    code, out, err = gitmem("-C", str(repo), "index", "--json", *extra)
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def embedded_calls(server: EmbedServer) -> int:
    return sum(1 for r in server.requests if r.path.endswith("/embeddings"))


def test_index_embeds_everything_then_the_cache_answers(fixture_repo: Path,
                                                        openai_env: EmbedServer) -> None:
    first = index_json(fixture_repo)
    emb = first["embedding"]
    assert isinstance(emb, dict)
    assert emb["embedded"] == emb["total"] > 100 and emb["pending"] == 0
    calls = embedded_calls(openai_env)
    assert calls == emb["provider_calls"] >= 1
    body = openai_env.requests[-1].body
    assert body["model"] and len(body["input"]) <= 32  # batched by embed.batch_size
    # A full rebuild of unchanged text never calls the provider again.
    again = index_json(fixture_repo, "--force")
    emb2 = again["embedding"]
    assert isinstance(emb2, dict)
    assert emb2["embedded"] == emb["total"] and emb2["provider_calls"] == 0
    assert embedded_calls(openai_env) == calls


def test_hybrid_recall_uses_vectors_and_reports_provider(fixture_repo: Path,
                                                         openai_env: EmbedServer) -> None:
    index_json(fixture_repo)
    before = embedded_calls(openai_env)
    code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway host", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["mode"] == "hybrid"
    assert data["provider"]["name"] == "openai" and data["provider"]["fallback_used"] is False
    assert data["results"]
    assert embedded_calls(openai_env) == before + 1  # the query, as input type "query"
    code, out, _ = gitmem("-C", str(fixture_repo), "recall", "gateway host", "--json",
                          "--mode", "semantic")
    sem = json.loads(out)
    assert sem["mode"] == "semantic" and sem["results"]


def test_a_warm_request_searches_the_words_while_the_query_is_embedded(
        fixture_repo: Path, openai_env: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A long-running process embeds the query on a thread of its own and searches the words
    meanwhile (its two slowest steps, side by side); its answer is a command alone's."""
    index_json(fixture_repo)
    ws, cfg = open_workspace(fixture_repo)
    now = datetime(2025, 12, 1, tzinfo=UTC)
    warm = WarmState()
    words = search.lexical_candidates
    gate = Gate()
    seen: list[bool] = []

    def searched(*args: Any, **kwargs: Any) -> Any:
        # the query's embedding is at the server, held there by the gate (it cannot be answered
        # before ``release``), while its words are searched
        seen.append(gate.arrived.wait(FAILURE_SECONDS))
        gate.release.set()
        return words(*args, **kwargs)

    for query in ("gateway host", "who moved to Lisbon?"):
        alone = answer(Session(ws, cfg), RecallRequest(query=query), now=now).to_json()
        gate = Gate()
        seen.clear()
        openai_env.script(Fault(gate=gate))
        monkeypatch.setattr(search, "lexical_candidates", searched)
        warmed = answer(WarmSession(ws, cfg, warm), RecallRequest(query=query), now=now).to_json()
        monkeypatch.setattr(search, "lexical_candidates", words)
        assert seen == [True], seen
        # the design's promise is the answer: hybrid, so the held embedding was used, and equal to
        # a command alone's. When the server's thread finishes after its reply is not promised.
        assert warmed["mode"] == "hybrid" and warmed["results"], warmed
        assert json.dumps(warmed) == json.dumps(alone)


def test_an_early_embedding_that_fails_is_said_as_a_command_alone_says_it(
        fixture_repo: Path, openai_env: EmbedServer) -> None:
    """The provider's failure reaches a warm request as it reaches a command alone: an
    explicitly named provider that fails is an error (no fallback configured), in both."""
    index_json(fixture_repo)
    ws, cfg = open_workspace(fixture_repo)
    now = datetime(2025, 12, 1, tzinfo=UTC)
    said = []
    for session in (Session(ws, cfg), WarmSession(ws, cfg, WarmState())):
        openai_env.script(*[Fault(status=400)] * 3)
        with pytest.raises(GitmemError) as failed:
            answer(session, RecallRequest(query="gateway host"), now=now)
        openai_env.heal()
        said.append(str(failed.value))
    assert said[0] == said[1] and "400" in said[0], said


def test_only_changed_text_is_embedded_after_a_commit(fixture_repo: Path,
                                                      openai_env: EmbedServer) -> None:
    index_json(fixture_repo)
    calls = embedded_calls(openai_env)
    write(fixture_repo, "memory/2025-12-01.md", "## Retain\n- W @Peter: Back from Marrakech.\n")
    commit_all(fixture_repo, "new day", date="2025-12-01T21:00:00+00:00")
    out = index_json(fixture_repo)
    emb = out["embedding"]
    assert isinstance(emb, dict)
    assert emb["embedded"] == 2 and emb["pending"] == 0  # the fact and its chunk
    assert embedded_calls(openai_env) == calls + 1
    assert openai_env.requests[-1].body["input"] == ["Peter: Back from Marrakech.",
                                                     "- W @Peter: Back from Marrakech."]


def test_embedding_is_resumable_batch_by_batch(fixture_repo: Path,
                                               openai_env: EmbedServer) -> None:
    ws, cfg = open_workspace(fixture_repo)
    index_workspace(ws, cfg)
    embedder = select(cfg).embedder
    assert embedder is not None
    part = embed_pending(ws, cfg, embedder, limit=64)  # as if killed after one batch
    assert part.done == 64 and part.pending == part.total - 64
    _code, out, _ = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    warnings = json.loads(out)["warnings"]
    assert any(f"{part.pending} of {part.total} items are not embedded yet" in w
               for w in warnings)
    rest = embed_pending(ws, cfg, embedder)
    assert rest.done == part.pending and rest.pending == 0


def test_an_embedding_run_carries_on_into_a_rebuilt_index(fixture_repo: Path,
                                                          openai_env: EmbedServer) -> None:
    """A hook's embedding run, and 'gitmem index --force' while it runs (issue 16): the rebuilt
    file is filled in by the running job (which holds the embedding lock), not left pending."""
    ws, cfg = open_workspace(fixture_repo)
    index_workspace(ws, cfg)
    embedder = select(cfg).embedder
    assert embedder is not None
    rebuilt: list[dict[str, Any]] = []

    def rebuild_after_the_first_batch(have: int, total: int) -> None:
        if have and not rebuilt:
            rebuilt.append(index_json(fixture_repo, "--force"))

    report = embed_pending(ws, cfg, embedder, progress=rebuild_after_the_first_batch)
    assert rebuilt and rebuilt[0]["full"] is True
    assert rebuilt[0]["embedding"]["skipped"]  # the running job embeds, not the rebuild
    assert report.total > 64 and report.pending == 0, report
    semantic = json.loads(gitmem("-C", str(fixture_repo), "status", "--json")[1])["semantic"]
    assert semantic["embedded"] == semantic["total_items"] == report.total


def test_a_fact_not_embedded_yet_scores_as_lexical_recall_scores_it(
        fixture_repo: Path, openai_env: EmbedServer) -> None:
    """Issue 16: one match scored 0.198 while its vector was pending (hybrid took the missing
    cosine as 0) and 0.991 after a rebuild whose embedding had not run (lexical). Without a
    vector, a result is scored by its words in both."""
    index_json(fixture_repo)
    write(fixture_repo, "memory/2025-12-01.md",
          "## Retain\n- W @Peter: The zeppelin hangar key hangs in the drawer.\n")
    commit_all(fixture_repo, "new day", date="2025-12-01T21:00:00+00:00")
    hybrid = recall_json(fixture_repo, "zeppelin hangar")  # indexed by recall, not embedded
    assert hybrid["mode"] == "hybrid"
    assert any("not embedded yet" in w for w in hybrid["warnings"]), hybrid["warnings"]
    lexical = recall_json(fixture_repo, "zeppelin hangar", "--mode", "lexical")
    top = hybrid["results"][0]
    assert top["source"] == lexical["results"][0]["source"] == "memory/2025-12-01.md#L2"
    assert top["score"] == lexical["results"][0]["score"] > 0.8 and not top["weak"]
    index_json(fixture_repo, "--force", "--no-embed")
    rebuilt = recall_json(fixture_repo, "zeppelin hangar")
    assert rebuilt["mode"] == "lexical"  # no vectors in the new file yet
    assert rebuilt["results"][0]["score"] == top["score"]


def test_scores_survive_a_rebuild_of_the_same_memory(fixture_repo: Path,
                                                     openai_env: EmbedServer) -> None:
    """An index grown commit by commit (history rows, an uncommitted layer come and gone) and
    a rebuild of it give the same results with the same scores, in [0, 1], best first."""
    head = git(fixture_repo, "rev-parse", "HEAD").strip()
    git(fixture_repo, "checkout", "-q", "HEAD~6")
    index_json(fixture_repo)
    git(fixture_repo, "checkout", "-q", head)
    write(fixture_repo, "MEMORY.md", "# Memory\n\n- An uncommitted gateway line.\n")
    index_json(fixture_repo)
    git(fixture_repo, "checkout", "-q", "--", "MEMORY.md")
    index_json(fixture_repo)  # the layer gone, HEAD's MEMORY.md is embedded (it never was)
    queries = ("gateway host", "Peter", "Marrakech birthday", "xyzzy")

    def answers() -> dict[str, list[tuple[str, float, bool]]]:
        out = {}
        for query in queries:
            data = recall_json(fixture_repo, query)
            assert data["mode"] == "hybrid"
            out[query] = [(r["source"], r["score"], r["weak"]) for r in data["results"]]
        return out

    grown = answers()
    index_json(fixture_repo, "--force")
    assert answers() == grown
    for results in grown.values():
        scores = [score for _, score, _ in results]
        assert scores == sorted(scores, reverse=True) and all(0 <= x < 1 for x in scores)


def _first_batch_requests(repo: Path) -> int:
    """How many provider calls an embedding run makes before its first batch lands: the
    dimension probe, then the first batch's distinct texts in embed.batch_size parts."""
    _, cfg = open_workspace(repo)
    embedder = select(cfg).embedder
    assert embedder is not None
    with read_index(repo) as store:
        batch = store.pending_embeddings(BATCH_ITEMS)
    texts = {text for _, _, passages in batch for text in passages}
    return 1 + math.ceil(len(texts) / min(cfg.embed_batch_size, embedder.max_batch))


def _wait_for_background_run(repo: Path) -> str:
    """The hook log once the background run a recall started has ended. Its last line is the
    sign ('embedded', 'embedding failed', 're-index failed' or the coalesced line: it writes
    'indexed' first, then 'embedded'), and then no process may name the repository any more.
    Waiting for the processes alone raced under load. The deadline is for failures only."""
    log = repo / ".memory" / "hook.log"
    ends = ("recall: embedded", "recall: embedding failed", "recall: re-index failed",
            "recall: not indexed", f"recall: {COALESCED}")

    def text() -> str:
        return log.read_text(encoding="utf-8") if log.exists() else ""

    deadline = time.monotonic() + FAILURE_SECONDS
    while not any(end in text() for end in ends) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = wait_gone(str(repo), max(1.0, deadline - time.monotonic()))
    assert not left, f"the background run is still going: {left}\n{text()}"
    return text()


def test_an_interrupted_embedding_run_resumes_from_the_next_recall(
        fixture_repo: Path, openai_env: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 16: an embedding run that stopped left the rest pending until the next commit or a
    manual 'gitmem index'. Here a real 'gitmem index' is killed after its first batch (the
    provider holds its next call); status says how the rest will be embedded, and the next
    recall starts the hook's own run in the background, which embeds them."""
    monkeypatch.setenv("GITMEM_INDEX_BACKGROUND", "true")
    index_json(fixture_repo, "--no-embed")
    openai_env.script(*[Fault()] * _first_batch_requests(fixture_repo), Fault(delay=FAILURE_SECONDS))

    def first_batch_landed() -> bool:
        with read_index(fixture_repo) as store:
            return store.vector_counts()[0] > 0

    run = gitmem_process(fixture_repo, "index", env=dict(os.environ))
    assert kill_when(run, first_batch_landed, timeout=FAILURE_SECONDS)  # killed mid-run, not finished
    openai_env.heal()
    status = json.loads(gitmem("-C", str(fixture_repo), "status", "--json")[1])["semantic"]
    assert 0 < status["pending"] < status["total_items"] and status["fill"] == "recall", status
    out = gitmem("-C", str(fixture_repo), "status")[1]
    assert "pending (the next recall embeds them in the background" in out, out
    data = recall_json(fixture_repo, "gateway host")
    assert any(f"{status['pending']} of {status['total_items']} items are not embedded yet "
               "(embedding them in the background now)" in w for w in data["warnings"]), data
    log = _wait_for_background_run(fixture_repo)
    assert "recall: embedded" in log, log
    status = json.loads(gitmem("-C", str(fixture_repo), "status", "--json")[1])["semantic"]
    assert status["pending"] == 0 and status["embedded"] == status["total_items"], status
    again = recall_json(fixture_repo, "gateway host")
    assert not any("not embedded" in w for w in again["warnings"])


def test_a_switch_of_model_is_embedded_from_the_next_recall(
        fixture_repo: Path, openai_env: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """After embed.dimensions (or embed.model) changes, recall answers lexically and starts the
    re-embedding in the background; once it has run, recall is hybrid again."""
    monkeypatch.setenv("GITMEM_INDEX_BACKGROUND", "true")
    index_json(fixture_repo)
    monkeypatch.setenv("GITMEM_EMBED_DIMENSIONS", "8")
    data = recall_json(fixture_repo, "gateway host")
    assert data["mode"] == "lexical"
    assert any("yet (embedding them in the background now); results are lexical" in w
               for w in data["warnings"]), data["warnings"]
    log = _wait_for_background_run(fixture_repo)
    assert "recall: embedded" in log, log
    again = recall_json(fixture_repo, "gateway host")
    assert again["mode"] == "hybrid" and not again["warnings"], (again["warnings"], log)
    assert openai_env.requests[-1].body["dimensions"] == 8


def test_status_says_who_fills_the_pending_embeddings(fixture_repo: Path,
                                                      openai_env: EmbedServer) -> None:
    index_json(fixture_repo, "--no-embed")
    ws, _ = open_workspace(fixture_repo)
    with file_lock(ws.memory_dir / EMBED_LOCK, wait=False):  # an embedding job at work
        status = json.loads(gitmem("-C", str(fixture_repo), "status", "--json")[1])["semantic"]
        assert status["fill"] == "running" and status["pending"] == status["total_items"]
        data = recall_json(fixture_repo, "gateway host")
        assert any("another gitmem process is embedding them now" in w
                   for w in data["warnings"]), data["warnings"]
    # index.background is off in the test environment: only 'gitmem index' or a hook fills in
    out = gitmem("-C", str(fixture_repo), "status")[1]
    assert "pending ('gitmem index' fills them in (index.background is off))" in out, out


def test_a_model_change_re_embeds_and_reuses_the_cache(fixture_repo: Path,
                                                       openai_env: EmbedServer) -> None:
    index_json(fixture_repo)
    calls = embedded_calls(openai_env)
    config = Path.home() / ".config" / "gitmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[embed]\ndimensions = 8\n", encoding="utf-8")
    out = index_json(fixture_repo)
    emb = out["embedding"]
    assert isinstance(emb, dict) and emb["embedded"] == emb["total"]
    assert embedded_calls(openai_env) > calls
    assert openai_env.requests[-1].body["dimensions"] == 8
    config.write_text("", encoding="utf-8")  # back to the first model: all cached
    semantic = json.loads(gitmem("-C", str(fixture_repo), "status", "--json")[1])["semantic"]
    assert semantic["embedded"] == 0 and semantic["stale_vectors"] == semantic["total_items"]
    calls = embedded_calls(openai_env)
    out = index_json(fixture_repo)
    emb = out["embedding"]
    assert isinstance(emb, dict) and emb["embedded"] == emb["total"]
    assert embedded_calls(openai_env) == calls


def test_explicit_provider_down_is_exit_4_never_silent(fixture_repo: Path,
                                                       openai_env: EmbedServer) -> None:
    index_json(fixture_repo)
    openai_env.script(Fault(status=401))
    code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    assert code == 4
    assert "memory search unavailable" in err and "OPENAI_API_KEY" in err
    assert CANARY not in err + out


def test_fallback_provider_is_used_and_reported(fixture_repo: Path, openai_env: EmbedServer,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    index_json(fixture_repo)
    config = Path.home() / ".config" / "gitmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[embed]\nfallback = "ollama"\nretries = 0\n', encoding="utf-8")
    # Ollama is reached at its default address unless named; point it at the test server.
    monkeypatch.setattr("gitmem.embed.remote.OllamaEmbedder.default_base_url", openai_env.url,
                        raising=False)
    openai_env.script(Fault(status=500))
    code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["provider"]["fallback_used"] is True
    assert data["provider"]["name"] == "ollama"
    assert data["mode"] == "lexical"  # the index holds no vectors of the fallback model
    assert any("fallback" in w for w in data["warnings"])


def test_auto_without_a_model_is_lexical_and_says_so_once(fixture_repo: Path) -> None:
    code, out, _ = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    data = json.loads(out)
    assert code == 0 and data["mode"] == "lexical"
    assert data["provider"]["name"] == "none"
    assert not [w for w in data["warnings"] if "embedding model" in w]  # no problem: a notice
    assert "gitmem model pull" in data["provider"]["notice"]


def test_exact_scan_gives_the_same_answer_without_sqlite_vec(
        fixture_repo: Path, openai_env: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    index_json(fixture_repo)
    _, out, _ = gitmem("-C", str(fixture_repo), "recall", "Marrakech birthday", "--json",
                       "--mode", "semantic", "--k", "5")
    with_vec = [r["source"] for r in json.loads(out)["results"]]
    monkeypatch.setattr(Store, "_load_vec", lambda self: "sqlite-vec disabled for the test")
    _, out, _ = gitmem("-C", str(fixture_repo), "recall", "Marrakech birthday", "--json",
                       "--mode", "semantic", "--k", "5")
    assert [r["source"] for r in json.loads(out)["results"]] == with_vec
    _code, out, _ = gitmem("-C", str(fixture_repo), "status", "--deep")
    assert "sqlite-vec" in out and "disabled for the test" in out


def test_canary_key_never_written_anywhere(fixture_repo: Path, openai_env: EmbedServer) -> None:
    index_json(fixture_repo)
    outputs = []
    for args in (("recall", "gateway", "--json"), ("status", "--json"), ("status", "--deep")):
        _code, out, err = gitmem("-C", str(fixture_repo), *args)
        outputs.append(out + err)
    openai_env.script(Fault(status=401))
    outputs.append("".join(gitmem("-C", str(fixture_repo), "recall", "x")[1:]))
    assert all(CANARY not in o for o in outputs)
    for path in (fixture_repo / ".memory").rglob("*"):
        if path.is_file():
            assert CANARY.encode() not in path.read_bytes(), path
    assert any(CANARY in r.headers.get("authorization", "") for r in openai_env.requests)


def test_vectors_follow_history(fixture_repo: Path, openai_env: EmbedServer) -> None:
    """A deleted file's items lose their vectors; a reset brings them back from the cache."""
    index_json(fixture_repo)
    shutil.rmtree(fixture_repo / "bank" / "entities")
    commit_all(fixture_repo, "drop entity pages", date="2025-12-02T21:00:00+00:00")
    index_json(fixture_repo)
    ws, _ = open_workspace(fixture_repo)
    store = open_store(ws.index_path, readonly=True)
    try:
        have, total = store.vector_counts()
        orphans = store.conn.execute(
            "SELECT count(*) FROM vectors v JOIN items i ON i.id = v.item_id "
            "WHERE i.valid_to IS NOT NULL").fetchone()[0]
    finally:
        store.close()
    assert have == total and orphans == 0


def test_filtered_hybrid_queries_stay_within_sqlite_vec_limits(fixture_repo: Path,
                                                              openai_env: EmbedServer) -> None:
    index_json(fixture_repo)
    for extra in (("--since", "2025-11"), ("--kind", "W"), ("--entity", "Peter"),
                  ("--as-of", "2025-11-20")):
        code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway host", "--json",
                                *extra)
        assert code == 0, (extra, err)
        data = json.loads(out)
        assert data["mode"] == "hybrid" and data["results"], extra


def test_vectors_never_attach_to_a_reused_row_id(fixture_repo: Path,
                                                openai_env: EmbedServer) -> None:
    """After an amend the replay reuses row ids; a batch embedded before must not land."""
    index_json(fixture_repo, "--no-embed")
    ws, cfg = open_workspace(fixture_repo)
    store = open_store(ws.index_path, readonly=True)
    try:
        stale = store.pending_embeddings(10_000)
    finally:
        store.close()
    note = fixture_repo / "memory" / "2025-11-30.md"
    note.write_text(note.read_text(encoding="utf-8").replace("Castle", "Keep"), encoding="utf-8")
    git(fixture_repo, "commit", "-qam", "amended", "--amend")
    index_workspace(ws, cfg)
    store = open_store(ws.index_path)
    try:
        fake = b"\x00" * 64
        with store.transaction():
            store.put_vectors([(i, k, 0, fake) for i, k, _ in stale])
        reused = [i for i, k, _ in stale if store.conn.execute(
            "SELECT 1 FROM items WHERE id = ? AND vkey != ?", (i, k)).fetchone()]
        wrong = [i for i in reused if store.conn.execute(
            "SELECT 1 FROM vectors WHERE item_id = ?", (i,)).fetchone()]
        right = store.conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    finally:
        store.close()
    assert reused, "the amend should have reused row ids for other text"
    assert wrong == []  # none of those got the old text's vector
    assert right > 0  # versions that survived the amend did


def test_the_embedding_backlog_check_reads_an_index_not_the_vectors(
        tmp_path: Path, openai_env: EmbedServer) -> None:
    """Hybrid recall counts items without vectors before every query; probing the vectors
    table itself (a passage's 1.5 KB inline per row) took ~0.5 s at 50,000 items. An index of
    schema 2 gets the item index (and, since the replacement graph of m010 is derived when
    statements are indexed, is rebuilt): its vectors come back from the embedding cache,
    nothing is re-embedded. (The sample
    workspace without its Japanese notes: an index with Han characters is rebuilt at schema 4,
    see test_cjk.)"""
    source = tmp_path / "source"
    shutil.copytree(DEFAULT_SOURCE, source)
    for note in source.rglob("*.md"):
        if re.search("[\u4e00-\u9fff]", note.read_text(encoding="utf-8")):
            note.unlink()
    fixture_repo = build_fixture(tmp_path / "ws", source=source)
    index_json(fixture_repo)
    path = fixture_repo / ".memory" / "index.sqlite"
    store = open_store(path)
    try:
        plan = " ".join(str(r) for r in store.conn.execute(
            "EXPLAIN QUERY PLAN SELECT 1 FROM items i WHERE i.valid_to IS NULL AND NOT EXISTS "
            "(SELECT 1 FROM vectors v WHERE v.item_id = i.id)"))
        assert "COVERING INDEX vectors_item" in plan, plan
        assert store.committed_backlog()[0] == 0
        with store.conn:  # what an index of schema 2 looks like
            store.conn.execute("DROP INDEX vectors_item")
            store.conn.execute("DROP INDEX item_entities_subject")
            store.conn.execute("DROP TABLE item_replaces")  # made by m005
            store.conn.execute("DROP TABLE items_han")  # made by m006
            store.conn.execute("DELETE FROM migrations WHERE version > 2")
            store.conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        vectors = store.conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
    finally:
        store.close()
    calls = embedded_calls(openai_env)
    index_json(fixture_repo)  # the rebuild, and its vectors from the cache
    code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway host", "--json")
    assert code == 0, err
    assert json.loads(out)["mode"] == "hybrid" and not json.loads(out)["warnings"]
    assert embedded_calls(openai_env) == calls + 1  # the query only
    store = open_store(path, readonly=True)
    try:
        assert store.conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == vectors
        names = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master")}
        assert {"vectors_item", "item_entities_subject"} <= names
        plan = " ".join(str(r) for r in store.conn.execute(  # knowledge updates' candidates
            "EXPLAIN QUERY PLAN SELECT DISTINCT item_id FROM item_entities WHERE entity IN (?) "
            "AND role = 'subject' AND item_id > ? ORDER BY item_id DESC LIMIT 160", ("peter", 1)))
        assert "COVERING INDEX item_entities_subject" in plan, plan
    finally:
        store.close()


@pytest.fixture
def birthday(tmp_path: Path) -> Path:
    """'Bob's birthday is December 14', written on November 3; other notes on other days."""
    from testing.repo import make_repo

    repo = make_repo(tmp_path)
    write(repo, "memory/2026-11-03.md", "# 2026-11-03\n\n## Retain\n"
          "- W @Bob: Bob's birthday is December 14.\n")
    commit_all(repo, "nov 3", date="2026-11-03T20:00:00+00:00")
    write(repo, "memory/2026-11-20.md", "# 2026-11-20\n\n## Retain\n"
          "- W @Bob: Bob's birthday cake was ordered.\n")
    commit_all(repo, "nov 20", date="2026-11-20T20:00:00+00:00")
    write(repo, "bank/entities/Bob.md", "# Bob\n\nBob likes a big birthday cake.\n")
    commit_all(repo, "page", date="2026-11-03T21:00:00+00:00")
    return repo


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "semantic"])
def test_a_window_keeps_what_the_daily_note_of_that_day_says(
        birthday: Path, openai_env: EmbedServer, mode: str) -> None:
    """docs/memory-format.md: a result is kept when its event time overlaps the window or its daily note
    was written in it, on every search path (words, vectors, an entity filter)."""
    index_json(birthday)
    noted = "memory/2026-11-03.md#L4"
    for extra in ((), ("--kind", "W"), ("--entity", "Bob")):
        data = recall_json(birthday, "Bob birthday", "--mode", mode, "--since", "2026-11-01",
                           "--until", "2026-11-05", "--k", "20", *extra)
        assert data["mode"] == mode and noted in sources(data), (extra, data)
        assert "memory/2026-11-20.md#L4" not in sources(data)  # neither noted nor happening then
        # The page (no daily note, no event date of its own) is kept by its record time.
        if extra != ("--entity", "Bob"):
            page = any(s.startswith("bank/entities/Bob.md#") for s in sources(data))
            assert page == (not extra), (extra, data)
        found = recall_json(birthday, "Bob birthday", "--mode", mode, "--since", "2026-12-14",
                            "--until", "2026-12-14", *extra)
        assert noted in sources(found)  # the day it happens too


def test_what_happened_on_the_day_lists_what_was_written_that_day(birthday: Path) -> None:
    data = recall_json(birthday, "what happened on November 3, 2026")
    assert data["time_window"]["applied_as"] == "filter", data
    assert "memory/2026-11-03.md#L4" in sources(data)
    assert "memory/2026-11-20.md#L4" not in sources(data)


def test_a_warm_process_counts_the_embedding_backlog_once_per_index_state(
        fixture_repo: Path, openai_env: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm process remembers what the index's content alone decides (how many committed
    items wait for vectors) while the file has the same stamp: another process's write is
    counted again, and the warm answer stays what a command alone prints."""
    from gitmem.front.cli import run_captured
    from gitmem.index.store import Store as IndexStore
    from gitmem.index.watch import WarmState

    index_json(fixture_repo)
    counted: list[int] = []
    real = IndexStore.committed_backlog

    def counting(self: IndexStore) -> tuple[int, int]:
        counted.append(1)
        return real(self)

    monkeypatch.setattr(IndexStore, "committed_backlog", counting)
    warm = WarmState()
    args = ["-C", str(fixture_repo), "recall", "gateway", "--json"]
    first = run_captured(args, None, warm)
    assert first[0] == 0 and not any("not embedded" in w
                                     for w in json.loads(first[1])["warnings"])
    assert run_captured(args, None, warm) == first and len(counted) == 1
    write(fixture_repo, "memory/2025-12-01.md",
          "## Retain\n- W @Peter: The zeppelin hangar key hangs in the drawer.\n")
    commit_all(fixture_repo, "new day", date="2025-12-01T21:00:00+00:00")
    index_json(fixture_repo, "--no-embed")  # another process: committed, not embedded
    answer = run_captured(args, None, warm)
    assert any("2 of " in w and "not embedded yet" in w
               for w in json.loads(answer[1])["warnings"]), answer
    assert answer == run_captured(args, None)
    warm.close()
