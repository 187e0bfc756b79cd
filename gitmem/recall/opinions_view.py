"""``gitmem opinions`` (docs/opinions-file.md): the opinions of bank/opinions.md with their
confidence, updated date and cited evidence, as the memory holds them now or held them at a time,
and how each one's confidence moved commit by commit. Also the opinion results of ``recall --kind
O``.

Every version of the file's opinions is in the index (table ``opinions``, valid from the commit
that wrote it until the one that changed it), so none of this reads git.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from gitmem.domain import Citation, Evidence, TimeWindow
from gitmem.errors import UsageError
from gitmem.index import entity_queries as eq
from gitmem.index.entity_queries import State
from gitmem.index.queries import Row
from gitmem.index.session import Session
from gitmem.index.store import Store
from gitmem.parse.retain import entity_key
from gitmem.parse.textfold import fold
from gitmem.recall.lookup import EntityRef, resolve_entity, state_at
from gitmem.recall.update_marks import citation

_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class ConfidencePoint:
    """One change of an opinion's confidence: the commit that wrote it, and when."""

    date: str
    commit: str
    confidence: float | None

    def to_json(self) -> dict[str, Any]:
        return {"date": self.date, "commit": self.commit, "confidence": self.confidence}


@dataclass(frozen=True)
class EvidencePoint:
    """One entry the opinion has cited as evidence (in any version of the file), with the day
    its note said it and what it said: the opinion's evidence over time."""

    date: str | None
    evidence: Evidence
    content: str | None

    def to_json(self) -> dict[str, Any]:
        return {"date": self.date, **self.evidence.to_json(), "content": self.content}


@dataclass(frozen=True)
class Folded:
    """The older evidence an opinion folds into one line: how many, the oldest and newest."""

    count: int
    first: str
    last: str

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "first": self.first, "last": self.last}


@dataclass(frozen=True)
class OpinionView:
    opinion_id: str
    statement: str
    entities: tuple[str, ...]
    confidence: float | None
    updated: str | None
    source: str  # bank/opinions.md#Lx-Ly, @commit when not the current version
    evidence: tuple[Evidence, ...]  # each with the citation the file gives
    recorded_at: str | None
    history: tuple[ConfidencePoint, ...] | None = None  # with --history
    evidence_history: tuple[EvidencePoint, ...] | None = None  # with --history, oldest first
    folded: Folded | None = None  # older evidence folded into one line of the file

    def to_json(self) -> dict[str, Any]:
        out = {
            "opinion_id": self.opinion_id,
            "statement": self.statement,
            "entities": list(self.entities),
            "confidence": self.confidence,
            "updated": self.updated,
            "source": self.source,
            "evidence": [e.to_json() for e in self.evidence],
            "folded": None if self.folded is None else self.folded.to_json(),
            "recorded_at": self.recorded_at,
        }
        if self.history is not None:
            out["history"] = [p.to_json() for p in self.history]
        if self.evidence_history is not None:
            out["evidence_history"] = [p.to_json() for p in self.evidence_history]
        return out


@dataclass
class OpinionsAnswer:
    as_of: str | None
    entity: str | None
    min_confidence: float | None
    opinions: list[OpinionView]
    warnings: list[str]
    # O entries in the memory and the day the oldest was recorded (told when no opinion
    # exists yet: reflect has not run over them)
    entries: tuple[int, str | None] = (0, None)

    def to_json(self) -> dict[str, Any]:
        return {
            "filters": {"entity": self.entity, "min_confidence": self.min_confidence,
                        "as_of": self.as_of},
            "opinions": [o.to_json() for o in self.opinions],
            "warnings": self.warnings,
        }


def _evidence(row: Row, *, folded: bool = False) -> tuple[Evidence, ...]:
    """The evidence the file lists (``folded``: and, before it, the entries folded into its
    older-evidence line)."""
    return tuple(Evidence(e["stance"], str(e["fact_id"]), str(e["source"]),
                          e.get("confidence")) for e in row["evidence"]
                 if folded or not e.get("folded"))


def _folded(row: Row) -> Folded | None:
    entries = [e for e in row["evidence"] if e.get("folded")]
    if not entries:
        return None
    return Folded(len(entries), str(entries[0]["source"]), str(entries[-1]["source"]))


def opinion_view(row: Row, history: tuple[ConfidencePoint, ...] | None = None,
                 evidence_history: tuple[EvidencePoint, ...] | None = None) -> OpinionView:
    return OpinionView(
        opinion_id=str(row["opinion_id"]),
        statement=str(row["statement"]),
        entities=tuple(str(e) for e in row["entities"]),
        confidence=row["confidence"],
        updated=row["updated"],
        source=citation(row),
        evidence=_evidence(row),
        recorded_at=row["recorded_at"],
        history=history,
        evidence_history=evidence_history,
        folded=_folded(row),
    )


def about(row: Row, ref: EntityRef) -> bool:
    return any(entity_key(e) in ref.keys for e in row["entities"])


def confidence_moves(versions: Sequence[Row]) -> tuple[ConfidencePoint, ...]:
    """The versions at which the confidence changed (the first one included), oldest first.
    A version that only moved lines or evidence is not a move."""
    points: list[ConfidencePoint] = []
    for row in versions:
        if points and points[-1].confidence == row["confidence"]:
            continue
        points.append(ConfidencePoint(str(row["recorded_at"] or "")[:10], str(row["commit_id"]),
                                      row["confidence"]))
    return tuple(points)


