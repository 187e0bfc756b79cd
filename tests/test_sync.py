"""Memory on several machines (issue 20): the merge driver and ``gitmem sync``, with two real
clones of a real bare remote in tmp_path, git running the driver as a real process."""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from gitmem.index.reflect_queries import facts_by_fact_id
from gitmem.merge.driver import merge_file, merge_text
from gitmem.merge.registration import driver_command, register
from gitmem.parse.stale import (
    OPINION_NOTE,
    STALE_BEGIN,
    StaleMark,
    is_stale_begin,
    is_stale_line,
    read_stale,
)
from gitmem.reflect.append import retain
from gitmem.reflect.reflect import reflect
from gitmem.reflect.rule import Observation, apply_evidence
from gitmem.scaffold import init_workspace
from gitmem.sync import SyncConflict, sync
from gitmem.workspace import open_workspace
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem
from testing.index import dump, read_index
from testing.repo import commit_all, git, make_repo, write
from testing.rewrites import rebuilt_dump
from testing.syncops import run_sync_ops

DAY = "memory/2025-11-27.md"
NOTE = "# 2025-11-27\n\nMorning: looked at the gateway.\n\n## Retain\n- W @Peter: The NUC runs the gateway.\n"


# --- the driver on text ----------------------------------------------------------------------

def test_both_sides_appending_keep_every_line_once_in_an_order_independent_of_the_side() -> None:
    a = NOTE + "- W @Peter: Bought a NAS.\n- B @Peter: Fixed the router.\n"
    b = NOTE + "- B @Peter: Fixed the router.\n- O(c=0.8) @Peter: Likes short replies.\n"
    merged, conflicts, _ = merge_text(NOTE, a, b, DAY)
    assert conflicts == 0
    assert merged == merge_text(NOTE, b, a, DAY)[0]
    for line in (*a.splitlines(), *b.splitlines()):
        assert line in merged.splitlines()
    assert merged.count("Fixed the router") == 1


def test_a_retain_section_both_sides_added_stays_one_section() -> None:
    base = "# 2025-11-27\n\nNotes of the day.\n"
    a = base + "\n## Retain\n- W @Peter: Moved the gateway.\n"
    b = base + "\n## Retain\n- B @Peter: Called the ISP.\n"
    merged, conflicts, _ = merge_text(base, a, b, DAY)
    assert conflicts == 0
    assert merged.count("## Retain") == 1
    tail = merged.split("## Retain\n", 1)[1]
    assert tail == "- B @Peter: Called the ISP.\n- W @Peter: Moved the gateway.\n"


def test_the_same_existing_line_edited_on_both_sides_is_a_conflict() -> None:
    a = NOTE.replace("The NUC", "The old NUC")
    b = NOTE.replace("The NUC", "The Castle")
    merged, conflicts, _ = merge_text(NOTE, a, b, DAY)
    assert conflicts == 1
    assert "<<<<<<< ours\n- W @Peter: The old NUC" in merged
    assert "=======\n- W @Peter: The Castle" in merged


def test_an_edit_on_one_side_and_appends_on_the_other_merge() -> None:
    a = NOTE.replace("Morning", "Early morning")
    b = NOTE + "- W @Peter: Bought a NAS.\n"
    merged, conflicts, _ = merge_text(NOTE, a, b, DAY)
    assert (merged, conflicts) == (a + "- W @Peter: Bought a NAS.\n", 0)


PAGE = ("---\naliases: [Castle]\n---\n# The Castle\n\nThe home server.\n\n"
        "<!-- gitmem:begin reflect (generated; edits between these markers are replaced) -->\n"
        "- 3 facts\n<!-- gitmem:end -->\n")


def test_a_generated_block_both_sides_regenerated_is_taken_once_and_flagged_stale() -> None:
    a = PAGE.replace("- 3 facts", "- 4 facts").replace("The home server.", "The home server.\nIn the attic.")
    b = PAGE.replace("- 3 facts", "- 5 facts") + "\nNotes: loud fan.\n"
    merged, conflicts, stale = merge_text(PAGE, a, b, "bank/entities/The-Castle.md")
    assert (conflicts, stale) == (0, 1)
    assert merged == merge_text(PAGE, b, a, "bank/entities/The-Castle.md")[0]
    assert STALE_BEGIN in merged and "- 5 facts" in merged and "- 4 facts" not in merged
    assert "In the attic." in merged and "Notes: loud fan." in merged


