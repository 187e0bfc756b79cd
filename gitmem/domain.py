"""Frozen domain types shared by every pipeline stage."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Literal

# The closed sets of names that reach JSON output (docs/json.md): typed, so a typo is a mypy error.
Kind = Literal["world", "experience", "opinion", "observation"]  # a Retain entry's KIND
ResultKind = Literal["world", "experience", "opinion", "observation", "note"]  # note: a chunk
FileClass = Literal["core", "user", "dreams", "daily", "note", "bank", "entity", "extra"]
Stance = Literal["for", "against"]  # an evidence line of bank/opinions.md
RecallMode = Literal["hybrid", "lexical", "semantic"]
RangeMode = Literal["two-dot", "three-dot"]  # gitmem review BASE..HEAD | BASE...HEAD
OpinionStatus = Literal["added", "removed", "changed"]  # an opinion, between two revisions
# the merge driver and an opinion, between two revisions: a merge of two machines' changes
# flagged it for reflect, or reflect recomputed one so flagged
MergeNote = Literal["flagged", "recomputed"]
FileStatus = Literal["added", "modified", "deleted"]  # a memory file, between two revisions
# which part of an entity page changed ("blank": only blank lines of the human text)
PageEdit = Literal["generated", "human", "both", "blank"]
HookFileState = Literal["installed", "foreign", "missing"]
WindowSource = Literal["flags", "query"]  # a recall's time window: from --since/... or the query
WindowUse = Literal["filter", "boost"]  # the window selects results, or ranks them first
# a replacement: declared by the newer fact's writer, or found by the rule
Basis = Literal["declared", "rule"]
Strength = Literal["hard", "hint"]  # a replacement (marks, demotes) or a hint (never demotes)
ConfigSource = Literal["repository", "user", "environment", "default"]  # a setting's layer
WrittenKind = Literal["opinions", "entity-page", "proposal"]  # a file reflect writes
# What classifying a path finds: (class, daily date, problem); None when it is not memory.
Classified = tuple[FileClass, date | None, str | None]

KIND_NAMES: dict[str, Kind] = {"W": "world", "B": "experience", "O": "opinion",
                               "S": "observation"}
KIND_LETTERS: dict[Kind, str] = {name: letter for letter, name in KIND_NAMES.items()}


@dataclass(frozen=True)
class Warn:
    """A problem found in the input, always located as ``path#Lline``."""

    path: str
    line: int
    code: str
    message: str

    @property
    def location(self) -> str:
        if not self.path:
            return "(repository)"  # about the repository as a whole, not one file
        return f"{self.path}#L{self.line}" if self.line else self.path

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"


@dataclass(frozen=True)
class Citation:
    """Where a piece of memory stands: ``path#Lstart[-Lend][@commit]``.

    ``commit`` is set only when the cited text is not the current version (it comes from
    history); ``gitmem get`` follows it."""

    path: str
    start_line: int
    end_line: int
    commit: str | None = None

    def __str__(self) -> str:
        lines = (f"#L{self.start_line}" if self.start_line == self.end_line
                 else f"#L{self.start_line}-L{self.end_line}")
        return f"{self.path}{lines}" + (f"@{self.commit[:7]}" if self.commit else "")


@dataclass(frozen=True)
class MemoryFile:
    """A memory file in a git tree (docs/memory-format.md)."""

    path: str
    blob: str
    file_class: FileClass
    day: date | None  # daily notes: the date from the file name


@dataclass(frozen=True)
class Section:
    """A heading and the lines it governs (1-based, inclusive)."""

    level: int
    title: str
    start_line: int
    end_line: int


@dataclass(frozen=True)
class Fact:
    """One Retain entry (docs/memory-format.md)."""

    fact_id: str
    kind: Kind
    text: str
    subjects: tuple[str, ...]  # entity slugs as written, before the colon
    mentions: tuple[str, ...]  # @mentions inside the text
    confidence: float | None
    start_line: int
    end_line: int
    event_start: date | None
    event_end: date | None
    # what a nested '- replaces: <ref>' item declares it replaces: fact ids or citations
    replaces: tuple[str, ...] = ()
    # what a nested '- keeps: <ref>' item says it does not replace, whatever the rule says
    keeps: tuple[str, ...] = ()
    importance: int | None = None  # <!-- importance: N --> on its lines (parse.annotations)
    triggers: tuple[str, ...] = ()  # <!-- trigger: ... --> phrases on its lines

    @property
    def entities(self) -> tuple[str, ...]:
        seen: dict[str, None] = dict.fromkeys(self.subjects)
        seen.update(dict.fromkeys(self.mentions))
        return tuple(seen)


