"""Lexical search and ranking over the index (SPEC §8)."""

from __future__ import annotations

import heapq
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from gitmem.embed.cache import unpack
from gitmem.errors import GitmemError, UsageError
from gitmem.model import KIND_LETTERS, KIND_NAMES, TimeWindow
from gitmem.retain import entity_key
from gitmem.store import MAX_PASSAGES, WORKTREE, Store
from gitmem.textfold import STOPWORDS, build_match, fold, query_terms

SNIPPET_CHARS = 700
CANDIDATES_MIN = 200
VEC_K_MAX = 4096  # sqlite-vec's largest k for one k-NN query
# The weight an old daily note keeps (recency decay never drops below it). Tuned on LoCoMo,
# whose questions do not favour recent sessions: see BENCHMARKS.md.
DECAY_FLOOR = 0.9
PREFER_BOOST = 0.5  # a date phrase with topic words: in-window results are preferred
IMPORTANCE = {"fact": 1.0, "chunk": 0.9}
_WORD = re.compile(r"\w+")


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
    as_of_day: str | None = None  # and leave out event times after this day
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
        }


def parse_kinds(values: Sequence[str]) -> tuple[str, ...]:
    """``W``/``world`` etc. to JSON kind names; ``note`` selects chunks."""
    out: list[str] = []
    for value in values:
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
        row = store.conn.execute(
            "SELECT entity FROM aliases WHERE alias = ? UNION SELECT key FROM entities "
            "WHERE key = ?",
            (key, key),
        ).fetchone()
        if row is None:
            near = [
                str(r[0])
                for r in store.conn.execute(
                    "SELECT name FROM entities WHERE key LIKE ? ORDER BY name LIMIT 5",
                    (f"%{key[:3]}%",),
                )
            ]
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise GitmemError(f"no entity '{name}' in the memory{hint}")
        main = str(row[0])
        aliases = [
            str(r[0])
            for r in store.conn.execute("SELECT alias FROM aliases WHERE entity = ?", (main,))
        ]
        resolved.append((main, *aliases))
    return tuple(resolved)


def _day_bounds(window: TimeWindow) -> tuple[str | None, str | None]:
    first = window.start.date().isoformat() if window.start else None
    last = (window.end - timedelta(microseconds=1)).date().isoformat() if window.end else None
    return first, last


def _filters(q: RecallQuery, entity_keys: Sequence[Sequence[str]]) -> tuple[str, list[Any]]:
    if q.as_of_seq is None:
        where = ["i.valid_to IS NULL"]
        args: list[Any] = []
    else:
        where = [
            "i.valid_from <= ?",
            "(i.valid_to IS NULL OR i.valid_to > ?)",
            "(i.event_start IS NULL OR i.event_start <= ?)",
        ]
        args = [q.as_of_seq, q.as_of_seq, q.as_of_day]
    if q.kinds:
        where.append(f"i.kind IN ({','.join('?' * len(q.kinds))})")
        args.extend(q.kinds)
    for keys in entity_keys:
        marks = ",".join("?" * len(keys))
        where.append(
            "EXISTS (SELECT 1 FROM item_entities e WHERE e.item_id = i.id "
            f"AND e.entity IN ({marks}))"
        )
        args.extend(keys)
    if q.window is not None and not q.window.is_open:
        clause, window_args = _window_clause(q.window)
        where.append(clause)
        args.extend(window_args)
    return " AND ".join(where), args


def _window_clause(window: TimeWindow) -> tuple[str, list[Any]]:
    """Event time overlaps the window; record time stands in when the event time is unknown."""
    first, last = _day_bounds(window)
    event, record = ["i.event_start IS NOT NULL"], ["i.event_start IS NULL"]
    event_args: list[Any] = []
    record_args: list[Any] = []
    if last is not None and window.end is not None:
        event.append("i.event_start <= ?")
        event_args.append(last)
        record.append("i.recorded_at < ?")
        record_args.append(window.end.isoformat())
    if first is not None and window.start is not None:
        event.append("i.event_end >= ?")
        event_args.append(first)
        record.append("i.recorded_at >= ?")
        record_args.append(window.start.isoformat())
    clause = f"(({' AND '.join(event)}) OR ({' AND '.join(record)}))"
    return clause, event_args + record_args


