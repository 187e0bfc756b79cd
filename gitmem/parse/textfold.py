"""Text normalisation shared by indexing and querying, and safe FTS5 query building.

SQLite's ``unicode61`` tokenizer folds case but treats a run of CJK characters as one token and
keeps letters such as ``ø`` or Cyrillic ``ё``. So both the indexed text and the query pass through
:func:`fold`: case folded, diacritics removed from Latin, Greek and Cyrillic letters (``Nørrebro``
and ``norrebro`` meet), and CJK runs rewritten as overlapping character bigrams, so a two-character
word such as ``滞在`` is a token and a longer one is a phrase of bigrams.
"""

from __future__ import annotations

import functools
import re
import unicodedata

_CJK_CLASS = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u31f0-\u31ff"  # katakana extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\u1100-\u11ff"  # hangul jamo
    "\uff66-\uff9f"  # half-width katakana
)


@functools.cache
def _cjk() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a CJK run, one CJK character). Compiled on first non-ASCII text: these ranges take
    milliseconds to compile, which an English query never needs to pay."""
    return re.compile(f"[{_CJK_CLASS}]+"), re.compile(f"[{_CJK_CLASS}]")

_WORD = re.compile(r"\w+")
# Letters that do not decompose under NFKD but that users type without the accent.
_SPECIAL = str.maketrans(
    {
        "ø": "o",
        "æ": "ae",
        "œ": "oe",
        "ß": "ss",
        "đ": "d",
        "ł": "l",
        "ı": "i",
        "þ": "th",
        "ð": "d",
        "ħ": "h",
    }
)
_STRIPPABLE_BELOW = 0x0530  # Latin, Greek, Cyrillic: marks on these letters are diacritics

_STOPWORD_TEXT = """
a about above after again all am an and any are as at be been before being below between both but
by can could did do does doing down during each few for from further had has have having he her
here hers herself him himself his how i if in into is it its itself just me more most my myself no
nor not of off on once only or other our ours ourselves out over own same she should so some such
than that the their theirs them themselves then there these they this those through to too under
until up very was we were what when where which while who whom why will with would you your yours
yourself yourselves
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@functools.cache
def _diacritic_table() -> dict[int, str]:
    """Every Latin, Greek and Cyrillic letter with marks mapped to its base letters, plus the
    few letters that do not decompose (ø, æ, ß, ...). Built once; str.translate does the rest."""
    table: dict[int, str] = {}
    for code in range(0x80, _STRIPPABLE_BELOW):
        ch = chr(code)
        base = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
        if base != ch and base:
            table[code] = base
    for src, dst in _SPECIAL.items():
        table[src] = str(dst)
    for code in range(0x300, 0x370):  # lone combining marks left after NFKC
        table[code] = ""
    return table




def _bigrams(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def fold(text: str) -> str:
    """Fold text for the full-text index: case, diacritics, CJK bigrams."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text).casefold().translate(_diacritic_table())
    run, char = _cjk()
    return run.sub(_bigrams, text) if char.search(text) else text


def count_tokens(text: str) -> int:
    """Approximate model tokens: one per CJK character, one per four other characters."""
    if text.isascii():
        return (len(text) + 3) // 4
    cjk = len(_cjk()[1].findall(text))
    return cjk + (len(text) - cjk + 3) // 4


def _quote(tokens: list[str]) -> str:
    return '"' + " ".join(t.replace('"', '""') for t in tokens) + '"'


_QUOTED = re.compile(r'"([^"]*)"|“([^”]*)”|「([^」]*)」')


def query_terms(query: str) -> list[list[str]]:
    """Split a recall query into terms; each term is a list of folded tokens (a phrase).

    Quoted text is one phrase. A bare word with punctuation inside (``memorySearch.query.hybrid``,
    ``ECONNRESET:``) is a phrase of its parts, so ids, dotted keys and error strings are found
    exactly. Stop words are dropped unless nothing else is left.
    """
    terms: list[list[str]] = []
    for m in _QUOTED.finditer(query):
        phrase = next(g for g in m.groups() if g is not None)
        tokens = _WORD.findall(fold(phrase))
        if tokens:
            terms.append(tokens)
    rest = _QUOTED.sub(" ", query)
    singles: list[list[str]] = []
    for word in rest.split():
        tokens = _WORD.findall(fold(word))
        if tokens:
            singles.append(tokens)
    content = [t for t in singles if len(t) > 1 or t[0] not in STOPWORDS]
    terms.extend(content if content or terms else singles)
    seen: set[tuple[str, ...]] = set()
    unique: list[list[str]] = []
    for term in terms:
        key = tuple(term)
        if key not in seen:
            seen.add(key)
            unique.append(term)
    return unique


def build_match(terms: list[list[str]], stems: dict[str, list[str]] | None = None) -> str:
    """An FTS5 MATCH expression that ORs the terms. Every token is quoted, so operators and
    punctuation in the user's query can never be parsed as FTS syntax.

    With ``stems`` (a word's folded stems, from ``query_stems``) the exact terms are matched in
    the body and path columns and each single word also by its stems in the stems column."""
    if stems is None:
        return " OR ".join(_quote(t) for t in terms)
    parts: list[str] = []
    for term in terms:
        parts.append(f"{{body path}} : {_quote(term)}")
        if len(term) == 1:
            parts.extend(f"stems : {_quote([s])}" for s in stems.get(term[0], ()))
    return " OR ".join(parts)


def query_stems(query: str) -> dict[str, list[str]]:
    """Each plain query word (folded) -> its stems (see ``gitmem.parse.stemming``)."""
    from gitmem.parse.stemming import word_stems

    out: dict[str, list[str]] = {}
    for word in _QUOTED.sub(" ", query).split():
        tokens = _WORD.findall(fold(word))
        if len(tokens) == 1 and tokens[0] not in out:
            out[tokens[0]] = word_stems(word)
    return out
