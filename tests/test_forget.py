"""``gitmem forget`` (issue 42): entries out of the memory in one commit of only those lines,
recall and entity stop returning them at once, history keeps them; ``--purge`` takes the text
out of every object of every clone (real git, a real bare remote, real git-filter-repo)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from gitmem.git import objects_containing
from gitmem.reflect.forget import forget, plan_forget
from gitmem.reflect.reflect import reflect
from gitmem.workspace import open_workspace
from testing.cli import gitmem, gitmem_json, recall_json
from testing.repo import commit_all, git, make_repo, write

DAY = "memory/2025-11-27.md"
SECRET = "The door code is 4417-SECRET."
NOTE = (
    "# 2025-11-27\n\nMorning notes.\n\n## Retain\n"
    "- W @Peter: Lives in Berlin.\n"
    f"- W @Peter: {SECRET}\n"
    "  - told by the landlord\n"
    "  more of it\n"
    "- O(c=0.8) @Peter: Prefers short replies.\n"
)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    write(repo, DAY, NOTE)
    commit_all(repo, "day", date="2025-11-27T21:00:00+00:00")
    return repo


def fact_id(repo: Path, query: str) -> str:
    results = recall_json(repo, query)["results"]
    return str(next(r["fact_id"] for r in results if r.get("fact_id")))


def test_forget_by_fact_id_removes_the_entry_and_its_nested_items_in_one_commit(
        repo: Path) -> None:
    fid = fact_id(repo, "door code")
    before = git(repo, "rev-parse", "HEAD").strip()
    out = gitmem_json("-C", str(repo), "forget", fid, "--reason", "a secret", "--json")
    assert [e["fact_id"] for e in out["entries"]] == [fid]
    assert out["entries"][0]["lines"] == [f"- W @Peter: {SECRET}", "  - told by the landlord",
                                         "  more of it"]
    assert (repo / DAY).read_text(encoding="utf-8") == NOTE.replace(
        f"- W @Peter: {SECRET}\n  - told by the landlord\n  more of it\n", "")
    # one commit, only those lines, the reason and the id in its message (not the text)
    assert git(repo, "rev-parse", "HEAD~1").strip() == before
    assert git(repo, "diff", "--numstat", "HEAD~1", "HEAD").split() == ["0", "3", DAY]
    message = git(repo, "log", "-1", "--format=%B")
    assert "Why: a secret" in message and fid in message and "4417" not in message
    # gone from recall and entity at once; --as-of before the commit still finds it
    assert recall_json(repo, "door code")["results"] == []
    entity = gitmem_json("-C", str(repo), "entity", "Peter", "--json")
    assert "4417" not in json.dumps(entity)
    old = recall_json(repo, "door code", "--as-of", before)["results"]
    assert old and "4417" in old[0]["snippet"]


def test_uncommitted_edits_of_the_same_file_stay_uncommitted(repo: Path) -> None:
    with (repo / DAY).open("a", encoding="utf-8") as f:
        f.write("- B: Half-written, not committed yet.\n")
    code, out, err = gitmem("-C", str(repo), "forget", f"{DAY}#L7")
    assert code == 0, err
    assert "forgot 1 entry" in out
    committed = git(repo, "show", f"HEAD:{DAY}")
    assert "4417" not in committed and "Half-written" not in committed
    on_disk = (repo / DAY).read_text(encoding="utf-8")
    assert "4417" not in on_disk and "told by the landlord" not in on_disk
    assert on_disk.endswith("- B: Half-written, not committed yet.\n")
    assert git(repo, "status", "--porcelain").strip() == f"M {DAY}"


def test_entity_and_match_preview_then_ask(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code, out, err = gitmem("-C", str(repo), "forget", "--entity", "peter", "--match", "DOOR")
    assert code == 1 and "not confirmed" in err
    assert f"- W @Peter: {SECRET}" in out  # the preview
    assert git(repo, "rev-parse", "HEAD") == head
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    code, out, err = gitmem("-C", str(repo), "forget", "--entity", "peter", "--match", "DOOR")
    assert code == 0, err
    assert "4417" not in (repo / DAY).read_text(encoding="utf-8")
    assert "Lives in Berlin" in (repo / DAY).read_text(encoding="utf-8")


def test_dry_run_and_bad_refs_change_nothing(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    code, out, _ = gitmem("-C", str(repo), "forget", f"{DAY}#L7", "--dry-run")
    assert code == 0 and "dry run" in out and SECRET in out
    for bad in ("f-000000000000", f"{DAY}#L3", "nonsense", "notes.txt#L1"):
        code, _, err = gitmem("-C", str(repo), "forget", fact_id(repo, "Berlin"), bad)
        assert code == 2, (bad, err)
        assert "nothing was forgotten" in err
    code, _, err = gitmem("-C", str(repo), "forget", "--entity", "Nobody", "--yes")
    assert code == 2 and "no entity named" in err
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / DAY).read_text(encoding="utf-8") == NOTE


def test_the_digest_lines_of_entity_pages_go_in_the_same_commit(repo: Path) -> None:
    ws, cfg = open_workspace(repo)
    reflect(ws, cfg, since=None, commit=True)
    page = (repo / "bank/entities/Peter.md").read_text(encoding="utf-8")
    assert "4417" in page
    plan = plan_forget(ws, cfg, [fact_id(repo, "door code")])
    assert [p.path for p in plan.page_lines] == ["bank/entities/Peter.md"]
    done = forget(ws, cfg, plan, reason="secret")
    changed = git(repo, "show", "--name-only", "--format=", done.commit).split()
    assert changed == ["bank/entities/Peter.md", DAY]
    page = (repo / "bank/entities/Peter.md").read_text(encoding="utf-8")
    assert "4417" not in page and "Lives in Berlin" in page


def test_a_fact_id_names_every_place_a_citation_one(repo: Path) -> None:
    entry = f"# Notes\n\n## Retain\n- W @Peter: {SECRET}\n"
    write(repo, "MEMORY.md", entry)
    write(repo, "memory/people.md", entry)  # undated: the same fact id as in MEMORY.md
    commit_all(repo, "curated")
    ws, cfg = open_workspace(repo)
    one = plan_forget(ws, cfg, ["MEMORY.md#L4"])
    assert [e.path for e in one.entries] == ["MEMORY.md"]
    both = plan_forget(ws, cfg, [one.entries[0].fact_id])
    assert [e.path for e in both.entries] == ["MEMORY.md", "memory/people.md"]
    forget(ws, cfg, both)
    assert recall_json(repo, "door code")["results"][0]["path"] == DAY


def clone_env(base: Path) -> tuple[Path, Path, Path]:
    bare = base / "remote.git"
    git(base, "init", "-q", "--bare", "-b", "main", str(bare))
    a = make_repo(base, "a")
    write(a, DAY, NOTE)
    commit_all(a, "day", date="2025-11-27T21:00:00+00:00")
    write(a, "memory/2025-11-28.md", "# 2025-11-28\n\n## Retain\n- W @Peter: Visited Porto.\n")
    commit_all(a, "next day", date="2025-11-28T21:00:00+00:00")
    git(a, "remote", "add", "origin", str(bare))
    git(a, "push", "-q", "-u", "origin", "main")
    git(base, "clone", "-q", str(bare), "b")
    return bare, a, base / "b"


def holding(repo: Path, text: str) -> list[str]:
    return objects_containing(repo, [text])


def test_purge_leaves_no_object_holding_the_text_on_any_clone(tmp_path: Path) -> None:
    bare, a, b = clone_env(tmp_path)
    write(b, "memory/2025-11-29.md", "# 2025-11-29\n\n## Retain\n- B: Clone b's own work.\n")
    commit_all(b, "b works")  # not pushed yet: replayed on the new history
    assert holding(a, "4417") and holding(b, "4417")
    code, out, err = gitmem("-C", str(a), "forget", fact_id(a, "door code"), "--purge", "--yes",
                            "--reason", "a door code")
    assert code == 0, err
    assert "[forgotten]" in out and "gitmem sync --after-purge" in out
    assert holding(a, "4417") == []
    assert "Lives in Berlin" in (a / DAY).read_text(encoding="utf-8")
    assert recall_json(a, "Porto")["results"]  # the index was rebuilt from the new history
    code, _, err = gitmem("-C", str(a), "sync")  # a plain sync would fetch the old history
    assert code == 1 and "--after-purge" in err
    code, out, err = gitmem("-C", str(a), "sync", "--after-purge")
    assert code == 0 and "force-pushed" in out, err
    # clone b: warned, nothing merged; then takes the new history
    b_head = git(b, "rev-parse", "HEAD")
    code, _, err = gitmem("-C", str(b), "sync")
    assert code == 1 and "history was rewritten" in err
    assert git(b, "rev-parse", "HEAD") == b_head
    code, out, err = gitmem("-C", str(b), "sync", "--after-purge")
    assert code == 0, err
    assert holding(b, "4417") == []
    assert "Clone b's own work" in (b / "memory/2025-11-29.md").read_text(encoding="utf-8")
    assert git(b, "rev-parse", "HEAD") == git(bare, "rev-parse", "main")
    # the server prunes unreachable objects itself (a host: its support); then none is left
    git(bare, "gc", "-q", "--prune=now")
    assert holding(bare, "4417") == []
    for repo in (a, b, bare):
        assert git(repo, "log", "--all", "--oneline", "-S", "4417").strip() == ""
    # and nothing else was lost
    code, out, err = gitmem("-C", str(a), "sync")
    assert code == 0, err
    tree = {p: git(a, "show", f"HEAD:{p}") for p in git(a, "ls-tree", "-r", "--name-only",
                                                          "HEAD").split()}
    assert "Visited Porto" in tree["memory/2025-11-28.md"]
    assert "Prefers short replies" in tree[DAY] and "Clone b's own work" in tree[
        "memory/2025-11-29.md"]


def test_purge_refuses_uncommitted_changes_and_spares_shared_lines(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    write(repo, DAY, NOTE + "- W @Ann: Plays chess.\n  - told by the landlord\n")
    commit_all(repo, "day")
    write(repo, "MEMORY.md", "# Memory\nunsaved\n")
    git(repo, "add", "MEMORY.md")
    code, _, err = gitmem("-C", str(repo), "forget", f"{DAY}#L7", "--purge", "--yes")
    assert code == 1 and "uncommitted changes: MEMORY.md" in err
    git(repo, "commit", "-qm", "memory")
    code, out, err = gitmem("-C", str(repo), "forget", f"{DAY}#L7", "--purge", "--yes")
    assert code == 0, err
    assert "left as they are" in out and "- told by the landlord" in out
    text = (repo / DAY).read_text(encoding="utf-8")
    assert "- W @Ann: Plays chess.\n  - told by the landlord\n" in text
    assert holding(repo, "4417") == []
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    assert "[forgotten]" in git(repo, "show", f"{first}:{DAY}")


def test_memory_forget_only_when_a_person_allows_it(repo: Path) -> None:
    import asyncio

    from testing.mcp import json_of, mcp_session, text_of

    fid = fact_id(repo, "door code")

    async def scenario(env: dict[str, str]) -> tuple[set[str], object]:
        async with mcp_session(repo, env) as session:
            names = {t.name for t in (await session.list_tools()).tools}
            if "memory_forget" not in names:
                return names, None
            return names, await session.call_tool(
                "memory_forget", {"refs": [fid], "reason": "the user asked"})

    names, _ = asyncio.run(scenario({}))
    assert "memory_forget" not in names and "memory_retain" in names
    names, result = asyncio.run(scenario({"GITMEM_MCP_FORGET": "true"}))
    out = json_of(result)  # type: ignore[arg-type]
    assert [e["fact_id"] for e in out["entries"]] == [fid] and out["reason"] == "the user asked"
    assert "purge" not in text_of(result)  # type: ignore[arg-type]
    assert recall_json(repo, "door code")["results"] == []
    assert "Why: the user asked" in git(repo, "log", "-1", "--format=%B")


def test_forgetting_on_three_machines_loses_nothing_else(tmp_path: Path) -> None:
    from testing.forgetops import run_forget_ops

    report, ops = run_forget_ops(tmp_path, 40, clones=3, seed=5)
    assert report.failures == []
    assert report.done["forget"] and report.done["purge"] and ops.purged and ops.followed


def test_a_later_purge_is_not_taken_for_the_continuation_of_an_old_one(tmp_path: Path) -> None:
    import os
    import time

    repo = make_repo(tmp_path)
    write(repo, DAY, NOTE)
    commit_all(repo, "day")
    code, _, err = gitmem("-C", str(repo), "forget", f"{DAY}#L7", "--purge", "--yes")
    assert code == 0, err
    ran = repo / ".git" / "filter-repo" / "already_ran"
    assert ran.is_file()  # git-filter-repo's marker of a run
    old = time.time() - 3 * 86400  # older than a day: it would ask on stdin
    os.utime(ran, (old, old))
    code, _, err = gitmem("-C", str(repo), "forget", f"{DAY}#L6", "--purge", "--yes")
    assert code == 0, err
    assert holding(repo, "Lives in Berlin") == [] and holding(repo, "4417") == []
    assert "Prefers short replies" in (repo / DAY).read_text(encoding="utf-8")
