"""Word stems for the full-text index (Snowball, through PyStemmer): ``migrations`` finds
``migration``, ``decided`` finds ``decide``, ``решили`` finds ``решение``.

Stems are a second, lower-weighted column beside the exact (folded) words, so a result with
the query's exact word form still ranks above one that shares only its stem. Words are stemmed
before folding (Snowball's Danish and Russian rules need ``ø`` and ``й``), then folded like
the exact column. Which stemmer: Cyrillic words are Russian; Latin words are English, or
Danish in a text whose function words are mostly Danish (a query is stemmed both ways). CJK
text, numbers and words mixing letters and digits are left to the exact column (CJK bigrams
are untouched).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING

from gitmem.parse.textfold import (
    DANISH_MARKERS,
    DANISH_QUESTION_WORDS,
    DANISH_STOPWORDS,
    RUSSIAN_STOPWORDS,
    STOPWORDS,
    fold,
    latin_language,
    plain_words,
)

if TYPE_CHECKING:
    import Stemmer

_WORD = re.compile(r"\w+")
_LATIN = re.compile(r"[a-zà-ɏ]+")  # Latin letters, with diacritics (after casefold)
_CYRILLIC = re.compile(r"[а-яёѐ-ӿ]+")


@functools.cache
def _stemmer(language: str) -> Stemmer.Stemmer:
    import Stemmer  # a C extension: a few milliseconds, paid when a text has words to stem

    return Stemmer.Stemmer(language)


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def stem_text(text: str) -> str:
    """The stems of a text's words, folded, for the index's stems column (stop words left
    out: they are never searched). Whole words of Latin or of Cyrillic letters only: CJK,
    numbers and ids like ``a828e60`` stay in the exact column alone."""
    words: list[str] = []
    cyrillic: list[str] = []
    for word in _words(text):
        if not word.isalpha():  # digits, ids, snake_case: exact column only
            continue
        if word[0] < "\u0250":  # Latin, with diacritics
            words.append(word)
        elif "\u0400" <= word[0] < "\u0530":
            cyrillic.append(word)
    latin = [w for w in words if w not in STOPWORDS]
    stems = _stemmer(latin_language(words)).stemWords(latin) if latin else []
    if cyrillic:
        stems += _stemmer("russian").stemWords(cyrillic)
    return fold(" ".join(stems))


def word_stems(word: str) -> list[str]:
    """The folded stems a query word may have in the index: both Latin stemmers (a query is too
    short to tell English from Danish), or the Russian one; none for other words."""
    words = _words(word)
    if len(words) != 1:
        return []
    raw = words[0]
    if _LATIN.fullmatch(raw):
        languages = ["english", "danish"]
    elif _CYRILLIC.fullmatch(raw):
        languages = ["russian"]
    else:
        return []
    return list(dict.fromkeys(fold(_stemmer(lang).stemWord(raw)) for lang in languages))


def query_stems(query: str) -> dict[str, list[str]]:
    """Each plain query word (folded) -> its stems."""
    out: dict[str, list[str]] = {}
    for word, token in plain_words(query):
        if token not in out:
            out[token] = word_stems(word)
    return out


# Danish compounds (sections below): parts of at least this many letters; the linking
# elements a modifier may end with (bestyrelse-s-møde, kolonihave-nøgle needs none).
COMPOUND_PART = 4
COMPOUND_WORD = 2 * COMPOUND_PART
_LINKING = ("s", "e")
# A query word's Danish stem this long is also searched as the start of longer words: Danish
# writes a compound as one word with its head last, so "kolonihaven" is in "kolonihavenøglen".
COMPOUND_PREFIX = 6
_NOT_MODIFIERS = DANISH_MARKERS | DANISH_STOPWORDS  # "over", "efter": no compound parts


def danish_text(text: str) -> bool:
    """Whether a text's Latin words read as Danish (its function words are mostly Danish)."""
    return latin_language([w for w in _words(text) if _LATIN.fullmatch(w)]) == "danish"


