"""The typed result of ``gitmem review``: what changed in the memory between two revisions.

``Review.to_json()`` is the stable contract (fields are added, never renamed);
``review_markdown.render(review)`` renders a pull request comment.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from gitmem.domain import (
    Basis,
    Citation,
    Fact,
    FileClass,
    FileStatus,
    Kind,
    MemoryFile,
    MergeNote,
    OpinionStatus,
    PageEdit,
    RangeMode,
    Stance,
    Warn,
)
from gitmem.parse.statements import Statement

OPINION_STATUSES: tuple[OpinionStatus, ...] = ("changed", "added", "removed")


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


@dataclass(frozen=True)
class ReviewRange:
    spec: str  # as given
    mode: RangeMode
    base_rev: str
    head_rev: str
    base: str  # the commit whose memory is "before" (the merge base for three dots)
    head: str
    commits: int  # commits in base..head

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "mode": self.mode, "base_rev": self.base_rev,
                "head_rev": self.head_rev, "base": self.base, "head": self.head,
                "commits": self.commits}


@dataclass(frozen=True)
class ReviewFact:
    """A Retain entry on one side of the range, cited at that side's commit."""

    fact_id: str
    kind: Kind
    text: str
    entities: tuple[str, ...]
    at: Citation  # path#Lline@commit of that side
    day: str | None  # daily notes: the note's date
    period: tuple[str, str] | None = None  # an event period the entry states itself
    declared: tuple[str, ...] = ()  # what its '- replaces:' item names (fact ids, citations)
    subjects: tuple[str, ...] = ()  # its entities before the colon: what it is about
    kept: tuple[str, ...] = ()  # what its '- keeps:' item names (fact ids, citations)

    @classmethod
    def of(cls, fact: Fact, mf: MemoryFile, commit: str) -> ReviewFact:
        start, end = fact.event_start, fact.event_end or fact.event_start
        stated = start is not None and end is not None and not (start == end == mf.day)
        return cls(fact.fact_id, fact.kind, fact.text, fact.entities,
                   Citation(mf.path, fact.start_line, fact.end_line, commit),
                   mf.day.isoformat() if mf.day else None,
                   (start.isoformat(), end.isoformat()) if stated and start and end else None,
                   fact.replaces, fact.subjects, fact.keeps)

    @functools.cached_property  # review compares each fact with many (supersede)
    def statement(self) -> Statement:
        """This fact as the knowledge-update rule sees it (no record time: review reads git)."""
        return Statement(kind=self.kind, text=self.text, path=self.path,
                         line=self.start_line, end_line=self.at.end_line,
                         stated=self.day or "", recorded_at="", subjects=self.subjects,
                         period=self.period, fact_id=self.fact_id,
                         declared=frozenset(self.declared), kept=frozenset(self.kept))

    @property
    def path(self) -> str:
        return self.at.path

    @property
    def start_line(self) -> int:
        return self.at.start_line

    @property
    def source(self) -> str:
        return str(self.at)

    def to_json(self) -> dict[str, Any]:
        return {"fact_id": self.fact_id, "kind": self.kind, "text": self.text,
                "entities": list(self.entities), "source": self.source, "day": self.day,
                "replaces": list(self.declared), "keeps": list(self.kept)}


@dataclass(frozen=True)
class Supersession:
    """A fact still in the memory at the head that a newer fact about the same entities, added
    by the range, replaces (the same kind of claim: docs/memory-format.md, "Knowledge updates")."""

    old: ReviewFact
    new: ReviewFact
    basis: Basis = "rule"  # declared by the new fact's writer, or found by the rule
    attribute: str = ""  # the attribute both set ("residence")
    reason: str = ""  # the words that made it ("moved to")

    def to_json(self) -> dict[str, Any]:
        return {"old": self.old.to_json(), "new": self.new.to_json(), "basis": self.basis,
                "attribute": self.attribute or None, "reason": self.reason or None}


@dataclass(frozen=True)
class EvidenceChange:
    """An evidence line of an opinion, with the fact it cites looked up at the head."""

    stance: Stance
    fact_id: str
    cited_as: str  # the source as written in bank/opinions.md
    confidence: float | None
    found: Citation | None  # the fact at the head, when it is there
    text: str | None

    def to_json(self) -> dict[str, Any]:
        return {"stance": self.stance, "fact_id": self.fact_id, "cited_as": self.cited_as,
                "confidence": self.confidence,
                "source": str(self.found) if self.found else None, "text": self.text}


