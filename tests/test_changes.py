from __future__ import annotations

from gitmem.index.changes import plan_changes


def test_plan_classifies_every_path() -> None:
    indexed = {"a.md": "1", "b.md": "2", "c.md": "3", "d.md": "4"}
    target = {"a.md": "1", "b.md": "9", "e.md": "4", "f.md": "5"}
    plan = plan_changes(indexed, target)
    assert plan.added == ("f.md",)
    assert plan.modified == ("b.md",)
    assert plan.deleted == ("c.md",)
    assert plan.renamed == (("d.md", "e.md"),)
    assert set(plan.to_parse) == {"f.md", "b.md", "e.md"}
    assert set(plan.to_remove) == {"c.md", "b.md", "d.md"}


def test_no_change_is_empty() -> None:
    assert plan_changes({"a.md": "1"}, {"a.md": "1"}).empty
    assert plan_changes({}, {}).empty


def test_same_blob_at_two_new_paths_is_one_rename_and_one_add() -> None:
    plan = plan_changes({"old.md": "x"}, {"n1.md": "x", "n2.md": "x"})
    assert plan.renamed == (("old.md", "n1.md"),)
    assert plan.added == ("n2.md",)
    assert plan.deleted == ()
