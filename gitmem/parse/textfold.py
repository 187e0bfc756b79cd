"""Text normalisation shared by indexing and querying, and safe FTS5 query building.

SQLite's ``unicode61`` tokenizer folds case but treats a run of CJK characters as one token and
keeps letters such as ``ø`` or Cyrillic ``ё``. So both the indexed text and the query pass through
:func:`fold`: case folded, diacritics removed from Latin, Greek and Cyrillic letters (``Nørrebro``
and ``norrebro`` meet), and CJK runs rewritten as overlapping character bigrams, so a two-character
word such as ``滞在`` is a token and a longer one is a phrase of bigrams. A table of its own holds
the text's Han characters one by one (``han_text``).

A query is OR-ed terms ranked by BM25, like an English one whose stop words are dropped: CJK
is written without spaces, so each bigram of a CJK query is a term of its own, and bigrams that
only carry particles, polite endings or question words (は, ですか, どこ, 什么, 吗, 어디) are not
searched; the query's other Han characters are searched one by one in the character table, so
猫 finds 一只猫 and 住む finds 住んでいる. No dictionary: segmenters (janome, jieba) measured no
better on bench/bench_cjk.py and cost 0.3–3 s of start-up (BENCHMARKS.md).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Iterator, Sequence

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
def _cjk() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(a CJK run, one CJK character, one Han character). Compiled on first non-ASCII text:
    these ranges take milliseconds to compile, which an English query never needs to pay."""
    han = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
    return re.compile(f"[{_CJK_CLASS}]+"), re.compile(f"[{_CJK_CLASS}]"), han

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
DANISH_STOPWORDS = frozenset(
    """og i jeg det at en den til er som på de med han af for ikke der var mig sig men et har om
    vi min havde ham hun nu over da fra du ud sin dem os op man hans hvor eller hvad skal selv her
    alle vil blev kunne ind når være dog noget ville jo deres efter ned skulle denne end dette mit
    også under have dig anden hende mine alt meget sit sine vor mod disse hvis din nogle hos blive
    mange ad bliver hendes været thi jer sådan på""".split()  # noqa: SIM905 - a word list reads better as text
)
RUSSIAN_STOPWORDS = frozenset(
    """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только
    ее мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть
    был него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо
    ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот
    того потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда
    зачем всех никогда можно при наконец два об другой хоть после над больше тот через эти нас
    про всего них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть
    том нельзя такой им более всегда конечно всю между это""".split()  # noqa: SIM905 - a word list reads better as text
)
# Question words dropped in any question: those the Danish and Russian lists lack (the English
# list has why, when, which, who), and "hvad", "hvor", which are no English words.
DANISH_QUESTION_WORDS = frozenset(
    "hvad hvor hvorfor hvem hvornår hvordan hvilken hvilket hvilke hvorhen".split())  # noqa: SIM905 - a word list reads better as text
_QUESTION_WORDS = DANISH_QUESTION_WORDS | {"почему", "сколько"}
# Function words that say a Latin text is Danish rather than English (rare in English text).
_DANISH_MARKER_TEXT = """
og jeg det ikke til på med af som vi har hun der fra skal blev efter også når hvad hvor meget
sig mig dig eller være været havde hvis nogle noget deres hans hendes kunne skulle ville denne
dette disse jo nu ud os jer mit min din sin vores jeres hvorfor hvordan hvem fordi altså om er
var han den de et en
"""
DANISH_MARKERS = frozenset(_DANISH_MARKER_TEXT.split())
# English function words that are not Danish words too ("i", "at", "her" are both).
_ENGLISH_MARKERS = STOPWORDS - DANISH_MARKERS - {"i", "at", "her", "under", "over"}


def latin_language(words: Sequence[str]) -> str:
    """'danish' when the words (case folded, with their diacritics) are mostly Danish function
    words, else 'english'."""
    danish = sum(map(DANISH_MARKERS.__contains__, words))
    english = sum(map(_ENGLISH_MARKERS.__contains__, words))
    return "danish" if danish > english else "english"


