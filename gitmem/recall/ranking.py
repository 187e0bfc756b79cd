"""Ranking, as pure functions of rows: recency decay, exact file matches, near-duplicate
removal, snippets, and the benchmarked weights. No I/O; ``recall.search`` feeds it rows."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from gitmem.parse.stemming import stem_text, word_stems
from gitmem.parse.textfold import STOPWORDS, fold, ideographs

if TYPE_CHECKING:
    from gitmem.index.queries import Row

SNIPPET_CHARS = 700
# The weight an old daily note keeps (recency decay never drops below it). Tuned on LoCoMo,
# whose questions do not favour recent sessions: see BENCHMARKS.md.
DECAY_FLOOR = 0.9
PREFER_BOOST = 0.5  # a date phrase with topic words: in-window results are preferred
# A phrase that counts back ("two weeks ago") is said loosely: a result just outside its window
# keeps this share of the boost, fading to none as far outside as the phrase counts back
# (``search._nearness``). Measured on 34 questions written for it (bench/bench_reldates.py,
# BENCHMARKS.md "Said loosely"), hybrid: answers said of a day a little outside the window in
# the top 5, 2 of 12 → 6 at 0.5 (8 at 1.0); answers in the window above a same-topic line just
# outside it, 11 of 11 → 10 at 0.5 (5 at 1.0).
FADE_EDGE = 0.5
IMPORTANCE = {"fact": 1.0, "chunk": 0.9}
_WORD = re.compile(r"\w+")
Unit = tuple[float, "Row", int, int]  # a ranked unit: (score, row, first line, last line)


# Lexical mode ranks passages by their own BM25 and their chunk's, half and half (BENCHMARKS.md).
LEXICAL_CHUNK_SHARE = 0.5
# Passages among this many best-ranked units join a touching earlier result (see pick_units).
MERGE_WINDOW = 100
# A line that asks (a turn of a conversation, a "- Q:" in notes) is what a question about its
# answer matches best, in words and in meaning; the reply after it shares neither. The reply
# scores at least this share of the asking unit's relevance, so it is read with it (it joins
# the asking line's result when the two touch and rank among the MERGE_WINDOW best; after a
# blank line it is a result of its own, right after). LoCoMo dev hybrid at 2,000 tokens: 0.857
# without, 0.862 / 0.867 / 0.869 / 0.866 with 0.3 / 0.5 / 0.7 / 0.9 (lexical 0.859 either way);
# LongMemEval (never tuned on) unchanged only once lines inside a long reply (indented) and
# replies of several lines were left out (BENCHMARKS.md, "The line that answers").
ANSWER_SHARE = 0.7
# In a conversation (lines that are chat turns, ``turn_speaker``) the next turn replies to a
# turn and the one after it goes on from it: what a question names is said in one turn and its
# answer in the next two ("I'm adopting" / "You'll be an awesome mom"; "Practice first" / "Is it
# easy?" / "You need a gamepad and timing"). They score at least these shares of the turn's
# relevance, in hybrid and semantic recall (in lexical recall half a unit's score is its chunk's
# already: LoCoMo lexical 0.806 / 0.862 without, 0.805 / 0.860 with). LoCoMo dev hybrid at 1,000
# / 2,000 tokens: 0.811 / 0.872 without, 0.826 / 0.881 with (0.5, 0.4) (plateau, measured
# before ``_conversation``: (0.4, 0.4) 0.822 / 0.882, (0.6, 0.4) 0.826 / 0.881; the next turn
# alone, 0.5: 0.821 / 0.876). Lines that are no turns (the cross-language set's notes) and
# LongMemEval's 110 cached questions (never tuned on) are unchanged: BENCHMARKS.md, "The turns
# after a turn".
TURN_SHARES = (0.5, 0.4)
# "…?" ("？", "؟"), maybe closed by quotes or emphasis, then maybe "(an aside)" and comments
# (no two optional runs of spaces side by side: a line of megabytes of them stays linear), read
# in a line's tail: every "?" of a line is tried, each reading to the end for a "-->"
ASKS_TAIL = 1_000
_ASKS = re.compile(r"[?？؟][!\"'”’»*_]*\s*(?:\([^()]*\)\s*)?(?:<!--.*?-->\s*)*$")
# Passage BM25 matches words by their first five letters ("painted" meets "painting"; CJK
# bigrams and short words are whole): truncation, which needs no language (BENCHMARKS.md).
STEM_CHARS = 5
BM25_K1, BM25_B = 1.2, 0.75
# A passage's word score adds this share of its BM25 for the query's neighbouring searched words
# held side by side ("high school", "team lead"): the words of one name together, not apart in
# lines about other things. LongMemEval dev (235 questions) without / with: lexical all@5 0.830
# / 0.847, evidence@1000 0.590 / 0.613; hybrid any@5 0.983 / 0.987, all@5 0.885 / 0.894; on the
# 125 of them never looked at while choosing the weight, hybrid gains evidence turns only and
# lexical all@5 0.904 / 0.928. It costs LoCoMo dev hybrid 0.826 / 0.881 -> 0.824 / 0.877 (0.5:
# 0.827 / 0.881, and no LongMemEval question gained; lexical 0.806 / 0.862 -> 0.809 / 0.860)
# and one question of the held-out chat log, lexical. BENCHMARKS.md, "Words side by side".
PAIR_WEIGHT = 1.0


# The score a result shows is in [0, 1] (``shown_score``): 0.9 × relevance × decay × importance
# for ordinary results; the ones an exact file-name match or a date phrase's window put first
# show above 0.9. Strictly increasing, so the shown scores keep the ranking's order.
SHOWN_PLAIN = 0.9
# A weak match holds under half of the words that name the query's topic (``parse.topics``: not
# its stop, question and particle words, in any supported language) and is semantically no
# closer to the query than SEMANTIC_STRONG of the way from a typical memory item's similarity to
# a perfect one (measured on the sample workspace, best result of 14 queries: about nothing in
# it 0.13-0.19 with multilingual-e5-small and 0.13-0.25 with all-MiniLM-L6-v2, real ones
# 0.24-0.55 and 0.34-0.65). bench/bench_weak.py (six languages, a third held out) would take it
# to 0.35 with no answer marked weak, but a paraphrase sharing no word ("birthday trip abroad" /
# "Peter flew to Morocco to celebrate Andy turning forty", tests/test_real_model.py) stands
# between 0.2 and 0.3 with all-MiniLM-L6-v2: the threshold errs towards calling a match a match
# (a correct answer marked weak is the worse mistake; docs/json.md, BENCHMARKS.md).
# 0.2 until chunks were embedded line by line (issue 41): the typical similarity, taken from
# each item's first unit, fell a little, and "purple elephant tango" rose to 0.202 over a note
# about a piano (all-MiniLM-L6-v2 q8_0); 0.22 stays under every real match measured.
TERMS_STRONG = 0.5
SEMANTIC_STRONG = 0.22


def shown_score(raw: float) -> float:
    """The ranking's score mapped onto [0, 1], strictly increasing: ``SHOWN_PLAIN × raw`` up to
    1 (relevance × decay × importance never exceeds it), then the boosts of an exact file-name
    match (+1) and of a preferred window (+0.5) squeezed into (0.9, 1)."""
    if raw <= 1.0:
        return SHOWN_PLAIN * max(0.0, raw)
    return 1.0 - (1.0 - SHOWN_PLAIN) * math.exp(-(raw - 1.0))


def importance_factor(importance: int | None) -> float:
    """OpenClaw's importance multiplier (memory-core ``importanceMultiplier``): 0.75 + 0.05 N
    for N in 1..10, 1 without one (parse.annotations reads N)."""
    if importance is None:
        return 1.0
    return 0.75 + max(1, min(10, importance)) * 0.05


def stated_importance(notes: Sequence[tuple[int, int | None, str]], first: int,
                      last: int) -> int | None:
    """The highest importance annotated on lines ``first``..``last`` (None: none stated)."""
    levels = [n for line, n, _ in notes if n is not None and first <= line <= last]
    return max(levels) if levels else None


def stated_triggers(notes: Sequence[tuple[int, int | None, str]], first: int,
                    last: int) -> tuple[str, ...]:
    """The trigger phrases annotated on lines ``first``..``last``, in order, once each."""
    return tuple(dict.fromkeys(p for line, _, phrases in notes if first <= line <= last
                               for p in phrases.split("; ") if p))


def term_share(terms: Sequence[Sequence[str]], text: str) -> float:
    """The share of the query's terms that ``text`` holds: a term's words in order, for a
    one-word term a word with its first ``STEM_CHARS`` letters (as passage BM25 matches) or
    with its Snowball stem (as the index's stems column matches: "play" in "Emma plays", "call"
    in "called her"), for a term with Han characters each of them (as the index finds 猫 in
    一只猫, 住む in 住んでいる)."""
    if not terms:
        return 1.0
    words = _WORD.findall(fold(text))
    prefixes = {w[:STEM_CHARS] for w in words}
    han = set(ideographs(text))
    stemmed: list[set[str]] = []  # the text's stems, made when a word needs them

    def same_stem(word: str) -> bool:
        if not stemmed:
            stemmed.append(set(stem_text(text).split()))
        return not stemmed[0].isdisjoint(word_stems(word))

    def held(term: Sequence[str]) -> bool:
        if len(term) == 1 and (term[0][:STEM_CHARS] in prefixes or same_stem(term[0])):
            return True
        chars = ideographs("".join(term))
        if chars and han.issuperset(chars):
            return True
        n = len(term)
        return any(words[i : i + n] == list(term) for i in range(len(words) - n + 1))

    return sum(1 for term in terms if held(term)) / len(terms)


def semantic_lift(cosine: float, typical: float) -> float:
    """How far a cosine similarity stands above the query's typical similarity to this memory's
    items, as a share of the way to 1 (0: no closer than a typical item). Models differ in
    their baseline (all-MiniLM-L6-v2 ~0.05, multilingual-e5-small ~0.77); the lift does not.
    Hybrid ranking weighs the lift, not the raw cosine, against the words: multilingual-e5-small
    puts nearly everything between 0.75 and 0.9, and weighed raw, a weak word match or a unit's
    importance outweighed a strong semantic one (issue 41)."""
    if typical >= 1.0:
        return 0.0
    return max(0.0, (cosine - typical) / (1.0 - typical))


def is_weak(share: float, lift: float | None) -> bool:
    """A weak match: under half of the query's terms, and (when vectors took part) little
    semantic lift. An agent reads it as "nothing relevant here"."""
    return share < TERMS_STRONG and (lift is None or lift < SEMANTIC_STRONG)


@dataclass(frozen=True)
class Ranking:
    """How candidates are scored. The defaults are the shipped, benchmarked ones (see
    BENCHMARKS.md); ``openclaw()`` is the published hybrid baseline."""

    vector_weight: float = 0.8
    text_weight: float = 0.2
    decay: bool = True
    diversity: bool = True
    vector_candidates: int = 100  # items; 2x as many passages are fetched by Hamming distance
    # Rank passages (the ~96-token parts of a chunk that are embedded) rather than whole chunks,
    # and cite each passage's lines; adjacent or overlapping ones are merged into one range.
    passages: bool = True
    chunk_text: float = 0.2  # hybrid: share of the chunk's BM25 in a passage's text score
    answer_share: float = ANSWER_SHARE  # the unit after a line that asks (``lift_replies``)
    turn_shares: tuple[float, float] = TURN_SHARES  # the two turns after a turn (same)
    counted_back: bool = True  # a line's "yesterday" is of its day (``search._boost``)
    fade: bool = True  # "two weeks ago" is preferred a little less a few days off (``_nearness``)
    pairs: float = PAIR_WEIGHT  # a passage's BM25 of the query's word pairs (``pair_scores``)

    @classmethod
    def openclaw(cls) -> Ranking:
        return cls(vector_weight=0.7, text_weight=0.3, decay=False, diversity=False,
                   passages=False)


def decay(row: Row, now: date, half_life: float, floor: float) -> float:
    """Daily notes lose weight with age (half-life), down to ``floor``; other files never."""
    if row["class"] != "daily":
        return 1.0
    last = row["event_end"] or row["day"]
    if not last:
        return 1.0
    age = max(0, (now - date.fromisoformat(str(last)[:10])).days)
    return floor + (1 - floor) * math.pow(0.5, age / half_life)


def exact_file_match(query: str, path: str) -> bool:
    q = query.strip().casefold()
    name = path.rsplit("/", 1)[-1].casefold()
    return q in (path.casefold(), name, name.removesuffix(".md"))


def redundant(
    row: Row, words: frozenset[str], kept: Sequence[tuple[str, int, int, frozenset[str]]]
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


def stems(text: str) -> list[str]:
    """A text's folded words cut to their first ``STEM_CHARS`` letters, for passage BM25."""
    return [w[:STEM_CHARS] for w in _WORD.findall(fold(text))]


