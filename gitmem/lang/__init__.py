"""What gitmem knows of each language, as data: one module per language, one builder.

A language module (``en``, ``da``, ``ru``, ``ja``, ``zh``) defines ``LANGUAGE``, a
:class:`Language` of plain strings and word lists: no code. The builder below joins every
language's entries into the compiled tables the rule of knowledge updates reads
(``gitmem.parse.statements``, ``gitmem.parse.updates``). Adding a language is one module here plus
its test cases (docs/knowledge-updates.md, "Adding a language").

Patterns are regular-expression alternations matched on NFKC, case-folded text: write them in
lower case; alphabetic cues are wrapped in word boundaries by the builder, CJK cues are
matched as substrings.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

Strength = Literal["strong", "weak", "fixed"]

# What each attribute family is, whatever the language:
# - strong: a subject holds one value at a time, and a statement that words the family sets it
#   ("lives in", "works at", "is married to");
# - weak: one value at a time *of one thing* ("standup is at 9:30", "X runs on Y", "Priya leads
#   Atlas"): two statements set the same attribute only when they also share that thing (a
#   content word besides the subject);
# - fixed: never changes (a birthday): no rule replaces it, only a writer's ``replaces:``.
FAMILIES: Mapping[str, Strength] = {
    "residence": "strong", "employer": "strong", "partner": "strong", "name": "strong",
    "age": "strong", "manager": "strong", "email": "strong", "phone": "strong",
    "vehicle": "strong", "diet": "strong", "leave": "strong", "hospital": "strong",
    "commute": "strong", "study": "strong", "password": "strong", "price": "strong",
    "status": "strong", "habit": "strong", "team": "strong", "endpoint": "strong",
    "role": "weak", "place": "weak", "tool": "weak", "schedule": "weak", "deadline": "weak",
    "care": "weak", "household": "weak", "provider": "weak",
    "birthday": "fixed",
}

# What an opinion judges (issue 39, docs/opinions-file.md): two statements about one subject
# state the same judgement when they judge the same aspect the same way. A generic aspect
# ("good", "prefers") says little about what is judged: it needs a shared content word too.
ASPECTS: Mapping[str, Literal["generic", "specific"]] = {
    "quality": "generic", "preference": "generic",
    "reliability": "specific", "speed": "specific", "cost": "specific", "value": "specific",
    "ease": "specific", "noise": "specific", "care": "specific", "punctuality": "specific",
    "suitability": "specific", "usefulness": "specific", "efficiency": "specific",
    "clarity": "specific",
}


@dataclass(frozen=True)
class Language:
    """One language's knowledge, as patterns (alternations) and word lists."""

    code: str
    # attribute family -> cues that set it (verbs and set phrases: "lives in", "moved to")
    families: Mapping[str, str]
    # attribute family -> nouns that name it after a possessive ("Carol's email is ...")
    attribute_nouns: Mapping[str, str]
    change: str  # a worded change: "moved", "now", "no longer", "switched"
    # a worded change that names the old value, in a group named ``old`` ("replaced X with")
    old_value: tuple[str, ...]
    continuity: str  # the value holds on: "still", "keeps", "remains"
    plan: str  # not done yet: "will", "plans to", "decided to" (a plan changes nothing yet)
    event: str  # what happened once: "visited", "met", "bought"
    many: str  # things one has several of at once: "speaks", "plays", "has a"
    additive: str  # one more: "also", "too", "another"
    household: str  # "lives with": who, not where
    # a possessive construction: groups ``owner`` and ``noun`` (and the words after it)
    possessive: str
    # words that link a possessed noun to its value ("is", "was", ":"): "X's email is ..."
    copula: str
    first_person: str  # "I", "we", "my": a chat turn about its speaker
    relations: str  # other people and things owned: "parents", "team", "dog"
    # words that tell two values of one attribute apart ("work phone" / "personal number"):
    # statements with other qualifiers set other attributes
    qualifiers: str = ""
    stop_words: frozenset[str] = field(default_factory=frozenset)
    honorifics: str = ""  # after a name: さん, 様
    # opinions (issue 39): a judgement's aspect -> (cues that judge it well, cues that judge it
    # badly): "reliability" -> ("reliable|stable|…", "flaky|unstable|…")
    judgements: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    negation: str = ""  # turns a judgement into its opposite: "not", "no longer", "ikke"
    ended: str = ""  # a worded end of using or holding something: "stopped using", "gave up on"


def _bounded(alternation: str, script_words: bool) -> str:
    # not \b: a cue may begin or end with a symbol ("£1,200", ":")
    return rf"(?<!\w)(?:{alternation})(?!\w)" if script_words else f"(?:{alternation})"


# A character of a script without spaces between words (kana, Han, half-width katakana).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f]")
# Where a CJK cue cannot start in a line without CJK characters: a Latin or Cyrillic letter, a
# space (only ``\S+@…`` could, and every worded language has that cue itself).
_NOT_CJK_START = r"(?![a-zà-ÿа-яё\s])"


Compile = Callable[[str], re.Pattern[str]]


