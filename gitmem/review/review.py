"""``gitmem review``: how the memory's beliefs changed between two revisions.

Both sides are read straight from git: one ``git diff-tree`` names the memory files whose blobs
differ, one ``git cat-file --batch`` reads them, and gitmem's parser turns each version into facts
and opinions. No index is needed, so review runs on a fresh CI checkout, and it costs time in
proportion to what the range changed, not to the size of the memory.

Range forms (those of ``git diff``):

- ``BASE..HEAD``: the memory at BASE against the memory at HEAD;
- ``BASE...HEAD``: HEAD against its merge base with BASE, what a pull request's diff shows;
- ``BASE``: short for ``BASE..HEAD``; an empty side means HEAD (``main..`` is ``main..HEAD``).

The result types are in ``review_model``, the Markdown comment in ``review_markdown``, the search
for superseded facts in ``supersede``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence

from gitmem.config import Config
from gitmem.domain import (
    Citation,
    Evidence,
    FileStatus,
    MergeNote,
    Opinion,
    PageEdit,
    ParsedFile,
    RangeMode,
    Warn,
)
from gitmem.errors import GitmemError, UsageError
from gitmem.git import (
    TreeChange,
    count_commits,
    diff_trees,
    merge_base,
    read_objects,
    resolve_commit,
)
from gitmem.parse.markdown import split_lines
from gitmem.parse.opinions import OPINIONS_PATH
from gitmem.parse.retain import entity_key
from gitmem.review.review_model import (
    EntityFacts,
    EvidenceChange,
    FileChange,
    OpinionDiff,
    Review,
    ReviewFact,
    ReviewRange,
)
from gitmem.review.snapshot import Snapshot, parse_changed
from gitmem.review.supersede import SupersedeSearch
from gitmem.workspace import Workspace, classifier, pathspecs

RANGE_FORMS = ("BASE..HEAD (the two revisions), BASE...HEAD (HEAD against its merge base "
               "with BASE, as a pull request shows it), or BASE (short for BASE..HEAD)")
_GENERATED = re.compile(r"<!--\s*gitmem:(begin|end)\b")
_SOURCE_PATH = re.compile(r"^(?P<path>[^#@\s]+)#L\d+")


# -- the range ---------------------------------------------------------------------------------


def split_range(spec: str) -> tuple[str, str, RangeMode]:
    """(base rev, head rev, mode) of a range; a usage error names the accepted forms."""
    text = spec.strip()
    if not text or any(c.isspace() for c in text):
        raise UsageError(f"invalid range '{spec}': use {RANGE_FORMS}")
    mode: RangeMode
    if "..." in text:
        base, _, head = text.partition("...")
        mode = "three-dot"
    elif ".." in text:
        base, _, head = text.partition("..")
        mode = "two-dot"
    else:
        base, head, mode = text, "HEAD", "two-dot"
    if ".." in base or ".." in head or (not base and not head):
        raise UsageError(f"invalid range '{spec}': use {RANGE_FORMS}")
    return base or "HEAD", head or "HEAD", mode


def resolve_range(ws: Workspace, spec: str) -> ReviewRange:
    base_rev, head_rev, mode = split_range(spec)
    ids = []
    for rev in (base_rev, head_rev):
        found = resolve_commit(ws.repo_root, rev)
        if found is None:
            raise UsageError(
                f"unknown revision '{rev}' in '{spec}' (a shallow clone lacks history: in "
                f"GitHub Actions check out with fetch-depth: 0); use {RANGE_FORMS}")
        ids.append(found)
    base, head = ids
    if mode == "three-dot":
        found = merge_base(ws.repo_root, base, head)
        if found is None:
            raise GitmemError(f"'{base_rev}' and '{head_rev}' share no history here (no merge "
                              "base; a shallow clone lacks it: in GitHub Actions check out with "
                              f"fetch-depth: 0), or compare the two with {base_rev}..{head_rev}")
        base = found
    return ReviewRange(spec, mode, base_rev, head_rev, base, head,
                       count_commits(ws.repo_root, base, head))


# -- the comparison ----------------------------------------------------------------------------


def review(ws: Workspace, cfg: Config, spec: str) -> Review:
    """Compare the memory at the two ends of ``spec`` (see the module's docstring)."""
    rng = resolve_range(ws, spec)
    classify = classifier(cfg)
    changes = diff_trees(ws.repo_root, rng.base, rng.head, ws.prefix,
                         pathspecs(ws.prefix, cfg.extra_paths), classify)
    if not changes:
        return Review(rng, prefix=ws.prefix)
    before, after = Snapshot(ws, rng.base, classify), Snapshot(ws, rng.head, classify)
    _read_changes(ws, changes, before, after)
    search = SupersedeSearch(after, pathspecs(ws.prefix, cfg.extra_paths))  # git searches
    try:  # ... while the changed files are parsed and compared
        parse_changed(before, after)
        added, removed = _fact_changes(before, after)
        opinions, opinion_warns = _opinion_changes(before, after)
        return Review(
            range=rng,
            prefix=ws.prefix,
            files=tuple(_file_change(c, before, after) for c in changes),
            opinions=opinions,
            facts_added=tuple(added),
            facts_removed=tuple(removed),
            entities=_by_entity(added, removed),
            superseded=tuple(search.find(added)),
            warnings=tuple(_new_warnings(before, after)) + opinion_warns,
        )
    finally:
        search.close()


def _read_changes(ws: Workspace, changes: Sequence[TreeChange], before: Snapshot,
                  after: Snapshot) -> None:
    """Both versions of every changed file, through one ``git cat-file --batch``."""
    files = [mf for c in changes for mf in (c.old, c.new) if mf is not None]
    blobs = dict(zip((mf.blob for mf in files),
                     read_objects(ws.repo_root, [mf.blob for mf in files]), strict=True))
    before.set_changed([(c.old, blobs[c.old.blob] or b"") for c in changes if c.old])
    after.set_changed([(c.new, blobs[c.new.blob] or b"") for c in changes if c.new])


def _fact_changes(before: Snapshot,
                  after: Snapshot) -> tuple[list[ReviewFact], list[ReviewFact]]:
    """Facts whose ids appear only after (added) or only before (removed). A fact that moved
    between changed files keeps its id and is neither."""
    old_ids = {f.fact_id for f, _ in before.facts()}
    new_ids = {f.fact_id for f, _ in after.facts()}
    added = [ReviewFact.of(f, mf, after.commit) for f, mf in after.facts()
             if f.fact_id not in old_ids]
    removed = [ReviewFact.of(f, mf, before.commit) for f, mf in before.facts()
               if f.fact_id not in new_ids]
    return _dedupe(added), _dedupe(removed)


def _dedupe(facts: list[ReviewFact]) -> list[ReviewFact]:
    seen: dict[str, ReviewFact] = {}
    for fact in facts:
        seen.setdefault(fact.fact_id, fact)
    return sorted(seen.values(), key=lambda f: (f.day or "", f.source))


def _by_entity(added: list[ReviewFact], removed: list[ReviewFact]) -> tuple[EntityFacts, ...]:
    """Facts grouped by entity key (a fact about two entities is in both groups); the entities
    with the most changes first."""
    names: dict[str, str] = {}
    groups: dict[str, tuple[list[ReviewFact], list[ReviewFact]]] = {}
    for bucket, facts in ((0, added), (1, removed)):
        for fact in facts:
            for slug in fact.entities:
                key = entity_key(slug)
                names.setdefault(key, slug)
                groups.setdefault(key, ([], []))[bucket].append(fact)
    order = sorted(groups, key=lambda k: (-len(groups[k][0]) - len(groups[k][1]), k))
    return tuple(EntityFacts(names[k], k, tuple(groups[k][0]), tuple(groups[k][1]))
                 for k in order)


# -- files and entity pages --------------------------------------------------------------------


def _file_change(change: TreeChange, before: Snapshot, after: Snapshot) -> FileChange:
    old_lines = _lines(before.changed.get(change.path))
    new_lines = _lines(after.changed.get(change.path))
    status: FileStatus = ("added" if change.old is None else "deleted" if change.new is None
                          else "modified")
    mf = change.new or change.old
    assert mf is not None
    plus, minus, touched_old, touched_new = _line_delta(old_lines, new_lines)
    where: PageEdit | None = None
    if mf.file_class == "entity" and status == "modified":
        where = _where(old_lines, touched_old, new_lines, touched_new)
    return FileChange(change.path, mf.file_class, status, plus, minus, where)


def _where(old: list[str], touched_old: list[int], new: list[str],
           touched_new: list[int]) -> PageEdit:
    """Which part of a page the changed lines are in. A blank line outside a generated block
    is the space around it (reflect puts one before a block it adds): it makes no human edit,
    unless blank lines are all that changed."""
    inside = [_in_generated(lines, n) for lines, changed in ((old, touched_old),
                                                              (new, touched_new))
              for n in changed if _in_generated(lines, n) or _line_at(lines, n).strip()]
    if not inside:
        return "blank"
    return "generated" if all(inside) else "human" if not any(inside) else "both"


def _lines(parsed: ParsedFile | None) -> list[str]:
    if parsed is None:
        return []
    lines = split_lines(parsed.text)
    return lines[:-1] if len(lines) > 1 and lines[-1] == "" else lines


def _line_delta(old: list[str], new: list[str]) -> tuple[int, int, list[int], list[int]]:
    """(lines added, lines removed, changed line numbers before, after), 1-based."""
    plus = minus = 0
    touched_old: list[int] = []
    touched_new: list[int] = []
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            minus, plus = minus + i2 - i1, plus + j2 - j1
            touched_old.extend(range(i1 + 1, i2 + 1))
            touched_new.extend(range(j1 + 1, j2 + 1))
    return plus, minus, touched_old, touched_new


def _in_generated(lines: list[str], number: int) -> bool:
    """Whether line ``number`` is part of a ``<!-- gitmem:begin … -->`` … ``<!-- gitmem:end
    -->`` block (markers included): what reflect writes on an entity page
    (docs/memory-format.md)."""
    inside = False
    for line in lines[:number - 1]:
        m = _GENERATED.search(line)
        if m is not None:
            inside = m.group(1) == "begin"
    return inside or _GENERATED.search(_line_at(lines, number)) is not None


def _line_at(lines: list[str], number: int) -> str:
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _new_warnings(before: Snapshot, after: Snapshot) -> list[Warn]:
    """Warnings of the changed files at the head that the base did not have already (the same
    problem on the same line text), so a long-standing problem is not reported on every range."""
    old: set[tuple[str, str, str, str]] = set()
    for parsed in before.changed.values():
        lines = _lines(parsed)
        old.update((w.path, w.code, w.message, _line_at(lines, w.line)) for w in parsed.warnings)
    out: list[Warn] = []
    for parsed in after.changed.values():
        lines = _lines(parsed)
        out.extend(w for w in parsed.warnings
                   if (w.path, w.code, w.message, _line_at(lines, w.line)) not in old)
    return out


# -- opinions ----------------------------------------------------------------------------------


def _opinion_changes(before: Snapshot,
                     after: Snapshot) -> tuple[tuple[OpinionDiff, ...], tuple[Warn, ...]]:
    old_file, new_file = before.changed.get(OPINIONS_PATH), after.changed.get(OPINIONS_PATH)
    if old_file is None and new_file is None:
        return (), ()
    old = {o.opinion_id: o for o in (old_file.opinions if old_file else ())}
    new_list = list(new_file.opinions) if new_file else []
    new = {o.opinion_id: o for o in new_list}
    lookup = _EvidenceLookup(after)
    moved = [(old.get(oid), op) for oid, op in new.items()
             if oid not in old or _differs(old[oid], op)]
    lookup.read(e for prev, op in moved for e in _added_evidence(prev, op))  # one git call
    out: list[OpinionDiff] = []
    for prev, op in moved:
        source = Citation(OPINIONS_PATH, op.start_line, op.start_line, after.commit)
        if prev is None:
            out.append(OpinionDiff(op.opinion_id, "added", op.statement, source,
                                     confidence_after=op.confidence, updated_after=op.updated,
                                     evidence_added=lookup.resolve(op.cited),
                                     merge="flagged" if op.merged else None,
                                     same_as=op.same_as))
        else:
            out.append(_changed(prev, op, source, lookup))
    for oid, op in old.items():
        if oid not in new:
            out.append(OpinionDiff(
                oid, "removed", op.statement,
                Citation(OPINIONS_PATH, op.start_line, op.start_line, before.commit),
                confidence_before=op.confidence, updated_before=op.updated))
    out.sort(key=lambda o: (("changed", "added", "removed").index(o.status),
                            -abs(o.delta or 0.0), o.statement.casefold()))
    # Duplicate ids and malformed fields are reported by the parser (with the file's warnings).
    warns = lookup.missing(new_list, _lines(new_file))
    return tuple(out), warns


def _differs(old: Opinion, new: Opinion) -> bool:
    return (old.statement, old.confidence, old.updated, old.evidence, old.folded,
            old.merged, old.same_as) != (new.statement, new.confidence, new.updated,
                                         new.evidence, new.folded, new.merged, new.same_as)


def _merge_note(old: Opinion, new: Opinion) -> MergeNote | None:
    """What the merge driver's stale line did between the two: appeared or was settled."""
    if old.merged == new.merged:
        return None
    return "flagged" if new.merged else "recomputed"


def _changed(old: Opinion, new: Opinion, source: Citation,
             lookup: _EvidenceLookup) -> OpinionDiff:
    """Confidence before → after, and the evidence lines that came or went (by stance and fact
    id; an entry folded into the older-evidence line is still there): the evidence that moved
    it."""
    has = {(e.stance, e.fact_id) for e in new.cited}
    return OpinionDiff(
        new.opinion_id, "changed", new.statement, source,
        confidence_before=old.confidence, confidence_after=new.confidence,
        updated_before=old.updated, updated_after=new.updated,
        statement_before=old.statement if old.statement != new.statement else None,
        evidence_added=lookup.resolve(_added_evidence(old, new)),
        evidence_removed=tuple(EvidenceChange(e.stance, e.fact_id, e.source, e.confidence,
                                              None, None)
                               for e in old.cited if (e.stance, e.fact_id) not in has),
        merge=_merge_note(old, new), same_as=new.same_as, same_as_before=old.same_as)


def _added_evidence(old: Opinion | None, new: Opinion) -> list[Evidence]:
    """The evidence lines ``new`` cites that ``old`` (None: an added opinion) did not."""
    had = {(e.stance, e.fact_id) for e in old.cited} if old else set()
    return [e for e in new.cited if (e.stance, e.fact_id) not in had]


class _EvidenceLookup:
    """Finds the facts that evidence lines cite, at the head: among the changed files' facts,
    else in the cited file (all such files read in one batch)."""

    def __init__(self, after: Snapshot) -> None:
        self.after = after
        self.facts = {f.fact_id: ReviewFact.of(f, mf, after.commit) for f, mf in after.facts()}
        self.unresolved: set[str] = set()

    def resolve(self, evidence: Iterable[Evidence]) -> tuple[EvidenceChange, ...]:
        items = list(evidence)
        self._load(items)
        out = []
        for e in items:
            fact = self.facts.get(e.fact_id)
            if fact is None:
                self.unresolved.add(e.fact_id)
            out.append(EvidenceChange(e.stance, e.fact_id, e.source, e.confidence,
                                      fact.at if fact else None, fact.text if fact else None))
        return tuple(out)

    def read(self, evidence: Iterable[Evidence]) -> None:
        """Read the files these evidence lines cite in one batch (``resolve`` parses them)."""
        self.after.load(self._paths(evidence))

    def _paths(self, evidence: Iterable[Evidence]) -> list[str]:
        return [m.group("path") for e in evidence if e.fact_id not in self.facts
                and (m := _SOURCE_PATH.match(e.source)) is not None]

    def _load(self, evidence: Sequence[Evidence]) -> None:
        paths = self._paths(evidence)
        self.after.load(paths)
        for path in paths:
            parsed = self.after.get(path)
            if parsed is None:
                continue
            for fact in parsed.facts:
                self.facts.setdefault(fact.fact_id,
                                      ReviewFact.of(fact, parsed.file, self.after.commit))

    def missing(self, opinions: list[Opinion], lines: list[str]) -> tuple[Warn, ...]:
        """A located warning for each evidence line whose fact is not where it says."""
        warns = []
        for op in opinions:
            for e in op.evidence:
                if e.fact_id in self.unresolved:
                    number = next((n for n in range(op.start_line, op.end_line + 1)
                                   if e.fact_id in _line_at(lines, n)), op.start_line)
                    warns.append(Warn(OPINIONS_PATH, number, "evidence-missing",
                                      f"evidence {e.fact_id} cites {e.source}, but no fact "
                                      f"with that id is there at {self.after.commit[:7]}"))
        return tuple(warns)