def compound_candidates(word: str) -> list[tuple[tuple[str, ...], str, int]]:
    """The ways a Danish word may split into a modifier and a head, each as (the modifier's
    folded stems: as written and without a linking -s- or -e-, the head's folded stem, the
    head's letters); both
    parts at least ``COMPOUND_PART`` letters and neither a stop word. [] for a word too short
    to be a compound, or not of Latin letters."""
    words = _words(word)
    raw = words[0] if len(words) == 1 else ""
    if len(raw) < COMPOUND_WORD or not _LATIN.fullmatch(raw):
        return []
    stemmer = _stemmer("danish")
    whole = fold(stemmer.stemWord(raw))
    out: list[tuple[tuple[str, ...], str, int]] = []
    for cut in range(COMPOUND_PART, len(raw) - COMPOUND_PART + 1):
        left, right = raw[:cut], raw[cut:]
        lefts = [left] + [left[:-1] for link in _LINKING
                          if left.endswith(link) and cut > COMPOUND_PART]
        modifiers = tuple(dict.fromkeys(
            fold(stemmer.stemWord(w)) for w in lefts if w not in _NOT_MODIFIERS))
        head = fold(stemmer.stemWord(right))
        modifiers = tuple(m for m in modifiers if len(m) >= COMPOUND_PART and m != whole)
        if (modifiers and right not in _NOT_MODIFIERS and head != whole
                and len(head) >= COMPOUND_PART - 1):
            out.append((modifiers, head, len(right)))
    return out


def compound_parts(word: str, known: Callable[[str], bool] | Collection[str]) -> list[str]:
    """The folded stems of a Danish compound's parts ("bestyrelsesmøderne" -> bestyr, mod),
    split against the words a memory holds (``known``: folded stems and words): corpus-based
    splitting (Koehn & Knight 2003), no dictionary. Where both parts of a split are known,
    those; else a known modifier before a head of five letters or more ("avisabonnementet"
    -> avis) or a known head ("internetudbyder" -> udbyd). [] when no split is known."""
    holds = known if callable(known) else known.__contains__
    both: list[str] = []
    one: list[str] = []
    for modifiers, head, letters in compound_candidates(word):
        modifier = next((m for m in modifiers if holds(m)), None)
        if modifier is not None and holds(head):
            both += [modifier, head]
        elif modifier is not None and letters > COMPOUND_PART:
            one.append(modifier)
        elif holds(head):
            one.append(head)
    return list(dict.fromkeys(both or one))


def compound_lookups(words: Collection[str]) -> list[str]:
    """Every stem ``compound_parts`` may ask about for these words (one query for them all)."""
    return list(dict.fromkeys(term for word in words for modifiers, head, _
                              in compound_candidates(word) for term in (*modifiers, head)))


def compound_prefix(word: str) -> str | None:
    """The folded Danish stem of a query word, when long enough to be searched as the start
    of the compounds it begins (``COMPOUND_PREFIX``); None otherwise."""
    words = _words(word)
    raw = words[0] if len(words) == 1 else ""
    if not _LATIN.fullmatch(raw) or raw in _NOT_MODIFIERS or raw in DANISH_QUESTION_WORDS:
        return None
    stem = fold(_stemmer("danish").stemWord(raw))
    return stem if len(stem) >= COMPOUND_PREFIX else None


# A Russian query word's stem this long is also searched as the start of longer words: Russian
# builds words by suffixes on a stem (аренда -> арендодатель), and Snowball cuts one noun's
# forms differently (деплой -> депл, деплоем -> депло).
RUSSIAN_PREFIX = 4


def russian_prefix(word: str) -> str | None:
    """The folded Russian stem of a query word, when long enough to be searched as the start
    of the words built on it (``RUSSIAN_PREFIX``); None otherwise."""
    words = _words(word)
    raw = words[0] if len(words) == 1 else ""
    if not _CYRILLIC.fullmatch(raw) or raw in RUSSIAN_STOPWORDS:
        return None
    stem = fold(_stemmer("russian").stemWord(raw))
    return stem if len(stem) >= RUSSIAN_PREFIX else None