@dataclass(frozen=True)
class Chunk:
    """A line-aligned slice of a file for full-text and vector search."""

    start_line: int
    end_line: int
    heading: str
    text: str
    tokens: int


@dataclass(frozen=True)
class Evidence:
    stance: Stance
    fact_id: str
    source: str
    confidence: float | None
    # the entry's own words, as its evidence line in bank/opinions.md shows them after " — "
    # (a reader sees why the confidence moved); not part of what the evidence is
    words: str = field(default="", compare=False, repr=False)

    def to_json(self) -> dict[str, str | float | None]:
        return {"stance": self.stance, "fact_id": self.fact_id, "source": self.source,
                "confidence": self.confidence}


@dataclass(frozen=True)
class FoldedEvidence:
    """An opinion's older evidence folded into one line of bank/opinions.md: every fact id
    (oldest first, so that none is applied twice and ``opinions --history`` lists them all),
    those stated against it, and the citations of the oldest and the newest."""

    fact_ids: tuple[str, ...]
    against: tuple[str, ...]
    first: str
    last: str

    def entries(self) -> tuple[Evidence, ...]:
        """The folded entries as evidence (only the oldest and newest keep their citation)."""
        n = len(self.fact_ids)
        return tuple(Evidence("against" if fid in self.against else "for", fid,
                              self.first if i == 0 else self.last if i == n - 1 else "", None)
                     for i, fid in enumerate(self.fact_ids))


@dataclass(frozen=True)
class Opinion:
    opinion_id: str
    statement: str
    entities: tuple[str, ...]
    confidence: float | None
    updated: str | None
    evidence: tuple[Evidence, ...]
    start_line: int
    end_line: int
    # the merge driver flagged it: both machines changed it, the next reflect recomputes it
    # (not part of the index's version key: the marker is a comment, its opinion the same)
    merged: bool = False
    folded: FoldedEvidence | None = None  # older evidence, folded into one line
    same_as: str | None = None  # a person merged it into this opinion ("- same as: o-…")

    @property
    def cited(self) -> tuple[Evidence, ...]:
        """Every evidence entry, folded ones first (oldest first)."""
        return (*(self.folded.entries() if self.folded else ()), *self.evidence)

    @property
    def vkey(self) -> str:
        import hashlib  # ~3 ms at start-up that recall does not need

        raw = repr(
            (
                self.opinion_id,
                self.statement,
                self.confidence,
                self.updated,
                self.evidence,
                self.start_line,
                self.end_line,
            ) + ((self.folded,) if self.folded else ())  # (versions indexed before keep theirs)
            + ((self.same_as,) if self.same_as else ())
        )
        return hashlib.blake2b(raw.encode("utf-8"), digest_size=12).hexdigest()


@dataclass(frozen=True)
class ParsedFile:
    """Everything parsing extracts from one file version."""

    file: MemoryFile
    text: str
    front_matter: dict[str, object]
    title: str
    facts: tuple[Fact, ...]
    chunks: tuple[Chunk, ...]
    warnings: tuple[Warn, ...] = field(default_factory=tuple)
    opinions: tuple[Opinion, ...] = ()  # bank/opinions.md only


@dataclass(frozen=True)
class TimeWindow:
    """A half-open window [start, end) in UTC; either side may be open (None)."""

    start: datetime | None = None
    end: datetime | None = None

    @property
    def is_open(self) -> bool:
        return self.start is None and self.end is None


@dataclass(frozen=True)
class Edge:
    """What a newer statement is to an older one (the replacement graph,
    docs/knowledge-updates.md)."""

    strength: Strength
    basis: Basis  # declared (its writer said so) | rule
    attribute: str  # the attribute both set ("residence"), or '' (a hint may have none)
    reason: str  # the words that made it ("moved to", "replaced synology")