# A text longer than this many tokens is scored as if it were this long: BM25 divides by length,
# so a pasted log line of megabytes that holds every word of a query scored below a line that
# holds one of them (a passage is about 96 tokens; a long paragraph a few hundred).
BM25_MAX_LENGTH = 1_000


def bm25_pool(query: Sequence[str], docs: Sequence[Sequence[str]],
              k1: float = BM25_K1, b: float = BM25_B,
              lengths: Sequence[int] | None = None) -> list[float]:
    """Okapi BM25 of each token list in ``docs`` for the ``query`` tokens, with document
    frequencies and lengths taken from ``docs`` itself (the candidates: how rare a word is among
    them is what tells them apart), a length counted up to ``BM25_MAX_LENGTH``; ``lengths``,
    when given, are the documents' lengths (``docs`` then holds only the tokens searched)."""
    if not docs:
        return []
    wanted = set(query)
    counts: list[dict[str, int]] = []
    df: dict[str, int] = {}
    for doc in docs:
        tf: dict[str, int] = {}
        for token in doc:
            if token in wanted:
                tf[token] = tf.get(token, 0) + 1
        counts.append(tf)
        for token in tf:
            df[token] = df.get(token, 0) + 1
    n = len(docs)
    lengths = [min(size, BM25_MAX_LENGTH)
               for size in (lengths if lengths is not None else [len(doc) for doc in docs])]
    avgdl = sum(lengths) / n or 1.0
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    out: list[float] = []
    for length, tf in zip(lengths, counts, strict=True):
        norm = k1 * (1 - b + b * length / avgdl)
        out.append(sum((idf[t] * f * (k1 + 1) / (f + norm) for t, f in tf.items()), 0.0))
    return out


