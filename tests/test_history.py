"""History with real git (docs/memory-format.md, docs/architecture.md): rewrites converge to a rebuild, record times come
from commits, --as-of answers from the past, opinions keep their history, merges are recorded at
the merge commit, uncommitted edits are layered and removed, and date phrases become windows.

Every repository here is made with the ``git`` command line and fixed commit dates.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gitmem.front.cli import run
from gitmem.index.replay import IndexReport, index_workspace
from gitmem.index.session import Session
from gitmem.index.store import open_store
from gitmem.recall.answer import RecallRequest, answer
from gitmem.workspace import open_workspace
from testing.index import dump
from testing.repo import commit_all, git, make_repo, write

NOW = datetime(2025, 12, 1, tzinfo=UTC)


# -- a small memory repository ---------------------------------------------------------------


def daily(day: str, *facts: str, notes: str = "Checked the gateway logs; nothing new.") -> str:
    body = "".join(f"- {f}\n" for f in facts)
    return f"# {day}\n\n## Retain\n{body}\n## Notes\n{notes}\n"


def opinions(confidence: str, updated: str) -> str:
    return (
        "# Opinions\n\n"
        "## @Peter prefers concise WhatsApp replies\n"
        "<!-- opinion: o-3fa9c2e1 -->\n"
        f"- confidence: {confidence}\n"
        f"- updated: {updated}\n"
        "- evidence:\n"
        "  - for f-47a5ff74aac9 memory/2025-11-10.md#L4 (c=0.70)\n"
    )


MEMORY_V1 = "# Memory\n\n## Retain\n- W @Peter: The gateway host is the old NUC.\n"
MEMORY_V2 = "# Memory\n\n## Retain\n- W @Peter @The-Castle: The gateway host is The Castle.\n"
PETER = "---\naliases: [Pete]\n---\n# Peter\n\nOwner of the gateway.\n"


def base_repo(tmp_path: Path, name: str = "repo") -> Path:
    """main: c1 (11-10) .. c4 (11-13); c3 edits MEMORY.md and the opinion, c4 deletes a note."""
    repo = make_repo(tmp_path, name)
    write(repo, "MEMORY.md", MEMORY_V1)
    write(repo, "USER.md", "# User\n\nPeter, in Copenhagen.\n")
    write(repo, "bank/entities/Peter.md", PETER)
    write(repo, "bank/opinions.md", opinions("0.70", "2025-11-10"))
    write(
        repo,
        "memory/2025-11-10.md",
        daily("2025-11-10", "O(c=0.70) @Peter: Prefers short replies."),
    )
    commit_all(repo, "c1", "2025-11-10T08:00:00+00:00")
    write(repo, "memory/2025-11-11.md", daily("2025-11-11", "B @Peter: Rebooted the gateway NUC."))
    commit_all(repo, "c2", "2025-11-11T21:00:00+00:00")
    write(repo, "memory/2025-11-12.md", daily("2025-11-12", "W @The-Castle: The Castle has a UPS."))
    write(repo, "MEMORY.md", MEMORY_V2)
    write(repo, "bank/opinions.md", opinions("0.60", "2025-11-12"))
    commit_all(repo, "c3", "2025-11-12T21:00:00+00:00")
    write(repo, "memory/2025-11-13.md", daily("2025-11-13", "W @Peter: Peter flies to Oslo."))
    (repo / "memory" / "2025-11-11.md").unlink()
    commit_all(repo, "c4", "2025-11-13T21:00:00+00:00")
    return repo


def index(repo: Path, **kw: bool) -> IndexReport:
    ws, cfg = open_workspace(repo)
    return index_workspace(ws, cfg, **kw)


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def recall(repo: Path, query: str, **kw: object) -> list[dict[str, object]]:
    ws, cfg = open_workspace(repo)
    req = RecallRequest(query=query, k=50, **kw)  # type: ignore[arg-type]
    return [r.to_json() for r in answer(Session(ws, cfg), req, now=NOW).results]


def assert_converges(repo: Path, *, full: bool = False) -> IndexReport:
    """Index incrementally, then check a forced rebuild gives exactly the same index."""
    report = index(repo)
    assert report.full is full, report.notes
    assert report.commit == head(repo)
    incremental = dump(repo)
    assert index(repo, force=True).full
    rebuilt = dump(repo)
    assert [r for r in incremental if r not in rebuilt] == []
    assert [r for r in rebuilt if r not in incremental] == []
    assert incremental == rebuilt
    again = index(repo)
    assert not again.full and again.plan.empty and again.commits == 0
    return report


# -- rewrites converge -----------------------------------------------------------------------


def amend(repo: Path) -> None:
    write(repo, "memory/2025-11-13.md", daily("2025-11-13", "W @Peter: Peter flies to Bergen."))
    git(repo, "commit", "-q", "-a", "--amend", "--no-edit", date="2025-11-13T22:00:00+00:00")


def rebase_onto_changed_main(repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "feature", "HEAD~2")
    write(repo, "memory/2025-11-19.md", daily("2025-11-19", "W @Peter: Peter bought a kayak."))
    commit_all(repo, "f1", "2025-11-14T21:00:00+00:00")
    write(repo, "USER.md", "# User\n\nPeter, now in Aarhus.\n")
    commit_all(repo, "f2", "2025-11-15T21:00:00+00:00")
    assert not index(repo).full  # the feature branch is indexed (rolled back to c2)
    git(repo, "rebase", "-q", "main", date="2025-11-16T09:00:00+00:00")


def rebase_onto_drops_a_commit(repo: Path) -> None:
    git(repo, "rebase", "-q", "--onto", "HEAD~2", "HEAD~1", date="2025-11-16T09:00:00+00:00")
    assert (repo / "memory" / "2025-11-11.md").exists()  # c4 (which deleted it) is gone


def reset_hard(repo: Path) -> None:
    git(repo, "reset", "-q", "--hard", "HEAD~2")


def switch_branch(repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "other", "HEAD~2")
    write(repo, "MEMORY.md", "# Memory\n\n## Retain\n- W @Peter: The gateway host is a Pi.\n")
    write(repo, "memory/2025-11-20.md", daily("2025-11-20", "B @Peter: Flashed the Pi."))
    write(repo, "bank/opinions.md", opinions("0.90", "2025-11-20"))
    commit_all(repo, "o1", "2025-11-20T21:00:00+00:00")
    git(repo, "switch", "-q", "main")
    index(repo)
    git(repo, "switch", "-q", "other")


def merge_side(repo: Path) -> None:
    git(repo, "switch", "-q", "-c", "side", "HEAD~1")
    write(repo, "memory/2025-11-15.md", daily("2025-11-15", "W @Peter: Peter adopted a cat."))
    write(repo, "USER.md", "# User\n\nPeter, in Copenhagen, with a cat.\n")
    commit_all(repo, "s1", "2025-11-15T21:00:00+00:00")
    git(repo, "switch", "-q", "main")
    write(repo, "memory/2025-11-16.md", daily("2025-11-16", "B @Peter: Cleaned the NUC."))
    commit_all(repo, "c5", "2025-11-16T21:00:00+00:00")
    index(repo)
    git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "side",
        "-m",
        "merge side",
        date="2025-11-17T10:00:00+00:00",
    )
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2


def force_push_rewrite(repo: Path) -> None:
    """Another clone rewrites the last two commits and force-pushes; we fetch and reset."""
    remote = repo.parent / "remote.git"
    git(repo.parent, "init", "-q", "--bare", str(remote))
    git(repo, "remote", "add", "origin", str(remote))
    git(repo, "push", "-q", "origin", "main")
    other = repo.parent / "other-clone"
    git(repo.parent, "clone", "-q", str(remote), str(other))
    git(other, "reset", "-q", "--hard", "HEAD~2")
    write(other, "memory/2025-11-12.md", daily("2025-11-12", "W @Peter: Rewritten history fact."))
    write(other, "MEMORY.md", MEMORY_V2.replace("The Castle.", "The Castle (rewritten)."))
    commit_all(other, "rewritten", "2025-11-12T22:00:00+00:00")
    git(other, "push", "-q", "--force", "origin", "main")
    git(repo, "fetch", "-q", "origin")
    git(repo, "reset", "-q", "--hard", "origin/main")
    assert head(repo) == head(other)


SCENARIOS: dict[str, Callable[[Path], None]] = {
    "amend": amend,
    "rebase-onto-changed-main": rebase_onto_changed_main,
    "rebase-onto-drops-a-commit": rebase_onto_drops_a_commit,
    "reset-hard-HEAD~2": reset_hard,
    "switch-diverged-branch": switch_branch,
    "merge-no-ff": merge_side,
    "force-push-fetch-reset": force_push_rewrite,
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_rewrites_converge_to_a_rebuild(tmp_path: Path, scenario: str) -> None:
    repo = base_repo(tmp_path)
    first = index(repo)
    assert first.full
    write(repo, "memory/2025-11-14.md", daily("2025-11-14", "S @Peter: Peter seems busy."))
    commit_all(repo, "c4b", "2025-11-14T08:00:00+00:00")
    assert not index(repo).full  # an ordinary incremental step first
    before = head(repo)
    SCENARIOS[scenario](repo)
    assert head(repo) != before
    assert_converges(repo)


def test_orphan_history_is_a_full_rebuild_with_a_note(tmp_path: Path) -> None:
    """No shared commit with the indexed history: by design a full re-index (with a note)."""
    repo = base_repo(tmp_path)
    index(repo)
    git(repo, "checkout", "-q", "--orphan", "fresh")
    git(repo, "rm", "-q", "-r", "-f", ".")
    write(repo, "MEMORY.md", "# Memory\n\n## Retain\n- W @Peter: A brand new history.\n")
    write(repo, "memory/2025-11-20.md", daily("2025-11-20", "W @Peter: Fresh start."))
    commit_all(repo, "fresh", "2025-11-20T21:00:00+00:00")
    report = assert_converges(repo, full=True)
    assert any("shares no commit" in n for n in report.notes), report.notes
    assert not [r for r in recall(repo, "NUC") if "NUC" in str(r["content"])]


def test_worktree_pseudo_commit_is_rolled_back(tmp_path: Path) -> None:
    repo = base_repo(tmp_path)
    index(repo, worktree=False)
    write(repo, "memory/2025-11-13.md", daily("2025-11-13", "W @Peter: Uncommitted zeppelin plan."))
    write(repo, "memory/2025-11-14.md", daily("2025-11-14", "W @Peter: Another zeppelin idea."))
    assert recall(repo, "zeppelin", committed=True) == []  # HEAD alone
    report = index(repo, worktree=True)
    assert not report.full
    found = {r["source"] for r in recall(repo, "zeppelin", kinds=("W",))}
    assert found == {"memory/2025-11-13.md#L4", "memory/2025-11-14.md#L4"}
    assert recall(repo, "Oslo", kinds=("W",)) == []  # replaced in the working tree
    # an index without the layer drops it again
    assert not index(repo, worktree=False).full
    incremental = dump(repo)
    index(repo, force=True, worktree=False)
    assert dump(repo) == incremental
    assert recall(repo, "zeppelin", committed=True) == []
    # HEAD's version, hidden on disk by the layer: cited at its commit (get shows that text)
    [oslo] = recall(repo, "Oslo", kinds=("W",), committed=True)
    assert oslo["source"] == f"memory/2025-11-13.md#L4@{head(repo)[:7]}"


def test_worktree_layer_then_committing_the_same_edit(tmp_path: Path) -> None:
    repo = base_repo(tmp_path)
    index(repo)
    write(repo, "memory/2025-11-13.md", daily("2025-11-13", "W @Peter: Zeppelin, committed later."))
    index(repo, worktree=True)
    index(repo, worktree=True)  # twice: the layer is replaced, not stacked
    assert [r["source"] for r in recall(repo, "Zeppelin", kinds=("W",))] == [
        "memory/2025-11-13.md#L4"
    ]
    commit_all(repo, "commit the edit", "2025-11-14T21:00:00+00:00")
    assert not index(repo).full
    [fact] = recall(repo, "Zeppelin", kinds=("W",))
    assert fact["recorded_at"] == "2025-11-14T21:00:00+00:00" and fact["commit"] == head(repo)
    incremental = dump(repo)
    index(repo, force=True)
    assert dump(repo) == incremental


def test_a_layer_replaced_by_the_next_describes_the_files_as_a_rebuild_does(
        tmp_path: Path) -> None:
    """A new layer over the last one: the files it changes again are not restored to their
    committed text first (their rows come from the new layer), and the files table and its
    warnings are what a rebuild with the same edits gives."""
    repo = base_repo(tmp_path)
    index(repo)
    write(repo, "memory/2025-11-13.md", daily("2025-11-13", "W @Peter: First edit."))
    write(repo, "USER.md", "# User\n\nPeter, in Aarhus.\n")
    index(repo, worktree=True)
    write(repo, "memory/2025-11-13.md", daily("2025-11-13", "W @Peter: Second edit.",
                                              "O(c=7) @Peter: An impossible confidence."))
    git(repo, "checkout", "--", "USER.md")  # edited back: it leaves the layer
    write(repo, "memory/2025-11-15.md", daily("2025-11-15", "W @Peter: A new note."))
    index(repo, worktree=True)
    layered = _files_and_warnings(repo)
    assert any(w[0] == "memory/2025-11-13.md" for w in layered[1])  # the bad confidence
    index(repo, force=True, worktree=True)
    assert _files_and_warnings(repo) == layered


def test_an_entitys_name_follows_its_most_frequent_spelling_as_a_rebuild_does(
        tmp_path: Path) -> None:
    """An entity is named by its spelling with the most current mentions. An index run
    recounts only the entities whose name may change (a spelling other than the name gained,
    or the name lost); every step here, incremental, gives the entities a rebuild gives."""
    repo = base_repo(tmp_path)
    write(repo, "memory/2025-11-14.md", daily("2025-11-14", "W @Ana: Ana rides.",
                                              "W @Ana: Ana rows.", "W @Bo: Bo sails."))
    commit_all(repo, "c5", "2025-11-14T21:00:00+00:00")
    index(repo)
    later = "memory/2025-11-15.md"
    steps: list[tuple[Callable[[], object], dict[str, str]]] = [
        # the name gains a mention; another entity is new
        (lambda: write(repo, later, daily("2025-11-15", "W @Ana: Ana runs.", "W @Cy: Cy.")),
         {"ana": "Ana", "cy": "Cy"}),
        # the layer again, and another spelling overtakes the name
        (lambda: write(repo, later, daily("2025-11-15", *(f"W @ana: ana {n}." for n in
                                                          range(3)))), {"ana": "ana"}),
        # the other spelling loses its lead (a tie goes to the first by name)
        (lambda: write(repo, later, daily("2025-11-15", "W @ana: ana 1.", "W @ana: ana 2.",
                                          "W @Bo: Bo again.")), {"ana": "Ana", "bo": "Bo"}),
        # committed: the layer's versions become the commit's
        (lambda: commit_all(repo, "c6", "2025-11-15T21:00:00+00:00"), {"ana": "Ana"}),
        # a spelling gains in a commit, then the commit is undone (a rollback)
        (lambda: (write(repo, "memory/2025-11-16.md", daily("2025-11-16", "W @ana: ana 3.")),
                  commit_all(repo, "c7", "2025-11-16T21:00:00+00:00")), {"ana": "ana"}),
        (lambda: git(repo, "reset", "-q", "--hard", "HEAD~1"), {"ana": "Ana"}),
        # the name loses every mention
        (lambda: write(repo, "memory/2025-11-14.md", daily("2025-11-14", "W @Bo: Bo sails.")),
         {"ana": "ana", "bo": "Bo"}),
        # the edit undone: the versions it closed reopen, and the name gets them back
        (lambda: git(repo, "checkout", "--", "memory/2025-11-14.md"), {"ana": "Ana"}),
    ]
    for n, (step, names) in enumerate(steps):
        step()
        index(repo, worktree=True)
        incremental = _entities(repo)
        assert {k: incremental[k] for k in names} == names, n
        index(repo, force=True, worktree=True)
        assert _entities(repo) == incremental, n


def _entities(repo: Path) -> dict[str, str]:
    store = open_store(repo / ".memory" / "index.sqlite", readonly=True)
    try:
        return {str(k): f"{n}" if p is None else f"{n} {p}" for k, n, p in store.conn.execute(
            "SELECT key, name, page FROM entities")}
    finally:
        store.close()


def _files_and_warnings(repo: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    store = open_store(repo / ".memory" / "index.sqlite", readonly=True)
    try:
        files = sorted(store.conn.execute(
            "SELECT path, blob, class, day, title, front_matter FROM files"))
        warns = sorted(store.conn.execute("SELECT path, line, code, message FROM warnings"))
    finally:
        store.close()
    return files, warns


# -- record time and --as-of -----------------------------------------------------------------

A = "2025-11-20T21:00:00+00:00"
B = "2025-11-25T21:00:00+00:00"
C = "2025-11-27T21:00:00+00:00"
D = "2025-11-28T21:00:00+00:00"


@pytest.fixture
def timeline(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A: two notes; B: a fact's text edited; C: a note deleted; D: lines inserted above a fact."""
    repo = make_repo(tmp_path)
    write(
        repo,
        "memory/2025-11-20.md",
        daily(
            "2025-11-20",
            "W @Peter: The gateway host is the old NUC.",
            "W @Peter: Peter owns a red kayak.",
            "W @Peter: Peter travels to Oslo on 2025-12-05.",
        ),
    )
    write(repo, "memory/2025-11-21.md", daily("2025-11-21", "B @Peter: Repainted the greenhouse."))
    ids = {"A": commit_all(repo, "A", A)}
    write(
        repo,
        "memory/2025-11-20.md",
        daily(
            "2025-11-20",
            "W @Peter: The gateway host is The Castle.",
            "W @Peter: Peter owns a red kayak.",
            "W @Peter: Peter travels to Oslo on 2025-12-05.",
        ),
    )
    ids["B"] = commit_all(repo, "B", B)
    (repo / "memory" / "2025-11-21.md").unlink()
    ids["C"] = commit_all(repo, "C", C)
    text = (repo / "memory" / "2025-11-20.md").read_text(encoding="utf-8")
    write(
        repo,
        "memory/2025-11-20.md",
        text.replace(
            "## Retain\n", "## Retain\n- W @Zoe: Zoe likes tea.\n- W @Zoe: Zoe likes jazz.\n"
        ),
    )
    ids["D"] = commit_all(repo, "D", D)
    index(repo)
    return repo, ids


