"""Recall's search: candidates from the index (words, vectors), scored by ``recall.ranking``,
then made into cited results (docs/json.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
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
    query_pairs,
    query_terms,
)
from gitmem.parse.topics import DANISH_STOP, topical_terms
from gitmem.recall.ranking import (
    _WORD,
    BM25_MAX_LENGTH,
    DECAY_FLOOR,
    FADE_EDGE,
    IMPORTANCE,
    LEXICAL_CHUNK_SHARE,
    PREFER_BOOST,
    Picked,
    Ranking,
    Unit,
    bm25_pool,
    decay,
    exact_file_match,
    importance_factor,
    is_weak,
    lift_replies,
    make_snippet,
    pair_scores,
    pick_units,
    redundant,
    semantic_lift,
    shown_score,
    stated_importance,
    stated_triggers,
    stems,
    term_share,
)
from gitmem.recall.update_marks import Replacement, citation, current_first, marks, stated

if TYPE_CHECKING:
    from gitmem.index.signbits import SignBits

CANDIDATES_MIN = 200
# Whatever k is asked, the ranking is made for at least POOL_K results and cut to k, so that the
# first k results of a longer answer are the answer at k (k = 1 ... POOL_K).
POOL_K = 10
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
    fade_days: float = 0.0  # how far outside ``prefer`` its preference fades out


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
class Newer:
    """A hint: a later statement about the same subject that may have changed a result."""

    source: str  # its citation
    date: str  # the day it was stated
    about: str  # the subject, as the result names it ("@Alice"), or ''

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "date": self.date, "about": self.about or None}


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
    importance: int | None = None  # the highest <!-- importance: N --> on its lines
    triggers: tuple[str, ...] = ()  # the <!-- trigger: ... --> phrases on its lines
    uncommitted: bool = False  # from 'gitmem index --worktree': not in any commit yet
    superseded_by: str | None = None  # the citation of a later fact that replaced this one
    superseded_basis: str | None = None  # declared (by its writer) | rule
    superseded_on: str | None = None  # the day the replacing fact was stated
    superseded_attribute: str | None = None  # the attribute both set ("residence")
    superseded_reason: str | None = None  # the words that made it ("moved to")
    newer: Newer | None = None  # a later statement that may have changed it (a hint)
    opinion: OpinionRef | None = None  # opinion results of bank/opinions.md
    weak: bool = False  # few of the query's words and little semantic lift (ranking.is_weak)
    truncated: bool = False  # content cut at recall.max_content_chars (present.bounded)

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
            "importance": self.importance,
            "triggers": list(self.triggers),
            "uncommitted": self.uncommitted,
            "superseded_by": self.superseded_by,
            "superseded_basis": self.superseded_basis,
            "superseded_attribute": self.superseded_attribute,
            "superseded_reason": self.superseded_reason,
            "newer": self.newer.to_json() if self.newer else None,
            "opinion": self.opinion.to_json() if self.opinion else None,
            "weak": self.weak,
            "truncated": self.truncated,
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
    if not terms:  # a listing (``recall.timing.time_filters``): newest first
        rows = queries.browse(store, flt, limit)
        return [(row, 1.0 - n / (limit + 1)) for n, row in enumerate(rows)]
    words = words or query_words(store, q.text)
    match = build_match(terms, words.stems, words.prefixes)
    return queries.lexical(store, flt, match, limit, build_han_match(query_ideographs(q.text)))


# A Danish genitive is a name or noun with -s ("Mettes job", "Idas husleje"); a word that ends
# in s may be the plain word too ("Jens", "hus", "Mads"), so the -s is only taken off when the
# memory never writes the word as asked and does write it without the s (``strip_genitives``).
_GENITIVE_MIN = 4  # letters, the s included: "Bos" stays


def strip_genitives(store: Store, text: str) -> str:
    """A Danish question with its genitives written as the memory writes the name or noun:
    "Hvad hedder Idas kat?" asks about "Ida". Only a word the index does not hold, whose form
    without the final s it holds and which is no stop word; other text is left as it is."""
    if not danish_text(text):
        return text
    words = {written: token for written, token in _s_words(text)}
    if not words:
        return text
    known = queries.known_terms(store, [t for t in words.values()] +
                                [t[:-1] for t in words.values()])
    strip = {written for written, token in words.items()
             if token not in known and token[:-1] in known and token[:-1] not in DANISH_STOP}
    if not strip:
        return text
    return " ".join(_without_s(piece, strip) for piece in text.split())


def _without_s(piece: str, strip: set[str]) -> str:
    letters = _WORD.search(piece)
    if letters is None or letters.group(0) not in strip:
        return piece
    return piece[:letters.start()] + letters.group(0)[:-1] + piece[letters.end():]


def _s_words(text: str) -> list[tuple[str, str]]:
    """(the letters as written, folded) of each plain word of a text that ends in s."""
    out = []
    for word, token in plain_words(text):
        letters = _WORD.search(word)
        if letters and len(token) >= _GENITIVE_MIN and token.endswith("s") and token.isalpha():
            out.append((letters.group(0), token))
    return out


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
    text: str = ""  # the query's text as searched (``strip_genitives``)


def search_words(store: Store, q: RecallQuery, entity_keys: Sequence[Sequence[str]],
                 searched: bool = True) -> WordsSearched:
    """The words of ``q`` searched (``searched``), as ``rank`` begins; a warm process does it
    while the query is embedded."""
    q = replace(q, text=strip_genitives(store, q.text))
    flt = _filter(q, entity_keys)
    words = query_words(store, q.text) if query_terms(q.text) else QueryWords({}, {})
    limit = max(CANDIDATES_MIN, q.k * 20)
    return WordsSearched(flt, words,
                         lexical_candidates(store, q, flt, limit, words) if searched else [],
                         q.text)


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
    pool = max(q.k, POOL_K)
    first = first or search_words(store, q, entity_keys,
                                  searched=not (mode == "semantic" and qvec is not None))
    q = replace(q, text=first.text, fade_days=q.fade_days if ranking.fade else 0.0)
    flt, words, lexical = first.flt, first.words, first.lexical
    if not query_terms(q.text):  # no words: what was written, newest first, as listed
        return _marked(store, q, flt, _listed(lexical, q.k), [], None)
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
    for item, notes in queries.annotations_of(store, list(rows)).items():
        rows[item]["annotations"] = notes  # <!-- importance --> scales the score (_score)
    if q.prefer is not None and ranking.counted_back:  # "yesterday" is preferred too (_boost)
        dated = [i for i, row in rows.items() if not row["preferred"] and row["day"]]
        for item, held in queries.lines_counting_back(store, dated, q.prefer).items():
            rows[item]["counted_back"] = held
    if q.prefer is not None and q.fade_days > 0:  # once a row, not once each of its units
        for row in rows.values():
            if not row["preferred"]:
                row["nearness"] = _nearness(q, row)
    cosines: dict[tuple[int, int, int], float] = {}  # (item, first, last line) -> cosine
    opinions: list[tuple[float, Row]] = []
    if "opinion" in q.kinds:  # the opinions of bank/opinions.md, beside O entries
        from gitmem.recall.opinions_view import opinion_candidates  # --kind O only: start-up time

        opinions = opinion_candidates(store, query_terms(q.text), q.as_of_seq, entity_keys,
                                      q.window)
    terms = query_terms(q.text)
    qvec = qvec if mode != "lexical" else None
    if ranking.passages:
        # The passages of the items that score best whole (cheap) are ranked (costly)
        items = sorted(rows, key=lambda i: -_score(q, now, rows[i], text.get(i, 0.0),
                                                   vec.get(i, 0.0), qvec, mode, ranking))
        rows = {i: rows[i] for i in items[:max(PASSAGE_ITEMS_MIN, PASSAGE_ITEMS * pool)]}
        units = passage_units(store, q, now, rows, text, qvec, mode, ranking, psim, cosines,
                              words.parts, scale)
        # lexical: half a unit's score is its chunk's, the turns around a match score with it
        turns = ranking.turn_shares if mode != "lexical" else (0.0, 0.0)
        lift_replies(units, ranking.answer_share, turns, partial(_boost, q))
        units.extend((score, row, int(row["start_line"]), int(row["end_line"]))
                     for score, row in opinions)
        units.sort(key=lambda u: (-u[0], u[1]["path"], u[2]))
        chosen = _as_facts(store, flt, pick_units(units, pool, ranking.diversity))
    else:
        scored = [(_score(q, now, row, text.get(i, 0.0), vec.get(i, 0.0), qvec, mode, ranking),
                   row) for i, row in rows.items()]
        chosen = _diverse(scored + opinions, pool, ranking.diversity)  # whole items: cheap
    if typical is None and qvec is not None:
        typical = queries.typical_similarity(store, qvec)
    return _marked(store, q, flt, chosen[:q.k], terms,
                   None if typical is None else partial(_lift, cosines=cosines, typical=typical))


def _as_facts(store: Store, flt: ItemFilter, picked: list[Picked]) -> list[tuple[float, Row]]:
    """Picked units as the rows that answer. A text unit that is one Retain entry's lines (a
    list item of a Retain section) answers as that fact: with its kind, entities, id, marks
    and annotations, once. A range of several entries (a passage and the neighbours merged
    into it) answers as its facts, each with the score of its own lines' unit, so the
    neighbours read with a good passage take neither its rank nor the places after it."""
    out: list[tuple[float, Row]] = []
    seen: set[int] = set()
    for p in picked:
        row = _cited(p)
        rows = [row]
        if row["type"] == "chunk":
            path, first, last = str(row["path"]), int(row["start_line"]), int(row["end_line"])
            fact = queries.fact_covering(store, path, first, last, flt)
            rows = [fact] if fact is not None else _only_facts(store, flt, row) or rows
        for one in rows:
            score = p.score
            if one["type"] == "fact":
                if int(one["id"]) in seen:
                    continue
                seen.add(int(one["id"]))
                if len(rows) > 1:
                    own = [p.line_scores[n] for n in range(int(one["start_line"]),
                                                           int(one["end_line"]) + 1)
                           if n in p.line_scores]
                    score = max(own, default=score)
            out.append((score, one))
    out.sort(key=lambda pair: -pair[0])  # stable: ties keep the ranked order
    fetched = [int(r["id"]) for _, r in out if "annotations" not in r]
    notes = queries.annotations_of(store, fetched) if fetched else {}
    for _, one in out:  # a fact that stands for its unit keeps its lines' annotations
        if int(one["id"]) in notes:
            one["annotations"] = notes[int(one["id"])]
    return out


def _only_facts(store: Store, flt: ItemFilter, row: Row) -> list[Row]:
    """The facts a text unit is made of, when its every line of text is a Retain entry's (a
    Retain section's entries, under their heading; the unit may cut the last one short); else
    none."""
    first, last = int(row["start_line"]), int(row["end_line"])
    facts = queries.facts_meeting(store, str(row["path"]), first, last, flt)
    if not facts:
        return []
    held = {n for f in facts for n in range(int(f["start_line"]), int(f["end_line"]) + 1)}
    lines = str(row["content"]).split("\n")
    texts = [first + i for i, line in enumerate(lines)
             if line.strip() and not line.lstrip().startswith("#")]
    return facts if all(n in held for n in texts) else []


def _listed(browsed: list[tuple[Row, float]], k: int) -> list[tuple[float, Row]]:
    """The first ``k`` items of a listing, without the text chunks that only repeat listed
    facts (a Retain section's lines, its heading): the facts say it with their kind."""
    held: dict[str, set[int]] = {}
    for row, _ in browsed:
        if row["type"] == "fact":
            held.setdefault(str(row["path"]), set()).update(
                range(int(row["start_line"]), int(row["end_line"]) + 1))

    def repeats(row: Row) -> bool:
        lines, facts = str(row["content"]).split("\n"), held.get(str(row["path"]), set())
        return row["type"] == "chunk" and all(
            not line.strip() or line.lstrip().startswith("#") or n in facts
            for n, line in enumerate(lines, int(row["start_line"])))

    return [(score, row) for row, score in browsed if not repeats(row)][:k]


def _marked(store: Store, q: RecallQuery, flt: ItemFilter, chosen: list[tuple[float, Row]],
            terms: list[list[str]], lift: Callable[[Row], float | None] | None) -> list[Result]:
    """The chosen results as cited ones, after knowledge updates, from the graph the index
    stored: a result a later statement replaced ranks below it and is marked; one a later
    statement may have changed carries a hint."""
    found = marks(store, q.text, chosen, flt)
    # a result is weak by the share it holds of the words that name the topic: "Hvad laver
    # Mette?" is answered by "Mette arbejder som sygeplejerske" (not by "hvad", "laver")
    asked = topical_terms(q.text) or terms
    return [_result(store, row, score, terms, newer, hint,
                    None if lift is None else lift(row), asked)
            for score, row, newer, hint in current_first(chosen, found, q.k)]


def _lift(row: Row, *, cosines: dict[tuple[int, int, int], float],
          typical: float) -> float | None:
    """The semantic lift of a result (its best passage within the cited lines); None when its
    item has no vector (not embedded yet)."""
    item, start, end = int(row["id"]), int(row["start_line"]), int(row["end_line"])
    inside = [c for (i, first, last), c in cosines.items()
              if i == item and start <= first and last <= end]
    return None if not inside else semantic_lift(max(inside), typical)


def _score(q: RecallQuery, now: datetime, row: Row, words: float, cosine: float | None,
           qvec: bytes | None, mode: RecallMode, ranking: Ranking,
           lines: tuple[int, int] | None = None) -> float:
    """A unit's score: relevance by mode, × recency decay × importance, + the preferred
    window's boost, + an exact file-name match. Importance is the result type's, times the
    factor of the highest ``<!-- importance: N -->`` on the unit's ``lines`` (a fact's: all of
    them). A unit without a vector (``cosine`` None: not
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
    notes = row.get("annotations")
    if notes:
        first, last = lines or (int(row["start_line"]), int(row["end_line"]))
        score *= importance_factor(stated_importance(notes, first, last))
    return score + _boost(q, row, lines)


def _boost(q: RecallQuery, row: Row, lines: tuple[int, int] | None = None) -> float:
    """What ``_score`` adds to a unit's relevance: the preferred window's boost (its row is in
    the window, or one of its ``lines`` counts back into it: "yesterday" in the next day's
    note; outside it, what ``rank`` read of its nearness, ``_nearness``), an exact file-name
    match. Without ``lines``, the row's own."""
    preferred = row["preferred"] or (lines is not None and any(
        lines[0] <= n <= lines[1] for n in row.get("counted_back", ())))
    return PREFER_BOOST * (1.0 if preferred else row.get("nearness", 0.0)) + (
        1.0 if exact_file_match(q.text, row["path"]) else 0.0)


def _nearness(q: RecallQuery, row: Row) -> float:
    """The share of the preferred window's boost a row outside it keeps: ``FADE_EDGE`` a day
    outside, less by ``FADE_EDGE / q.fade_days`` each day further (June 20's "two weeks ago"
    is June 3..9: said of May 31, 20 days ago, it keeps 0.43; of May 19, none), 0 without a
    fade. Below the window's own boost: of two lines as relevant, the one in the window the
    question names ranks first."""
    if q.prefer is None or q.fade_days <= 0:
        return 0.0
    apart = queries.days_outside(row, q.prefer)
    if apart is None:
        return 0.0
    return FADE_EDGE * min(1.0, max(0.0, 1.0 - (apart - 1) / q.fade_days))


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
                  ) -> list[Unit]:
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
    raw = [0.0] * len(docs)
    if mode != "semantic" or lexical:
        raw = bm25_pool(query, docs)
        if ranking.pairs:
            raw = [score + ranking.pairs * pair
                   for score, pair in zip(raw, pair_scores(query_pairs(q.text), docs),
                                          strict=True)]
    top = max(raw, default=0.0) or 1.0
    share = LEXICAL_CHUNK_SHARE if lexical else ranking.chunk_text
    out: list[Unit] = []
    for (row, part, first, last), bm25, doc in zip(spans, raw, docs, strict=True):
        item = int(row["id"])
        # the index's BM25 of a text far longer than BM25_MAX_LENGTH (a pasted log line) says
        # more of its length than of its words: its passage's own score stands alone
        mixed = share if len(doc) <= BM25_MAX_LENGTH else 0.0
        words = (1 - mixed) * bm25 / top + mixed * text.get(item, 0.0)
        cosine = max(0.0, psim.get((item, part), 0.0)) if item in embedded else None
        if cosine is not None:
            if cosines is not None:
                cosines[(item, first, last)] = cosine
            if scale is not None:
                cosine = scale(cosine)
        out.append((_score(q, now, row, words, cosine, qvec, mode, ranking, (first, last)), row,
                    first, last))
    return out