def pair_scores(pairs: Sequence[tuple[str, str]], docs: Sequence[Sequence[str]]) -> list[float]:
    """BM25 of each of ``docs`` (``stems``) for the query's neighbouring word ``pairs``
    (``parse.textfold.query_pairs``), each pair one token that a document holds where its two
    words stand side by side (as stems), its rarity taken among ``docs`` as a word's is."""
    if not pairs:
        return [0.0] * len(docs)
    wanted = {(a[:STEM_CHARS], b[:STEM_CHARS]) for a, b in pairs}
    firsts = {a for a, _ in wanted}
    held = [[f"{a} {b}" for a, b in itertools.pairwise(doc)
             if a in firsts and (a, b) in wanted] for doc in docs]
    return bm25_pool([f"{a} {b}" for a, b in wanted], held, lengths=[len(doc) for doc in docs])


@dataclass
class Picked:
    """A result being assembled from ranked units: one row (fact, opinion, or chunk passage)
    or several adjacent passages of one file merged into a single line range."""

    score: float
    row: Row
    start: int
    end: int
    lines: dict[int, str]  # line number -> text, for the cited range
    mergeable: bool  # chunk passages merge with their neighbours; facts and opinions do not
    version: Any  # lines of different file versions never merge
    line_scores: dict[int, float] = field(default_factory=dict)  # a line's own unit's score


