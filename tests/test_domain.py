"""The closed sets of names in ``gitmem.domain`` are the ones docs/json.md documents."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import pytest

from gitmem import domain

JSON_MD = Path(__file__).resolve().parent.parent / "docs" / "json.md"

# (the Literal, text that starts its field's description in docs/json.md, where it ends)
DOCUMENTED = [
    (domain.RecallMode, "| `mode` | ", ":"),
    (domain.ResultKind, "| `results[].kind` | ", "|"),
    (domain.RangeMode, "`mode` (", ")"),
    (domain.FileStatus, "`status` (", ")"),
    (domain.PageEdit, "`where` (entity pages:", ","),
    (domain.HookFileState, "`state` (", ")"),
    (domain.ConfigSource, "answer): `key`, `value`, `source` (", ")"),
    (domain.MergeNote, "`merge` (", ")"),
]


@pytest.mark.parametrize(("literal", "start", "end"), DOCUMENTED,
                         ids=[start for _, start, _ in DOCUMENTED])
def test_literal_names_are_the_documented_ones(literal: Any, start: str, end: str) -> None:
    text = " ".join(JSON_MD.read_text(encoding="utf-8").split())  # a description may wrap
    at = text.index(start) + len(start)
    documented = re.findall(r"`([^`]+)`", text[at:text.index(end, at)])
    assert sorted(documented) == sorted(get_args(literal))


def test_kind_letters_name_every_kind() -> None:
    assert sorted(domain.KIND_NAMES.values()) == sorted(get_args(domain.Kind))
    assert set(get_args(domain.ResultKind)) == {*get_args(domain.Kind), "note"}