def test_record_time_is_the_commit_that_introduced_the_text(
    timeline: tuple[Path, dict[str, str]],
) -> None:
    repo, _ = timeline
    [kayak] = recall(repo, "kayak", kinds=("W",))
    # unchanged since A although the file changed in B and D and the fact moved in D
    assert kayak["recorded_at"] == A
    assert kayak["source"] == "memory/2025-11-20.md#L7"  # moved down two lines in D
    [castle] = recall(repo, "Castle", kinds=("W",))
    assert castle["recorded_at"] == B and castle["source"] == "memory/2025-11-20.md#L6"
    [zoe_tea] = recall(repo, "tea", kinds=("W",))
    assert zoe_tea["recorded_at"] == D


def test_moved_fact_keeps_first_record_time_in_the_index(
    timeline: tuple[Path, dict[str, str]],
) -> None:
    repo, ids = timeline
    ws, _ = open_workspace(repo)
    store = open_store(ws.index_path, readonly=True)
    try:
        rows = store.conn.execute(
            "SELECT start_line, recorded_at, commit_id, valid_to FROM items "
            "WHERE type = 'fact' AND content LIKE '%red kayak%' ORDER BY valid_from"
        ).fetchall()
    finally:
        store.close()
    # version at L5 (A..D), then at L7 (from D, still current), both recorded at A
    assert [(r[0], r[1], r[3] is None) for r in rows] == [(5, A, False), (7, A, True)]
    assert rows[0][2] == ids["A"] and rows[1][2] == ids["D"]


