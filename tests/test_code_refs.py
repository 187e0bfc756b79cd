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


PACKAGES = "cli|embed|front|git|index|lang|merge|parse|recall|reflect|review|warm"
DOTTED = re.compile(rf"``((?:gitmem\.)?(?:{PACKAGES})(?:\.\w+)+)(?:\(\))?``")
FUNC = re.compile(r":func:`~?([\w.]+)`")


def _defines(path: Path, name: str) -> bool:
    """Whether the module at ``path`` defines or imports ``name`` at its top level."""
    text = path.read_text(encoding="utf-8")
    return re.search(rf"^(?:async )?def {name}\b|^class {name}\b|^{name}\s*[:=]|"
                     rf"^(?:from \S+ )?import [^#\n]*\b{name}\b|^\s+{name},$", text, re.M) is not None


NOT_CODE = {"index.lock", "merge.gitmem.driver"}  # git's own file and setting


def _resolves(ref: str, here: Path) -> bool:
    """Whether ``ref`` (``parse.updates.judge``, ``index.graph``, or a bare name of ``here``)
    names a module of gitmem, or a function, class or constant one of them defines (a setting,
    ``recall.k``, is no code)."""
    from gitmem.config import _KEYS

    parts = ref.removeprefix("gitmem.").split(".")
    if ref in NOT_CODE or (len(parts) == 2 and (parts[0], parts[1]) in _KEYS):
        return True
    if len(parts) == 1:
        return _defines(here, parts[0])
    for cut in range(len(parts), 0, -1):
        base = ROOT / "gitmem" / Path(*parts[:cut])
        module = base.with_suffix(".py") if base.with_suffix(".py").is_file() else (
            base / "__init__.py")
        if module.is_file():
            rest = parts[cut:]
            return not rest or (len(rest) <= 2 and _defines(module, rest[0]))
    return False


def test_docstrings_name_what_exists() -> None:
    """A module, function or constant a docstring or comment names (``parse.updates.judge``,
    :func:`link`) exists: a rename or a removal updates what describes it."""
    stale = [f"{path.relative_to(ROOT)}#L{n}: {ref}"
             for path in sorted((ROOT / "gitmem").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             for ref in [*DOTTED.findall(line), *FUNC.findall(line)]
             if not _resolves(ref, path)]
    assert stale == []


HABITS_SINCE = "12d34be"  # commit subjects after this one are held to the habit


def test_commit_subjects_are_at_most_72_characters() -> None:
    """A commit's subject says what changed in at most 72 characters; the detail goes in the
    body (issue 40). Merges git wrote itself are held to it too."""
    import subprocess

    def log(*spec: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["git", "-C", str(ROOT), "log", "--format=%h %s", *spec],
                              capture_output=True, text=True, check=False)

    found = log(f"{HABITS_SINCE}..HEAD")
    if found.returncode != 0:  # a clone without that commit (shallow): its own last commit
        found = log("-1")
    assert found.returncode == 0, found.stderr
    long = [line for line in found.stdout.splitlines() if len(line.split(" ", 1)[1]) > 72]
    assert long == [], "shorten these subjects (git commit --amend, or the body for detail)"
