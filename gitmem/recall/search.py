"""Recall's search: candidates from the index (words, vectors), scored by ``recall.ranking``,
then made into cited results (SPEC §8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from gitmem.domain import KIND_LETTERS, KIND_NAMES, TimeWindow
from gitmem.errors import GitmemError, UsageError
from gitmem.index import queries
from gitmem.index.queries import ItemFilter, Row
from gitmem.index.store import WORKTREE, Store
from gitmem.parse.retain import entity_key
from gitmem.parse.textfold import build_match, fold, query_stems, query_terms
from gitmem.recall.ranking import (
    _WORD,
    DECAY_FLOOR,
    IMPORTANCE,
    PREFER_BOOST,
    Ranking,
    decay,
    exact_file_match,
    make_snippet,
    redundant,
)
from gitmem.recall.supersede import citation, current_first, superseders

CANDIDATES_MIN = 200


@dataclass(frozen=True)
class RecallQuery:
    text: str
    k: int = 8
    window: TimeWindow | None = None
    entities: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()  # world | experience | opinion | observation | note
    half_life_days: float = 30.0
    decay_floor: float = DECAY_FLOOR
    as_of_seq: int | None = None  # answer from the indexed commit with this seq
    prefer: TimeWindow | None = None  # a window from the query's words: preferred, not a filter


@dataclass(frozen=True)
class Result:
    kind: str
    content: str
    snippet: str
    path: str
    start_line: int
    end_line: int
    commit: str | None
    source: str
    timestamp: str | None
    event_start: str | None
    event_end: str | None
    recorded_at: str | None
    entities: tuple[str, ...]
    confidence: float | None
    fact_id: str | None
    score: float
    file_class: str = field(default="", compare=False)
    uncommitted: bool = False  # from 'gitmem index --worktree': not in any commit yet
    superseded_by: str | None = None  # the citation of a later fact that replaced this one
    opinion: dict[str, Any] | None = None  # bank/opinions.md: opinion_id, updated, evidence

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "content": self.content,
            "snippet": self.snippet,
            "path": self.path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "commit": self.commit,
            "source": self.source,
            "timestamp": self.timestamp,
            "event_start": self.event_start,
            "event_end": self.event_end,
            "recorded_at": self.recorded_at,
            "entities": list(self.entities),
            "confidence": self.confidence,
            "fact_id": self.fact_id,
            "score": round(self.score, 4),
            "uncommitted": self.uncommitted,
            "superseded_by": self.superseded_by,
            "opinion": self.opinion,
        }


def parse_kinds(values: Sequence[str]) -> tuple[str, ...]:
    """``W``/``world`` etc. (repeated, or listed as ``W,O``) to JSON kind names; ``note``
    selects chunks."""
    out: list[str] = []
    for value in (part for given in values for part in given.split(",") if part.strip()):
        v = value.strip()
        name = KIND_NAMES.get(v.upper()) if len(v) == 1 else v.lower()
        if name not in KIND_LETTERS and name != "note":
            raise UsageError(
                f"invalid --kind '{value}': use W, B, O, S (or world, experience, "
                "opinion, observation, note)"
            )
        out.append(name)
    return tuple(dict.fromkeys(out))


def resolve_entities(store: Store, names: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """Each entity name to the keys it covers (itself and its aliases), through aliases.

    An unknown name is an error with suggestions, never an empty result.
    """
    resolved: list[tuple[str, ...]] = []
    for name in names:
        key = entity_key(name.lstrip("@"))
        keys = queries.entity_with_aliases(store, key)
        if keys is None:
            from gitmem.recall.empty import unknown_entity

            raise GitmemError(unknown_entity(store, name, key))
        resolved.append(keys)
    return tuple(resolved)


def _filter(q: RecallQuery, entity_keys: Sequence[Sequence[str]]) -> ItemFilter:
    return ItemFilter(as_of_seq=q.as_of_seq, kinds=q.kinds,
                      entity_keys=tuple(tuple(k) for k in entity_keys), window=q.window,
                      prefer=q.prefer)


def lexical_candidates(store: Store, q: RecallQuery, flt: ItemFilter,
                       limit: int) -> list[tuple[Row, float]]:
    terms = query_terms(q.text)
    if not terms:
        if q.window is None:
            raise UsageError(f"query {q.text!r} has no searchable words; use words, ids or phrases")
        rows = queries.browse(store, flt, limit)
        return [(row, 1.0 - n / (limit + 1)) for n, row in enumerate(rows)]
    return queries.lexical(store, flt, build_match(terms, query_stems(q.text)), limit)


def vector_candidates(store: Store, flt: ItemFilter, qvec: bytes,
                      limit: int) -> list[tuple[Row, float]]:
    """Nearest items by cosine similarity (vectors are unit length), filters applied."""
    k = limit * 10 if flt.narrows else limit
    sim = queries.nearest(store, qvec, k)
    if not sim:
        return []
    out = [(row, sim[int(row["id"])]) for row in queries.rows_by_id(store, list(sim), flt)]
    out.sort(key=lambda pair: -pair[1])
    return out[:limit]


def rank(
    store: Store,
    q: RecallQuery,
    now: datetime,
    entity_keys: Sequence[Sequence[str]] = (),
    *,
    qvec: bytes | None = None,
    mode: str = "lexical",
    ranking: Ranking | None = None,
) -> list[Result]:
    """Candidates scored by relevance × recency decay × importance, then diversified.

    Relevance is lexical (BM25, normalised to the best hit), semantic (cosine similarity), or
    hybrid: ``vector_weight × cosine + text_weight × BM25``. Lexical candidates always take
    part in hybrid mode, so keyword-only hits are admitted when semantic ones fall short.
    """
    ranking = ranking or Ranking()
    limit = max(CANDIDATES_MIN, q.k * 20)
    flt = _filter(q, entity_keys)
    lexical = (
        []
        if mode == "semantic" and qvec is not None
        else lexical_candidates(store, q, flt, limit)
    )
    semantic = (
        vector_candidates(store, flt, qvec, ranking.vector_candidates)
        if qvec is not None and mode != "lexical"
        else []
    )
    best = max((score for _, score in lexical), default=1.0) or 1.0
    rows: dict[int, Row] = {}
    text: dict[int, float] = {}
    vec: dict[int, float] = {}
    for row, raw in lexical:
        rows[row["id"]], text[row["id"]] = row, raw / best
    for row, sim in semantic:
        rows.setdefault(row["id"], row)
        vec[row["id"]] = max(0.0, sim)
    scored: list[tuple[float, Row]] = []
    for item_id, row in rows.items():
        if qvec is None or mode == "lexical":
            base = text.get(item_id, 0.0)
        elif mode == "semantic":
            base = vec.get(item_id, 0.0)
        else:
            base = ranking.vector_weight * vec.get(item_id, 0.0) + ranking.text_weight * text.get(
                item_id, 0.0
            )
        weight = decay(row, now.date(), q.half_life_days, q.decay_floor) if ranking.decay else 1.0
        score = base * weight * IMPORTANCE[row["type"]]
        if row["preferred"]:
            score += PREFER_BOOST
        if exact_file_match(q.text, row["path"]):
            score += 1.0
        scored.append((score, row))
    if "opinion" in q.kinds:  # the opinions of bank/opinions.md, beside O entries
        from gitmem.recall.opinions import opinion_candidates  # --kind O only: start-up time

        scored.extend(opinion_candidates(store, query_terms(q.text), q.as_of_seq, entity_keys,
                                         q.window))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["path"], pair[1]["start_line"]))
    terms = query_terms(q.text)
    chosen: list[tuple[float, Row]] = []
    kept: list[tuple[str, int, int, frozenset[str]]] = []
    for score, row in scored:
        words = frozenset(_WORD.findall(fold(row["content"])))
        if ranking.diversity and redundant(row, words, kept):
            continue
        kept.append((row["path"], row["start_line"], row["end_line"], words))
        chosen.append((score, row))
        if len(chosen) >= q.k:
            break
    # Knowledge updates: a fact a later one replaced is marked, and ranks below its replacement.
    found = superseders(store, [row for _, row in chosen], flt)
    return [_result(store, row, score, terms, newer)
            for score, row, newer in current_first(chosen, found, q.k)]


def _result(store: Store, row: Row, score: float, terms: list[list[str]],
            newer: Row | None = None) -> Result:
    ents = queries.entity_names(store, int(row["id"]))
    start, end = int(row["start_line"]), int(row["end_line"])
    # The citation stays the whole chunk: narrowing it to the snippet's lines was measured on
    # LoCoMo to drop evidence that lies elsewhere in the chunk (BENCHMARKS.md).
    snippet, _, _ = make_snippet(row["content"], terms)
    uncommitted = row["commit_id"] == WORKTREE
    source = citation(row)
    kind = row["kind"]
    if row["type"] == "opinion":
        return _opinion_result(row, score)
    timestamp = row["event_start"] or row["day"] or (row["recorded_at"] or "")[:10] or None
    return Result(
        kind=kind,
        content=row["content"],
        snippet=snippet,
        path=row["path"],
        start_line=start,
        end_line=end,
        commit=None if uncommitted else row["commit_id"],
        source=source,
        timestamp=timestamp,
        event_start=row["event_start"],
        event_end=row["event_end"],
        recorded_at=row["recorded_at"],
        entities=ents,
        confidence=row["confidence"],
        fact_id=row["fact_id"],
        score=score,
        file_class=row["class"],
        uncommitted=uncommitted,
        superseded_by=None if newer is None else citation(newer),
    )




def _opinion_result(row: Row, score: float) -> Result:
    from gitmem.recall.opinions import opinion_json

    return Result(
        kind="opinion",
        content=row["content"],
        snippet=row["content"],
        path=row["path"],
        start_line=int(row["start_line"]),
        end_line=int(row["end_line"]),
        commit=row["commit_id"],
        source=citation(row),
        timestamp=row["updated"],
        event_start=None,
        event_end=None,
        recorded_at=row["recorded_at"],
        entities=tuple(row["entities"]),
        confidence=row["confidence"],
        fact_id=None,
        score=score,
        file_class="bank",
        opinion=opinion_json(row),
    )
