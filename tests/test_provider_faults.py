"""Provider faults end to end (issue 10), through the command line against a real
127.0.0.1 server (tests/embed_server.py) and real model files: timeouts, 5xx, 429 storms,
wrong dimensions, NaN vectors, missing vectors, a truncated or non-GGUF model.

An explicitly named provider that fails makes ``index`` and ``recall`` exit 4 with "memory
search unavailable"; ``local`` falls back to lexical with a warning. Either way the index stays
consistent: the lexical part equals a rebuild, every stored vector is finite, of the index's
dimension and belongs to a current item, and once the provider is healthy again the next run
completes to exactly the vectors of a clean run. A model that crashes natively is the local
provider's own isolation (gitmem/embed/local.py) and is tested there.
"""

from __future__ import annotations

import json
import math
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from embed_server import EmbedServer, Fault
from gguf_model import tiny_gguf

from gitmem.index.replay import index_workspace
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.chaos import integrity
from testing.cli import gitmem
from testing.index import dump, read_index, vectors
from testing.repo import commit_all, write

DIM = 8
STORM = 60  # scripted faults: more than every retry of every batch


@pytest.fixture
def server() -> Iterator[EmbedServer]:
    with EmbedServer(dim=DIM) as srv:
        yield srv


def configure(timeout: float) -> None:
    """The user's embedding settings: ``timeout`` seconds for each request, one retry."""
    config = Path.home() / ".config" / "gitmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[embed]\ntimeout = {timeout}\nretries = 1\nbatch_size = 16\n",
                      encoding="utf-8")


@pytest.fixture
def remote(server: EmbedServer, monkeypatch: pytest.MonkeyPatch) -> EmbedServer:
    configure(timeout=FAILURE_SECONDS)  # the server is in this process: a loaded machine is slow
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("GITMEM_EMBED_BASE_URL", server.url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return server


def clean_state(repo: Path, tmp_path: Path) -> tuple[list[Any], dict[Any, bytes]]:
    """Dump and vectors of a clean run (healthy server) in a copy of ``repo``."""
    copy = tmp_path / "clean"
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".memory"))
    code, _, err = gitmem("-C", str(copy), "index", "--force")
    assert code == 0, err
    return dump(copy), vectors(copy)


def lexical_rebuild(repo: Path, tmp_path: Path) -> list[Any]:
    copy = tmp_path / "lexical"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(repo, copy, symlinks=True, ignore=shutil.ignore_patterns(".memory"))
    ws, cfg = open_workspace(copy)
    index_workspace(ws, cfg, force=True)
    return dump(copy)


def assert_consistent(repo: Path, tmp_path: Path) -> None:
    """The index is sound and its lexical part is a rebuild's; stored vectors are all good."""
    assert integrity(repo / ".memory" / "index.sqlite") == "ok"
    assert dump(repo) == lexical_rebuild(repo, tmp_path)
    with read_index(repo) as store:
        dims = int(store.get_meta("embed_dims") or DIM)
        rows = store.conn.execute(
            "SELECT v.vector, i.valid_to FROM vectors v JOIN items i ON i.id = v.item_id"
        ).fetchall()
        orphans = store.conn.execute(
            "SELECT count(*) FROM vectors WHERE item_id NOT IN (SELECT id FROM items)"
        ).fetchone()
    assert orphans == (0,)
    for blob, valid_to in rows:
        assert valid_to is None  # vectors belong to current items only
        values = struct.unpack(f"<{len(blob) // 4}f", blob)
        assert len(values) == dims and all(math.isfinite(x) for x in values)