_COLUMNS = (
    "i.id, i.path, i.type, i.kind, i.fact_id, i.confidence, i.start_line, i.end_line, "
    "i.content, i.event_start, i.event_end, i.recorded_at, i.commit_id, i.valid_to, "
    "i.class, i.day"
)


def lexical_candidates(
    store: Store, q: RecallQuery, entity_keys: Sequence[Sequence[str]], limit: int
) -> list[tuple[dict[str, Any], float]]:
    terms = query_terms(q.text)
    where, args = _filters(q, entity_keys)
    if not terms:
        if q.window is None:
            raise UsageError(f"query {q.text!r} has no searchable words; use words, ids or phrases")
        return _browse(store, where, args, limit)
    sql = (
        f"SELECT {_COLUMNS}, m.score FROM (SELECT rowid AS rid, "
        f"bm25(items_fts, 1.0, 0.3) AS score FROM items_fts WHERE items_fts MATCH ?) m "
        f"JOIN items i ON i.id = m.rid "
        f"WHERE {where} ORDER BY m.score LIMIT ?"
    )
    rows = store.conn.execute(sql, [build_match(terms), *args, limit]).fetchall()
    names = [c.split(".")[-1].split(" ")[-1] for c in _COLUMNS.split(", ")]
    return [(dict(zip(names, row[:-1], strict=True)), -float(str(row[-1]))) for row in rows]


def _browse(
    store: Store, where: str, args: list[Any], limit: int
) -> list[tuple[dict[str, Any], float]]:
    """No words, only a time window ("what happened last week"): facts first, newest first."""
    sql = (
        f"SELECT {_COLUMNS} FROM items i WHERE {where} "
        "ORDER BY i.type = 'fact' DESC, i.event_start DESC, i.path, i.start_line LIMIT ?"
    )
    rows = store.conn.execute(sql, [*args, limit]).fetchall()
    names = [c.split(".")[-1] for c in _COLUMNS.split(", ")]
    return [
        (dict(zip(names, row, strict=True)), 1.0 - n / (limit + 1)) for n, row in enumerate(rows)
    ]


def _decay(row: dict[str, Any], now: date, half_life: float, floor: float) -> float:
    """Daily notes lose weight with age (half-life), down to ``floor``; other files never."""
    if row["class"] != "daily":
        return 1.0
    last = row["event_end"] or row["day"]
    if not last:
        return 1.0
    age = max(0, (now - date.fromisoformat(str(last)[:10])).days)
    return floor + (1 - floor) * math.pow(0.5, age / half_life)


def _in_window(row: dict[str, Any], window: TimeWindow) -> bool:
    """The SQL window rule, for one row: event time overlaps, else record time inside."""
    first, last = _day_bounds(window)
    if row["event_start"] is not None:
        return (last is None or row["event_start"] <= last) and (
            first is None or (row["event_end"] or row["event_start"]) >= first
        )
    recorded = row["recorded_at"]
    if recorded is None:
        return False
    return (window.start is None or recorded >= window.start.isoformat()) and (
        window.end is None or recorded < window.end.isoformat()
    )


def _exact_file_match(query: str, path: str) -> bool:
    q = query.strip().casefold()
    name = path.rsplit("/", 1)[-1].casefold()
    return q in (path.casefold(), name, name.removesuffix(".md"))


@dataclass(frozen=True)
class Ranking:
    """How candidates are scored. The defaults are the shipped, benchmarked ones (see
    BENCHMARKS.md); ``openclaw()`` is the published hybrid baseline."""

    vector_weight: float = 0.8
    text_weight: float = 0.2
    decay: bool = True
    diversity: bool = True
    vector_candidates: int = 100  # items; 2x as many passages are fetched by Hamming distance

    @classmethod
    def openclaw(cls) -> Ranking:
        return cls(vector_weight=0.7, text_weight=0.3, decay=False, diversity=False)