def pick_units(
    units: Sequence[Unit], k: int, diversity: bool,
    merge_window: int = MERGE_WINDOW,
) -> list[Picked]:
    """The first ``k`` results from units ranked best first, ``(score, row, first, last)``.

    A unit whose lines an earlier result already cites is dropped. Among the ``merge_window``
    best units, a chunk passage that touches or overlaps an earlier passage result of the same
    file extends that result's range instead of taking a place of its own: the neighbours of a
    good passage are read with it (measured on LoCoMo: the context a hit needs is next to it),
    and the results cover distinct places. With ``diversity``, a unit whose words are ≥90% those
    of an earlier result (a copy elsewhere) is dropped too.
    """
    chosen: list[Picked] = []
    kept: list[tuple[str, int, int, frozenset[str]]] = []
    for n, (score, row, first, last) in enumerate(units):
        if len(chosen) >= k and n >= merge_window:
            break
        mergeable = row["type"] == "chunk"
        version = (row["path"], row.get("commit_id") if row.get("valid_to") is not None else None)
        same = [p for p in chosen if p.version == version]
        if any(p.start <= first and last <= p.end for p in same):
            continue
        lines = unit_lines(row, first, last)
        touching = [p for p in same if p.mergeable and mergeable
                    and p.start - 1 <= last and first <= p.end + 1]
        if touching and n < merge_window:
            target = touching[0]
            target.lines.update(lines)
            for line in lines:
                target.line_scores[line] = max(target.line_scores.get(line, score), score)
            target.start, target.end = min(target.start, first), max(target.end, last)
            continue
        if len(chosen) >= k:
            continue
        words = frozenset(_WORD.findall(fold("\n".join(lines.values()))))
        probe: Row = {"path": row["path"], "start_line": first, "end_line": last}
        if diversity and redundant(probe, words, kept):
            continue
        kept.append((row["path"], first, last, words))
        chosen.append(Picked(score, row, first, last, lines, mergeable, version,
                             dict.fromkeys(lines, score)))
    return chosen


