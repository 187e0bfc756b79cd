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
from typing import TYPE_CHECKING

from gitmem.parse.textfold import STOPWORDS, fold

if TYPE_CHECKING:
    import Stemmer

_WORD = re.compile(r"\w+")
_LATIN = re.compile(r"[a-zà-ɏ]+")  # Latin letters, with diacritics (after casefold)
_CYRILLIC = re.compile(r"[а-яёѐ-ӿ]+")
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
    danish = sum(1 for w in words if w in _DANISH)
    english = sum(1 for w in words if w in _ENGLISH)
    return "danish" if danish > english else "english"


def _language(word: str, latin: str) -> str | None:
    if _LATIN.fullmatch(word):
        return latin
    if _CYRILLIC.fullmatch(word):
        return "russian"
    return None  # CJK, digits, mixed scripts: the exact column only


def stem_text(text: str) -> str:
    """The stems of a text's words, folded, for the index's stems column (stop words left
    out: they are never searched)."""
    words = _words(text)
    latin = latin_language(words)
    groups: dict[str, list[str]] = {}
    for word in words:
        language = _language(word, latin)
        if language is not None and word not in STOPWORDS:
            groups.setdefault(language, []).append(word)
    stems: list[str] = []
    for language, group in groups.items():
        stems.extend(_stemmer(language).stemWords(group))
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