def _rescore(store: Store, qvec: bytes, ids: Sequence[int]) -> list[tuple[int, float]]:
    out: list[tuple[int, float]] = []
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        out.extend((int(i), 1.0 - float(d)) for i, d in store.conn.execute(
            f"SELECT item_id, vec_distance_cosine(vector, ?) FROM vectors "
            f"WHERE item_id IN ({marks})", (qvec, *part)))
    return out


def vector_candidates(
    store: Store, q: RecallQuery, entity_keys: Sequence[Sequence[str]], qvec: bytes, limit: int
) -> list[tuple[dict[str, Any], float]]:
    """Nearest items by cosine similarity (vectors are unit length), filters applied."""
    filtered = bool(q.kinds or entity_keys or q.window or q.as_of_seq is not None)
    k = limit * 10 if filtered else limit
    if store.vec_error is None and store.has_vec_table():
        # Candidates by Hamming distance of sign bits (fast), rescored by exact cosine.
        near = {int(r) // MAX_PASSAGES for (r,) in store.conn.execute(
            "SELECT rowid FROM vec_bits WHERE embedding MATCH vec_quantize_binary(?) AND k = ?",
            (qvec, min(k * 2, VEC_K_MAX)))}
        parts = _rescore(store, qvec, sorted(near))
    else:  # the extension cannot be loaded: an exact scan, slower but the same answer
        query = unpack(qvec)
        parts = [(int(i), sum(a * b for a, b in zip(query, unpack(bytes(v)), strict=False)))
                 for i, v in store.conn.execute("SELECT item_id, vector FROM vectors")]
    best: dict[int, float] = {}
    for item_id, similarity in parts:  # an item is as close as its closest passage
        if similarity > best.get(item_id, -2.0):
            best[item_id] = similarity
    hits = heapq.nlargest(k, best.items(), key=lambda pair: pair[1])
    if not hits:
        return []
    sim = dict(hits)
    where, args = _filters(q, entity_keys)
    out: list[tuple[dict[str, Any], float]] = []
    names = [c.split(".")[-1] for c in _COLUMNS.split(", ")]
    ids = list(sim)
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        for row in store.conn.execute(
            f"SELECT {_COLUMNS} FROM items i WHERE i.id IN ({marks}) AND {where}", [*part, *args]
        ):
            record = dict(zip(names, row, strict=True))
            out.append((record, sim[int(record["id"])]))
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
    lexical = (
        []
        if mode == "semantic" and qvec is not None
        else lexical_candidates(store, q, entity_keys, limit)
    )
    semantic = (
        vector_candidates(store, q, entity_keys, qvec, ranking.vector_candidates)
        if qvec is not None and mode != "lexical"
        else []
    )
    best = max((score for _, score in lexical), default=1.0) or 1.0
    rows: dict[int, dict[str, Any]] = {}
    text: dict[int, float] = {}
    vec: dict[int, float] = {}
    for row, raw in lexical:
        rows[row["id"]], text[row["id"]] = row, raw / best
    for row, sim in semantic:
        rows.setdefault(row["id"], row)
        vec[row["id"]] = max(0.0, sim)
    scored: list[tuple[float, dict[str, Any]]] = []
    for item_id, row in rows.items():
        if qvec is None or mode == "lexical":
            base = text.get(item_id, 0.0)
        elif mode == "semantic":
            base = vec.get(item_id, 0.0)
        else:
            base = ranking.vector_weight * vec.get(item_id, 0.0) + ranking.text_weight * text.get(
                item_id, 0.0
            )
        decay = _decay(row, now.date(), q.half_life_days, q.decay_floor) if ranking.decay else 1.0
        score = base * decay * IMPORTANCE[row["type"]]
        if q.prefer is not None and _in_window(row, q.prefer):
            score += PREFER_BOOST
        if _exact_file_match(q.text, row["path"]):
            score += 1.0
        scored.append((score, row))
    scored.sort(key=lambda pair: (-pair[0], pair[1]["path"], pair[1]["start_line"]))
    terms = query_terms(q.text)
    chosen: list[Result] = []
    kept: list[tuple[str, int, int, frozenset[str]]] = []
    for score, row in scored:
        words = frozenset(_WORD.findall(fold(row["content"])))
        if ranking.diversity and _redundant(row, words, kept):
            continue
        kept.append((row["path"], row["start_line"], row["end_line"], words))
        chosen.append(_result(store, row, score, terms))
        if len(chosen) >= q.k:
            break
    return chosen


