"""Recall's search: candidates from the index (words, vectors), scored by ``recall.ranking``,
then made into cited results (docs/json.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from datetime import datetime
from typing import TYPE_CHECKING, Any, get_args

from gitmem.domain import KIND_NAMES, Evidence, RecallMode, ResultKind, TimeWindow
from gitmem.errors import UsageError
from gitmem.index import queries
from gitmem.index.items import MAX_PASSAGES, PASSAGE_TOKENS
from gitmem.index.queries import ItemFilter, Row
from gitmem.index.store import WORKTREE, Store
from gitmem.parse.chunking import passage_lines
from gitmem.parse.retain import entity_key
from gitmem.parse.stemming import (
    compound_lookups,
    compound_parts,
    compound_prefix,
    danish_text,
    query_stems,
    russian_prefix,
)
from gitmem.parse.textfold import (
    build_han_match,
    build_match,
    fold,
    plain_words,
    query_ideographs,
    query_terms,
)
from gitmem.recall.ranking import (
    _WORD,
    DECAY_FLOOR,
    IMPORTANCE,
    LEXICAL_CHUNK_SHARE,
    PREFER_BOOST,
    Picked,
    Ranking,
    bm25_pool,
    decay,
    exact_file_match,
    is_weak,
    make_snippet,
    pick_units,
    redundant,
    semantic_lift,
    shown_score,
    stems,
    term_share,
    unit_lines,
)
from gitmem.recall.supersede import (
    Replacement,
    answered_updates,
    citation,
    current_first,
    stated,
    superseded_within,
    superseders,
)
from gitmem.records import dataclass

if TYPE_CHECKING:
    from gitmem.index.signbits import SignBits

CANDIDATES_MIN = 200
# Results ranked next after the k shown, RUNNERS_UP x k in all, are read for the updates that
# replace a shown one (``supersede.answered_updates``); they are shown only then.
RUNNERS_UP = 3
# Passages are ranked for the best max(PASSAGE_ITEMS_MIN, PASSAGE_ITEMS × k) items by their
# whole-item score: the rest cannot place a passage among the first k in practice, and
# cutting and scoring passages is recall's costliest step.
PASSAGE_ITEMS_MIN, PASSAGE_ITEMS = 50, 5


@dataclass(frozen=True)
class RecallQuery:
    text: str
    k: int = 8
    window: TimeWindow | None = None
    entities: tuple[str, ...] = ()
    kinds: tuple[ResultKind, ...] = ()
    half_life_days: float = 30.0
    decay_floor: float = DECAY_FLOOR
    as_of_seq: int | None = None  # answer from the indexed commit with this seq
    prefer: TimeWindow | None = None  # a window from the query's words: preferred, not a filter


@dataclass(frozen=True)
class OpinionRef:
    """What an opinion result (of bank/opinions.md) adds: its id, updated date and evidence."""

    opinion_id: str
    updated: str | None
    evidence: tuple[Evidence, ...]

    def to_json(self) -> dict[str, Any]:
        return {"opinion_id": self.opinion_id, "updated": self.updated,
                "evidence": [e.to_json() for e in self.evidence]}


@dataclass(frozen=True)
class Result:
    kind: ResultKind
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
    score: float  # in [0, 1], see ranking.shown_score
    file_class: str = field(default="", compare=False)
    uncommitted: bool = False  # from 'gitmem index --worktree': not in any commit yet
    superseded_by: str | None = None  # the citation of a later fact that replaced this one
    superseded_basis: str | None = None  # declared (by its writer) | rule
    superseded_on: str | None = None  # the day the replacing fact was stated
    opinion: OpinionRef | None = None  # opinion results of bank/opinions.md
    weak: bool = False  # few of the query's words and little semantic lift (ranking.is_weak)

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
            "superseded_basis": self.superseded_basis,
            "opinion": self.opinion.to_json() if self.opinion else None,
            "weak": self.weak,
        }


_RESULT_KINDS: dict[str, ResultKind] = dict(zip(get_args(ResultKind), get_args(ResultKind),
                                                strict=True))


def parse_kinds(values: Sequence[str]) -> tuple[ResultKind, ...]:
    """``W``/``world`` etc. (repeated, or listed as ``W,O``) to JSON kind names; ``note``
    selects chunks."""
    out: list[ResultKind] = []
    for value in (part for given in values for part in given.split(",") if part.strip()):
        v = value.strip()
        kind = _RESULT_KINDS.get(KIND_NAMES.get(v.upper(), "") if len(v) == 1 else v.lower())
        if kind is None:
            raise UsageError.naming("invalid {kind} {value!r}: use W, B, O, S (or world, "
                                    "experience, opinion, observation, note)", value=value)
        out.append(kind)
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
            from gitmem.recall.lookup import unknown_entity  # the error path only

            raise unknown_entity(store, name, key)
        resolved.append(keys)
    return tuple(resolved)


def _filter(q: RecallQuery, entity_keys: Sequence[Sequence[str]]) -> ItemFilter:
    return ItemFilter(as_of_seq=q.as_of_seq, kinds=q.kinds,
                      entity_keys=tuple(tuple(k) for k in entity_keys), window=q.window,
                      prefer=q.prefer)


def lexical_candidates(store: Store, q: RecallQuery, flt: ItemFilter, limit: int,
                       words: QueryWords | None = None) -> list[tuple[Row, float]]:
    terms = query_terms(q.text)
    if not terms:
        if q.window is None:
            raise UsageError(f"query {q.text!r} has no searchable words; use words, ids or phrases")
        rows = queries.browse(store, flt, limit)
        return [(row, 1.0 - n / (limit + 1)) for n, row in enumerate(rows)]
    words = words or query_words(store, q.text)
    match = build_match(terms, words.stems, words.prefixes)
    return queries.lexical(store, flt, match, limit, build_han_match(query_ideographs(q.text)))


@dataclass(frozen=True)
class QueryWords:
    """A query's plain words as the index is searched for them: each word's stems, and in a
    Danish query its compounds (``query_words``)."""

    stems: dict[str, list[str]]  # folded word -> its stems, with its compound parts
    prefixes: dict[str, str]  # folded word -> its stem as the start of longer words
    parts: tuple[str, ...] = ()  # the compound parts alone (folded stems)


def query_words(store: Store, text: str) -> QueryWords:
    """Each plain query word's stems, and in a Danish query its compounds too: the parts of a
    compound it is, split against the memory's words ("bestyrelsesmøderne" finds "Bestyrelsen
    mødes"), and its stem as the start of the compounds it begins ("kolonihaven" finds
    "Kolonihavenøglen"). Danish writes compounds as one word; English does not."""
    stems = query_stems(text)
    if not danish_text(text):
        russian = {token: p for word, token in plain_words(text) if (p := russian_prefix(word))}
        return QueryWords(stems, russian)
    words = list(plain_words(text))
    known = queries.known_terms(store, compound_lookups([word for word, _ in words]))
    prefixes: dict[str, str] = {}
    found: list[str] = []
    for word, token in words:
        if parts := compound_parts(word, known):
            stems[token] = list(dict.fromkeys([*stems.get(token, []), *parts]))
            found += parts
        if prefix := compound_prefix(word):
            prefixes[token] = prefix
    return QueryWords(stems, prefixes, tuple(dict.fromkeys(found)))


def vector_candidates(store: Store, flt: ItemFilter, qvec: bytes, limit: int,
                      passages: dict[tuple[int, int], float] | None = None,
                      bits: SignBits | None = None) -> list[tuple[Row, float]]:
    """Nearest items by cosine similarity (vectors are unit length), filters applied; their
    passages' similarities go into ``passages`` when it is given. ``bits``: the sign bits a
    warm process holds in memory (``index.signbits``)."""
    k = limit * 10 if flt.narrows else limit
    sim = queries.nearest(store, qvec, k, passages, bits)
    if not sim:
        return []
    out = [(row, sim[int(row["id"])]) for row in queries.rows_by_id(store, list(sim), flt)]
    out.sort(key=lambda pair: -pair[1])
    return out[:limit]


@dataclass(frozen=True)
class WordsSearched:
    """A query's first step, searching its words: its filter, its words as the index is
    searched for them, and the items they find (none when they were not searched)."""

    flt: ItemFilter
    words: QueryWords
    lexical: list[tuple[Row, float]]


def search_words(store: Store, q: RecallQuery, entity_keys: Sequence[Sequence[str]],
                 searched: bool = True) -> WordsSearched:
    """The words of ``q`` searched (``searched``), as ``rank`` begins; a warm process does it
    while the query is embedded."""
    flt = _filter(q, entity_keys)
    words = query_words(store, q.text) if query_terms(q.text) else QueryWords({}, {})
    limit = max(CANDIDATES_MIN, q.k * 20)
    return WordsSearched(flt, words,
                         lexical_candidates(store, q, flt, limit, words) if searched else [])


def rank(
    store: Store,
    q: RecallQuery,
    now: datetime,
    entity_keys: Sequence[Sequence[str]] = (),
    *,
    qvec: bytes | None = None,
    mode: RecallMode = "lexical",
    ranking: Ranking | None = None,
    bits: SignBits | None = None,
    first: WordsSearched | None = None,
) -> list[Result]:
    """Candidates scored by relevance × recency decay × importance, then diversified.

    Relevance is lexical (BM25), semantic (cosine similarity), or hybrid:
    ``vector_weight × cosine + text_weight × BM25``. Lexical candidates always take part in
    hybrid mode, so keyword-only hits are admitted when semantic ones fall short. With
    ``ranking.passages`` (the default) the units scored and cited are a chunk's passages (see
    ``passage_units``), adjacent ones merged into one range; else whole chunks. ``first``:
    the words of ``q`` already searched (``search_words``), with the same ``entity_keys``.
    """
    ranking = ranking or Ranking()
    first = first or search_words(store, q, entity_keys,
                                  searched=not (mode == "semantic" and qvec is not None))
    flt, words, lexical = first.flt, first.words, first.lexical
    psim: dict[tuple[int, int], float] = {}
    semantic = (
        vector_candidates(store, flt, qvec, ranking.vector_candidates, psim, bits)
        if qvec is not None and mode != "lexical"
        else []
    )
    best = max((score for _, score in lexical), default=1.0) or 1.0
    rows: dict[int, Row] = {}
    text: dict[int, float] = {}
    vec: dict[int, float] = {}
    for row, raw in lexical:
        rows[row["id"]], text[row["id"]] = row, raw / best
    typical = queries.typical_similarity(store, qvec) if semantic and qvec is not None else None

    def scale(cosine: float) -> float:
        return cosine if typical is None else semantic_lift(cosine, typical)

    for row, sim in semantic:
        rows.setdefault(row["id"], row)
        vec[row["id"]] = scale(sim)
    cosines: dict[tuple[int, int, int], float] = {}  # (item, first, last line) -> cosine
    opinions: list[tuple[float, Row]] = []
    if "opinion" in q.kinds:  # the opinions of bank/opinions.md, beside O entries
        from gitmem.recall.opinions import opinion_candidates  # --kind O only: start-up time

        opinions = opinion_candidates(store, query_terms(q.text), q.as_of_seq, entity_keys,
                                      q.window)
    terms = query_terms(q.text)
    qvec = qvec if mode != "lexical" else None
    if ranking.passages:
        # The passages of the items that score best whole (cheap) are ranked (costly)
        items = sorted(rows, key=lambda i: -_score(q, now, rows[i], text.get(i, 0.0),
                                                   vec.get(i, 0.0), qvec, mode, ranking))
        candidates, rows = rows, {i: rows[i] for i in
                                  items[:max(PASSAGE_ITEMS_MIN, PASSAGE_ITEMS * q.k)]}
        units = passage_units(store, q, now, rows, text, qvec, mode, ranking, psim, cosines,
                              words.parts, scale)
        units.extend((score, row, int(row["start_line"]), int(row["end_line"]))
                     for score, row in opinions)
        units.sort(key=lambda u: (-u[0], u[1]["path"], u[2]))
        chosen = [(p.score, _cited(p)) for p in pick_units(units, q.k, ranking.diversity)]
        runners_up = _runners_up(units, chosen, (RUNNERS_UP - 1) * q.k)
        if qvec is not None:
            runners_up += _by_words(store, q, now, candidates, text, chosen + runners_up,
                                    words.parts)
    else:
        scored = [(_score(q, now, row, text.get(i, 0.0), vec.get(i, 0.0), qvec, mode, ranking),
                   row) for i, row in rows.items()]
        picked = _diverse(scored + opinions, RUNNERS_UP * q.k, ranking.diversity)
        chosen, runners_up = picked[:q.k], picked[q.k:]  # whole items: few, and cheap
    # Knowledge updates: a fact a later one replaced is marked, and ranks below its replacement.
    found = superseders(store, [row for _, row in chosen], flt)
    within = superseded_within(store, [row for _, row in chosen], flt, found)
    within.update(answered_updates(q.text, chosen, found, within, runners_up, words.parts))
    if typical is None and qvec is not None:
        typical = queries.typical_similarity(store, qvec)
    return [_result(store, row, score, terms, newer,
                    None if typical is None else _lift(row, cosines, typical))
            for score, row, newer in current_first(chosen, found, q.k, within)]


def _lift(row: Row, cosines: dict[tuple[int, int, int], float], typical: float) -> float | None:
    """The semantic lift of a result (its best passage within the cited lines); None when its
    item has no vector (not embedded yet)."""
    item, start, end = int(row["id"]), int(row["start_line"]), int(row["end_line"])
    inside = [c for (i, first, last), c in cosines.items()
              if i == item and start <= first and last <= end]
    return None if not inside else semantic_lift(max(inside), typical)


def _score(q: RecallQuery, now: datetime, row: Row, words: float, cosine: float | None,
           qvec: bytes | None, mode: RecallMode, ranking: Ranking) -> float:
    """A unit's score: relevance by mode, × recency decay × importance, + the preferred
    window's boost, + an exact file-name match. A unit without a vector (``cosine`` None: not
    embedded yet, or uncommitted) is scored by its words, as lexical recall scores it: were its
    missing cosine taken as 0, a fact committed a moment ago would score a fifth of what it
    scores once embedded, or lexically."""
    if qvec is None or cosine is None:
        base = words
    elif mode == "semantic":
        base = cosine
    else:
        base = ranking.vector_weight * cosine + ranking.text_weight * words
    weight = decay(row, now.date(), q.half_life_days, q.decay_floor) if ranking.decay else 1.0
    score = base * weight * IMPORTANCE[row["type"]]
    if row["preferred"]:
        score += PREFER_BOOST
    if exact_file_match(q.text, row["path"]):
        score += 1.0
    return score


def _diverse(scored: list[tuple[float, Row]], k: int, diversity: bool) -> list[tuple[float, Row]]:
    """Whole items best first, near-duplicates of better ones dropped, at most ``k``."""
    scored.sort(key=lambda pair: (-pair[0], pair[1]["path"], pair[1]["start_line"]))
    chosen: list[tuple[float, Row]] = []
    kept: list[tuple[str, int, int, frozenset[str]]] = []
    for score, row in scored:
        words = frozenset(_WORD.findall(fold(row["content"])))
        if diversity and redundant(row, words, kept):
            continue
        kept.append((row["path"], row["start_line"], row["end_line"], words))
        chosen.append((score, row))
        if len(chosen) >= k:
            break
    return chosen


def passage_units(store: Store, q: RecallQuery, now: datetime, rows: dict[int, Row],
                  text: dict[int, float], qvec: bytes | None, mode: RecallMode, ranking: Ranking,
                  psim: dict[tuple[int, int], float] | None = None,
                  cosines: dict[tuple[int, int, int], float] | None = None,
                  parts: Sequence[str] = (),
                  scale: Callable[[float], float] | None = None,
                  ) -> list[tuple[float, Row, int, int]]:
    """Every candidate as units ``(score, row, first line, last line)``: a fact whole, a chunk
    as the passages it was embedded as. A passage's text score is its BM25 among the candidate
    passages (for the query's words and the ``parts`` of its compounds), mixed with its
    chunk's; its vector score is its own cosine similarity (``psim`` holds those already
    known, the rest are computed; each unit's goes into ``cosines``), weighed as ``scale``
    says when given (``ranking.semantic_lift``)."""
    psim = dict(psim or {})
    if qvec is not None:
        known = {item for item, _ in psim}
        psim.update(queries.passage_similarities(store, qvec,
                                                 [i for i in rows if i not in known]))
    embedded = {item for item, _ in psim}
    query = list(dict.fromkeys([*(stem for term in query_terms(q.text) for token in term
                                  for stem in stems(token)), *(p for part in parts
                                                               for p in stems(part))]))
    spans: list[tuple[Row, int, int, int]] = []  # row, passage number, first, last line
    docs: list[list[str]] = []
    for row in rows.values():
        content, start = str(row["content"]), int(row["start_line"])
        if row["type"] != "chunk":
            spans.append((row, 0, start, int(row["end_line"])))
            docs.append(stems(content))
            continue
        lines = content.split("\n")
        for part, offsets in enumerate(passage_lines(content, PASSAGE_TOKENS, MAX_PASSAGES)):
            if offsets:
                spans.append((row, part, start + offsets[0], start + offsets[-1]))
                docs.append(stems("\n".join(lines[o] for o in offsets)))
    lexical = qvec is None
    raw = bm25_pool(query, docs) if mode != "semantic" or lexical else [0.0] * len(docs)
    top = max(raw, default=0.0) or 1.0
    share = LEXICAL_CHUNK_SHARE if lexical else ranking.chunk_text
    out: list[tuple[float, Row, int, int]] = []
    for (row, part, first, last), bm25 in zip(spans, raw, strict=True):
        item = int(row["id"])
        words = (1 - share) * bm25 / top + share * text.get(item, 0.0)
        cosine = max(0.0, psim.get((item, part), 0.0)) if item in embedded else None
        if cosine is not None:
            if cosines is not None:
                cosines[(item, first, last)] = cosine
            if scale is not None:
                cosine = scale(cosine)
        out.append((_score(q, now, row, words, cosine, qvec, mode, ranking), row, first, last))
    return out


def _runners_up(units: Sequence[tuple[float, Row, int, int]], chosen: Sequence[tuple[float, Row]],
                n: int) -> list[tuple[float, Row]]:
    """The next ``n`` units after the chosen results, each as its own row (a chunk's narrowed
    to the unit's lines), skipping units whose lines touch a result taken from the same file:
    cheaper than picking more results (no merging, no diversity check), and only read for
    updates of the shown ones (``supersede.answered_updates``)."""
    taken = [(str(row["path"]), int(row["start_line"]), int(row["end_line"]))
             for _, row in chosen]
    out: list[tuple[float, Row]] = []
    for score, row, first, last in units:
        if len(out) >= n:
            break
        path = str(row["path"])
        # lines next to a result are read with it (``pick_units`` merges them): not on their own
        if any(p == path and a - 1 <= last and first <= b + 1 for p, a, b in taken):
            continue
        if row["type"] == "chunk":
            lines = unit_lines(row, first, last)
            row = {**row, "start_line": first, "end_line": last,
                   "content": "\n".join(lines.get(k, "") for k in range(first, last + 1))}
        taken.append((path, first, last))
        out.append((score, row))
    return out


def _by_words(store: Store, q: RecallQuery, now: datetime, candidates: dict[int, Row],
              text: dict[int, float], taken: Sequence[tuple[float, Row]],
              parts: Sequence[str]) -> list[tuple[float, Row]]:
    """With a model, the units that hold most of the question's words, ranked lexically, as
    more runners-up (``(RUNNERS_UP - 1) × k``, not touching ``taken``): an update often words
    the change with few of the question's words and a sentence a model ranks low ("Avisen har
    hævet prisen" for "hvad koster avisabonnementet?"), yet it shares a word of the question
    with what it replaces. Only read for updates of the shown results."""
    n = (RUNNERS_UP - 1) * q.k
    best = sorted((i for i in text if text[i] > 0), key=lambda i: (-text[i], i))[:n]
    units = passage_units(store, q, now, {i: candidates[i] for i in best}, text, None,
                          "lexical", Ranking(), parts=parts)
    units.sort(key=lambda u: (-u[0], u[1]["path"], u[2]))
    return _runners_up(units, taken, n)


def _cited(picked: Picked) -> Row:
    """The row a picked unit answers with: a chunk's narrowed to the cited lines."""
    if not picked.mergeable:
        return picked.row
    content = "\n".join(picked.lines.get(n, "") for n in range(picked.start, picked.end + 1))
    cited = picked.row.copy()
    cited["start_line"], cited["end_line"], cited["content"] = picked.start, picked.end, content
    return cited


def _result(store: Store, row: Row, score: float, terms: list[list[str]],
            by: Replacement | None = None, lift: float | None = None) -> Result:
    """A cited result; its score shown on [0, 1], and marked weak when it holds few of the
    query's words (its text, entities and path) and stands out little semantically."""
    if row["type"] == "opinion":
        return _opinion_result(row, score, terms)
    ents = queries.entity_names(store, int(row["id"]))
    start, end = int(row["start_line"]), int(row["end_line"])
    # The citation is the ranked unit (a passage range, a fact); within it the snippet shows the
    # best-matching lines only: narrowing the citation to those was measured on LoCoMo to drop
    # evidence that lies elsewhere in the unit (BENCHMARKS.md).
    snippet, _, _ = make_snippet(row["content"], terms)
    uncommitted = row["commit_id"] == WORKTREE
    source = citation(row)
    kind = row["kind"]
    weak = is_weak(
        term_share(terms, " ".join([str(row["content"]), *ents, str(row["path"])])), lift)
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
        score=shown_score(score),
        file_class=row["class"],
        uncommitted=uncommitted,
        superseded_by=None if by is None else citation(by.row),
        superseded_basis=None if by is None else by.basis,
        superseded_on=None if by is None else stated(by.row),
        weak=weak,
    )




def _opinion_result(row: Row, score: float, terms: list[list[str]]) -> Result:
    from gitmem.recall.opinions import opinion_view

    view = opinion_view(row)
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
        score=shown_score(score),
        file_class="bank",
        opinion=OpinionRef(view.opinion_id, view.updated, view.evidence),
        weak=is_weak(term_share(terms, " ".join([str(row["content"]), *row["entities"]])), None),
    )