def test_a_generated_block_only_one_side_changed_is_that_side() -> None:
    a = PAGE.replace("- 3 facts", "- 4 facts")
    b = PAGE.replace("The home server.", "The home server, upstairs.")
    merged, conflicts, stale = merge_text(PAGE, a, b, "bank/entities/The-Castle.md")
    assert (conflicts, stale) == (0, 0)
    assert merged == b.replace("- 3 facts", "- 4 facts")


def _opinion(oid: str, statement: str, confidence: str, *evidence: str) -> str:
    lines = [f"## {statement}", f"<!-- opinion: {oid} -->", f"- confidence: {confidence}",
             "- updated: 2025-11-27", "- evidence:", *(f"  - for {e}" for e in evidence)]
    return "\n".join(lines) + "\n\n"


def test_opinions_merge_per_section_and_mark_a_section_both_sides_changed() -> None:
    one = _opinion("o-11111111", "@Peter prefers short replies", "0.70", "f-aaaaaaaaaaaa memory/2025-11-20.md#L5")
    two = _opinion("o-22222222", "@Peter likes the NAS", "0.60", "f-bbbbbbbbbbbb memory/2025-11-21.md#L5")
    base = "# Opinions\n\n" + one + two
    a_one = _opinion("o-11111111", "@Peter prefers short replies", "0.80",
                     "f-aaaaaaaaaaaa memory/2025-11-20.md#L5", "f-cccccccccccc memory/2025-11-27.md#L7")
    b_one = _opinion("o-11111111", "@Peter prefers short replies", "0.75",
                     "f-aaaaaaaaaaaa memory/2025-11-20.md#L5", "f-dddddddddddd memory/2025-11-27.md#L9")
    b_two = two.replace("0.60", "0.65")
    three = _opinion("o-33333333", "@Peter trusts the Castle", "0.50", "f-eeeeeeeeeeee memory/2025-11-27.md#L8")
    a = "# Opinions\n\n" + a_one + two + three
    b = "# Opinions\n\n" + b_one + b_two
    merged, conflicts, stale = merge_text(base, a, b, "bank/opinions.md")
    assert (conflicts, stale) == (0, 1)
    assert merged == merge_text(base, b, a, "bank/opinions.md")[0]
    section = merged.split("## @Peter likes")[0]
    assert OPINION_NOTE in section
    assert "f-cccccccccccc" in section and "f-dddddddddddd" in section  # no evidence lost
    assert b_two in merged and three in merged


def _stale_of(text: str) -> StaleMark:
    found = [m for n, ln in enumerate(text.splitlines()) if (m := read_stale(ln, n))]
    assert len(found) == 1, text
    return found[0]


def test_the_stale_line_names_the_ancestors_confidence_and_the_evidence_added_since() -> None:
    cite = {x: f"f-{x * 12} memory/2025-11-2{n}.md#L5" for n, x in enumerate("acde")}
    base = "# Opinions\n\n" + _opinion("o-11111111", "@Peter prefers short replies", "0.70", cite["a"])
    a = base.replace("0.70", "0.80") + f"  - for {cite['c']}\n"
    b = base.replace("0.70", "0.75") + f"  - for {cite['d']}\n"
    merged, _, stale = merge_text(base, a, b, "bank/opinions.md")
    mark = _stale_of(merged)
    assert (stale, mark.base, mark.new) == (1, 0.70, ("f-cccccccccccc", "f-dddddddddddd"))
    # The next merge starts from that ancestor: one side recomputed it (no marker), the other
    # reflected new evidence on top of the merge; the ancestor's starting point carries over.
    settled = [ln for ln in merged.splitlines(keepends=True) if not read_stale(ln, 0)]
    x = "".join(settled).replace("0.80", "0.82")
    y = x.replace("0.82", "0.79").rstrip("\n") + f"\n  - for {cite['e']}\n"
    mark = _stale_of(merge_text(merged, x, y, "bank/opinions.md")[0])
    assert (mark.base, mark.new) == (0.70, ("f-cccccccccccc", "f-dddddddddddd", "f-eeeeeeeeeeee"))
    # Both machines started the same opinion: recomputed from its first evidence on.
    a_new, b_new = (_opinion("o-22222222", "@Peter likes the NAS", c, cite[x]) for c, x in
                    (("0.60", "c"), ("0.55", "d")))
    mark = _stale_of(merge_text(base, base + a_new, base + b_new, "bank/opinions.md")[0])
    assert (mark.base, mark.new) == (None, ("f-cccccccccccc", "f-dddddddddddd"))


