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
import unicodedata
from typing import TYPE_CHECKING

from gitmem.parse.patterns import compiled
from gitmem.parse.textfold import STOPWORDS, fold, plain_words

if TYPE_CHECKING:
    import Stemmer

_WORD = compiled(r"\w+")
_LATIN = compiled(r"[a-zà-ɏ]+")  # Latin letters, with diacritics (after casefold)
_CYRILLIC = compiled(r"[а-яёѐ-ӿ]+")
# Function words that say a Latin text is Danish rather than English (rare in English text).
_DANISH_TEXT = """
og jeg det ikke til på med af som vi har hun der fra skal blev efter også når hvad hvor meget
sig mig dig eller være været havde hvis nogle noget deres hans hendes kunne skulle ville denne
dette disse jo nu ud os jer mit min din sin vores jeres hvorfor hvordan hvem fordi altså om er
var han den de et en
"""
_DANISH = frozenset(_DANISH_TEXT.split())
# English function words that are not Danish words too ("i", "at", "her" are both).
_ENGLISH = STOPWORDS - _DANISH - {"i", "at", "her", "under", "over"}


@functools.cache
def _stemmer(language: str) -> Stemmer.Stemmer:
    import Stemmer  # a C extension: a few milliseconds, paid when a text has words to stem

    return Stemmer.Stemmer(language)


def _words(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def latin_language(words: list[str]) -> str:
    """'danish' when the text's function words are mostly Danish, else 'english'."""
    danish = sum(map(_DANISH.__contains__, words))
    english = sum(map(_ENGLISH.__contains__, words))
    return "danish" if danish > english else "english"


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
