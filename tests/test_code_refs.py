"""Code points readers at docs/ (the reference users and contributors have), never at a
specification they do not have."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPEC_REF = re.compile(r"\bSPEC §\d+")


def test_code_names_no_spec_sections() -> None:
    found = [f"{path.relative_to(ROOT)}#L{n}"
             for folder in ("gitmem", "testing", "bench", "tests")
             for path in sorted((ROOT / folder).rglob("*.py")) if path != Path(__file__).resolve()
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if SPEC_REF.search(line)]
    assert found == [], "point these at the docs/ page that holds the rule, or drop them"


def test_docs_links_to_docs_pages_exist() -> None:
    """Every docs/NAME.md gitmem's code names is a page."""
    named = {m for path in (ROOT / "gitmem").rglob("*.py")
             for m in re.findall(r"docs/([\w-]+\.md)", path.read_text(encoding="utf-8"))}
    assert named and all((ROOT / "docs" / name).is_file() for name in named), sorted(named)