def _redundant(
    row: dict[str, Any], words: frozenset[str], kept: Sequence[tuple[str, int, int, frozenset[str]]]
) -> bool:
    """Near-duplicates: a line range inside (or around) a better result, or ≥90% the same words."""
    for path, start, end, other in kept:
        if path == row["path"]:
            inner = start <= row["start_line"] and row["end_line"] <= end
            outer = row["start_line"] <= start and end <= row["end_line"]
            if inner or outer:
                return True
        if words and other:
            union = len(words | other)
            if union and len(words & other) / union >= 0.9:
                return True
    return False


def _result(store: Store, row: dict[str, Any], score: float, terms: list[list[str]]) -> Result:
    ents = tuple(
        str(r[0])
        for r in store.conn.execute(
            "SELECT name FROM item_entities WHERE item_id = ? ORDER BY role = 'mention', rowid",
            (row["id"],),
        )
    )
    start, end = int(row["start_line"]), int(row["end_line"])
    # The citation stays the whole chunk: narrowing it to the snippet's lines was measured on
    # LoCoMo to drop evidence that lies elsewhere in the chunk (BENCHMARKS.md).
    snippet, _, _ = make_snippet(row["content"], terms)
    source = f"{row['path']}#L{start}" if start == end else f"{row['path']}#L{start}-L{end}"
    uncommitted = row["commit_id"] == WORKTREE
    if row["valid_to"] is not None and row["commit_id"] and not uncommitted:
        source += f"@{str(row['commit_id'])[:7]}"
    kind = row["kind"]
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
        entities=tuple(dict.fromkeys(ents)),
        confidence=row["confidence"],
        fact_id=row["fact_id"],
        score=score,
        file_class=row["class"],
        uncommitted=uncommitted,
    )


def make_snippet(
    content: str, terms: list[list[str]], limit: int = SNIPPET_CHARS
) -> tuple[str, int, int]:
    """At most ``limit`` characters of whole lines around the line that best matches the query,
    with the offsets (0-based, inclusive) of its first and last line within ``content``.

    Exact words count first, then word stems (the first five letters), so "painted" finds
    "painting".
    """
    lines = content.split("\n")
    if len(content) <= limit:
        return content, 0, len(lines) - 1
    tokens = {t for term in terms for t in term}
    stems = {t[:5] for t in tokens if len(t) > 2 and t not in STOPWORDS}

    def hits(line: str) -> tuple[int, int]:
        words = set(_WORD.findall(fold(line)))
        return len(tokens & words), len(stems & {w[:5] for w in words})

    best = max(range(len(lines)), key=lambda i: (hits(lines[i]), -i))
    if len(lines[best]) >= limit:
        return lines[best][: limit - 1] + "…", best, best
    lo = hi = best
    size = len(lines[best])
    while True:
        grew = False
        for cand in (hi + 1, lo - 1):
            if 0 <= cand < len(lines) and not (lo <= cand <= hi):
                extra = len(lines[cand]) + 1
                if size + extra <= limit:
                    size += extra
                    lo, hi = min(lo, cand), max(hi, cand)
                    grew = True
        if not grew:
            break
    return "\n".join(lines[lo : hi + 1]), lo, hi