def evidence_over_time(store: Store, versions: Sequence[Row]) -> tuple[EvidencePoint, ...]:
    """Every entry any version of an opinion cited (each once, as first cited: a fold of old
    evidence in a later version loses none), oldest first, with the day it was said."""
    cited: dict[str, Evidence] = {}
    folded: set[str] = set()  # cited by no version but in its folded line
    for row in versions:
        for raw, e in zip(row["evidence"], _evidence(row, folded=True), strict=True):
            if e.fact_id in cited and e.fact_id not in folded:
                continue
            cited[e.fact_id] = e
            if raw.get("folded"):
                folded.add(e.fact_id)
            else:
                folded.discard(e.fact_id)
    said = eq.facts_said(store, list(cited))
    points: list[EvidencePoint] = []
    for fid, e in cited.items():
        fact = said.get(fid)
        if fact is not None and fid in folded:  # the file keeps only its id: the index says
            e = Evidence(e.stance, fid, str(Citation(fact.path, fact.start_line,
                                                     fact.end_line)), fact.confidence)
        points.append(EvidencePoint(fact.day if fact else None, e,
                                    fact.content if fact else None))
    return tuple(sorted(points, key=lambda p: (p.date or "", p.evidence.source)))


def list_opinions(
    session: Session,
    *,
    entity: str | None = None,
    min_confidence: float | None = None,
    as_of: str | None = None,
    history: bool = False,
    now: datetime | None = None,
) -> OpinionsAnswer:
    """The opinions held now (or as of a time), strongest first."""
    if min_confidence is not None and not 0.0 <= min_confidence <= 1.0:
        raise UsageError.naming("invalid {min_confidence} {value}: use a number in [0, 1]",
                                value=min_confidence)
    warnings = list(session.cfg.warnings) + session.catch_up()
    with session.reading() as store:
        state, shown = state_at(session.ws, store, as_of, now or datetime.now(UTC))
        rows = eq.opinions_at(store, state)
        entries = (0, None) if rows else eq.opinion_entries(store, state)
        if entity is not None:
            ref = resolve_entity(store, entity, state)
            rows = [r for r in rows if about(r, ref)]
        if min_confidence is not None:
            rows = [r for r in rows if (r["confidence"] or 0.0) >= min_confidence]
        moves: dict[str, tuple[ConfidencePoint, ...]] = {}
        cited: dict[str, tuple[EvidencePoint, ...]] = {}
        if history:
            versions: dict[str, list[Row]] = {}
            for v in eq.opinion_versions(store, [str(r["opinion_id"]) for r in rows], state):
                versions.setdefault(str(v["opinion_id"]), []).append(v)
            moves = {k: confidence_moves(v) for k, v in versions.items()}
            cited = {k: evidence_over_time(store, v) for k, v in versions.items()}
    rows.sort(key=lambda r: (-(r["confidence"] or 0.0), r["start_line"]))
    views = [opinion_view(r, moves.get(str(r["opinion_id"]), ()),
                          cited.get(str(r["opinion_id"]), ())) if history else opinion_view(r)
             for r in rows]
    return OpinionsAnswer(shown, entity, min_confidence, views, warnings, entries)


def opinion_matches(rows: Sequence[Row], terms: list[list[str]]) -> list[tuple[Row, float]]:
    """Opinions that hold the query's terms, with the share of terms they hold (0..1]; with no
    terms (a time window only), every opinion at 1."""
    if not terms:
        return [(row, 1.0) for row in rows]
    out: list[tuple[Row, float]] = []
    for row in rows:
        words = _WORD.findall(fold(f"{row['statement']} {' '.join(row['entities'])}"))
        held = sum(1 for term in terms if _holds(words, term))
        if held:
            out.append((row, held / len(terms)))
    return out


def _holds(words: list[str], term: list[str]) -> bool:
    n = len(term)
    return any(words[i : i + n] == term for i in range(len(words) - n + 1))


def opinion_candidates(store: Store, terms: list[list[str]], seq: int | None,
                       entity_keys: Sequence[Sequence[str]],
                       window: TimeWindow | None) -> list[tuple[float, Row]]:
    """``recall --kind O``: the opinions of bank/opinions.md that match the query, as rows
    recall can rank beside facts (relevance: the share of query terms the statement holds;
    bank files do not decay). Ids are negative, apart from item ids."""
    rows = eq.opinions_at(store, State(seq))
    for keys in entity_keys:
        rows = [r for r in rows if any(entity_key(e) in keys for e in r["entities"])]
    if window is not None and not window.is_open:
        rows = [r for r in rows if _updated_in(r, window)]
    out: list[tuple[float, Row]] = []
    for row, share in opinion_matches(rows, terms):
        out.append((share, {
            **row, "id": -int(row["id"]), "type": "opinion", "kind": "opinion",
            "content": row["statement"], "class": "bank", "day": None, "event_start": None,
            "event_end": None, "fact_id": None, "preferred": False,
        }))
    return out


def _updated_in(row: Row, window: TimeWindow) -> bool:
    if not row["updated"]:
        return False
    day = str(row["updated"])[:10]
    start = window.start.date().isoformat() if window.start else None
    end = window.end.isoformat()[:10] if window.end else None
    return (start is None or day >= start) and (end is None or day < end)