def test_edited_fact_old_version_is_found_as_of_before_the_edit(
    timeline: tuple[Path, dict[str, str]],
) -> None:
    repo, ids = timeline
    old = recall(repo, "NUC", kinds=("W",), as_of="2025-11-24")
    assert [r["source"] for r in old] == [f"memory/2025-11-20.md#L4@{ids['A'][:7]}"]
    assert old[0]["content"] == "The gateway host is the old NUC."
    assert old[0]["recorded_at"] == A
    assert recall(repo, "NUC", kinds=("W",), as_of="2025-11-26") == []
    assert [r for r in recall(repo, "NUC") if "old NUC" in str(r["content"])] == []  # not current
    new = recall(repo, "Castle", kinds=("W",), as_of="2025-11-26")
    assert [r["content"] for r in new] == ["The gateway host is The Castle."]
    assert recall(repo, "Castle", kinds=("W",), as_of="2025-11-24") == []
    # an instant between A and B, as an ISO date-time
    assert recall(repo, "Castle", kinds=("W",), as_of="2025-11-25T20:59:59+00:00") == []
    assert recall(repo, "Castle", kinds=("W",), as_of="2025-11-25T21:00:00+00:00")


def test_deleted_file_is_found_as_of_before_the_deletion(
    timeline: tuple[Path, dict[str, str]],
) -> None:
    repo, ids = timeline
    before = recall(repo, "greenhouse", as_of="2025-11-26")
    assert before
    assert all(r["path"] == "memory/2025-11-21.md" for r in before)
    facts = [r for r in before if r["kind"] == "experience"]
    assert [r["source"] for r in facts] == [f"memory/2025-11-21.md#L4@{ids['A'][:7]}"]
    assert recall(repo, "greenhouse", as_of="2025-11-28") == []
    assert recall(repo, "greenhouse") == []