@dataclass(frozen=True)
class Cue:
    """One kind of cue over every language, with the methods of ``re.Pattern`` the rule uses.

    Python's ``re`` tries each alternative at each position, so a long alternation is slow on
    the lines it does not match, which are most lines. Two compiled forms make it ~4x faster:
    the worded languages' alternatives share one word bound, and in a line without a CJK
    character the CJK alternatives are not tried where none can begin (a letter or a space).
    A line with one is matched by the exact form. Each form is compiled when it is first used
    (most processes never see a CJK line; a family's own cue is tried only on a line that
    ``any_family`` matched): compiling every form took 0.36 s of each indexing process."""

    pattern: str  # every language's alternatives, as matched on a line with CJK characters
    latin: str  # the form for a line without CJK characters
    compile: Compile = field(default=re.compile, compare=False, repr=False)

    @functools.cached_property
    def _exact(self) -> re.Pattern[str]:  # a frozen dataclass may cache: its __dict__ is its own
        return self.compile(self.pattern)

    @functools.cached_property
    def _latin(self) -> re.Pattern[str]:
        return self.compile(self.latin)

    def _form(self, text: str) -> re.Pattern[str]:
        return self._exact if _CJK.search(text) else self._latin

    def search(self, text: str) -> re.Match[str] | None:
        return self._form(text).search(text)

    def match(self, text: str) -> re.Match[str] | None:
        return self._form(text).match(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self._form(text).fullmatch(text)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        return self._form(text).finditer(text)


def _cue(parts: Sequence[tuple[str, bool]], compile: Compile, *, whole: bool = False) -> Cue:
    """The cue of ``parts`` (each language's alternation, and whether its script has words);
    ``whole``: it must match the whole text (a relation, an attribute's noun)."""
    worded = "|".join(f"(?:{p})" for p, words in parts if words and p)
    unworded = "|".join(f"(?:{p})" for p, words in parts if not words and p)
    exact = "|".join(_bounded(p, words) for p, words in parts if p) or "(?!)"
    latin = "|".join(x for x in (
        rf"(?<!\w)(?:{worded})(?!\w)" if worded else "",
        f"{_NOT_CJK_START}(?:{unworded})" if unworded else "") if x) or "(?!)"
    if whole:
        exact, latin = f"^(?:{exact})$", f"^(?:{latin})$"
    return Cue(exact, latin, compile)


def _languages() -> tuple[Language, ...]:
    from gitmem.lang import da, en, ja, ru, zh

    return (en.LANGUAGE, da.LANGUAGE, ru.LANGUAGE, ja.LANGUAGE, zh.LANGUAGE)


_WORDED = frozenset({"en", "da", "ru"})  # scripts with word boundaries


def _union(pick: str, compile: Compile, *, whole: bool = False) -> Cue:
    return _cue([(getattr(lang, pick), lang.code in _WORDED) for lang in _languages()
                 if getattr(lang, pick)], compile, whole=whole)


@dataclass(frozen=True)
class Tables:
    """Every language's cues, compiled once per process."""

    families: Mapping[str, Cue]
    any_family: Cue  # every family's cues at once: most lines hold none
    attribute_nouns: tuple[tuple[str, Cue], ...]
    change: Cue
    old_value: tuple[re.Pattern[str], ...]
    continuity: Cue
    plan: Cue
    event: Cue
    many: Cue
    additive: Cue
    household: Cue
    possessive: tuple[re.Pattern[str], ...]
    copula: Cue
    first_person: Cue
    relations: Cue
    qualifiers: Cue
    stop_words: frozenset[str]
    honorifics: str
    judgements: Mapping[str, tuple[re.Pattern[str], re.Pattern[str]]]  # aspect -> (good, bad)
    negation: Cue
    ended: Cue

@functools.cache
def tables(compile: Compile = re.compile) -> Tables:
    """The builder: one compiled table per kind of cue, over every language, compiled by
    ``compile`` (``re.compile``)."""
    langs = _languages()
    families: dict[str, list[tuple[str, bool]]] = {}
    nouns: dict[str, list[tuple[str, bool]]] = {}
    for lang in langs:
        worded = lang.code in _WORDED
        for name, cues in lang.families.items():
            families.setdefault(name, []).append((cues, worded))
        for name, cues in lang.attribute_nouns.items():
            nouns.setdefault(name, []).append((cues, worded))
    unknown = (families.keys() | nouns.keys()) - FAMILIES.keys()
    if unknown:
        raise ValueError(f"attribute families without a strength: {sorted(unknown)}")
    judged: dict[str, tuple[list[str], list[str]]] = {}
    for lang in langs:
        worded = lang.code in _WORDED
        for aspect, (good, bad) in lang.judgements.items():
            found = judged.setdefault(aspect, ([], []))
            found[0].append(_bounded(good, worded))
            found[1].append(_bounded(bad, worded))
    if judged.keys() - ASPECTS.keys():
        raise ValueError(f"aspects not in ASPECTS: {sorted(judged.keys() - ASPECTS.keys())}")
    return Tables(
        families={name: _cue(cues, compile) for name, cues in families.items()},
        any_family=_cue([c for cues in families.values() for c in cues], compile),
        attribute_nouns=tuple((name, _cue(cues, compile, whole=True))
                              for name, cues in nouns.items()),
        change=_union("change", compile),
        old_value=tuple(compile(p) for lang in langs for p in lang.old_value),
        continuity=_union("continuity", compile),
        plan=_union("plan", compile),
        event=_union("event", compile),
        many=_union("many", compile),
        additive=_union("additive", compile),
        household=_union("household", compile),
        possessive=tuple(compile(lang.possessive) for lang in langs if lang.possessive),
        copula=_union("copula", compile),
        first_person=_union("first_person", compile),
        relations=_union("relations", compile, whole=True),
        qualifiers=_union("qualifiers", compile),
        stop_words=frozenset().union(*(lang.stop_words for lang in langs)),
        honorifics="|".join(lang.honorifics for lang in langs if lang.honorifics),
        judgements={aspect: (compile("|".join(good)), compile("|".join(bad)))
                    for aspect, (good, bad) in judged.items()},
        negation=_union("negation", compile),
        ended=_union("ended", compile),
    )


def plain(text: str) -> str:
    """The form every cue is matched on: NFKC, case folded."""
    return unicodedata.normalize("NFKC", text).casefold()