def asks(line: str) -> bool:
    """A line that ends with a question mark, full-width or Arabic too, maybe closed by quotes
    or emphasis and followed by an aside in parentheses or ``<!-- … -->`` annotations, all
    within its last ``ASKS_TAIL`` characters."""
    return bool(_ASKS.search(line.rstrip()[-ASKS_TAIL:]))


def lift_replies(units: list[Unit], share: float = ANSWER_SHARE,
                 turn_shares: tuple[float, float] = TURN_SHARES,
                 boost: Callable[[Row, tuple[int, int]], float] = lambda row, lines: 0.0,
                 ) -> None:
    """In place: a reply is read with what it replies to. A chunk's unit of one line scores at
    least, plus its own ``boost`` (what the score adds to a unit's relevance: a window, a file
    name), ``share`` × the relevance of the unit before it when that unit ends with a line that
    asks (``asks``), with only blank lines between them; and in a conversation
    (``_conversation``), when both lines are chat turns, ``turn_shares[0]`` × the relevance of
    the turn right before it and ``turn_shares[1]`` × that of the turn before that (one turn
    between; blank lines do not count). No line indented (inside a list item or a reply of
    several lines: an assistant's clarifying questions are not a conversation's turns). The
    earlier unit's own score counts, never a lifted one."""
    top = max(share, *turn_shares)
    if top <= 0:
        return
    by_item: dict[int, list[int]] = {}  # a fact is one unit: only a chunk's units pair up
    for n, (_, row, _, _) in enumerate(units):
        by_item.setdefault(int(row["id"]), []).append(n)
    own = [unit[0] for unit in units]
    for members in by_item.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda n: units[n][2])
        row = units[members[0]][1]
        # what the score adds to each unit (``boost``), and its relevance: its own score less that
        extra = {n: boost(row, (units[n][2], units[n][3])) for n in members}
        gain = {n: max(0.0, own[n] - extra[n]) for n in members}
        start, chat = int(row["start_line"]), None
        for i in range(1, len(members)):
            reply, (_, _, first, last) = members[i], units[members[i]]
            earlier = members[max(0, i - 2) : i][::-1]  # the unit before it, then the one before
            if first != last or own[reply] >= extra[reply] + top * max(gain[n] for n in earlier):
                continue
            chat = chat or _conversation(str(row["content"]).split("\n"), any(turn_shares))
            weights = ((_reply_share(chat, start, units[n][3], first, back, share, turn_shares),
                        n) for back, n in enumerate(earlier))
            lifted = max((extra[reply] + w * gain[n] for w, n in weights if w > 0), default=0.0)
            if lifted > own[reply]:
                units[reply] = (lifted, *units[reply][1:])