def test_files_the_driver_does_not_read_go_to_gits_merge_and_lose_no_bytes(tmp_path: Path) -> None:
    base = "caf\xe9\nmiddle\nend\n".encode("latin-1")
    paths = {n: tmp_path / n for n in ("o", "a", "b")}
    paths["o"].write_bytes(base)
    paths["a"].write_bytes(b"first \xe9\n" + base)
    paths["b"].write_bytes(base + b"last \xff\n")
    outcome = merge_file(paths["o"], paths["a"], paths["b"], "memory/latin.md")
    assert (outcome.fallback, outcome.conflicts) == (True, 0)
    assert paths["a"].read_bytes() == b"first \xe9\n" + base + b"last \xff\n"
    binary = b"\0\x01\x02" * 100
    for n, extra in (("o", b""), ("a", b"A"), ("b", b"B")):
        paths[n].write_bytes(binary + extra)
    outcome = merge_file(paths["o"], paths["a"], paths["b"], "memory/blob.md")
    assert (outcome.fallback, outcome.conflicts) == (True, 1)
    assert paths["a"].read_bytes() == binary + b"A"


# --- two machines ----------------------------------------------------------------------------

def _machines(tmp_path: Path, *, driver: tuple[bool, bool] = (True, True)) -> tuple[Path, Path, Path]:
    bare = tmp_path / "castle.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = make_repo(tmp_path, "seed")
    init_workspace(seed)
    register(seed, "")
    write(seed, DAY, NOTE)
    commit_all(seed, "start")
    git(seed, "push", "-q", str(bare), "main")
    clones = []
    for name, wanted in zip(("laptop", "server"), driver, strict=True):
        git(tmp_path, "clone", "-q", str(bare), name)
        clone = tmp_path / name
        init_workspace(clone)
        if wanted:
            register(clone, "")
        clones.append(clone)
    return bare, clones[0], clones[1]


def _work(clone: Path, tag: str) -> list[str]:
    """A hand-written line and a retained entry on today's note; the entries written."""
    hand = f"- W @Peter: {tag} wrote this by hand."
    path = clone / DAY
    path.write_text(path.read_text(encoding="utf-8") + hand + "\n", encoding="utf-8")
    commit_all(clone, f"{tag}: note")
    entry = f"B @Peter: {tag} retained this."
    ws, cfg = open_workspace(clone)
    retain(ws, cfg, entry, day=date(2025, 11, 27))
    return [hand, f"- {entry}"]


def _sync(clone: Path) -> None:
    ws, cfg = open_workspace(clone)
    sync(ws, cfg)


SCHEDULES = [
    ("work a", "work b", "sync a", "sync b", "sync a"),
    ("work a", "work b", "sync b", "sync a", "sync b"),
    ("work a", "sync a", "work b", "sync b", "sync a"),
    ("work b", "sync b", "work a", "sync a", "sync b"),
]


@pytest.mark.parametrize("schedule", SCHEDULES, ids=["-".join(s).replace(" ", "") for s in SCHEDULES])
def test_two_machines_appending_and_retaining_converge_in_every_order(
        tmp_path: Path, schedule: tuple[str, ...]) -> None:
    _, a, b = _machines(tmp_path)
    clones = {"a": a, "b": b}
    written: list[str] = []
    for step in schedule:
        verb, who = step.split()
        if verb == "work":
            written += _work(clones[who], who)
        else:
            _sync(clones[who])
    trees = {git(c, "rev-parse", "HEAD^{tree}").strip() for c in (a, b)}
    assert len(trees) == 1
    text = (a / DAY).read_text(encoding="utf-8")
    assert text == (b / DAY).read_text(encoding="utf-8")
    for line in [*NOTE.splitlines(), *written]:
        assert text.splitlines().count(line) == 1 or not line.strip(), line
    assert "<<<<<<<" not in text and text.count("## Retain") == 1
    assert dump(a) == dump(b) == rebuilt_dump(a, tmp_path / "rebuilt")


