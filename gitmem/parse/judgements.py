"""Opinions: is a new ``O`` entry the same judgement about the same subject as an opinion, its
opposite, a worded end of it, or another judgement? (docs/opinions-file.md, "How evidence is
matched".)

The opinion-side twin of :mod:`gitmem.parse.updates` ("the same attribute of the same
subject"): a statement is read once into a :class:`Judgement` — the aspects it judges and which
way (``reliable``: reliability, well; ``not good enough``: quality, badly), whether it words an
end ("stopped using", "gave up on"), whether it holds a judgement on ("still", "keeps"), and
its other content terms — with every language's cues as data (``gitmem.lang``: ``judgements``,
``negation``, ``ended``, ``continuity``). :func:`relate` then decides a pair by the table
``_RULES``: the first row whose condition holds gives the answer.

* ``for``: the same judgement in other words ("Tailscale is reliable" / "Tailscale keeps
  working fine");
* ``against``: the opposite ("… are good enough" / "… are not good enough"), or a worded end
  ("stopped using Ollama for summaries");
* ``unsure``: alike in part, not enough to say; the caller opens a new opinion and says which
  one it may be the same as — a wrong merge is worse than a missed one;
* None: another judgement, or another subject.

Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from gitmem.lang import ASPECTS, Tables, plain, tables
from gitmem.parse.retain import ENTITY_RE
from gitmem.parse.similarity import (
    SAME_CLAIM_THRESHOLD,
    claim,
    name_terms,
    statement_terms,
    texts_match,
)
from gitmem.parse.statements import TIME_WORDS

Relation = Literal["for", "against", "unsure"]
Similarity = Callable[[str, str], float]  # two masked statements -> cosine, -1..1

# A content term shared by the rest of two statements weighs at least this much (a single
# CJK ideograph weighs 0.5, a generic predicate 0.3).
REST_WEIGHT = 0.5
# The share of their rest two statements without judgement cues must hold in common to be
# the same words, one negated ("the office wifi is up" / "the office wifi is not up").
OPPOSITE_OVERLAP = 0.6
# Alike in part: a lexical score from here up (below the same-claim threshold) is "unsure".
UNSURE_SCORE = 0.3
# With an embedding model: a cosine of the masked statements from MODEL_SAME up is the same
# judgement (when no row of words decides), from MODEL_UNSURE up "unsure". Multilingual
# e5-small puts two judgements of one subject at 0.86-0.96 whether they are the same or not
# (bench/bench_opinions.py --model, tuning set), so only a near-identical pair counts.
MODEL_SAME = 0.96
MODEL_UNSURE = 0.93

_CLAUSE = re.compile(r"[,;.:!?—–、。；，！？()（）]|\s-\s")  # an aside in parentheses is a clause
_CJK_CUE = re.compile("[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")  # negated after it


@dataclass(frozen=True)
class Judgement:
    """What the rule reads of one opinion statement."""

    aspects: tuple[tuple[str, bool], ...]  # (aspect, judged well), in text order, each once
    negated: bool  # a negation outside the judgement cues ("is not the bottleneck")
    ended: bool  # a worded end: "stopped using", "gave up on", "bruger ikke … mere"
    continuity: bool  # holds a judgement on: "still", "keeps", "相変わらず"
    rest: frozenset[str]  # content terms besides the cues, names and time words
    terms: dict[str, float]  # those terms with their weights

    @property
    def polarity(self) -> bool | None:
        """Well or badly judged (None: mixed); without aspects, not negated is "well"."""
        ways = {well for _, well in self.aspects}
        if not ways:
            return not (self.negated or self.ended)
        return ways.pop() if len(ways) == 1 else None

    @property
    def generic(self) -> bool:
        """Judges only generic aspects ("good", "prefers"), or none."""
        return all(ASPECTS[a] == "generic" for a, _ in self.aspects)


def _tables() -> Tables:
    return tables(re.compile)


def _cues(clause: str, t: Tables) -> list[tuple[int, int, str, bool]]:
    """The judgement cues of one clause, longest first where they overlap: (start, end,
    aspect, well)."""
    found = [(m.start(), m.end(), aspect, well)
             for aspect, pair in t.judgements.items()
             for well, rx in zip((True, False), pair, strict=True)
             for m in rx.finditer(clause) if m.end() > m.start()]
    found.sort(key=lambda f: (f[0] - f[1], f[0]))
    taken: list[tuple[int, int, str, bool]] = []
    for cue in found:
        if all(cue[1] <= s or cue[0] >= e for s, e, _, _ in taken):
            taken.append(cue)
    return sorted(taken)


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    out = list(text)
    for start, end in spans:
        out[start:end] = " " * (end - start)
    return "".join(out)


@functools.lru_cache(maxsize=16384)
def judgement(text: str, names: tuple[str, ...]) -> Judgement:
    """Read one statement (``names``: its entities, whose names are not what it judges)."""
    t = _tables()
    low = _names(names).sub(" ", plain(ENTITY_RE.sub(" ", text)))
    aspects: dict[str, bool] = {}
    negated = ended = False
    kept: list[str] = []
    start = 0
    for stop in [m.start() for m in _CLAUSE.finditer(low)] + [len(low)]:
        clause, start = low[start:stop], stop + 1
        cues = _cues(clause, t)
        spans = [(s, e) for s, e, _, _ in cues]
        ends = [m.span() for m in t.ended.finditer(_blank(clause, spans))]
        ended = ended or bool(ends)
        spans += ends
        nots = [m.span() for m in t.negation.finditer(_blank(clause, spans))]
        for start_, end_, aspect, well in cues:
            # a negation turns the judgement that follows it ("not good enough", "ikke gode
            # nok"); in Japanese also the one it follows (使えない)
            after = bool(_CJK_CUE.search(clause, start_, end_))
            flipped = any(e <= start_ or (after and s >= end_) for s, e in nots)
            aspects.setdefault(aspect, well != flipped)
        if nots and not cues and not ends:
            negated = True
        spans += nots
        spans += [m.span() for rx in (t.continuity, t.change) for m in rx.finditer(clause)]
        kept.append(_blank(clause, spans))
    rest_text = " ".join(w for w in " , ".join(kept).split() if w.strip(".,") not in TIME_WORDS)
    skip = name_terms(names)
    terms = {term: w for term, w in statement_terms(rest_text).items()
             if w >= REST_WEIGHT and term not in skip}
    return Judgement(
        aspects=tuple(aspects.items()),
        negated=negated,
        ended=ended,
        continuity=bool(t.continuity.search(low)),
        rest=frozenset(terms),
        terms=terms,
    )


@functools.lru_cache(maxsize=4096)
def _names(names: tuple[str, ...]) -> re.Pattern[str]:
    """The entities' names in a text, inflected ("Mettes", "Пётра", "田中さん"): a name
    is not what a statement judges, whatever the stemmer of its sentence makes of it."""
    forms = []
    for name in sorted(names, key=len, reverse=True):
        words = [w for w in re.split(r"[-_ ]+", unicodedata.normalize("NFKC", name)) if w]
        if words:
            forms.append(r"[-_ ]?".join(map(re.escape, words)))
    if not forms:
        return re.compile("(?!)")
    return re.compile(r"(?<!\w)(?:" + "|".join(forms) + r")(?:'s|’s|[a-zà-ÿа-яё]{0,3})", re.I)


def masked(text: str, names: tuple[str, ...]) -> str:
    """The statement with its entities' names masked ("X"): what a model compares, so that
    two judgements of one subject are not alike for its name alone."""
    out = _names(names).sub("X", ENTITY_RE.sub("X", unicodedata.normalize("NFKC", text)))
    return " ".join(out.split())


@dataclass(frozen=True)
class _Pair:
    a: Judgement  # the opinion's statement
    b: Judgement  # the new entry
    lexical: bool  # the statements say the same thing by their terms (``texts_match``)
    score: float  # their terms' overlap, 0..1 (the rest, cues left out)
    cosine: float | None  # the model's, masked statements; None without a model

    @property
    def shared(self) -> dict[str, tuple[bool, bool]]:
        a, b = dict(self.a.aspects), dict(self.b.aspects)
        return {x: (a[x], b[x]) for x in a.keys() & b.keys()}

    @property
    def rest_fits(self) -> bool:
        """Their other content words agree: one shared, or one side has none."""
        return not self.a.rest or not self.b.rest or bool(self.a.rest & self.b.rest)

    @property
    def apart(self) -> bool:
        """Both judge, and no aspect in common: different judgements."""
        return bool(self.a.aspects) and bool(self.b.aspects) and not self.shared

    @property
    def agree(self) -> bool:
        pa, pb = self.a.polarity, self.b.polarity
        return pa is None or pb is None or pa == pb


def _opposed(p: _Pair) -> bool:
    return bool(p.shared) and any(x != y for x, y in p.shared.values()) and p.rest_fits


def _alike(p: _Pair) -> bool:
    return bool(p.shared) and all(x == y for x, y in p.shared.values()) and p.rest_fits


def _negated_words(p: _Pair) -> bool:
    return (not p.a.aspects and not p.b.aspects and p.a.negated != p.b.negated
            and not p.b.ended and p.score >= OPPOSITE_OVERLAP)


def _holds_on(p: _Pair) -> bool:
    """'Still fine', 'keeps working': the entry holds a judgement on, the same way, about the
    same aspect or a generic one."""
    return (p.b.continuity and p.agree and not p.b.ended
            and (not p.apart or p.a.generic or p.b.generic)
            and (p.rest_fits or p.b.generic))


def _unsure(p: _Pair) -> bool:
    specific = any(ASPECTS[x] == "specific" for x in p.shared)
    model = p.cosine is not None and p.cosine >= MODEL_UNSURE
    return not p.apart and (specific or p.score >= UNSURE_SCORE or model)


_RULES: tuple[tuple[str, Callable[[_Pair], bool], Relation | None], ...] = (
    ("a worded end of it ('stopped using'), judging nothing else",
     lambda p: p.b.ended and not p.b.aspects and p.rest_fits, "against"),
    ("the same aspect judged the other way", _opposed, "against"),
    ("the same aspect judged alike", _alike, "for"),
    ("the same words, one of them negated", _negated_words, "against"),
    ("the same claim in other words", lambda p: not p.apart and p.agree and p.lexical, "for"),
    ("holds the judgement on ('still', 'keeps')", _holds_on, "for"),
    ("the model finds the same judgement",
     lambda p: (p.cosine is not None and p.cosine >= MODEL_SAME and not p.apart and p.agree
                and not p.b.ended), "for"),
    ("alike in part: not sure", _unsure, "unsure"),
)


@dataclass(frozen=True)
class Verdict:
    """What an entry is to an opinion, and the row of ``_RULES`` that decided it."""

    relation: Relation
    reason: str
    row: int  # the row's place: an earlier row decides more surely
    score: float  # the statements' overlap (ties between opinions)


def relate(opinion: str, opinion_names: tuple[str, ...], entry: str,
           entry_names: tuple[str, ...], similarity: Similarity | None = None
           ) -> Verdict | None:
    """What ``entry`` (a new ``O`` entry's text) is to ``opinion`` (an opinion's statement),
    both about a subject in common (the caller checks). ``similarity``: a model's cosine of
    two masked statements, when one is configured."""
    a, b = judgement(opinion, opinion_names), judgement(entry, entry_names)
    ca, cb = claim(opinion, opinion_names), claim(entry, entry_names)
    total = max(sum(a.terms.values()), sum(b.terms.values()))
    score = (sum(min(a.terms[x], b.terms[x]) for x in a.rest & b.rest) / total) if total else 0.0
    cosine = (similarity(masked(opinion, opinion_names), masked(entry, entry_names))
              if similarity is not None else None)
    pair = _Pair(a, b, texts_match(ca, cb), score, cosine)
    for n, (reason, condition, relation) in enumerate(_RULES):
        if condition(pair):
            return None if relation is None else Verdict(relation, reason, n, score)
    return None


def explain(opinion: str, entry: str, names: tuple[str, ...] = ()) -> str:
    """The row of the table that decides a pair (for tests and ``--misses``)."""
    found = relate(opinion, names, entry, names)
    return "no row: another judgement" if found is None else found.reason


__all__ = ["MODEL_SAME", "MODEL_UNSURE", "SAME_CLAIM_THRESHOLD", "Judgement", "Relation",
           "Similarity", "Verdict", "explain", "judgement", "masked", "relate"]