def _conversation(lines: list[str], turns: bool) -> list[tuple[str, bool]]:
    """A row's lines, each with whether it is a turn of a conversation: a chat turn
    (``turn_speaker``) of a row where two speakers or more take turns and one speaks twice or
    more (a list of labels, "- Pros: …" / "- Cons: …" or "- Day 1: …" / "- Day 2: …", has each
    label once). With ``turns`` false, no line is (and the language tables are not loaded:
    lexical recall starts without them)."""
    if not turns:
        return [(line, False) for line in lines]
    from gitmem.parse.statements import turn_speaker

    who = [None if _indented(line) else turn_speaker(line) for line in lines]
    counts = Counter(w for w in who if w is not None)
    talk = len(counts) >= 2 and max(counts.values()) >= 2
    return [(line, talk and w is not None) for line, w in zip(lines, who, strict=True)]


def _reply_share(chat: list[tuple[str, bool]], start: int, said: int, first: int, back: int,
                 share: float, turn_shares: tuple[float, float]) -> float:
    """The share of line ``said``'s relevance that line ``first`` (``back`` units after it, 0
    or 1) scores at least: see ``lift_replies``. ``chat`` holds the row's lines from line
    ``start``, each with whether it is a conversation's turn (``_conversation``)."""
    if not start <= said < first < start + len(chat):
        return 0.0
    (before, turn_before), (reply, turn_reply) = chat[said - start], chat[first - start]
    between = [(line, turn) for line, turn in chat[said + 1 - start : first - start]
               if line.strip()]  # blank lines do not count
    if _indented(before) or _indented(reply) or any(_indented(line) for line, _ in between):
        return 0.0
    turns = turn_before and turn_reply
    if back == 0:
        if between:
            return 0.0
        return max(share if asks(before) else 0.0, turn_shares[0] if turns else 0.0)
    return turn_shares[1] if turns and [turn for _, turn in between] == [True] else 0.0


def _indented(line: str) -> bool:
    return line[:1].isspace()


def unit_lines(row: Row, first: int, last: int) -> dict[int, str]:
    """Line number -> text of lines ``first..last`` of a row's content."""
    lines = str(row["content"]).split("\n")
    start = int(row["start_line"])
    return {n: lines[n - start] for n in range(first, last + 1) if 0 <= n - start < len(lines)}