def test_a_clone_without_the_driver_config_falls_back_to_gits_merge(tmp_path: Path) -> None:
    _, a, b = _machines(tmp_path, driver=(True, False))
    _work(a, "a")
    _sync(a)
    _work(b, "b")
    with pytest.raises(SyncConflict) as caught:
        _sync(b)
    assert list(caught.value.files) == [DAY]
    assert "merge driver: not registered in this clone" in str(caught.value)


def test_the_same_line_edited_on_both_machines_stops_with_the_file_and_line(tmp_path: Path) -> None:
    _, a, b = _machines(tmp_path)
    for clone, value in ((a, "The old NUC"), (b, "The Castle")):
        path = clone / DAY
        path.write_text(NOTE.replace("The NUC", value), encoding="utf-8")
        commit_all(clone, "edit")
    _sync(a)
    code, out, err = gitmem("-C", str(b), "sync", "--json")
    assert code == 1
    assert f"{DAY}#L6" in err
    assert '"conflicts": {"memory/2025-11-27.md": [6]}' in out
    status = git(b, "status")
    assert "You have unmerged paths" in status and DAY in status
    assert git(b, "rev-parse", "--verify", "MERGE_HEAD").strip()


def test_a_rejected_push_is_retried_after_another_fetch_and_merge(tmp_path: Path) -> None:
    bare, a, b = _machines(tmp_path)
    written = _work(b, "b")
    git(b, "push", "-q", str(bare), "HEAD:refs/pending/b")
    pending = git(b, "rev-parse", "HEAD").strip()
    # The server's first push to main sees the other machine's commit land first (as if it
    # pushed a moment earlier) and is declined; the next one is accepted.
    hook = bare / "hooks" / "pre-receive"
    hook.write_text(
        "#!/bin/sh\n"
        'grep -q " refs/heads/main$" || exit 0\n'
        '[ -f "$GIT_DIR/raced" ] && exit 0\n'
        'touch "$GIT_DIR/raced"\n'
        "env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES "
        f"git update-ref refs/heads/main {pending}\n"
        "exit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    written += _work(a, "a")
    ws, cfg = open_workspace(a)
    report = sync(ws, cfg)
    assert (report.attempts, report.pushed) == (2, True)
    assert git(bare, "rev-parse", "main").strip() == git(a, "rev-parse", "HEAD").strip()
    text = (a / DAY).read_text(encoding="utf-8")
    assert all(line in text.splitlines() for line in written)
    assert dump(a) == rebuilt_dump(a, tmp_path / "rebuilt")


def test_init_with_hooks_registers_the_driver_once(tmp_path: Path) -> None:
    repo = tmp_path / "mem"
    assert gitmem("init", str(repo), "--hooks")[0] == 0
    assert gitmem("-C", str(repo), "hooks", "install")[0] == 0
    attributes = (repo / ".gitattributes").read_text(encoding="utf-8").splitlines()
    assert "memory/**/*.md merge=gitmem" in attributes
    assert len(attributes) == len(set(attributes))
    driver = git(repo, "config", "merge.gitmem.driver").strip()
    assert driver.endswith("-m gitmem merge-file %O %A %B %P")
    assert git(repo, "check-attr", "merge", DAY).strip() == f"{DAY}: merge: gitmem"


def test_init_without_hooks_still_registers_the_merge_driver(tmp_path: Path) -> None:
    for n, flags in enumerate(([], ["--no-hooks"])):
        repo = tmp_path / f"mem{n}"
        code, out, _ = gitmem("init", str(repo), *flags)
        assert code == 0
        assert "memory/**/*.md merge=gitmem" in (repo / ".gitattributes").read_text(encoding="utf-8")
        assert git(repo, "config", "merge.gitmem.driver").strip().endswith("merge-file %O %A %B %P")
        assert "merge: set merge.gitmem.driver" in out
        assert ("hooks not installed" in out) == (not flags)
        assert not any((repo / ".git" / "hooks" / h).exists() for h in ("post-commit", "post-merge"))


def test_a_new_clone_says_the_driver_is_not_registered_until_hooks_install(tmp_path: Path) -> None:
    seed = tmp_path / "seed"
    assert gitmem("init", str(seed))[0] == 0
    commit_all(seed, "start")
    git(tmp_path, "clone", "-q", str(seed), "clone")
    clone = tmp_path / "clone"
    code, out, _ = gitmem("-C", str(clone), "status", "--json")
    assert code == 0
    state = json.loads(out)["merge_driver"]
    assert {k: v for k, v in state.items() if k != "message"} == {
        "state": "unregistered", "attributes": True, "configured": False, "runnable": False}
    for command in (("status",), ("hooks", "status")):
        code, out, _ = gitmem("-C", str(clone), *command)
        assert code == 0
        assert "merge driver: not registered in this clone" in out
        assert "'gitmem hooks install' registers it" in out
    code, out, _ = gitmem("-C", str(clone), "hooks", "install")
    assert code == 0 and "merge: set merge.gitmem.driver" in out
    assert "merge driver: registered" in gitmem("-C", str(clone), "status")[1]
    git(clone, "config", "merge.gitmem.driver", "/gone/python -m gitmem merge-file %O %A %B %P")
    assert "runs a Python that is gone" in gitmem("-C", str(clone), "hooks", "status")[1]
    assert "merge driver: not set up" in gitmem("-C", str(make_repo(tmp_path, "plain")), "status")[1]


def test_sync_help_and_unknown_remote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    init_workspace(repo)
    commit_all(repo, "start")
    code, _, err = gitmem("-C", str(repo), "sync")
    assert code == 1 and "no git remote named 'origin'" in err
    assert not list(itertools.chain((repo / ".git").glob("MERGE_HEAD")))


# --- the README's set-up, run as written (ssh is a stand-in that runs on the "server") --------

FAKE_SSH = """#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -o|-p|-l) shift 2;; -*) shift;; *) break;; esac; done
shift
cd "{home}" && HOME="{home}" exec sh -c "$*"
"""


def _readme_setup() -> list[list[str]]:
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    section = text.split("## Memory on two machines\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:console)?\n(.*?)\n```", section, flags=re.S)
    return [[ln.removeprefix("$ ") for ln in block.splitlines()] for block in blocks]


def test_the_readme_two_machine_setup_works_as_written(tmp_path: Path) -> None:
    server_ssh, laptop_ssh, server_clone, cron = _readme_setup()
    homes = {name: tmp_path / name for name in ("laptop", "castle")}
    for home in homes.values():
        home.mkdir()
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "ssh").write_text(FAKE_SSH.format(home=homes["castle"]), encoding="utf-8")
    (tools / "ssh").chmod(0o755)
    env_path = f"{tools}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"

    def shell(machine: str, command: str) -> str:
        env = {**os.environ, "HOME": str(homes[machine]), "PATH": env_path}
        proc = subprocess.run(["sh", "-c", command], env=env, capture_output=True, text=True,
                              cwd=homes[machine], timeout=FAILURE_SECONDS)
        assert proc.returncode == 0, f"{command}: {proc.stderr}"
        return proc.stdout

    laptop = homes["laptop"] / "memory"
    # as a user starts: 'gitmem init', and a first commit of everything (.gitattributes too)
    shell("laptop", "git init -q -b main memory && gitmem init memory")
    write(laptop, DAY, NOTE)
    commit_all(laptop, "the laptop's memory")
    assert "merge=gitmem" in git(laptop, "show", "HEAD:.gitattributes")
    shell("laptop", " && ".join(server_ssh))
    shell("laptop", " && ".join(laptop_ssh))
    shell("castle", " && ".join(server_clone))
    job = cron[0].split(" ", 5)[5].split(" >>")[0]
    shell("laptop", 'cd ~/memory && gitmem retain "W @Peter: The laptop retained this."')
    shell("castle", 'cd ~/memory && gitmem retain "B @Peter: The castle retained this."')
    # the third is a fast-forward: the remote has its commit already (issue 37: it said
    # "pushed <commit>")
    assert [json.loads(shell(machine, job))["pushed"]
            for machine in ("laptop", "castle", "laptop")] == [True, True, False]
    said = shell("laptop", "cd ~/memory && gitmem sync")
    assert "nothing to push" in said and "pushed" not in said, said
    castle = homes["castle"] / "memory"
    assert git(laptop, "rev-parse", "HEAD^{tree}") == git(castle, "rev-parse", "HEAD^{tree}")
    merged = git(laptop, "show", "HEAD:.gitattributes") + git(laptop, "grep", "-h", "retained", "HEAD")
    assert "merge=gitmem" in merged
    assert "The laptop retained this." in merged and "The castle retained this." in merged


