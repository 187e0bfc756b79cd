"""Recall a user can trust (issue 9): what is on disk is found, nothing is silently empty or
wrong, scaffolding and junk stay out, and the help says what to do.

Each test here reproduced a problem found by trying gitmem as a new user would, before the fix.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from gitmem.index.session import Session
from gitmem.recall.answer import RecallRequest, answer
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem, recall_json, sources
from testing.gitenv import model_from_files
from testing.repo import commit_all, git, make_repo, write

NOW = datetime(2025, 3, 14, 12, tzinfo=UTC)


def day_note(day: str, *facts: str, notes: str = "") -> str:
    body = "".join(f"- {f}\n" for f in facts)
    extra = f"\n## Notes\n{notes}\n" if notes else ""
    return f"# {day}\n\n## Retain\n{body}{extra}"


@pytest.fixture
def harbor(tmp_path: Path) -> Path:
    """A few dated commits about project Harbor (March 2025)."""
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# Memory\n\n## Retain\n- W @Peter: Peter is allergic to peanuts.\n")
    commit_all(repo, "memory", "2025-03-01T09:00:00+00:00")
    write(repo, "memory/2025-03-06.md", day_note(
        "2025-03-06", "B @Harbor: We decided to release Harbor 1.0 on March 20.",
        notes="Long review of the database migration plan."))
    commit_all(repo, "march 6", "2025-03-06T18:00:00+00:00")
    write(repo, "memory/2025-03-13.md", day_note(
        "2025-03-13", "W @Harbor: The staging server moved to Oslo."))
    commit_all(repo, "march 13", "2025-03-13T18:00:00+00:00")
    return repo


def results(repo: Path, query: str, *extra: str) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = recall_json(repo, query, *extra)["results"]
    return data


# -- 1. uncommitted edits are visible by default ----------------------------------------------


def test_recall_sees_an_uncommitted_edit_by_default(harbor: Path) -> None:
    assert [r["source"] for r in results(harbor, "peanuts")] == ["MEMORY.md#L4"]
    write(harbor, "MEMORY.md",
          "# Memory\n\n## Retain\n- W @Peter: Peter is allergic to shellfish.\n")
    [hit] = results(harbor, "shellfish")
    assert hit["source"] == "MEMORY.md#L4" and hit["uncommitted"] is True
    assert hit["commit"] is None
    assert results(harbor, "peanuts") == []  # the line now says shellfish
    code, out, _ = gitmem("-C", str(harbor), "recall", "shellfish")
    assert code == 0 and "MEMORY.md#L4  (uncommitted)" in out
    assert json.loads(gitmem("-C", str(harbor), "status", "--json")[1])["uncommitted"] == [
        "MEMORY.md"]


def test_committed_flag_answers_from_head(harbor: Path) -> None:
    write(harbor, "MEMORY.md",
          "# Memory\n\n## Retain\n- W @Peter: Peter is allergic to shellfish.\n")
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: New shellfish note."))
    assert len(results(harbor, "shellfish")) == 2
    assert results(harbor, "shellfish", "--committed") == []
    [hit] = results(harbor, "peanuts", "--committed")
    assert hit["uncommitted"] is False and hit["commit"]
    assert hit["source"].startswith("MEMORY.md#L4")
    # and without --committed again: the layer is still there
    assert len(results(harbor, "shellfish")) == 2


def test_uncommitted_new_deleted_and_reverted_files(harbor: Path) -> None:
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Zeppelin idea."))
    (harbor / "memory" / "2025-03-13.md").unlink()
    assert sources(recall_json(harbor, "zeppelin")) == ["memory/2025-03-14.md#L4"]
    assert results(harbor, "Oslo") == []  # deleted on disk
    git(harbor, "checkout", "--", "memory/2025-03-13.md")  # restored
    assert [r["uncommitted"] for r in results(harbor, "Oslo")] == [False]
    (harbor / "memory" / "2025-03-14.md").unlink()
    assert results(harbor, "zeppelin") == []


def test_the_layer_is_not_rebuilt_while_nothing_changes(harbor: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import gitmem.index.replay as replay

    results(harbor, "Oslo")  # index HEAD
    parsed: list[str] = []
    real = replay.parse_file

    def spy(mf: Any, data: bytes, *args: Any) -> Any:
        parsed.append(mf.path)
        return real(mf, data, *args)

    monkeypatch.setattr(replay, "parse_file", spy)
    write(harbor, "memory/2025-03-13.md", day_note("2025-03-13", "W @Harbor: Moved to Bergen."))
    assert [r["uncommitted"] for r in results(harbor, "Bergen")] == [True]
    assert parsed == ["memory/2025-03-13.md"]  # only the edited file, not the unchanged ones
    index = harbor / ".memory" / "index.sqlite"
    before = index.stat().st_mtime_ns
    parsed.clear()
    assert [r["uncommitted"] for r in results(harbor, "Bergen")] == [True]
    assert parsed == [] and index.stat().st_mtime_ns == before  # nothing written


def test_committing_the_layer_converges_to_a_rebuild(harbor: Path) -> None:
    from testing.index import dump

    write(harbor, "memory/2025-03-13.md", day_note("2025-03-13", "W @Harbor: Moved to Bergen."))
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Zeppelin idea."))
    assert len(results(harbor, "Bergen zeppelin")) >= 1
    commit_all(harbor, "commit the session", "2025-03-14T18:00:00+00:00")
    [hit] = results(harbor, "zeppelin")
    assert hit["uncommitted"] is False and hit["recorded_at"] == "2025-03-14T18:00:00+00:00"
    incremental = dump(harbor)
    assert gitmem("-C", str(harbor), "index", "--force")[0] == 0
    assert dump(harbor) == incremental


def test_uncommitted_memory_in_a_repository_without_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# Memory\n\n## Retain\n- W @Peter: Peter likes herring.\n")
    [hit] = results(repo, "herring")
    assert hit["uncommitted"] is True and hit["source"] == "MEMORY.md#L4"


def test_library_answer_committed(harbor: Path) -> None:
    write(harbor, "MEMORY.md", "# Memory\n\n## Retain\n- W @Peter: Allergic to shellfish.\n")
    ws, cfg = open_workspace(harbor)
    live = answer(Session(ws, cfg), RecallRequest(query="shellfish"), now=NOW)
    head = answer(Session(ws, cfg), RecallRequest(query="shellfish", committed=True), now=NOW)
    assert [r.uncommitted for r in live.results] == [True]
    assert head.results == []
    assert json.dumps(live.to_json())  # serialisable


# -- 2. --as-of is a record-time axis ---------------------------------------------------------


def test_as_of_finds_a_plan_recorded_before_about_a_later_date(harbor: Path) -> None:
    [hit] = results(harbor, "release Harbor", "--as-of", "2025-03-10", "--kind", "B")
    assert hit["content"] == "We decided to release Harbor 1.0 on March 20."
    assert hit["event_start"] == "2025-03-20"
    assert hit["recorded_at"] == "2025-03-06T18:00:00+00:00"
    # not yet recorded on March 5
    assert results(harbor, "release Harbor", "--as-of", "2025-03-05") == []
    # --until limits time as well: by March 5 it neither happened nor was written (March 6)
    assert results(harbor, "release Harbor", "--as-of", "2025-03-10", "--until",
                   "2025-03-05", "--kind", "B") == []


def test_plain_output_shows_the_note_date_beside_the_event_period(harbor: Path) -> None:
    code, out, _ = gitmem("-C", str(harbor), "recall", "release Harbor", "--kind", "B")
    assert code == 0
    assert "2025-03-20 (noted 2025-03-06)" in out
    code, out, _ = gitmem("-C", str(harbor), "recall", "staging server", "--kind", "W")
    assert "2025-03-13  @Harbor" in out and "noted" not in out  # the same day: said once


# -- 5. a warning belongs to the state it describes -------------------------------------------


def test_no_commits_warning_goes_away_after_the_first_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "MEMORY.md", "# Memory\n\n## Retain\n- W @Peter: Peter likes herring.\n")
    assert gitmem("-C", str(repo), "index", "--no-worktree")[0] == 0
    status = json.loads(gitmem("-C", str(repo), "status", "--json")[1])
    [warning] = [w for w in status["warnings"] if w["code"] == "no-commits"]
    assert warning["location"] == "(repository)"
    commit_all(repo, "first", "2025-03-01T09:00:00+00:00")
    assert gitmem("-C", str(repo), "index", "--no-worktree")[0] == 0
    status = json.loads(gitmem("-C", str(repo), "status", "--json")[1])
    assert [w for w in status["warnings"] if w["code"] == "no-commits"] == []
    assert status["facts"] == 1


# -- 4. junk stays out: scaffolding, binary files, heading-only chunks ------------------------


def item_rows(repo: Path) -> list[dict[str, Any]]:
    from testing.index import dump, records

    assert gitmem("-C", str(repo), "index")[0] == 0
    return [r for r in records(dump(repo), "item") if r["valid_to"] is None]


def test_init_scaffolding_is_not_memory(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    assert gitmem("init", str(target), "--no-hooks")[0] == 0
    commit_all(target, "init", "2025-03-01T09:00:00+00:00")
    assert gitmem("-C", str(target), "index")[0] == 0
    status = json.loads(gitmem("-C", str(target), "status", "--json")[1])
    assert status["entities"] == 0 and status["facts"] == 0
    assert item_rows(target) == []  # nothing but headings and scaffolding
    code, out, _ = gitmem("-C", str(target), "recall", "Entity", "--entity", "Entity")
    assert code == 1 and "no entity" in out + _


def test_an_existing_scaffold_readme_is_not_indexed(harbor: Path) -> None:
    write(harbor, "memory/README.md", "# Daily notes\n\n    ## Retain\n"
          "    - W @Entity: an objective fact about the world.\n")
    write(harbor, "bank/entities/README.md", "# Entity pages\n\nOne page per @Entity.\n")
    commit_all(harbor, "scaffold of an older gitmem", "2025-03-13T19:00:00+00:00")
    assert results(harbor, "objective fact") == []
    assert not any(r["path"].endswith("README.md") for r in item_rows(harbor))
    status = json.loads(gitmem("-C", str(harbor), "status", "--json")[1])
    assert status["files"] == 3


def test_a_binary_file_named_md_is_skipped_with_one_warning(harbor: Path) -> None:
    import random

    noise = random.Random(9).randbytes(6000)
    assert b"\x00" in noise  # and many other control bytes
    write(harbor, "memory/2025-03-12.md", noise.replace(b"\x00", b"\x01"))  # no NUL at all
    write(harbor, "bank/entities/Blob.md", noise)
    commit_all(harbor, "binary", "2025-03-13T19:00:00+00:00")
    assert gitmem("-C", str(harbor), "index")[0] == 0
    status = json.loads(gitmem("-C", str(harbor), "status", "--json")[1])
    mine = [w for w in status["warnings"] if w["path"] == "memory/2025-03-12.md"]
    assert [w["code"] for w in mine] == ["binary"], mine
    assert not any(r["path"] == "memory/2025-03-12.md" for r in item_rows(harbor))
    assert status["entities"] == 3  # Peter, Harbor and the Blob page; none from the noise


def test_latin1_text_is_still_text(harbor: Path) -> None:
    write(harbor, "memory/2025-03-12.md",
          "# 2025-03-12\n\n## Retain\n- W @Peter: Peter spiste k\xf8dboller i N\xf8rrebro.\n"
          .encode("latin-1"))
    commit_all(harbor, "latin-1", "2025-03-13T19:00:00+00:00")
    [hit] = results(harbor, "kødboller", "--kind", "W")
    assert hit["source"] == "memory/2025-03-12.md#L4"


def test_heading_only_chunks_are_not_results(harbor: Path) -> None:
    write(harbor, "memory/2025-03-09.md", "# 2025-03-09\n\n## Retain\n- W @Harbor: Quiet day.\n"
          "\n## Notes\n\n### Later\nSetext Heading\n==============\n")
    commit_all(harbor, "march 9", "2025-03-09T18:00:00+00:00")
    rows = [r for r in item_rows(harbor) if r["path"] == "memory/2025-03-09.md"]
    assert sorted((r["type"], r["content"]) for r in rows) == [
        ("chunk", "## Retain\n- W @Harbor: Quiet day."), ("fact", "Quiet day.")]
    assert all(r["path"] != "memory/2025-03-09.md" or r["kind"] != "note"
               or "Quiet" in r["content"] for r in results(harbor, "2025-03-09"))


# -- 3. no silent "no results" ----------------------------------------------------------------


def test_an_empty_window_says_what_the_memory_spans(harbor: Path) -> None:
    data = recall_json(harbor, "Harbor", "--since", "2025-04-01")
    assert data["results"] == []
    assert any("newest memory: 2025-03-20" in w for w in data["warnings"]), data["warnings"]
    data = recall_json(harbor, "Harbor", "--until", "2025-02-01")
    assert any("oldest memory: 2025-03-01" in w for w in data["warnings"]), data["warnings"]
    code, out, err = gitmem("-C", str(harbor), "recall", "Harbor", "--since", "2025-04-01")
    assert code == 0 and "no results" in out and "newest memory" in err
    # a window with memory in it but no matching words: no span note
    data = recall_json(harbor, "zeppelin", "--since", "2025-03-01")
    assert data["results"] == [] and not any("memory:" in w for w in data["warnings"])


def test_a_repository_without_memory_files_says_to_run_init(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, "src/app.py", "print('hello')\n")
    commit_all(repo, "code only", "2025-03-01T09:00:00+00:00")
    data = recall_json(repo, "hello")
    assert data["results"] == []
    assert any("gitmem init" in w for w in data["warnings"]), data["warnings"]


def test_committed_without_results_names_the_uncommitted_files(harbor: Path) -> None:
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Zeppelin idea."))
    data = recall_json(harbor, "zeppelin", "--committed")
    assert data["results"] == []
    assert any("1 memory file has uncommitted changes" in w for w in data["warnings"]), data
    assert len(results(harbor, "zeppelin")) == 1


def test_a_match_only_in_an_uncommitted_deletion_points_to_committed(harbor: Path) -> None:
    (harbor / "memory" / "2025-03-13.md").unlink()
    data = recall_json(harbor, "Oslo")
    assert data["results"] == []
    assert any("1 memory file deleted but not committed (memory/2025-03-13.md)" in w
               and "--committed" in w for w in data["warnings"]), data["warnings"]
    assert len(results(harbor, "Oslo", "--committed")) == 1


def test_semantic_mode_without_a_provider_is_an_error(harbor: Path) -> None:
    code, out, err = gitmem("-C", str(harbor), "recall", "Harbor", "--mode", "semantic")
    assert code == 4 and out == "", (out, err)
    assert "no embedding model yet" in err and "gitmem model pull" in err
    write(harbor, ".gitmem.toml", '[embed]\nprovider = "none"\n')
    code, out, err = gitmem("-C", str(harbor), "recall", "Harbor", "--mode", "semantic")
    assert code == 4 and "gitmem config set embed.provider auto" in err


# -- 9. one short hint, once per workspace; nothing when lexical was chosen -------------------


def test_the_lexical_hint_is_short_and_given_once(harbor: Path) -> None:
    """Issue 37: JSON says it in a field with every answer (an agent reads fields, and a
    warning given once is missed by the next one), never in warnings; text says it once per
    workspace (--verbose repeats it)."""
    answers = [recall_json(harbor, "Harbor") for _ in range(2)]
    assert [a["warnings"] for a in answers] == [[], []]
    hint = answers[0]["provider"]["notice"]
    assert len(hint) <= 160 and hint.count("embeddinggemma") <= 1, hint
    assert "gitmem model pull" in hint and answers[1]["provider"]["notice"] == hint
    said = [gitmem("-C", str(harbor), "recall", "Harbor")[2] for _ in range(2)]
    assert said[0].count(f"note: {hint}") == 1 and "note:" not in said[1], said
    again = gitmem("-C", str(harbor), "recall", "Harbor", "--verbose")[2]
    assert again.count(f"note: {hint}") == 1, again
    code, _out, err = gitmem("-C", str(harbor), "index")
    assert code == 0 and "note:" not in err, err
    code, _, err = gitmem("-C", str(harbor), "index", "--verbose")
    assert code == 0 and "note:" in err


def test_without_llama_cpp_auto_is_a_notice_not_a_warning_on_every_answer(
        harbor: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: installed without the [local] extra, every recall, index and status warned
    that results are lexical ('auto' is not set up yet: a notice, said once in text)."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    answers = [recall_json(harbor, "Harbor") for _ in range(2)]
    assert [a["warnings"] for a in answers] == [[], []]
    notice = answers[1]["provider"]["notice"]
    assert "llama-cpp-python is not installed" in notice and "-m pip install" in notice
    assert "then 'gitmem model pull'" in notice  # a model named in the configuration
    said = [gitmem("-C", str(harbor), command)[2] for command in ("index", "index")]
    assert said[0].count("note:") == 1 and "llama-cpp-python" in said[0], said
    assert "note:" not in said[1], said
    # the default model needs no step beyond the install: its first use prepares it
    monkeypatch.delenv("GITMEM_EMBED_MODEL")
    notice = recall_json(harbor, "Harbor")["provider"]["notice"]
    assert "-m pip install" in notice and "model pull" not in notice, notice
    assert "the next command prepares the default model" in notice, notice


def test_nothing_is_said_when_lexical_was_chosen(harbor: Path) -> None:
    write(harbor, ".gitmem.toml", '[embed]\nprovider = "none"\n')
    for verbose in ((), ("--verbose",)):
        answer = recall_json(harbor, "Harbor", *verbose)
        assert answer["warnings"] == [] and answer["provider"]["notice"] is None
        assert "note:" not in gitmem("-C", str(harbor), "recall", "Harbor", *verbose)[2]
        code, out, err = gitmem("-C", str(harbor), "index", *verbose)
        assert code == 0 and err == "", err
    code, out, _ = gitmem("-C", str(harbor), "status")
    [line] = [ln for ln in out.splitlines() if ln.startswith("semantic search")]
    assert line == "semantic search: off (embed.provider = none)"


def test_status_names_the_model_once(harbor: Path) -> None:
    assert gitmem("-C", str(harbor), "index")[0] == 0
    _, out, _ = gitmem("-C", str(harbor), "status")
    [line] = [ln for ln in out.splitlines() if ln.startswith("semantic search")]
    assert line.count("embeddinggemma-300M-Q8_0.gguf") == 1, line
    assert "gitmem model pull" in line


# -- 8. semantic search set once: gitmem config, read by every command and by hooks -----------


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from gguf_model import tiny_gguf

    return tiny_gguf(tmp_path_factory)


def test_config_set_get_list_in_the_user_config(harbor: Path) -> None:
    from gitmem.config import user_config_path

    path = user_config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# my settings\n[recall]\nk = 5  # fewer\n", encoding="utf-8")
    assert gitmem("-C", str(harbor), "config", "set", "embed.provider", "none")[0] == 0
    assert gitmem("-C", str(harbor), "config", "set", "recall.k", "12")[0] == 0
    assert gitmem("-C", str(harbor), "config", "set", "index.extra_paths", "notes, docs")[0] == 0
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# my settings\n[recall]\nk = 12")  # edited in place, comments kept
    assert 'provider = "none"' in text and 'extra_paths = ["notes", "docs"]' in text
    code, out, _ = gitmem("-C", str(harbor), "config", "get", "embed.provider")
    assert (code, out) == (0, "none\n")
    listed = json.loads(gitmem("-C", str(harbor), "config", "list", "--json")[1])
    by_key = {s["key"]: s for s in listed["settings"]}
    assert by_key["recall.k"]["value"] == 12 and by_key["recall.k"]["source"] == "user"
    assert by_key["recall.half_life_days"]["source"] == "default"
    code, out, _ = gitmem("-C", str(harbor), "config", "list")
    assert "recall.k = 12  (user" in out
    assert gitmem("-C", str(harbor), "config", "unset", "recall.k")[0] == 0
    assert gitmem("-C", str(harbor), "config", "get", "recall.k")[1] == "8\n"


def test_config_set_refuses_bad_keys_values_and_untrusted_repo_settings(harbor: Path) -> None:
    code, _, err = gitmem("-C", str(harbor), "config", "set", "embed.provdier", "local")
    assert code == 1 and "unknown setting 'embed.provdier'" in err and "embed.provider" in err
    code, _, err = gitmem("-C", str(harbor), "config", "set", "recall.k", "many")
    assert code == 1 and "recall.k" in err and "whole number" in err
    code, _, err = gitmem("-C", str(harbor), "config", "set", "--repo", "embed.remote.base_url",
                          "https://example.invalid/v1")
    assert code == 1 and "repository config may not" in err
    code, _, err = gitmem("-C", str(harbor), "config", "set", "--repo", "embed.provider", "openai")
    assert code == 1 and "repository config may not" in err
    assert not (harbor / ".gitmem.toml").exists()
    assert gitmem("-C", str(harbor), "config", "set", "--repo", "recall.around_days", "5")[0] == 0
    assert (harbor / ".gitmem.toml").read_text(encoding="utf-8") == "[recall]\naround_days = 5\n"
    code, out, _ = gitmem("-C", str(harbor), "config", "get", "recall.around_days")
    assert out == "5\n"


def test_semantic_search_set_once_works_in_every_shell_and_in_hooks(
        harbor: Path, tiny_model: Path) -> None:
    import time

    from gitmem.front.cli import run

    model_from_files()
    assert gitmem("-C", str(harbor), "config", "set", "embed.model", str(tiny_model))[0] == 0
    assert gitmem("-C", str(harbor), "index")[0] == 0
    assert recall_json(harbor, "Harbor")["mode"] == "hybrid"  # no environment variable
    assert run(["-C", str(harbor), "hooks", "install"]) == 0
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Hooked fact."))
    git(harbor, "add", "-A")
    git(harbor, "commit", "-q", "-m", "via a real hook", date="2025-03-14T18:00:00+00:00")
    head = git(harbor, "rev-parse", "HEAD").strip()
    deadline = time.monotonic() + FAILURE_SECONDS
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        log = harbor / ".memory" / "hook.log"
        if log.exists() and "embedded" in log.read_text(encoding="utf-8"):
            status = json.loads(gitmem("-C", str(harbor), "status", "--json")[1])
            if status["last_indexed_commit"] == head and status["semantic"]["pending"] == 0:
                break
        time.sleep(0.1)
    assert status and status["semantic"]["active"], status
    assert status["semantic"]["pending"] == 0 and status["semantic"]["embedded"] > 0


# -- 10. help where it is needed --------------------------------------------------------------


def test_an_unknown_entity_lists_the_closest(harbor: Path) -> None:
    write(harbor, "bank/entities/Peter.md", "---\naliases: [Petya]\n---\n# Peter\n\nA person.\n")
    commit_all(harbor, "page", "2025-03-13T19:00:00+00:00")
    code, _out, err = gitmem("-C", str(harbor), "recall", "allergic", "--entity", "Habror")
    assert code == 1 and "no entity 'Habror'" in err and "did you mean Harbor?" in err, err
    code, _, err = gitmem("-C", str(harbor), "recall", "allergic", "--entity", "Petja")
    assert code == 1 and "Petya (an alias of Peter)" in err, err
    code, _, err = gitmem("-C", str(harbor), "recall", "allergic", "--entity", "Zzyzx")
    assert code == 1 and "known entities include" in err and "Harbor" in err, err
    for args in (("recall", "allergic", "--entity", "Petja"), ("entity", "Petja")):
        code, _, err = gitmem("-C", str(harbor), *args)  # one wording for both commands
        assert code == 1 and "did you mean Petya (an alias of Peter)" in err, (args, err)


def test_get_past_the_end_of_a_shrunk_file_says_so(harbor: Path) -> None:
    write(harbor, "memory/2025-03-06.md", "# 2025-03-06\n\nShort now.\n")
    code, out, err = gitmem("-C", str(harbor), "get", "memory/2025-03-06.md#L3-L8")
    assert code == 0 and out == "Short now.\n"
    assert "lines 4-8 are past the end" in err and "3 lines" in err, err
    data = json.loads(gitmem("-C", str(harbor), "get", "memory/2025-03-06.md#L3-L8", "--json")[1])
    assert data["end_line"] == 3 and "past the end" in data["note"]
    code, _, err = gitmem("-C", str(harbor), "get", "memory/2025-03-06.md#L7")
    assert code == 1 and "has 3 lines" in err and "--at" in err, err


def test_status_deep_confirms_the_model_loaded(harbor: Path, tiny_model: Path) -> None:
    from gguf_model import N_EMBD

    model_from_files()
    assert gitmem("-C", str(harbor), "config", "set", "embed.model", str(tiny_model))[0] == 0
    assert gitmem("-C", str(harbor), "index")[0] == 0
    code, out, _ = gitmem("-C", str(harbor), "status", "--deep")
    assert code == 0
    [line] = [ln for ln in out.splitlines() if ln.startswith("model:")]
    assert f"{tiny_model.name} loaded" in line and f"{N_EMBD} dimensions" in line, line
    data = json.loads(gitmem("-C", str(harbor), "status", "--deep", "--json")[1])
    assert data["semantic"]["dimensions"] == N_EMBD and data["semantic"]["load_seconds"] >= 0


def test_embedded_counts_are_of_the_configured_model(harbor: Path, tiny_model: Path,
                                                     tmp_path: Path) -> None:
    from gguf_model import write_tiny_gguf

    other = write_tiny_gguf(tmp_path / "other.gguf", seed=7)
    model_from_files()
    for n, model in enumerate((tiny_model, other, tiny_model)):  # a switch, and back
        assert gitmem("-C", str(harbor), "config", "set", "embed.model", str(model))[0] == 0
        for deep in ((), ("--deep",)) if n else ():
            sem = json.loads(gitmem("-C", str(harbor), "status", "--json", *deep)[1])["semantic"]
            # The vectors held are the previous model's: none of them counts.
            assert sem["embedded"] == 0 and sem["pending"] == sem["total_items"] > 0, sem
            assert sem["stale_vectors"] == sem["total_items"], sem
            out = gitmem("-C", str(harbor), "status", *deep)[1]
            assert f"embedded 0 of {sem['total_items']} items" in out, out
            assert "vectors of another model" in out, out
        assert gitmem("-C", str(harbor), "index")[0] == 0
        sem = json.loads(gitmem("-C", str(harbor), "status", "--json")[1])["semantic"]
        assert sem["embedded"] == sem["total_items"] > 0 and sem["stale_vectors"] == 0, sem


def test_dash_c_help_names_its_argument_consistently() -> None:
    code, out, _ = gitmem("--help")
    [line] = [ln for ln in out.splitlines() if ln.strip().startswith("-C")]
    assert code == 0 and "-C PATH" in line and "in PATH" in line and "DIRECTORY" not in line


def test_init_again_with_hooks_installed_does_not_say_they_are_missing(tmp_path: Path) -> None:
    target = tmp_path / "brain"
    code, out, _ = gitmem("init", str(target), "--hooks")
    assert code == 0 and "post-commit: installed" in out
    code, out, _ = gitmem("init", str(target))
    assert code == 0 and "not installed" not in out
    assert "hooks: installed" in out


# -- 7. date phrases: said as applied, not searched as words; flags take them too -------------


@pytest.fixture
def dated(harbor: Path) -> Path:
    write(harbor, "memory/2025-03-09.md", day_note(
        "2025-03-09", "W @Market: Bought 6 apples.", "W @Tokyo: 3月20日にリリースすると決めた。",
        notes="ごろごろした一日。"))
    commit_all(harbor, "march 9", "2025-03-09T18:00:00+00:00")
    return harbor


def test_a_boosting_phrase_says_it_prefers_and_a_filter_says_only(dated: Path) -> None:
    code, out, err = gitmem("-C", str(dated), "recall", "release around 2025-03-06")
    assert code == 0
    assert "preferring results near 2025-03-03 .. 2025-03-09 ('around 2025-03-06')" in err, err
    code, out, err = gitmem("-C", str(dated), "recall", "what happened in March 2025")
    assert code == 0 and "only 2025-03-01 .. 2025-03-31 ('in March 2025')" in err, err
    assert "Bought 6 apples." in out and "staging server" in out  # generic words dropped
    data = recall_json(dated, "what happened in March 2025")
    assert data["time_window"]["until"] == "2025-03-31" == data["filters"]["until"]


def test_the_phrase_is_not_searched_as_words(dated: Path) -> None:
    found = [r["content"] for r in results(dated, "release around March 6, 2025")]
    assert any("We decided to release Harbor 1.0 on March 20." in c for c in found), found
    assert not any("apples" in c for c in found), found  # "6" is part of the date
    data = recall_json(dated, "リリース 3月6日ごろ")
    assert data["time_window"]["phrase"] == "3月6日ごろ"
    found = [r["content"] for r in data["results"]]
    assert any("リリース" in c for c in found) and not any(
        "ごろごろ" in c and "リリース" not in c for c in found), found


def test_flags_take_phrases_commits_and_kind_lists(dated: Path) -> None:
    for flag, value in (("--since", "last week"), ("--until", "March 10, 2025"),
                        ("--around", "March 6, 2025"), ("--around", "2025年3月6日")):
        code, _, err = gitmem("-C", str(dated), "recall", "Harbor", flag, value, "--json")
        assert code == 0, (flag, value, err)
    data = recall_json(dated, "Harbor", "--around", "March 6, 2025")
    assert (data["filters"]["since"], data["filters"]["until"]) == ("2025-03-03", "2025-03-09")
    first = git(dated, "rev-list", "--max-parents=0", "HEAD").strip()
    assert results(dated, "peanuts", "--as-of", first[:7])  # a commit
    assert results(dated, "staging", "--as-of", "HEAD~2") == []  # before March 13
    assert results(dated, "staging", "--as-of", "HEAD~1")
    code, _, err = gitmem("-C", str(dated), "recall", "x", "--as-of", "nonesuch")
    assert code == 2 and "a commit" in err
    kinds = {r["kind"] for r in results(dated, "Harbor", "--kind", "W,B")}
    assert kinds == {"world", "experience"}


def test_json_times_use_one_format(dated: Path) -> None:
    import re

    data = recall_json(dated, "Harbor", "--since", "30d")
    instant = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$")
    assert instant.match(data["filters"]["since"]), data["filters"]
    assert data["time_window"]["since"] == data["filters"]["since"]
    data = recall_json(dated, "Harbor", "--as-of", "2025-03")
    assert data["filters"]["as_of"] == "2025-03-31"
    for r in results(dated, "Harbor"):
        assert instant.match(r["recorded_at"]), r
        assert re.match(r"^\d{4}-\d\d-\d\d$", r["event_start"] or "2025-01-01")


def test_time_flags_and_queries_read_the_same_phrases() -> None:
    from datetime import date

    from gitmem.parse.timeparse import find_query_window, parse_time_spec

    start, end = parse_time_spec("last week", NOW)
    assert (start.date(), end.date()) == (date(2025, 3, 3), date(2025, 3, 10))
    start, end = parse_time_spec("2025年3月6日", NOW)
    assert (start.date(), end.date()) == (date(2025, 3, 6), date(2025, 3, 7))
    found = find_query_window("3月6日に何をした", NOW)
    assert found is not None and found[1] == "3月6日"
    with pytest.raises(Exception, match="date phrase"):
        parse_time_spec("last weak", NOW)


# -- 6. word forms: stems, exact forms first ---------------------------------------------------


@pytest.fixture
def forms(harbor: Path) -> Path:
    write(harbor, "memory/2025-03-10.md", day_note(
        "2025-03-10", "B @Harbor: We reviewed the migrations of the billing tables.",
        "W @Harbor: Migrations are pending, migrations everywhere, more migrations.",
        "W @Kbh: Vi tog beslutningerne om mødet i går.",
        "W @Moskva: Мы обсудили миграции базы данных."))
    write(harbor, "memory/2025-03-11.md", day_note(
        "2025-03-11", "W @Harbor: The migration is done."))
    commit_all(harbor, "forms", "2025-03-11T18:00:00+00:00")
    return harbor


def facts(repo: Path, query: str) -> list[str]:
    return [r["content"] for r in results(repo, query, "--kind", "W,B,O,S")]


def test_word_forms_are_found(forms: Path) -> None:
    assert "We reviewed the migrations of the billing tables." in facts(forms, "review")
    assert any("decided to release" in c for c in facts(forms, "what did we decide"))
    assert "Vi tog beslutningerne om mødet i går." in facts(forms, "beslutning")
    assert "Мы обсудили миграции базы данных." in facts(forms, "миграция")


def test_the_exact_form_ranks_above_stem_only_matches(forms: Path) -> None:
    found = facts(forms, "migration")
    assert found[0] == "The migration is done.", found
    assert "Migrations are pending, migrations everywhere, more migrations." in found


def test_an_index_from_before_the_stems_column_is_rebuilt(forms: Path) -> None:
    from gitmem.index.store import open_store

    assert results(forms, "review")
    index = forms / ".memory" / "index.sqlite"
    store = open_store(index)
    try:  # make it what gitmem before migration 2 wrote: no stems column
        with store.conn:
            store.conn.execute("DROP TABLE items_fts")
            store.conn.execute("CREATE VIRTUAL TABLE items_fts USING fts5 (body, path, "
                               "content = '', contentless_delete = 1, "
                               "tokenize = 'unicode61 remove_diacritics 0')")
            store.conn.execute("DELETE FROM migrations WHERE version > 1")
            store.conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    finally:
        store.close()
    data = recall_json(forms, "review")
    assert any("reviewed" in r["content"] for r in data["results"])
    assert any("rebuilt" in w for w in data["warnings"]), data["warnings"]
    store = open_store(index, readonly=True)
    try:
        assert store.schema_version() >= 2
    finally:
        store.close()


def test_reflect_reads_committed_memory_only(harbor: Path) -> None:
    from gitmem.reflect.reflect import reflect

    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Release is close."))
    commit_all(harbor, "march 14", "2025-03-14T18:00:00+00:00")
    write(harbor, "memory/2025-03-15.md", day_note("2025-03-15", "W @Zeppelin: Draft, unsaved."))
    assert results(harbor, "Zeppelin")  # recall sees the uncommitted note
    ws, cfg = open_workspace(harbor)
    report = reflect(ws, cfg, since="2025-03-10", dry_run=True,
                     now=datetime(2025, 3, 16, tzinfo=UTC))
    entities = {p.entity for p in report.pages}
    assert "Harbor" in entities and "Zeppelin" not in entities, entities


def test_an_uncommitted_edit_is_not_a_pending_embedding_warning(harbor: Path,
                                                                tiny_model: Path) -> None:
    model_from_files()
    assert gitmem("-C", str(harbor), "config", "set", "embed.model", str(tiny_model))[0] == 0
    assert gitmem("-C", str(harbor), "index")[0] == 0
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Session note."))
    data = recall_json(harbor, "session note")
    assert data["mode"] == "hybrid" and data["warnings"] == [], data["warnings"]
    assert next(r["uncommitted"] for r in data["results"] if "Session" in r["content"])


def test_memory_files_without_text_say_so(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    assert gitmem("init", str(target), "--no-hooks")[0] == 0
    data = recall_json(target, "anything")
    assert data["results"] == []
    assert any("no text yet" in w for w in data["warnings"]), data["warnings"]


# -- trial 2: what a second new user found ----------------------------------------------------


def test_a_hook_does_not_use_up_the_lexical_hint(harbor: Path) -> None:
    from gitmem.hooks import run_hook

    run_hook(harbor, "post-commit")  # the background re-index after a commit: nobody reads it
    code, _, err = gitmem("-C", str(harbor), "recall", "Harbor")
    assert code == 0 and "note: results are lexical" in err and "gitmem model pull" in err
    assert "note:" not in gitmem("-C", str(harbor), "recall", "Harbor")[2]


def test_an_empty_window_names_its_last_day_as_the_filter_does(harbor: Path) -> None:
    data = recall_json(harbor, "Harbor", "--since", "2025-04-01", "--until", "2025-04-30")
    assert data["results"] == [] and data["filters"]["until"] == "2025-04-30"
    assert any("between 2025-04-01 and 2025-04-30 " in w for w in data["warnings"]), data
    code, _, err = gitmem("-C", str(harbor), "recall", "Harbor", "--until", "2025-02")
    assert code == 0 and "falls on or before 2025-02-28 " in err, err
    data = recall_json(harbor, "Harbor", "--around", "2d")
    assert f"between {data['filters']['since']} and {data['filters']['until']} " in " ".join(
        data["warnings"]), data


def test_status_names_uncommitted_edits_recall_has_not_read_yet(harbor: Path) -> None:
    assert gitmem("-C", str(harbor), "index")[0] == 0
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Zeppelin idea."))
    info = json.loads(gitmem("-C", str(harbor), "status", "--json")[1])
    assert info["uncommitted"] == ["memory/2025-03-14.md"]
    assert info["uncommitted_unindexed"] == ["memory/2025-03-14.md"]
    code, out, _ = gitmem("-C", str(harbor), "status")
    assert code == 0 and "1 memory file not indexed yet, read by the next recall" in out, out
    assert len(results(harbor, "zeppelin")) == 1  # recall reads it first
    info = json.loads(gitmem("-C", str(harbor), "status", "--json")[1])
    assert info["uncommitted"] == ["memory/2025-03-14.md"]
    assert info["uncommitted_unindexed"] == []
    assert "not indexed yet" not in gitmem("-C", str(harbor), "status")[1]
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Edited again."))
    info = json.loads(gitmem("-C", str(harbor), "status", "--json")[1])
    assert info["uncommitted_unindexed"] == ["memory/2025-03-14.md"]


def test_as_of_now_without_results_names_the_uncommitted_files(harbor: Path) -> None:
    write(harbor, "memory/2025-03-14.md", day_note("2025-03-14", "W @Harbor: Zeppelin idea."))
    for as_of in ("HEAD", "today"):
        data = recall_json(harbor, "zeppelin", "--as-of", as_of)
        assert data["results"] == []
        assert any("1 memory file has uncommitted changes (memory/2025-03-14.md), not searched "
                   "because of --as-of" in w for w in data["warnings"]), data["warnings"]
    # as of an earlier commit the edits are later than the time asked about: nothing to say
    data = recall_json(harbor, "zeppelin", "--as-of", "2025-03-10")
    assert not any("uncommitted" in w for w in data["warnings"]), data["warnings"]


def test_min_score_that_leaves_nothing_says_so(harbor: Path) -> None:
    data = recall_json(harbor, "Harbor", "--min-score", "1")  # scores are below 1
    assert data["results"] == []
    assert any("scored below --min-score 1" in w and "the best scored" in w
               for w in data["warnings"]), data["warnings"]
    kept = recall_json(harbor, "Harbor", "--min-score", "0.01")
    assert kept["results"] and not any("--min-score" in w for w in kept["warnings"])


def test_mode_help_agrees_that_semantic_without_a_provider_is_an_error() -> None:
    code, out, _ = gitmem("recall", "--help")
    assert code == 0
    mode = " ".join(out.split("--mode", 1)[1].split("--min-score", 1)[0].split())
    assert "semantic is an error" in mode, mode


def test_config_unset_of_a_key_that_is_not_set_says_so(harbor: Path) -> None:
    from gitmem.config import user_config_path

    code, out, _ = gitmem("-C", str(harbor), "config", "unset", "embed.provider")
    assert code == 0 and "embed.provider was not set there" in out, out
    assert not user_config_path().exists()  # nothing to write
    write(harbor, ".gitmem.toml", "[recall]\nk = 5\n")
    code, out, _ = gitmem("-C", str(harbor), "config", "unset", "recall.k")
    assert code == 0 and "recall.k was not set there" in out and "repository" in out, out
    code, out, _ = gitmem("-C", str(harbor), "config", "unset", "recall.k", "--repo")
    assert code == 0 and out.endswith("recall.k removed\n"), out


def test_the_entity_list_names_its_columns(harbor: Path) -> None:
    code, out, _ = gitmem("-C", str(harbor), "entity")
    header, *rows = out.splitlines()
    assert code == 0 and header.split() == ["mentions", "facts", "entity"], out
    assert any(row.split()[2] == "Harbor" for row in rows), out


def test_every_json_answer_has_a_warnings_list(harbor: Path) -> None:
    """An agent reads `warnings` from every command; get said `note`, index `notes` only."""
    data = json.loads(gitmem("-C", str(harbor), "get", "MEMORY.md#L4-L90", "--json")[1])
    assert data["warnings"] == [data["note"]] and "past the end" in data["note"]
    data = json.loads(gitmem("-C", str(harbor), "get", "MEMORY.md", "--json")[1])
    assert data["warnings"] == [] and data["note"] is None
    data = json.loads(gitmem("-C", str(harbor), "index", "--json")[1])
    assert data["warnings"] == data["notes"]