class _Diacritics(dict[int, str]):
    """Every Latin, Greek and Cyrillic letter with marks mapped to its base letters, plus the
    few letters that do not decompose (ø, æ, ß, ...) and lone combining marks (dropped), for
    ``str.translate``: each character worked out the first time a text has it (building the
    whole table took ~3 ms of every cold command that folds non-ASCII text)."""

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        if 0x300 <= code < 0x370:  # lone combining marks left after NFKC
            found = ""
        elif code in _SPECIAL:
            found = str(_SPECIAL[code])
        elif 0x80 <= code < _STRIPPABLE_BELOW:
            base = "".join(c for c in unicodedata.normalize("NFKD", ch)
                           if not unicodedata.combining(c))
            found = base or ch
        else:
            found = ch
        self[code] = found
        return found


_DIACRITICS = _Diacritics()


def _bigrams(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def fold(text: str) -> str:
    """Fold text for the full-text index: case, diacritics, CJK bigrams."""
    if text.isascii():
        return text.lower()
    text = unicodedata.normalize("NFKC", text).casefold().translate(_DIACRITICS)
    run, char, _ = _cjk()
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
    exactly. Stop words are dropped unless nothing else is left: English ones always, Danish
    ones in a Danish question, Russian ones, and question words (``_query_stopwords``).
    """
    terms = _phrases(query)
    singles, content = _bare_terms(query)
    terms.extend(content if content or terms else singles)
    return _unique(terms)


def query_pairs(query: str) -> list[tuple[str, str]]:
    """The query's neighbouring words that are both searched as its topic (``topic_candidates``:
    no stop or question words, no CJK function bigrams), and those inside one of its terms,
    folded ("attend my high school reunion": ("high", "school"), ("school", "reunion")): a text
    that holds them side by side holds what they name together
    (``recall.ranking.pair_scores``)."""
    terms = topic_candidates(query)
    stop = STOPWORDS | _query_stopwords(query.split())
    searched = {token for term in terms for token in term if len(token) > 1 and token not in stop}
    # a term of several words ("well-being", a quoted title) pairs its own words, stop words too;
    # its stop words pair with no word outside it ("state-of-the-art the company")
    inside = [(a, b) for term in terms for a, b in itertools.pairwise(term)
              if len(a) > 1 and len(b) > 1]
    between = [(a, b) for a, b in itertools.pairwise(_WORD.findall(fold(query)))
               if a in searched and b in searched]
    return list(dict.fromkeys(between + inside))


def topic_candidates(query: str) -> list[list[str]]:
    """``query_terms`` without its fallback: the quoted phrases and the bare words' topical
    terms only, [] for a query of stop words ("what is it"). ``parse.topics`` drops more."""
    return _unique(_phrases(query) + _bare_terms(query)[1])


def _phrases(query: str) -> list[list[str]]:
    terms: list[list[str]] = []
    for m in _QUOTED.finditer(query):
        phrase = next(g for g in m.groups() if g is not None)
        tokens = _WORD.findall(fold(phrase))
        if tokens:
            terms.append(tokens)
    return terms


def _bare_terms(query: str) -> tuple[list[list[str]], list[list[str]]]:
    """The terms of the words outside quotes: all of them, and those that can carry a topic."""
    singles: list[list[str]] = []
    content: list[list[str]] = []
    language = _cjk_language(query)
    words = _QUOTED.sub(" ", query).split()
    stop = _query_stopwords(words)
    for word in words:
        all_terms, topical = _word_terms(word, language)
        singles.extend(all_terms)
        content.extend(t for t in topical if len(t) > 1 or t[0] not in stop)
    return singles, content


def _query_stopwords(words: Sequence[str]) -> frozenset[str]:
    """A query's stop words besides English ones (``_word_terms`` drops those), folded as its
    tokens are: Danish ones in a Danish question only ("men", "over", "man" are English content
    words), Russian ones always (the one Cyrillic language gitmem reads) but for the numbers and
    content words the list holds (``_RUSSIAN_CONTENT``), and question words.

    A question is Danish with two Danish function or question words at least: one alone is no
    evidence in a query of a few words, and many are English or technical words too ("OS
    version", "MIT license", "vi keybindings", "var hoisting", "Han Solo")."""
    plain = [unicodedata.normalize("NFKC", w).strip(_PUNCTUATION).casefold() for w in words]
    evidence = sum(w in DANISH_MARKERS or w in DANISH_QUESTION_WORDS for w in plain)
    danish = evidence >= _DANISH_EVIDENCE and latin_language(plain) == "danish"
    return _folded_stopwords(danish)


_DANISH_EVIDENCE = 2
# Words of the Russian stop list that a question asks about ("купили три стула", "когда лучше
# ехать"): numbers, comparisons, always/never, may/must.
_RUSSIAN_CONTENT = frozenset(
    "один два три хорошо лучше больше более много можно надо нельзя всегда никогда".split())  # noqa: SIM905 - a word list reads better as text


_PUNCTUATION = "?!.,;:()[]\"'«»„“”‘’…"


@functools.cache
def _folded_stopwords(danish: bool) -> frozenset[str]:
    return folded((RUSSIAN_STOPWORDS - _RUSSIAN_CONTENT) | _QUESTION_WORDS | (
        DANISH_STOPWORDS if danish else frozenset()))


@functools.cache
def folded(words: frozenset[str]) -> frozenset[str]:
    """A word list folded as query tokens are (``fold``: "på" -> "pa"), made once."""
    return frozenset(fold(w).strip() for w in words)


def _unique(terms: list[list[str]]) -> list[list[str]]:
    return [list(key) for key in dict.fromkeys(tuple(term) for term in terms)]


# An English possessive ("Alice's", "Alice’s"; "the Smiths'" loses its apostrophe as any
# punctuation): searched as the name, not as the phrase "alice s", which only the same
# possessive matches. Danish writes it so after a name too; its other genitive ("Mettes") needs
# the memory's words to tell from a plain word (``recall.search.strip_genitives``).
_POSSESSIVE = re.compile(r"(?<=\w)['’]s$", re.IGNORECASE)


def strip_possessive(word: str) -> str:
    """A bare word without an English-style possessive ending ('s, ’s)."""
    return _POSSESSIVE.sub("", word)


def _word_terms(word: str, language: str) -> tuple[list[list[str]], list[list[str]]]:
    """A bare query word's terms, and those of them that can carry a topic.

    A word is one phrase of its tokens, a stop word is not topical. CJK is written without
    spaces, so there a "word" is often a whole question (``田中さんはどこに住んでいますか``): as
    one phrase it matched only itself. So each CJK bigram (or lone character) is a term of its
    own, and the bigrams of particles, polite endings and question words are not topical."""
    folded = fold(strip_possessive(word))
    if folded.isascii() or not _cjk()[1].search(folded):
        tokens = _WORD.findall(folded)
        terms = [tokens] if tokens else []
        return terms, [t for t in terms if len(t) > 1 or t[0] not in STOPWORDS]
    terms = []
    for piece in folded.split():  # fold() spaces CJK bigrams apart from the other text
        if _cjk()[1].match(piece):
            terms.append([piece])
        elif tokens := _WORD.findall(piece):
            terms.append(tokens)
    return terms, [t for t in terms if len(t) > 1 or not _function_bigram(t[0], language)]


# Characters that carry no topic in a question: question words (何 誰 什么 哪里 怎么 几 吗 呢),
# and in Chinese also particles, copulas and pronouns (的 了 是 在 我们 ...). In Japanese these
# are parts of words (京都, 地図, 得意, 了解), so there only question words count.
_QUESTION_CHARS = frozenset("何誰谁什么麼哪怎几幾吗嗎呢")
_CHINESE_FUNCTION = frozenset("的吧啊呀了是在和也都就还還把被给給得地着著"
                               "过過这這那个個儿兒里裡样樣我你他她它们們")
# A bigram holding one of these is a word boundary (李娜的 | 的猫): the characters beside them
# are matched one by one (``query_ideographs``).
_BOUNDARY = {"ja": _QUESTION_CHARS, "zh": _QUESTION_CHARS | frozenset("的吧啊呀")}
_FUNCTION = {"ja": _QUESTION_CHARS, "zh": _QUESTION_CHARS | _CHINESE_FUNCTION}
# Korean question words and polite endings, as the bigrams they fold to.
_HANGUL_TEXT = """
어디 언제 누구 무엇 무슨 어떻 떻게 얼마 예요 에요 이에 해요 세요 니까 습니 입니 나요 는요
"""
_HANGUL_FUNCTION = frozenset(_HANGUL_TEXT.split())


def _is_hiragana(ch: str) -> bool:
    return "\u3040" <= ch <= "\u309f"


def _cjk_language(query: str) -> str:
    """'ja' for a query with kana, else 'zh': Han characters alone are read as Chinese."""
    return "ja" if any("\u3040" <= ch <= "\u30ff" for ch in query) else "zh"


def _function_bigram(token: str, language: str) -> bool:
    """A bigram (or lone character) that starts with hiragana (particles, endings and question
    words: は, ですか, どこ, and に住: a particle joined to the next word), one of function
    characters alone (我们), one holding a question word or a boundary, or a Korean question
    word or ending. A bigram joining kanji to the hiragana after it stays: that is a verb or
    adjective with its ending (住ん, 届く)."""
    return (_is_hiragana(token[0]) or all(ch in _FUNCTION[language] for ch in token)
            or not _BOUNDARY[language].isdisjoint(token) or token in _HANGUL_FUNCTION)


def written_in_cjk(text: str) -> bool:
    """Whether a text holds Japanese, Chinese or Korean characters."""
    return not text.isascii() and bool(_cjk()[1].search(text))


def han_text(text: str) -> str:
    """The Han characters of a text, spaced apart, for the index's character table: a
    one-character word (猫, 车) or a verb whose ending changed (住む / 住んで) is found there."""
    if text.isascii():
        return ""
    return " ".join(_cjk()[2].findall(unicodedata.normalize("NFKC", text)))


def ideographs(text: str) -> list[str]:
    """The Han characters of a text, each once, in order."""
    return list(dict.fromkeys(han_text(text).split()))


def query_ideographs(query: str) -> list[str]:
    """The Han characters of a query's unquoted words that can carry its topic, each once."""
    function = _FUNCTION[_cjk_language(query)]
    return [ch for ch in ideographs(_QUOTED.sub(" ", query)) if ch not in function]


def build_han_match(chars: Sequence[str]) -> str | None:
    """An FTS5 MATCH expression for the character table that ORs ``chars``; None for none."""
    return " OR ".join(_quote([ch]) for ch in chars) or None


def build_match(terms: list[list[str]], stems: dict[str, list[str]] | None = None,
                prefixes: dict[str, str] | None = None) -> str:
    """An FTS5 MATCH expression that ORs the terms. Every token is quoted, so operators and
    punctuation in the user's query can never be parsed as FTS syntax.

    With ``stems`` (a word's folded stems, from ``stemming.query_stems``) the exact terms are
    matched in the body and path columns and each single word also by its stems in the stems
    column; with ``prefixes`` (a word's stem as the start of the compounds it begins), also
    by the stems that start with it."""
    if stems is None:
        return " OR ".join(_quote(t) for t in terms)
    parts: list[str] = []
    for term in terms:
        parts.append(f"{{body path}} : {_quote(term)}")
        if len(term) == 1:
            parts.extend(f"stems : {_quote([s])}" for s in stems.get(term[0], ()))
            if prefixes and term[0] in prefixes:
                parts.append(f"stems : {_quote([prefixes[term[0]]])} *")
    return " OR ".join(parts)


def plain_words(query: str) -> Iterator[tuple[str, str]]:
    """Each word outside quotes that folds to one token: (the word as written, its token)."""
    for word in _QUOTED.sub(" ", query).split():
        word = strip_possessive(word)
        tokens = _WORD.findall(fold(word))
        if len(tokens) == 1:
            yield word, tokens[0]
