"""Do two statements say the same thing? The matching rule shared by opinion updates
(docs/opinions-file.md) and knowledge updates (a later fact that replaces an earlier one).

Pure functions, no I/O. A statement becomes a bag of weighted terms:

* English, Danish and Russian words are stemmed with the Snowball stemmers (PyStemmer), then
  folded (case, diacritics: :func:`gitmem.parse.textfold.fold`); stop words are dropped.
* CJK text becomes character bigrams (a bigram of kana only weighs little: mostly particles and
  inflection) plus single kanji/hanzi at half weight, so ``好む`` and ``好き`` still meet.
* A few words are weighed down because they say little about *what* a statement is about:
  generic predicates (``prefer``, ``use``, ``have``) and update markers (``now``, ``old``,
  ``moved``). Capitalised words inside a sentence and numbers are usually *values* ("Copenhagen",
  "14:00"), not the attribute a statement is about, so they weigh half.
* A small synonym table maps a handful of everyday paraphrases to one term (``concise`` / ``short``,
  ``likes`` / ``prefers``).

The score is the weight the two bags share over the weight of the larger bag, so a short
statement cannot match a long one on a single word. :func:`same_claim` adds what the score cannot
see: the entities must agree, a negation or an antonym on one side only blocks the match, and the
shared part must hold at least one full-weight content term. Wrong merges are worse than missed
ones, so every doubt resolves to "not the same".
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from gitmem.parse.retain import entity_key
from gitmem.parse.textfold import (
    DANISH_STOPWORDS,
    RUSSIAN_STOPWORDS,
    STOPWORDS,
    _cjk,
    fold,
)

# The shared part must weigh at least this fraction of the larger statement. Tested paraphrases
# and updates score 0.5 or more, unrelated statements about the same entity 0.4 or less.
SAME_CLAIM_THRESHOLD = 0.45

_LIGHT = 0.3  # generic predicates and update markers
# A term that at least this share (and this many) of the compared statements hold is frame.
COMMON_SHARE = 0.2
COMMON_AT_LEAST = 5
_VALUE = 0.5  # capitalised words inside a sentence, numbers, single CJK ideographs


@dataclass(frozen=True)
class _Patterns:
    word: re.Pattern[str]
    cyrillic: re.Pattern[str]
    ja_negation: re.Pattern[str]
    parenthetical: re.Pattern[str]
    clause_end: re.Pattern[str]
    code: re.Pattern[str]
    dotted: re.Pattern[str]
    sentence_end: re.Pattern[str]


@functools.cache
def _cjk_script() -> re.Pattern[str]:
    """Compiled on the first non-ASCII statement: wide Unicode classes take milliseconds."""
    return re.compile(
        "(?P<ideographs>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
        "|(?P<katakana>[\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f]+)"
        "|(?P<hangul>[\uac00-\ud7af]+)"
    )


def _cjk_run() -> re.Pattern[str]:
    """A run of CJK characters: the pattern text folding uses (compiled once for both)."""
    return _cjk()[0]


@functools.cache
def _rx() -> _Patterns:
    """Compiled on first use, not at import: recall imports this module for every query."""
    return _Patterns(
        word=re.compile(r"[^\W_]+(?:'[^\W_]+)?"),
        cyrillic=re.compile("[\u0400-\u04ff]"),
        ja_negation=re.compile("ない|ません|なかった|ず(?:に|、|。|$)|不"),
        parenthetical=re.compile(r"\([^)]*\)|（[^）]*）"),
        clause_end=re.compile(r"[;:—–；。]| - "),
        code=re.compile(r"`([^`]+)`"),
        dotted=re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}\b"),
        sentence_end=re.compile("[.!?:;]|[。！？]"),
    )

_NEGATIONS = frozenset(
    "not no never nor none nothing cannot ikke aldrig ingen intet не нет никогда ни".split()  # noqa: SIM905 - a word list reads better as text
)

_ARTICLES = frozenset("the a an our my his her their its this that den det en et de".split())  # noqa: SIM905 - a word list reads better as text


@functools.cache
def stop_words() -> frozenset[str]:
    """The stop words of every language with words, and articles: what is no content word."""
    return STOPWORDS | DANISH_STOPWORDS | RUSSIAN_STOPWORDS | _ARTICLES


# Paraphrases mapped to one term. Keys and values are stems (after folding).
_SYNONYMS: dict[str, str] = {
    # preference
    "like": "prefer", "love": "prefer", "enjoy": "prefer", "favor": "prefer",
    "favour": "prefer", "want": "prefer", "foretræk": "prefer", "foretraek": "prefer",
    "elsk": "prefer", "lid": "prefer", "предпочита": "prefer", "предпочт": "prefer",
    "люб": "prefer", "нрав": "prefer",
    # short / long
    "concis": "short", "brief": "short", "terse": "short", "succinct": "short",
    "kortfat": "short", "kortfatted": "short", "kort": "short", "коротк": "short",
    "кратк": "short", "лаконичн": "short", "lengthi": "long", "verbos": "long", "lang": "long",
    "длин": "long", "длинн": "long",
    # replies
    "answer": "repli", "respons": "repli", "svar": "repli", "ответ": "repli",
    # change of place or value
    "migrat": "move", "relocat": "move", "switch": "move", "flytt": "move", "переех": "move",
    "перенес": "move", "перенёс": "move", "перенест": "move",
}
_ANTONYMS = frozenset({("short", "long"), ("prefer", "dislik"), ("prefer", "hate")})
# Terms that say little about what a statement is about.
_LIGHT_TERMS = frozenset(
    """prefer use have get make go move now current old new still today anymor longer default sinc
    becom chang updat upgrad replac set keep kept also alway usual realli much mani thing one two
    everi hver nu stadig gammel ny nye altid теперь сейчас стар нов всегда кажд""".split()  # noqa: SIM905 - a word list reads better as text
)


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...  # PyStemmer's name


@functools.cache
def _stemmer(language: str) -> _Stemmer:
    import Stemmer  # PyStemmer; imported on first use to keep start-up fast

    stemmer: _Stemmer = Stemmer.Stemmer(language)
    return stemmer


def _latin_language(words: Sequence[str]) -> str:
    danish = sum(map(DANISH_STOPWORDS.__contains__, words))
    english = sum(map(STOPWORDS.__contains__, words))
    return "danish" if danish > english else "english"


_TERMS: dict[tuple[str, str], str] = {}  # (word, language) -> term: stemming is the hot path


def _word_term(low: str, language: str) -> str:
    term = _TERMS.get((low, language))
    if term is None:
        stem = fold(_stemmer(language).stemWord(low))
        term = _TERMS[(low, language)] = _SYNONYMS.get(stem, stem)
    return term


@functools.lru_cache(maxsize=8192)
def _identifiers(text: str) -> tuple[str, tuple[str, ...]]:
    """Code spans and dotted keys (``memorySearch.query.hybrid``) are one term each: they name
    what a statement is about. Returns the text without them, and them (case folded)."""
    rx = _rx()
    found = [m.group(1).strip().casefold() for m in rx.code.finditer(text)]
    text = rx.code.sub(" , ", text)
    found += [m.group(0).casefold() for m in rx.dotted.finditer(text)]
    return rx.dotted.sub(" , ", text), tuple(f for f in found if f)


def _word_terms(text: str) -> dict[str, float]:
    rx = _rx()
    # CJK letters are word characters too: blank them out (with a comma, so that a Latin word
    # right after them does not count as a sentence start); _cjk_terms handles them.
    if not text.isascii():
        text = _cjk_run().sub(lambda m: "\u3001" * len(m.group(0)), text)
    matches = list(rx.word.finditer(text))
    latin = _latin_language([m.group(0).casefold() for m in matches])
    # Danish stop words only in Danish text: "man", "end", "over" are English content words.
    stop = (DANISH_STOPWORDS if latin == "danish" else STOPWORDS) | RUSSIAN_STOPWORDS
    terms: dict[str, float] = {}
    previous_end = -1
    for match in matches:
        word = match.group(0)
        # A capital says nothing about a name at the start of a sentence.
        starts = previous_end < 0 or bool(rx.sentence_end.search(text, previous_end,
                                                                  match.start()))
        previous_end = match.end()
        low = word.casefold().removesuffix("'s")
        if low in stop or low in _NEGATIONS:
            continue
        term = _word_term(low, "russian" if rx.cyrillic.search(low) else latin)
        if term in _LIGHT_TERMS:
            weight = _LIGHT
        elif not low.replace("'", "").isalpha() or (word[:1].isupper() and not starts):
            weight = _VALUE
        else:
            weight = 1.0
        terms[term] = max(terms.get(term, 0.0), weight)
    return terms


def _cjk_terms(text: str) -> dict[str, float]:
    """Japanese splits at script changes: a katakana run is a word (ゲートウェイ), a kanji run
    gives bigrams plus single ideographs, hiragana (particles, inflection) is dropped. Chinese and
    Korean runs give bigrams."""
    terms: dict[str, float] = {}
    if text.isascii():
        return terms
    for match in _cjk_script().finditer(text):
        run = match.group(0)
        if match.lastgroup == "katakana":
            terms[run] = 1.0
            continue
        if match.lastgroup == "ideographs":
            for ch in run:
                terms[ch] = max(terms.get(ch, 0.0), _VALUE)
        for n in range(len(run) - 1):
            terms[run[n : n + 2]] = 1.0
    return terms


@functools.lru_cache(maxsize=8192)
def statement_terms(text: str) -> dict[str, float]:
    """The weighted terms of a statement (cached: reflect compares each entry many times)."""
    text, identifiers = _identifiers(unicodedata.normalize("NFKC", text))
    terms = _word_terms(text)
    for term, weight in _cjk_terms(text).items():
        terms[term] = max(terms.get(term, 0.0), weight)
    for ident in identifiers:
        terms[ident] = 1.0
    return terms


def _score(a: dict[str, float], b: dict[str, float]) -> float:
    total = max(sum(a.values()), sum(b.values()))
    if total == 0:
        return 0.0
    shared = sum(min(a[t], b[t]) for t in a.keys() & b.keys())
    return shared / total


def statement_similarity(a: str, b: str) -> float:
    """How much two statements say the same thing, 0..1 (1: the same terms)."""
    return _score(statement_terms(a), statement_terms(b))


def name_terms(entities: Sequence[str]) -> frozenset[str]:
    """The terms of entity names (what a statement says of them is not what it is about)."""
    terms: set[str] = set()
    for slug in entities:
        terms.update(statement_terms(slug.replace("-", " ").replace("_", " ")))
    return frozenset(terms)


def _negated(text: str) -> bool:
    rx = _rx()
    words = {w.casefold() for w in rx.word.findall(text)}
    return bool(words & _NEGATIONS) or "n't" in text.casefold() or bool(rx.ja_negation.search(text))


def _opposed(a: dict[str, float], b: dict[str, float]) -> bool:
    return any(
        (x in a and y in b and x not in b) or (y in a and x in b and y not in b)
        for x, y in _ANTONYMS
    )


def _head(text: str) -> str:
    """The main clause: parentheticals out, up to the first ';', ':', dash or '。'.
    ("Prefers concise WhatsApp replies (under 1500 chars); long content goes to a file.")"""
    rx = _rx()
    return rx.clause_end.split(rx.parenthetical.sub(" ", rx.code.sub(" ` ", text)), maxsplit=1)[0]


def _variants(text: str) -> list[str]:
    if "`" in text:  # a code span may hold ':' or ';': keep statements with code whole
        return [text]
    head = _head(text)
    return [text, head] if head.strip() and head.strip() != text.strip() else [text]


@dataclass(frozen=True)
class Claim:
    """A statement prepared for matching: computed once, compared many times."""

    keys: frozenset[str]  # its entities' keys
    names: frozenset[str]  # the terms of its entities' names
    identifiers: frozenset[str]  # code spans and dotted keys
    variants: tuple[dict[str, float], ...]  # the terms of the statement and of its main clause
    negated: tuple[bool, ...]  # whether each variant is negated
    signature: frozenset[str]  # its full-weight terms, names left out: a match shares one


@functools.lru_cache(maxsize=8192)
def claim(text: str, entities: tuple[str, ...]) -> Claim:
    _, identifiers = _identifiers(unicodedata.normalize("NFKC", text))
    names = name_terms(entities)
    texts = _variants(text)
    variants = tuple(statement_terms(v) for v in texts)
    return Claim(
        keys=frozenset(entity_key(e) for e in entities) - {""},
        names=names,
        identifiers=frozenset(identifiers),
        variants=variants,
        negated=tuple(_negated(v) for v in texts),
        signature=frozenset(t for terms in variants for t, w in terms.items() if w == 1.0) - names,
    )


def _terms_match(a: dict[str, float], b: dict[str, float], names: frozenset[str],
                 common: frozenset[str]) -> bool:
    skip = names | common
    if not any(a[t] == 1.0 and b[t] == 1.0 and t not in skip for t in a.keys() & b.keys()):
        return False  # cheap, and true of most pairs
    a = {t: min(w, _LIGHT) if t in common else w for t, w in a.items() if t not in names}
    b = {t: min(w, _LIGHT) if t in common else w for t, w in b.items() if t not in names}
    return not _opposed(a, b) and _score(a, b) >= SAME_CLAIM_THRESHOLD


def claims_match(a: Claim, b: Claim, common: frozenset[str] = frozenset()) -> bool:
    """:func:`same_claim` for prepared statements. ``common``: terms that many statements of
    the same memory share (see :func:`common_terms`); they weigh as little as "prefers"."""
    if not (a.signature & b.signature) - common:
        return False  # no full-weight term in common: cheap, and true of most pairs
    # Both name entities, and one's entities include the other's (a later fact may add one:
    # "@Peter: gateway host is the NUC" -> "@Peter @The-Castle: moved the gateway host ...").
    if not (a.keys and b.keys and (a.keys <= b.keys or b.keys <= a.keys)):
        return False
    return texts_match(a, b, common)


def texts_match(a: Claim, b: Claim, common: frozenset[str] = frozenset()) -> bool:
    """Whether two prepared statements say the same kind of thing, whatever their entities."""
    if not (a.signature & b.signature) - common:
        return False
    if a.identifiers and b.identifiers and not a.identifiers & b.identifiers:
        return False  # about different settings, errors or commands
    names = a.names | b.names
    # A long statement's main clause may match a short paraphrase its trailing clause would
    # drown (or a negation in its trailing clause block: "...; no disconnects since the move").
    return any(_terms_match(x, y, names, common)
               for x, x_neg in zip(a.variants, a.negated, strict=True)
               for y, y_neg in zip(b.variants, b.negated, strict=True) if x_neg == y_neg)


def common_terms(claims: Iterable[Claim], *, share: float = COMMON_SHARE,
                 at_least: int = COMMON_AT_LEAST) -> frozenset[str]:
    """Terms that a large share of these (distinct) statements hold: the frame of templated
    notes ("Mentioned X N times this month", "The X cache at Y has N GB free"). Two statements
    that share only their frame say different things; without this, "Mentioned sqlite WAL mode
    1 times" and "Mentioned event sourcing 1 times" would be one claim. The caller passes the
    statements it compares (an entity's facts of one kind), each text once."""
    counts: dict[str, int] = {}
    n = 0
    for c in claims:
        n += 1
        for term in c.signature:
            counts[term] = counts.get(term, 0) + 1
    floor = max(at_least, share * n)
    return frozenset(t for t, k in counts.items() if k >= floor)


def same_claim(
    a_text: str, a_entities: Sequence[str], b_text: str, b_entities: Sequence[str]
) -> bool:
    """True when two statements are about the same entities and say the same kind of thing,
    so the later one updates (or is evidence about) the earlier one."""
    return claims_match(claim(a_text, tuple(a_entities)), claim(b_text, tuple(b_entities)))
