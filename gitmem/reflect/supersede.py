"""Superseded facts: an older fact that a newer one about the same entities replaces.

Daily notes are append-only, so "the gateway host is the NUC" stays in the memory after "moved
the gateway host to The Castle". A fact the range added supersedes an older fact when both are
about the same entities and say the same kind of thing (``parse.similarity.same_claim``, the rule
opinions use) without saying the same words.

The older facts are found without reading the whole memory: one ``git grep`` at the head lists
the lines that mention the new facts' entities, each line is parsed on its own as a candidate,
and only the files of candidates that match are read and parsed to confirm the fact (its full
text, its id, that it sits in a Retain section). Opinion entries (``O``) are left out: a later
opinion is evidence about an earlier one, which ``bank/opinions.md`` tracks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from gitmem.domain import Fact
from gitmem.git import grep_tree
from gitmem.parse.retain import EntryLines, entity_key, parse_entry
from gitmem.parse.similarity import same_claim, statement_terms
from gitmem.reflect.review_model import ReviewFact, Supersession
from gitmem.reflect.snapshot import Snapshot

_SPACE = re.compile(r"\s+")


def find_superseded(head: Snapshot, added: Sequence[ReviewFact],
                    pathspecs: Sequence[str]) -> list[Supersession]:
    """Pairs (older fact at the head, the newest added fact that replaces it), oldest first."""
    new = [f for f in added if f.entities and f.kind != "opinion"]
    if not new:
        return []
    by_key: dict[str, list[ReviewFact]] = {}
    for fact in new:
        for key in {entity_key(e) for e in fact.entities}:
            by_key.setdefault(key, []).append(fact)
    found: dict[str, Supersession] = {}
    for old in new:  # an earlier fact of the range, replaced later in the same range
        for fact in _rivals(old, by_key):
            if fact is not old and _later(fact, old) and _replaces(fact, old.text, old.entities):
                _keep(found, old, fact)
    for old in _older_at_head(head, new, by_key, pathspecs):
        for fact in _rivals(old, by_key):
            if not _dated_after(old, fact) and _replaces(fact, old.text, old.entities):
                _keep(found, old, fact)
    return sorted(found.values(), key=lambda s: (s.old.day or "", s.old.source))


def _rivals(old: ReviewFact, by_key: dict[str, list[ReviewFact]]) -> list[ReviewFact]:
    seen: dict[str, ReviewFact] = {}
    for key in {entity_key(e) for e in old.entities}:
        for fact in by_key.get(key, ()):
            seen.setdefault(fact.fact_id, fact)
    return list(seen.values())


def _later(a: ReviewFact, b: ReviewFact) -> bool:
    """Whether ``a`` was recorded after ``b``: a later daily note, or further down the same
    file; undated files count by line order within the file only."""
    if a.day and b.day and a.day != b.day:
        return a.day > b.day
    return a.path == b.path and a.start_line > b.start_line


def _dated_after(a: ReviewFact, b: ReviewFact) -> bool:
    """Whether ``a`` is from a later daily note than ``b``. A fact already at the base was
    recorded before anything the range added, unless the range backfilled an older day."""
    return bool(a.day and b.day and a.day > b.day)


def _replaces(new: ReviewFact, old_text: str, old_entities: Sequence[str]) -> bool:
    if _SPACE.sub(" ", new.text).strip().casefold() == _SPACE.sub(" ", old_text).strip().casefold():
        return False  # the same words again confirm the fact; they do not replace it
    return _share_a_term(new, old_text) and same_claim(old_text, old_entities, new.text,
                                                       new.entities)


def _share_a_term(new: ReviewFact, old_text: str) -> bool:
    """A cheap necessary condition of ``same_claim`` (it needs a shared content term besides
    the entities' names), so most candidate lines never reach the full rule."""
    names: set[str] = set()
    for slug in new.entities:
        names.update(statement_terms(slug.replace("-", " ").replace("_", " ")))
    shared = statement_terms(new.text).keys() & statement_terms(old_text).keys()
    return bool(shared - names)


def _keep(found: dict[str, Supersession], old: ReviewFact, new: ReviewFact) -> None:
    """One entry per older fact: the newest fact that replaces it."""
    prev = found.get(old.fact_id)
    if prev is None or _later(new, prev.new) or (new.day or "") > (prev.new.day or ""):
        found[old.fact_id] = Supersession(old, new)


def _older_at_head(head: Snapshot, new: list[ReviewFact], by_key: dict[str, list[ReviewFact]],
                   pathspecs: Sequence[str]) -> list[ReviewFact]:
    """Facts at the head (not added by the range) that mention a new fact's entity and look
    like one of them replaces them: one ``git grep``, then only matching files are parsed."""
    patterns = sorted({_pattern(k) for k in by_key} | {_pattern(e) for f in new
                                                       for e in f.entities})
    added_at = {(f.path, f.start_line) for f in new}
    prefix = head.ws.prefix
    candidates: list[tuple[str, int]] = []
    for repo_path, number, line in grep_tree(head.ws.repo_root, head.commit, patterns, pathspecs):
        path = repo_path[len(prefix):] if repo_path.startswith(prefix) else None
        found = head.classify(path) if path else None
        if path is None or found is None or (path, number) in added_at:
            continue
        fact, _ = parse_entry(EntryLines(number, (line.rstrip("\r"),)), path, found[1])
        if fact is not None and fact.kind != "opinion" and _plausible(fact, path, found[1], by_key):
            candidates.append((path, number))
    head.load(path for path, _ in candidates)
    added_ids = {f.fact_id for f in new}
    out: list[ReviewFact] = []
    for path, number in candidates:
        parsed = head.get(path)
        fact = next((f for f in parsed.facts if f.start_line == number), None) if parsed else None
        if parsed is not None and fact is not None and fact.fact_id not in added_ids:
            out.append(ReviewFact.of(fact, parsed.file, head.commit))
    return out


def _plausible(fact: Fact, path: str, day: date | None,
               by_key: dict[str, list[ReviewFact]]) -> bool:
    """Whether a one-line reading of a candidate could be replaced by an added fact."""
    probe = ReviewFact(fact.fact_id, fact.kind, fact.text, fact.entities, path, fact.start_line,
                       fact.end_line, "", day.isoformat() if day else None)
    return any(not _dated_after(probe, new) and _replaces(new, fact.text, fact.entities)
               for new in _rivals(probe, by_key))


def _pattern(slug: str) -> str:
    """An extended regular expression for ``@slug`` in any spelling SPEC §4 treats alike
    (case by ``git grep -i``; '-', '_' and runs of them alike)."""
    parts = [p for p in re.split(r"[\s_\-]+", slug) if p]
    return "@" + "[-_]+".join("".join(c if c.isalnum() else f"[{c}]" for c in p) for p in parts)