def _cited(picked: Picked) -> Row:
    """The row a picked unit answers with: a chunk's narrowed to the cited lines."""
    if not picked.mergeable:
        return picked.row
    content = "\n".join(picked.lines.get(n, "") for n in range(picked.start, picked.end + 1))
    cited = picked.row.copy()
    cited["start_line"], cited["end_line"], cited["content"] = picked.start, picked.end, content
    return cited


def _result(store: Store, row: Row, score: float, terms: list[list[str]],
            by: Replacement | None = None, hint: Replacement | None = None,
            lift: float | None = None, asked: list[list[str]] | None = None) -> Result:
    """A cited result; its score shown on [0, 1], and marked weak when it holds few of the
    query's words (its text, entities, trigger phrases and path) and stands out little
    semantically."""
    if row["type"] == "opinion":
        return _opinion_result(row, score, terms if asked is None else asked)
    ents = queries.entity_names(store, int(row["id"]))
    start, end = int(row["start_line"]), int(row["end_line"])
    # The citation is the ranked unit (a passage range, a fact); within it the snippet shows the
    # best-matching lines only: narrowing the citation to those was measured on LoCoMo to drop
    # evidence that lies elsewhere in the unit (BENCHMARKS.md).
    snippet, _, _ = make_snippet(row["content"], terms)
    uncommitted = row["commit_id"] == WORKTREE
    source = citation(row)
    kind = row["kind"]
    triggers = stated_triggers(row.get("annotations", ()), start, end)
    weak = is_weak(
        term_share(terms if asked is None else asked,
                   " ".join([str(row["content"]), *ents, *triggers, str(row["path"])])), lift)
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
        importance=stated_importance(row.get("annotations", ()), start, end),
        triggers=triggers,
        uncommitted=uncommitted,
        superseded_by=None if by is None else citation(by.row),
        superseded_basis=None if by is None else by.basis,
        superseded_on=None if by is None else stated(by.row),
        superseded_attribute=None if by is None else by.attribute or None,
        superseded_reason=None if by is None else by.reason or None,
        newer=None if hint is None else Newer(citation(hint.row), stated(hint.row),
                                              _subject(store, ents, hint)),
        weak=weak,
    )




def _subject(store: Store, ents: Sequence[str], hint: Replacement) -> str:
    """The entity a hint is about, as the result writes it: the first the later statement
    shares with it."""
    theirs = {entity_key(e) for e in queries.entity_names(store, int(hint.row["id"]))}
    shared = [e for e in ents if entity_key(e) in theirs]
    return (shared or [""])[0]


def _opinion_result(row: Row, score: float, terms: list[list[str]]) -> Result:
    from gitmem.recall.opinions_view import opinion_view

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