def test_as_of_is_record_time_only(
    timeline: tuple[Path, dict[str, str]],
) -> None:
    repo, _ = timeline
    now = recall(repo, "Oslo", kinds=("W",))
    assert [(r["event_start"], r["recorded_at"]) for r in now] == [("2025-12-05", A)]
    # recorded on 11-20 about 12-05: known as of 11-30 (docs/memory-format.md: a record-time axis)
    assert [r["event_start"] for r in recall(repo, "Oslo", kinds=("W",),
                                             as_of="2025-11-30")] == ["2025-12-05"]
    # --until limits the time as well: neither the trip (12-05) nor its note (11-20) by 11-19;
    # by 11-30 the note was written (docs/memory-format.md: event time or the daily note's date)
    assert recall(repo, "Oslo", kinds=("W",), as_of="2025-11-30", until="2025-11-19") == []
    assert recall(repo, "Oslo", kinds=("W",), as_of="2025-11-30", until="2025-11-30")
    assert recall(repo, "Oslo", kinds=("W",), as_of="2025-11-19") == []  # not recorded yet
    # before the first commit there is no memory at all, with a warning rather than an error
    ws, cfg = open_workspace(repo)
    response = answer(Session(ws, cfg), RecallRequest(query="kayak", as_of="2025-11-01"), now=NOW)
    assert response.results == [] and any("no commit" in w for w in response.warnings)


