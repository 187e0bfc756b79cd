"""Do two statements say the same thing? The matching rule shared by opinion updates (SPEC §5)
and knowledge updates (a later fact that replaces an earlier one).

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
from collections.abc import Sequence
from typing import Protocol

from gitmem.parse.retain import entity_key
from gitmem.parse.textfold import STOPWORDS, fold

# The shared part must weigh at least this fraction of the larger statement. Tested paraphrases
# and updates score 0.5 or more, unrelated statements about the same entity 0.4 or less.
SAME_CLAIM_THRESHOLD = 0.45

_LIGHT = 0.3  # generic predicates and update markers
_VALUE = 0.5  # capitalised words inside a sentence, numbers, single CJK ideographs

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_CJK_RUN = re.compile(
    "[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]+"
)
_CJK_SCRIPT = re.compile(
    "(?P<ideographs>[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)"
    "|(?P<katakana>[\u30a1-\u30fa\u30fc-\u30ff\u31f0-\u31ff\uff66-\uff9f]+)"
    "|(?P<hangul>[\uac00-\ud7af]+)"
)
_CYRILLIC = re.compile("[\u0400-\u04ff]")

_DANISH_STOP = frozenset(
    """og i jeg det at en den til er som på de med han af for ikke der var mig sig men et har om
    vi min havde ham hun nu over da fra du ud sin dem os op man hans hvor eller hvad skal selv her
    alle vil blev kunne ind når være dog noget ville jo deres efter ned skulle denne end dette mit
    også under have dig anden hende mine alt meget sit sine vor mod disse hvis din nogle hos blive
    mange ad bliver hendes været thi jer sådan på""".split()  # noqa: SIM905 - a word list reads better as text
)
_RUSSIAN_STOP = frozenset(
    """и в во не что он на я с со как а то все она так его но да ты к у же вы за бы по только
    ее мне было вот от меня еще нет о из ему теперь когда даже ну вдруг ли если уже или ни быть
    был него до вас нибудь опять уж вам ведь там потом себя ничего ей может они тут где есть надо
    ней для мы тебя их чем была сам чтоб без будто чего раз тоже себе под будет ж тогда кто этот
    того потому этого какой совсем ним здесь этом один почти мой тем чтобы нее сейчас были куда
    зачем всех никогда можно при наконец два об другой хоть после над больше тот через эти нас
    про всего них какая много разве три эту моя впрочем хорошо свою этой перед иногда лучше чуть
    том нельзя такой им более всегда конечно всю между это""".split()  # noqa: SIM905 - a word list reads better as text
)
_NEGATIONS = frozenset(
    "not no never nor none nothing cannot ikke aldrig ingen intet не нет никогда ни".split()  # noqa: SIM905 - a word list reads better as text
)
_JA_NEGATION = re.compile("ない|ません|なかった|ず(?:に|、|。|$)|不")

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
    """prefer use have get make go move now current old new still today anymor longer
    becom chang updat upgrad replac set keep kept also alway usual realli much mani thing one two
    nu stadig gammel ny nye altid теперь сейчас стар нов всегда""".split()  # noqa: SIM905 - a word list reads better as text
)


class _Stemmer(Protocol):
    def stemWord(self, word: str) -> str: ...  # PyStemmer's name


@functools.cache
def _stemmer(language: str) -> _Stemmer:
    import Stemmer  # PyStemmer; imported on first use to keep start-up fast

    stemmer: _Stemmer = Stemmer.Stemmer(language)
    return stemmer


def _latin_language(words: Sequence[str]) -> str:
    danish = sum(w in _DANISH_STOP for w in words)
    english = sum(w in STOPWORDS for w in words)
    return "danish" if danish > english else "english"


def _word_terms(text: str) -> dict[str, float]:
    # CJK letters are word characters too: blank them out (with a comma, so that a Latin word
    # right after them does not count as a sentence start); _cjk_terms handles them.
    text = _CJK_RUN.sub(lambda m: "\u3001" * len(m.group(0)), unicodedata.normalize("NFKC", text))
    matches = list(_WORD.finditer(text))
    latin = _latin_language([m.group(0).casefold() for m in matches])
    # Danish stop words only in Danish text: "man", "end", "over" are English content words.
    stop = (_DANISH_STOP if latin == "danish" else STOPWORDS) | _RUSSIAN_STOP
    terms: dict[str, float] = {}
    for match in matches:
        word = match.group(0)
        low = word.casefold().removesuffix("'s")
        if low in stop or low in _NEGATIONS:
            continue
        language = "russian" if _CYRILLIC.search(low) else latin
        stem = fold(_stemmer(language).stemWord(low))
        term = _SYNONYMS.get(stem, stem)
        if term in _LIGHT_TERMS:
            weight = _LIGHT
        elif any(c.isdigit() for c in low) or (word[:1].isupper() and not _starts(text, match)):
            weight = _VALUE
        else:
            weight = 1.0
        terms[term] = max(terms.get(term, 0.0), weight)
    return terms


def _starts(text: str, match: re.Match[str]) -> bool:
    """Does the word start a sentence (so its capital says nothing about it being a name)?"""
    before = text[: match.start()].rstrip()
    return not before or before[-1] in ".!?:;。！？"


def _cjk_terms(text: str) -> dict[str, float]:
    """Japanese splits at script changes: a katakana run is a word (ゲートウェイ), a kanji run
    gives bigrams plus single ideographs, hiragana (particles, inflection) is dropped. Chinese and
    Korean runs give bigrams."""
    terms: dict[str, float] = {}

    def add(term: str, weight: float) -> None:
        terms[term] = max(terms.get(term, 0.0), weight)

    for match in _CJK_SCRIPT.finditer(unicodedata.normalize("NFKC", text)):
        run = match.group(0)
        if match.lastgroup == "katakana":
            add(run, 1.0)
        elif match.lastgroup in ("ideographs", "hangul"):
            if match.lastgroup == "ideographs":
                for ch in run:
                    add(ch, _VALUE)
            for i in range(len(run) - 1):
                add(run[i : i + 2], 1.0)
    return terms


@functools.lru_cache(maxsize=4096)
def statement_terms(text: str) -> dict[str, float]:
    """The weighted terms of a statement (cached: reflect compares each entry many times)."""
    terms = _word_terms(text)
    for term, weight in _cjk_terms(text).items():
        terms[term] = max(terms.get(term, 0.0), weight)
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


def _entity_terms(entities: Sequence[str]) -> set[str]:
    terms: set[str] = set()
    for slug in entities:
        terms.update(statement_terms(slug.replace("-", " ").replace("_", " ")))
    return terms


def _negated(text: str) -> bool:
    words = {w.casefold() for w in _WORD.findall(text)}
    return bool(words & _NEGATIONS) or "n't" in text.casefold() or bool(_JA_NEGATION.search(text))


def _opposed(a: dict[str, float], b: dict[str, float]) -> bool:
    return any(
        (x in a and y in b and x not in b) or (y in a and x in b and y not in b)
        for x, y in _ANTONYMS
    )


def _entities_agree(a: Sequence[str], b: Sequence[str]) -> bool:
    """Both name entities, and one's entities include the other's (a later fact may add one:
    "@Peter: gateway host is the NUC" -> "@Peter @The-Castle: moved the gateway host ...")."""
    keys_a = {entity_key(e) for e in a}
    keys_b = {entity_key(e) for e in b}
    return bool(keys_a and keys_b) and (keys_a <= keys_b or keys_b <= keys_a)


_PARENTHETICAL = re.compile(r"\([^)]*\)|（[^）]*）")
_CLAUSE_END = re.compile(r"[;:—–；。]| - ")


def _head(text: str) -> str:
    """The main clause: parentheticals out, up to the first ';', ':', dash or '。'.
    ("Prefers concise WhatsApp replies (under 1500 chars); long content goes to a file.")"""
    return _CLAUSE_END.split(_PARENTHETICAL.sub(" ", text), maxsplit=1)[0]


def _variants(text: str) -> list[str]:
    head = _head(text)
    return [text, head] if head.strip() and head.strip() != text.strip() else [text]


def _terms_match(a: dict[str, float], b: dict[str, float]) -> bool:
    if _opposed(a, b):
        return False
    if not any(a[t] == 1.0 and b[t] == 1.0 for t in a.keys() & b.keys()):
        return False
    return _score(a, b) >= SAME_CLAIM_THRESHOLD


def same_claim(
    a_text: str, a_entities: Sequence[str], b_text: str, b_entities: Sequence[str]
) -> bool:
    """True when two statements are about the same entities and say the same kind of thing,
    so the later one updates (or is evidence about) the earlier one."""
    if not _entities_agree(a_entities, b_entities):
        return False
    if _negated(a_text) != _negated(b_text):
        return False
    names = _entity_terms([*a_entities, *b_entities])
    # A long statement's main clause may match a short paraphrase its trailing clause would drown.
    return any(
        _terms_match(_without(statement_terms(x), names), _without(statement_terms(y), names))
        for x in _variants(a_text)
        for y in _variants(b_text)
    )


def _without(terms: dict[str, float], names: set[str]) -> dict[str, float]:
    return {t: w for t, w in terms.items() if t not in names}