def test_sixty_random_operations_on_three_machines_lose_nothing(tmp_path: Path) -> None:
    report = run_sync_ops(tmp_path, 60, clones=3, seed=24)
    assert report.failures == []
    assert report.syncs >= 10 and report.checked == report.syncs
    assert all(report.done[op] for op in ("retain", "append", "edit", "opinion", "reflect"))
    # machines reflected on both sides of a merge: opinions and the page were flagged (and the
    # last reflect settled them: no failure above)
    assert {"bank/opinions.md", "bank/entities/Peter.md"} <= set(report.flagged)


def test_entity_pages_and_opinions_merge_through_git_with_their_stale_markers(tmp_path: Path) -> None:
    _, a, b = _machines(tmp_path)
    page = "bank/entities/The-Castle.md"
    one = _opinion("o-11111111", "@Peter prefers short replies", "0.70", "f-aaaaaaaaaaaa memory/2025-11-20.md#L5")
    write(a, page, PAGE)
    write(a, "bank/opinions.md", "# Opinions\n\n" + one)
    commit_all(a, "page and opinion")
    _sync(a)
    _sync(b)
    for clone, n in ((a, "4"), (b, "5")):
        write(clone, page, PAGE.replace("- 3 facts", f"- {n} facts") + f"\nNote from {clone.name}.\n")
        write(clone, "bank/opinions.md", "# Opinions\n\n" + one.replace("0.70", f"0.{n}0"))
        commit_all(clone, "reflect")
    _sync(a)
    _sync(b)
    _sync(a)
    assert git(a, "rev-parse", "HEAD^{tree}") == git(b, "rev-parse", "HEAD^{tree}")
    merged_page = (a / page).read_text(encoding="utf-8")
    assert STALE_BEGIN in merged_page and "- 5 facts" in merged_page
    assert merged_page.count("\nNote from") == 2
    assert OPINION_NOTE in (a / "bank/opinions.md").read_text(encoding="utf-8")
    assert dump(a) == rebuilt_dump(a, tmp_path / "rebuilt")