def test_get_at_revision_prints_the_old_text(
    timeline: tuple[Path, dict[str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    repo, ids = timeline
    assert run(["-C", str(repo), "get", "memory/2025-11-20.md#L4", "--at", ids["A"]]) == 0
    assert capsys.readouterr().out == "- W @Peter: The gateway host is the old NUC.\n"
    assert run(["-C", str(repo), "get", "memory/2025-11-20.md#L4"]) == 0
    assert capsys.readouterr().out == "- W @Zoe: Zoe likes tea.\n"
    # a citation into history can be fed back as it is
    assert (
        run(
            [
                "-C",
                str(repo),
                "get",
                f"memory/2025-11-20.md#L4@{ids['A'][:7]}",
                "--at",
                ids["A"][:7],
            ]
        )
        == 0
    )
    assert "old NUC" in capsys.readouterr().out
    # the deleted file is still readable at a revision where it existed
    assert run(["-C", str(repo), "get", "memory/2025-11-21.md", "--at", "HEAD~2"]) == 0
    assert "greenhouse" in capsys.readouterr().out


# -- opinions history on the sample workspace ------------------------------------------------


def test_opinion_confidence_history_on_the_sample(fixture_repo: Path) -> None:
    index(fixture_repo)
    ws, _ = open_workspace(fixture_repo)
    store = open_store(ws.index_path, readonly=True)
    try:

        def confidence(instant: str) -> list[float]:
            seq = store.seq_at(instant)
            return [
                float(r[0])
                for r in store.conn.execute(
                    "SELECT confidence FROM opinions WHERE opinion_id = 'o-3fa9c2e1' "
                    "AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)",
                    (seq, seq),
                )
            ]

        assert confidence("2025-11-23T23:59:59+00:00") == [0.70]
        assert confidence("2025-11-24T23:59:59+00:00") == [0.60]
        assert confidence("2025-11-29T23:59:59+00:00") == [0.60]
        assert confidence("2025-11-30T23:59:59+00:00") == [0.76]
        history = store.conn.execute(
            "SELECT confidence, updated, recorded_at, ended_at FROM opinions "
            "WHERE opinion_id = 'o-3fa9c2e1' ORDER BY valid_from"
        ).fetchall()
        assert [tuple(r) for r in history] == [
            (0.70, "2025-11-10", "2025-11-10T08:00:00+00:00", "2025-11-24T21:00:00+00:00"),
            (0.60, "2025-11-24", "2025-11-24T21:00:00+00:00", "2025-11-30T21:00:00+00:00"),
            (0.76, "2025-11-30", "2025-11-30T21:00:00+00:00", None),
        ]
        castle = store.conn.execute(
            "SELECT confidence FROM opinions WHERE opinion_id = 'o-d6a2c719' ORDER BY valid_from"
        ).fetchall()
        assert [r[0] for r in castle] == [0.60, 0.69]  # appeared on 11-24
    finally:
        store.close()


# -- merges ----------------------------------------------------------------------------------


def test_merge_brings_facts_at_the_merge_commit_time(tmp_path: Path) -> None:
    repo = base_repo(tmp_path)
    git(repo, "switch", "-q", "-c", "side")
    write(
        repo,
        "memory/2025-11-15.md",
        daily("2025-11-15", "W @Peter: Peter adopted a cat named Miso."),
    )
    write(
        repo,
        "memory/2025-11-13.md",
        daily("2025-11-13", "W @Peter: Peter flies to Oslo on Friday."),
    )
    commit_all(repo, "side work", "2025-11-15T21:00:00+00:00")
    git(repo, "switch", "-q", "main")
    write(repo, "memory/2025-11-16.md", daily("2025-11-16", "B @Peter: Cleaned the NUC."))
    commit_all(repo, "main work", "2025-11-16T21:00:00+00:00")
    index(repo)
    merged_at = "2025-11-18T10:30:00+00:00"
    git(repo, "merge", "-q", "--no-ff", "side", "-m", "merge side", date=merged_at)
    assert not index(repo).full
    [cat] = recall(repo, "Miso", kinds=("W",))
    assert cat["recorded_at"] == merged_at
    assert cat["commit"] == head(repo)
    [oslo] = recall(repo, "Friday", kinds=("W",))
    assert oslo["recorded_at"] == merged_at
    # the side branch's own commit time is never used: before the merge it was not held
    assert recall(repo, "Miso", as_of="2025-11-17") == []
    [old] = recall(repo, "Oslo", kinds=("W",), as_of="2025-11-17")
    assert old["content"] == "Peter flies to Oslo." and old["source"].endswith(
        "@" + old["commit"][:7]
    )
    incremental = dump(repo)
    index(repo, force=True)
    assert dump(repo) == incremental


# -- date phrases in the query ---------------------------------------------------------------


def _overlaps(result: dict[str, object], first: str, last: str) -> bool:
    start = result["event_start"] or str(result["recorded_at"])[:10]
    end = result["event_end"] or str(result["recorded_at"])[:10]
    return str(start) <= last and str(end) >= first


@pytest.mark.parametrize(
    ("query", "phrase"),
    [("what happened around Nov 27", "around Nov 27"), ("先週", "先週")],
)
def test_date_phrase_in_query_becomes_a_window(fixture_repo: Path, query: str, phrase: str) -> None:
    ws, cfg = open_workspace(fixture_repo)
    response = answer(Session(ws, cfg), RecallRequest(query=query, k=50), now=NOW)
    assert response.time_window is not None
    assert response.time_window.phrase == phrase
    assert response.time_window.source == "query"
    assert response.time_window.since == "2025-11-24"
    assert response.results
    outside = [
        r.source for r in response.results if not _overlaps(r.to_json(), "2025-11-24", "2025-11-30")
    ]
    assert outside == []
    assert response.time_window.applied_as == "filter"
    assert response.to_json()["time_window"] == response.time_window.to_json()


def test_date_phrase_with_topic_words_prefers_the_window(fixture_repo: Path) -> None:
    """'gateway 先週': the week's gateway results are preferred; older ones are kept."""
    ws, cfg = open_workspace(fixture_repo)
    response = answer(Session(ws, cfg), RecallRequest(query="gateway 先週", k=50), now=NOW)
    assert response.time_window is not None
    assert response.time_window.phrase == "先週"
    assert response.time_window.applied_as == "boost"
    inside = [_overlaps(r.to_json(), "2025-11-24", "2025-11-30") for r in response.results]
    assert inside[0] and False in inside  # an in-window result first, the rest kept


def test_no_date_phrase_means_no_window(fixture_repo: Path) -> None:
    ws, cfg = open_workspace(fixture_repo)
    response = answer(Session(ws, cfg), RecallRequest(query="gateway"), now=NOW)
    assert response.time_window is None
    assert any(r.event_start and r.event_start < "2025-11-24" for r in response.results)


def test_git_is_real(tmp_path: Path) -> None:
    """The helpers really run git with the fixed dates (guards the premise of this file)."""
    repo = base_repo(tmp_path)
    out = subprocess.run(
        ["git", "-C", str(repo), "log", "--format=%cI %s"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0] == "2025-11-13T21:00:00+00:00 c4" and len(out) == 4
