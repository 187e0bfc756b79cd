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
from collections.abc import Callable, Mapping
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


def _languages() -> tuple[Language, ...]:
    from gitmem.lang import da, en, ja, ru, zh

    return (en.LANGUAGE, da.LANGUAGE, ru.LANGUAGE, ja.LANGUAGE, zh.LANGUAGE)


_WORDED = frozenset({"en", "da", "ru"})  # scripts with word boundaries


def _union(pick: str) -> str:
    parts = []
    for lang in _languages():
        value = getattr(lang, pick)
        if value:
            parts.append(_bounded(value, lang.code in _WORDED))
    return "|".join(parts) or "(?!)"


@dataclass(frozen=True)
class Tables:
    """Every language's cues, compiled once per process."""

    families: Mapping[str, re.Pattern[str]]
    any_family: re.Pattern[str]  # every family's cues at once: most lines hold none
    attribute_nouns: tuple[tuple[str, re.Pattern[str]], ...]
    change: re.Pattern[str]
    old_value: tuple[re.Pattern[str], ...]
    continuity: re.Pattern[str]
    plan: re.Pattern[str]
    event: re.Pattern[str]
    many: re.Pattern[str]
    additive: re.Pattern[str]
    household: re.Pattern[str]
    possessive: tuple[re.Pattern[str], ...]
    copula: re.Pattern[str]
    first_person: re.Pattern[str]
    relations: re.Pattern[str]
    qualifiers: re.Pattern[str]
    stop_words: frozenset[str]
    honorifics: str
    judgements: Mapping[str, tuple[re.Pattern[str], re.Pattern[str]]]  # aspect -> (good, bad)
    negation: re.Pattern[str]
    ended: re.Pattern[str]


Compile = Callable[[str], re.Pattern[str]]


@functools.cache
def tables(compile: Compile = re.compile) -> Tables:
    """The builder: one compiled table per kind of cue, over every language, compiled by
    ``compile`` (``re.compile``)."""
    langs = _languages()
    families: dict[str, list[str]] = {}
    nouns: dict[str, list[str]] = {}
    for lang in langs:
        worded = lang.code in _WORDED
        for name, cues in lang.families.items():
            families.setdefault(name, []).append(_bounded(cues, worded))
        for name, cues in lang.attribute_nouns.items():
            nouns.setdefault(name, []).append(_bounded(cues, worded))
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
        families={name: compile("|".join(cues)) for name, cues in families.items()},
        any_family=compile("|".join(c for cues in families.values() for c in cues)),
        attribute_nouns=tuple((name, compile(f"^(?:{'|'.join(cues)})$"))
                              for name, cues in nouns.items()),
        change=compile(_union("change")),
        old_value=tuple(compile(p) for lang in langs for p in lang.old_value),
        continuity=compile(_union("continuity")),
        plan=compile(_union("plan")),
        event=compile(_union("event")),
        many=compile(_union("many")),
        additive=compile(_union("additive")),
        household=compile(_union("household")),
        possessive=tuple(compile(lang.possessive) for lang in langs if lang.possessive),
        copula=compile(_union("copula")),
        first_person=compile(_union("first_person")),
        relations=compile(f"^(?:{_union('relations')})$"),
        qualifiers=compile(_union("qualifiers")),
        stop_words=frozenset().union(*(lang.stop_words for lang in langs)),
        honorifics="|".join(lang.honorifics for lang in langs if lang.honorifics),
        judgements={aspect: (compile("|".join(good)), compile("|".join(bad)))
                    for aspect, (good, bad) in judged.items()},
        negation=compile(_union("negation")),
        ended=compile(_union("ended")),
    )


def plain(text: str) -> str:
    """The form every cue is matched on: NFKC, case folded."""
    return unicodedata.normalize("NFKC", text).casefold()