def _driver(files: dict[str, Path], *, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess[str]:
    """The registered driver command, run as git runs it (sh -c, the %-placeholders filled)."""
    command = driver_command(sys.executable)
    for mark, name in (("%O", "o"), ("%A", "a"), ("%B", "b"), ("%P", DAY)):
        command = command.replace(mark, str(files[name]) if name in files else name)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                          timeout=FAILURE_SECONDS,
                          env={**clean, **(env or {})})


# Python's own start-up with -S and -m imports these; anything more is the driver's doing.
STARTUP = {"runpy", "importlib.util", "contextlib", "collections", "enum", "signal", "types"}


def test_the_driver_process_imports_only_what_a_daily_notes_merge_needs(tmp_path: Path) -> None:
    files = {n: tmp_path / n for n in ("o", "a", "b")}
    for name, text in (("o", NOTE), ("a", NOTE + "- W @Peter: a.\n"), ("b", NOTE + "- W @Peter: b.\n")):
        files[name].write_text(text, encoding="utf-8")
    proc = _driver(files, env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert proc.returncode == 0, proc.stderr[-500:]
    imported = {ln.split("|")[-1].strip() for ln in proc.stderr.splitlines() if "|" in ln}
    assert {"gitmem.merge.driver", "gitmem.merge.lines"} <= imported
    assert not {"site", "re", "difflib", "dataclasses", "pathlib", "typing", "click", "gitmem.front.cli",
                "gitmem.git", "gitmem.domain", "gitmem.parse.opinions"} & imported
    assert files["a"].read_text(encoding="utf-8") == NOTE + "- W @Peter: a.\n- W @Peter: b.\n"
    files["b"].write_text(NOTE.replace("The NUC", "The Castle"), encoding="utf-8")
    files["a"].write_text(NOTE.replace("The NUC", "The Pi"), encoding="utf-8")
    conflict = _driver(files)
    assert conflict.returncode == 1 and "<<<<<<< ours" in files["a"].read_text(encoding="utf-8")
    files["a"].write_bytes(b"\xff" + NOTE.encode())  # not UTF-8: git's merge, through gitmem.git
    assert _driver(files).returncode == 0
    assert files["a"].read_bytes() == b"\xff" + NOTE.replace("The NUC", "The Castle").encode()


# --- reflect on both machines: the stale markers are settled by the next reflect --------------

OPINIONS = """# Opinions

## @Peter prefers concise WhatsApp replies (under 1500 chars)
<!-- opinion: o-3fa9c2e1 -->
- confidence: 0.90
- updated: 2025-11-01
- evidence:
  - for f-000000000001 memory/2025-11-01.md#L5 (c=0.90)
"""
PETER = "---\naliases: [Pete]\n---\n# Peter\n\nThe user.\n"
CLAIM = "Prefers concise WhatsApp replies (under 1500 chars)."


def _reflecting_machines(tmp_path: Path) -> tuple[Path, Path]:
    bare = tmp_path / "castle.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = make_repo(tmp_path, "seed")
    init_workspace(seed)
    register(seed, "")
    write(seed, "bank/opinions.md", OPINIONS)
    write(seed, "bank/entities/Peter.md", PETER)
    write(seed, "memory/2025-11-01.md", "# 2025-11-01\n\n## Retain\n- W @Peter: Lives in Copenhagen.\n")
    commit_all(seed, "seed", "2025-11-01T21:00:00+00:00")
    git(seed, "push", "-q", str(bare), "main")
    for name in ("laptop", "server"):
        git(tmp_path, "clone", "-q", str(bare), name)
        register(tmp_path / name, "")
    return tmp_path / "laptop", tmp_path / "server"


def _day_and_reflect(clone: Path, day: str, *entries: str) -> None:
    body = "".join(f"- {e}\n" for e in entries)
    write(clone, f"memory/{day}.md", f"# {day}\n\n## Retain\n{body}")
    commit_all(clone, f"memory: {day}", f"{day}T21:00:00+00:00")
    ws, cfg = open_workspace(clone)
    assert reflect(ws, cfg, since=None, commit=True).commit


def _stale_anywhere(clone: Path) -> list[str]:
    return [p for p in git(clone, "ls-files").split() if p.endswith(".md") and any(
        is_stale_line(ln) or is_stale_begin(ln)
        for ln in (clone / p).read_text(encoding="utf-8").splitlines())]


def test_both_machines_reflect_then_one_reflect_settles_the_merge(tmp_path: Path) -> None:
    a, b = _reflecting_machines(tmp_path)
    _day_and_reflect(a, "2025-11-27", f"O(c=0.2) @Peter: {CLAIM}", "W @Peter: Bought a NAS.")
    _day_and_reflect(b, "2025-11-28", f"O(c=0.3) @Peter: {CLAIM}", "W @Peter: Fixed the router.")
    for clone in (a, b, a):
        _sync(clone)
    assert sorted(_stale_anywhere(a)) == ["bank/entities/Peter.md", "bank/opinions.md"]
    code, out, _ = gitmem("-C", str(a), "recall", "both machines changed this opinion", "--json")
    assert code == 0 and "gitmem:stale" not in out  # a note to reflect, not memory
    ws, cfg = open_workspace(a)
    # A window with no facts at all (the merge brought some in, recorded at the merge commit):
    # the flagged opinion and page are settled whatever the window.
    report = reflect(ws, cfg, commit=True, now=datetime(2030, 1, 1, tzinfo=UTC))
    assert report.facts_read == 0
    [change] = report.opinions
    assert change.merged and "merged from two machines: recomputed from 0.90" in change.reason
    assert report.title().startswith("gitmem reflect: 1 merged opinion recomputed, 1 entity page")
    assert [p.merged for p in report.pages] == [True]
    merge, settle = (json.loads(gitmem("-C", str(a), "review", spec, "--format", "json")[1])
                     for spec in ("HEAD~2..HEAD~1", "HEAD~1..HEAD"))
    assert [o["merge"] for o in merge["opinions"]["changed"]] == ["flagged"]
    assert [o["merge"] for o in settle["opinions"]["changed"]] == ["recomputed"]
    code, text, _ = gitmem("-C", str(a), "review", "HEAD~1..HEAD")
    assert code == 0 and "merged, recomputed by reflect" in text and "by hand" not in text
    # What one machine holding both days' evidence computes by the rule, from the same start.
    with read_index(a) as store:
        facts = facts_by_fact_id(store, [e.fact_id for e in change.evidence])
    observed = [Observation(f.fact_id, f.confidence, f.recorded_at, f.path, f.start_line)
                for f in facts.values()]
    assert len(observed) == 2 and change.after == apply_evidence(0.90, observed).end
    for clone in (a, b):
        _sync(clone)
    assert _stale_anywhere(a) == [] == _stale_anywhere(b)
    assert git(a, "rev-parse", "HEAD^{tree}") == git(b, "rev-parse", "HEAD^{tree}")
    assert dump(a) == dump(b) == rebuilt_dump(a, tmp_path / "rebuilt")
    again = reflect(*open_workspace(b), since=None)
    assert not again.changed  # settled: nothing left to do on the other machine either


def test_a_stale_line_naming_evidence_the_index_lacks_stays_with_a_warning(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    init_workspace(repo)
    flagged = OPINIONS.replace("<!-- opinion: o-3fa9c2e1 -->\n", "<!-- opinion: o-3fa9c2e1 -->\n"
                               "<!-- gitmem:stale from 0.90 new f-ffffffffffff: both -->\n")
    write(repo, "bank/opinions.md", flagged)
    write(repo, "memory/2025-11-27.md", f"# 2025-11-27\n\n## Retain\n- O(c=0.2) @Peter: {CLAIM}\n")
    commit_all(repo, "a merge whose evidence is not here")
    report = reflect(*open_workspace(repo), since=None)
    assert [(w.code, w.line) for w in report.warnings if w.code == "opinion-merge"] == [
        ("opinion-merge", 5)]
    assert any(w.code == "reflect-skipped" and "cannot recompute yet" in w.message
               for w in report.warnings)  # the new entry waits for the recomputation
    assert (repo / "bank/opinions.md").read_text(encoding="utf-8") == flagged


def test_evidence_one_side_folded_is_cited_once_after_the_merge() -> None:
    from gitmem.reflect.opinionfile import read_opinions

    ids = {x: f"f-{x * 12}" for x in "abcdef12"}
    cite = {x: f"{ids[x]} memory/2025-11-1{n}.md#L5" for n, x in enumerate("abcdef12")}
    base = "# Opinions\n\n" + _opinion("o-11111111", "@Peter prefers short replies", "0.70",
                                       *(cite[x] for x in "abcdef"))
    folded = ("  - 3 earlier: memory/2025-11-10.md#L5 … memory/2025-11-12.md#L5 "
              "<!-- folded: f-aaaaaaaaaaaa f-bbbbbbbbbbbb f-cccccccccccc -->\n")
    a = (base.replace("0.70", "0.80").replace(f"  - for {cite['a']}\n", folded)
         .replace(f"  - for {cite['b']}\n", "").replace(f"  - for {cite['c']}\n", "")
         .rstrip("\n") + f"\n  - for {cite['1']}\n")
    b = base.replace("0.70", "0.75").rstrip("\n") + f"\n  - for {cite['2']}\n"
    for x, y in ((a, b), (b, a)):
        merged, conflicts, stale = merge_text(base, x, y, "bank/opinions.md")
        doc = read_opinions(merged.encode())
        [section] = doc.sections
        assert (conflicts, stale, section.problems) == (0, 1, ()), merged
        cited = [e.fact_id for e in section.opinion.cited]
        assert sorted(cited) == sorted(ids.values()) and len(set(cited)) == 8, merged
        assert set(_stale_of(merged).new or ()) == {ids["1"], ids["2"]}, merged
    # the other side folded an entry of its own that this side never cited: folded in here
    ids = {x: f"f-{x * 12}" for x in "abc1234"}
    line = {x: f"  - for {ids[x]} memory/2025-11-1{n}.md#L5\n" for n, x in enumerate("abc1234")}
    base = "# Opinions\n\n" + _opinion("o-11111111", "@Peter prefers short replies", "0.70",
                                       *(f"{ids[x]} memory/2025-11-1{n}.md#L5"
                                         for n, x in enumerate("abc")))
    head = base.split("  - for")[0]
    x = (head.replace("0.70", "0.90") + "  - 3 earlier: memory/2025-11-10.md#L5 … "
         f"memory/2025-11-13.md#L5 <!-- folded: {ids['a']} {ids['b']} {ids['1']} -->\n"
         + line["c"] + line["2"] + line["3"])
    y = head.replace("0.70", "0.60") + line["a"] + line["b"] + line["c"] + line["4"]
    for one, two in ((x, y), (y, x)):
        merged = merge_text(base, one, two, "bank/opinions.md")[0]
        [section] = read_opinions(merged.encode()).sections
        assert section.problems == (), merged
        assert sorted(e.fact_id for e in section.opinion.cited) == sorted(ids.values()), merged