FAULTS = {
    "timeouts": Fault(delay=3600.0),  # never answers (until the server closes)
    "5xx": Fault(status=503),
    "429 storm": Fault(status=429, retry_after="0"),
    "NaN vectors": Fault(nan=True),
    "missing vectors": Fault(drop_vectors=1),
    "an HTML error page": Fault(body=b"<html>502 Bad Gateway</html>"),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_a_failing_remote_provider(name: str, fixture_repo: Path, remote: EmbedServer,
                                   tmp_path: Path) -> None:
    expected = clean_state(fixture_repo, tmp_path)
    if name == "timeouts":  # the client gives up on a server that does not answer
        configure(timeout=2.0)
    remote.heal()
    remote.requests.clear()
    remote.script(Fault(), Fault(), *[FAULTS[name]] * STORM)  # fails after two good batches
    code, _, err = gitmem("-C", str(fixture_repo), "index")
    assert code == 4, err
    assert "memory search unavailable" in err and "lexical index is up to date" in err
    assert_consistent(fixture_repo, tmp_path)
    code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    assert code == 4 and "memory search unavailable" in err, (out, err)
    configure(timeout=FAILURE_SECONDS)
    remote.heal()
    code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    assert code == 0, err
    assert any("not embedded yet" in w for w in json.loads(out)["warnings"])
    code, _, err = gitmem("-C", str(fixture_repo), "index")
    assert code == 0, err
    assert (dump(fixture_repo), vectors(fixture_repo)) == expected


def test_a_provider_that_changes_its_dimension(fixture_repo: Path, remote: EmbedServer,
                                               tmp_path: Path) -> None:
    """The server starts answering with another vector size (same settings): a clear error,
    not an internal one; nothing of the wrong size is stored."""
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    write(fixture_repo, "memory/2025-11-28.md", "## Retain\n- W @Peter: A new day, a new size.\n")
    commit_all(fixture_repo, "new", "2025-11-28T21:00:00+00:00")
    remote.dim = 12
    code, _, err = gitmem("-C", str(fixture_repo), "index")
    assert code == 4, err
    assert "dimensions" in err and "internal error" not in err
    assert_consistent(fixture_repo, tmp_path)
    code, _, err = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    assert code == 4 and "dimensions" in err, err
    remote.dim = DIM
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    assert_consistent(fixture_repo, tmp_path)


def test_a_fallback_provider_answers_when_the_named_one_fails(
        fixture_repo: Path, remote: EmbedServer, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    assert gitmem("-C", str(fixture_repo), "index")[0] == 0
    monkeypatch.setenv("GITMEM_EMBED_FALLBACK", "local")
    monkeypatch.setenv("GITMEM_EMBED_MODEL", str(tiny_gguf(tmp_path_factory)))
    remote.script(*[Fault(status=500)] * STORM)
    code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["provider"]["fallback_used"] is True and data["results"]
    assert any("fallback" in w for w in data["warnings"])


@pytest.mark.parametrize("model", ["truncated", "cut in half", "not GGUF", "missing", "empty"])
def test_a_broken_local_model_falls_back_to_lexical(model: str, fixture_repo: Path,
                                                    tmp_path: Path,
                                                    tmp_path_factory: pytest.TempPathFactory,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    good = tiny_gguf(tmp_path_factory).read_bytes()
    path = tmp_path / "model.gguf"
    content = {"truncated": good[:2000], "cut in half": good[: len(good) // 2],
               "not GGUF": b"PK\x03\x04 a zip, not a model" * 50, "missing": None,
               "empty": b""}[model]
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setenv("GITMEM_EMBED_PROVIDER", "local")
    monkeypatch.setenv("GITMEM_EMBED_MODEL", str(path))
    code, _, err = gitmem("-C", str(fixture_repo), "index")
    assert code == 0, err
    assert "note:" in err and str(path) in err
    code, out, err = gitmem("-C", str(fixture_repo), "recall", "gateway", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["mode"] == "lexical" and data["results"]
    assert any(str(path) in w for w in data["warnings"])
    assert_consistent(fixture_repo, tmp_path)
    # the model is repaired: the next run embeds everything
    path.write_bytes(good)
    code, out, err = gitmem("-C", str(fixture_repo), "index", "--json")
    assert code == 0, err
    embedding = json.loads(out)["embedding"]
    assert embedding["pending"] == 0 and embedding["embedded"] > 0