@dataclass(frozen=True)
class OpinionDiff:
    """One opinion of bank/opinions.md as the range changed it (reflect's own record of a change
    it makes is ``gitmem.reflect.opinion_update.OpinionChange``)."""

    opinion_id: str
    status: OpinionStatus
    statement: str
    at: Citation  # the section's heading, at the head (at the base when removed)
    confidence_before: float | None = None
    confidence_after: float | None = None
    updated_before: str | None = None
    updated_after: str | None = None
    statement_before: str | None = None  # when the statement was edited
    evidence_added: tuple[EvidenceChange, ...] = ()
    evidence_removed: tuple[EvidenceChange, ...] = ()
    merge: MergeNote | None = None  # flagged by a merge of two machines, or recomputed since
    same_as: str | None = None  # a person merged it into this opinion ("- same as: o-…")
    same_as_before: str | None = None

    @property
    def delta(self) -> float | None:
        if self.confidence_before is None or self.confidence_after is None:
            return None
        return round(self.confidence_after - self.confidence_before, 4)

    def to_json(self) -> dict[str, Any]:
        return {"opinion_id": self.opinion_id, "status": self.status,
                "statement": self.statement, "statement_before": self.statement_before,
                "source": str(self.at), "confidence_before": self.confidence_before,
                "confidence_after": self.confidence_after, "delta": self.delta,
                "updated_before": self.updated_before, "updated_after": self.updated_after,
                "evidence_added": [e.to_json() for e in self.evidence_added],
                "evidence_removed": [e.to_json() for e in self.evidence_removed],
                "merge": self.merge, "same_as": self.same_as,
                "same_as_before": self.same_as_before}


@dataclass(frozen=True)
class EntityFacts:
    """The facts about one entity (matched by their key, docs/memory-format.md) that the range added
    or removed."""

    entity: str  # the slug as first written
    key: str
    added: tuple[ReviewFact, ...]
    removed: tuple[ReviewFact, ...]

    def to_json(self) -> dict[str, Any]:
        return {"entity": self.entity, "key": self.key,
                "added": [f.fact_id for f in self.added],
                "removed": [f.fact_id for f in self.removed]}


@dataclass(frozen=True)
class FileChange:
    path: str
    file_class: FileClass
    status: FileStatus
    lines_added: int
    lines_removed: int
    where: PageEdit | None = None  # modified entity pages

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "class": self.file_class, "status": self.status,
                "lines_added": self.lines_added, "lines_removed": self.lines_removed,
                "where": self.where}


@dataclass(frozen=True)
class Review:
    range: ReviewRange
    files: tuple[FileChange, ...] = ()
    opinions: tuple[OpinionDiff, ...] = ()
    facts_added: tuple[ReviewFact, ...] = ()
    facts_removed: tuple[ReviewFact, ...] = ()
    entities: tuple[EntityFacts, ...] = ()
    superseded: tuple[Supersession, ...] = ()
    warnings: tuple[Warn, ...] = field(default_factory=tuple)
    prefix: str = ""  # the workspace's folder in the repository ('' or 'sub/dir/')

    @property
    def memory_changed(self) -> bool:
        return bool(self.files)

    @property
    def pages(self) -> tuple[FileChange, ...]:
        return tuple(f for f in self.files if f.file_class == "entity")

    def opinions_with(self, status: OpinionStatus) -> list[OpinionDiff]:
        return [o for o in self.opinions if o.status == status]

    def counts(self) -> list[str]:
        """What changed, in a few words each ("2 opinions changed", "facts +5 −1 about ...")."""
        parts = [f"{plural(len(self.opinions_with(s)), 'opinion')} {s}"
                 for s in OPINION_STATUSES if self.opinions_with(s)]
        if self.facts_added or self.facts_removed:
            parts.append(f"facts +{len(self.facts_added)} −{len(self.facts_removed)} about "
                         f"{plural(len(self.entities), 'entity', 'entities')}")
        if self.superseded:
            parts.append(f"{len(self.superseded)} superseded")
        if self.pages:
            parts.append(plural(len(self.pages), "entity page"))
        return [*parts, plural(len(self.files), "memory file")]

    def summary(self) -> str:
        """One line: what the range did to the memory."""
        r = self.range
        span = f"{plural(r.commits, 'commit')} ({r.base[:7]}..{r.head[:7]})"
        if not self.memory_changed:
            return f"No memory files changed in {r.spec}: {span}."
        return f"{r.spec}: {span}: " + ", ".join(self.counts()) + "."

    def to_json(self) -> dict[str, Any]:
        return {
            "range": self.range.to_json(),
            "memory_changed": self.memory_changed,
            "summary": self.summary(),
            "files": [f.to_json() for f in self.files],
            "opinions": {s: [o.to_json() for o in self.opinions_with(s)]
                         for s in OPINION_STATUSES},
            "facts": {"added": [f.to_json() for f in self.facts_added],
                      "removed": [f.to_json() for f in self.facts_removed]},
            "entities": [e.to_json() for e in self.entities],
            "superseded": [s.to_json() for s in self.superseded],
            "pages": [p.to_json() for p in self.pages],
            "warnings": [{"location": w.location, "path": w.path, "line": w.line,
                          "code": w.code, "message": w.message} for w in self.warnings],
        }
