"""Knowledge updates: does a later statement replace an earlier one?
(docs/knowledge-updates.md.)

:func:`judge` decides one pair of :class:`~gitmem.parse.statements.Statement` s and answers an
:class:`Edge` or None. Precision first: a wrong "replaced" hides a true fact, which is worse than
a missed update, so

* a **hard** edge (the older one is marked replaced and ranks below the newer) needs the writer's
  ``- replaces:`` item, or both statements setting the same single-valued attribute of the same
  subject: the same strong family ("lives in" / "moved to"), the same weak family about the same
  thing ("standup is at 9:30" / "we moved standup to 10"), or the newer naming the older's value
  as the one it changed ("Replaced the Synology with a TrueNAS box");
* a **hint** (JSON ``newer``; it never demotes) is a later statement about the same subject that
  words a change and shares a word or an attribute with the older one without meeting that bar;
* anything else is no edge: another subject (her team, his parents), another attribute (a move
  does not end one's duties), a fixed attribute (a birthday), things one has several of, events.

The rule reads as the table ``_RULES``: the first row whose condition holds gives the answer.
Pure functions, no I/O; the index stores what they decide (``gitmem.index.graph``).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass

from gitmem.domain import Edge
from gitmem.parse.statements import (
    CHANGE_KINDS,
    STATE_KINDS,
    TOPIC,
    Reading,
    Statement,
    family_strength,
    name_key,
    schedule_cue,
    subject_words,
)

# Weak attributes a subject has one of as a whole ("the billing service was migrated to
# Postgres"): a change worded right beside it needs no shared word. A schedule, a place or a
# role is of one thing among several ("sprint review" / "standup").
WHOLE_SUBJECT = frozenset({"tool"})  # a change of the rule re-derives every stored edge


@dataclass(frozen=True)
class _Pair:
    """A pair as the table's conditions read it."""

    newer: Statement
    older: Statement
    a: Reading  # the newer's reading
    b: Reading  # the older's
    subjects: frozenset[str]  # the subjects both are about, names only
    topics: frozenset[str]  # the topics both are about

    @property
    def shared_attributes(self) -> frozenset[str]:
        return self.a.attributes & self.b.attributes

    @property
    def shared_terms(self) -> frozenset[str]:
        return _overlap(self.a.terms, self.b.terms) - subject_words(self.subjects)


def _overlap(a: frozenset[str], b: frozenset[str]) -> frozenset[str]:
    """Terms of ``a`` that ``b`` holds too, or with the same first five letters (a short
    statement's language is guessed from its few words, so its stems vary)."""
    prefixes = {t[:5] for t in b if len(t) >= 5 and t.isalpha()}
    return frozenset(t for t in a if t in b or (len(t) >= 5 and t.isalpha() and t[:5] in prefixes))


def _value_named(pair: _Pair, *, subjects: bool = False) -> str:
    """The old value the newer names ("replaced the Synology with …") that the older states,
    or ''. The words of the older's subjects are no value ("Nadia handed payments over"
    names Nadia, not what she had), unless ``subjects`` (a role handed over: ``_handed_over``)."""
    older = pair.b.norm
    names = frozenset() if subjects else subject_words(pair.b.named)
    for value in pair.a.old_values:
        words = [w.lstrip("@").split("'")[0] for w in value.split()]  # "synology'en"
        words = [w for w in words if len(w) >= 2 and w not in _stop()
                 and name_key(w) not in names and w not in names]
        # every word held, or one that is a name as the newer writes it ("OpenVPN config
        # retired": OpenVPN; "moved from my home country": home is no name, country not held)
        if words and (all(_holds(older, w) for w in words) or any(
                _holds(older, w) and _named_value(pair.newer.text, w) for w in words)):
            return value
    return ""


def _named_value(text: str, word: str) -> bool:
    """Whether ``text`` writes ``word`` as a name or a model: capitalised inside, or with a
    digit ("Synology", "OpenVPN", "bx-01"), or in a script without case."""
    if not word.isascii() or any(ch.isdigit() for ch in word):
        return True
    at = text.casefold().find(word)
    return at > 0 and any(ch.isupper() for ch in text[at:at + len(word)])


def _stop() -> frozenset[str]:
    from gitmem.parse.similarity import stop_words

    return stop_words()


def _holds(text: str, word: str) -> bool:
    if not word.isascii() or not word.isalpha() or not text.isascii():
        return word in text  # CJK text has no spaces around the words it holds
    return f" {word}" in f" {text}" and (word in text.split() or any(
        w.startswith(word) for w in text.replace(",", " ").replace(".", " ").split()))


# --- the decision table -----------------------------------------------------------------------
# Each row: (what it checks, condition, outcome). Outcomes: an Edge maker, or None (no edge).

Outcome = Callable[[_Pair], Edge | None] | None


def _none(_: _Pair) -> None:
    return None


def _hard_family(pair: _Pair) -> Edge:
    attribute = sorted(a for a in pair.shared_attributes if family_strength(a) != "fixed")[0]
    return Edge("hard", "rule", attribute, pair.a.change or "restated")


def _hard_value(pair: _Pair) -> Edge:
    attribute = next(iter(sorted(pair.b.attributes)), "value")
    value = _value_named(pair) or _value_named(pair, subjects=True)
    return Edge("hard", "rule", attribute, f"replaced {value}")


def _hint(pair: _Pair) -> Edge:
    shared = sorted(pair.shared_attributes)
    return Edge("hint", "rule", shared[0] if shared else "", pair.a.change)


def _strong(pair: _Pair) -> bool:
    """Both set one strong attribute of a subject they share by name (and no qualifier tells
    two values apart: "work phone" / "personal number")."""
    return (bool(pair.subjects) and not _qualified_apart(pair)
            and any(family_strength(a) == "strong" for a in pair.shared_attributes))


def _qualified_apart(pair: _Pair) -> bool:
    """A qualifier or an identifier tells the two apart: "work phone" / "personal number",
    the certificate "for pebble.example.net" / "for foxglove.example.net"."""
    if (pair.a.qualifiers or pair.b.qualifiers) and pair.a.qualifiers != pair.b.qualifiers:
        return True
    return bool(pair.a.identifiers and pair.b.identifiers
                and not pair.a.identifiers & pair.b.identifiers)


def _weak(pair: _Pair) -> bool:
    """Both set one weak attribute (a schedule, a place, a role) of the same thing, and the
    newer words the change: a content word they share besides the subject says it is the same
    thing, or the newer words the change right beside that attribute ("moved standup to 10",
    "was migrated to Postgres")."""
    weak = {a for a in pair.shared_attributes if family_strength(a) == "weak"}
    return (bool(pair.subjects) and bool(weak) and bool(pair.a.change)
            and not _qualified_apart(pair)
            and (bool(pair.shared_terms) or bool(weak & pair.a.changed & WHOLE_SUBJECT)))


def _handed_over(pair: _Pair) -> bool:
    """A role changes hands: the newer names the older's subject as the old value ("Tomás took
    over the payments rota from Nadia" / "Nadia leads the payments rota"), both word the role,
    and they share the thing it is of."""
    old = _value_named(pair, subjects=True)
    return (bool(old) and "role" in pair.shared_attributes
            and any(name_key(old.split()[0].lstrip("@")) == s for s in pair.b.named)
            and bool(_things(pair.shared_terms - _subject_words_of(pair.b))))


def _subject_words_of(reading: Reading) -> frozenset[str]:
    return subject_words(reading.named)


def _names_older(pair: _Pair) -> bool:
    """One names the other's subject: an @entity, or its name as a word ("Switched the office
    VPN to WireGuard" about @VPN's "Office VPN is OpenVPN"; @wifi's "Replaced the Fritz!Box"
    about "The office wifi is one Fritz!Box")."""
    if pair.b.named & pair.a.mentions:
        return True
    return _named_in(pair.a.norm, pair.b.sure) or _named_in(pair.b.norm, pair.a.sure)


def _named_in(text: str, subjects: frozenset[str]) -> bool:
    """Whether ``text`` names one of ``subjects`` as a word ("the office wifi" names @wifi)."""
    if not subjects:
        return False
    if not text.isascii():  # CJK text holds its words without spaces
        return any(s in text for s in subjects if len(s) >= 2 and "/" not in s)
    return bool(_words_of(text) & {s for s in subjects if len(s) >= 3 and "/" not in s})


@functools.lru_cache(maxsize=32768)
def _words_of(text: str) -> frozenset[str]:
    return frozenset(text.replace(",", " ").replace(".", " ").split())


def _shares_phrase(pair: _Pair, *, changed: bool = False) -> bool:
    """A topic phrase in common ("gateway host"), not only a word; ``changed``: one the newer
    words its change of, right beside it ("Moved the gateway host to …")."""
    phrases = [t.removeprefix(TOPIC) for t in pair.topics if " " in t]
    if not changed:
        return bool(phrases)
    return any(_beside(pair.a.norm, pair.a.change, phrase) for phrase in phrases)


def _beside(text: str, change: str, phrase: str) -> bool:
    """Whether a change word and a topic phrase (its words cut to five letters) stand within a
    few words of each other."""
    words = text.split()
    cut = [w[:5] for w in words]
    first, _, second = phrase.partition(" ")
    spots = [i for i, (a, b) in enumerate(itertools.pairwise(cut)) if a == first and b == second]
    moves = [i for i, w in enumerate(words) if w.startswith(change.split()[0])] if change else []
    return any(abs(i - j) <= 3 for i in spots for j in moves)


def _changed_thing(pair: _Pair) -> bool:
    """Without a named subject in common ("Børnene går til svømning om tirsdagen" /
    "Svømningen er nu om torsdagen"): both set one attribute, the newer words its change right
    beside it, they share a content word (the thing), and neither is a plan, a continuation or
    one of several."""
    shared = {a for a in pair.shared_attributes if family_strength(a) != "fixed"}
    return (bool(shared & pair.a.changed) and bool(_things(pair.shared_terms)) and not pair.a.plan
            and not _holds_on(pair) and not _fixed(pair) and not _qualified_apart(pair))


def _things(terms: frozenset[str], *, shortest: int = 3) -> frozenset[str]:
    """Terms that name a thing, not a value an attribute takes (a number, a weekday, a time
    word: "monday" is no thing two statements are both about)."""
    cue = schedule_cue()
    return frozenset(term for term in terms if not any(ch.isdigit() for ch in term)
                     and not cue.search(term) and len(term) >= shortest)


def _disjoint_periods(pair: _Pair) -> bool:
    a, b = pair.newer.period, pair.older.period
    return a is not None and b is not None and (a[1] < b[0] or b[1] < a[0])


def _other_attributes(pair: _Pair) -> bool:
    """Each sets attributes, none the same: a move is not a change of duties."""
    return bool(pair.a.attributes and pair.b.attributes and not pair.shared_attributes)


def _fixed(pair: _Pair) -> bool:
    return any(family_strength(a) == "fixed" for a in pair.b.attributes)


def _holds_on(pair: _Pair) -> bool:
    """The newer keeps the value, adds one more, or both are things one has several of."""
    return (pair.a.continuity or pair.a.additive
            or (pair.a.many and pair.b.many and not pair.a.change))


_RULES: tuple[tuple[str, Callable[[_Pair], bool], Outcome], ...] = (
    ("the same words again: a repetition confirms", lambda p: p.a.norm == p.b.norm, None),
    ("two separate stated periods: two events", _disjoint_periods, None),
    ("the newer names the older's subject and value as the one it changed",
     lambda p: _names_older(p) and bool(_value_named(p)), _hard_value),
    ("the newer hands the older's subject's role to another ('took over the rota from Nadia')",
     _handed_over, _hard_value),
    ("no subject in common", lambda p: not p.subjects and not p.topics, None),
    ("a plan changes nothing yet", lambda p: p.a.plan,
     lambda p: _hint(p) if p.a.change and (p.shared_terms or p.shared_attributes) else None),
    ("the newer names the older's value as the one it changed", lambda p: bool(_value_named(p)),
     _hard_value),
    ("named subjects, none in common: other people, other things",
     lambda p: (not p.subjects and bool(p.a.sure) and bool(p.b.sure)
                and not _shares_phrase(p)), None),
    ("only a topic in common: one attribute of one thing, named by a shared word, changed",
     lambda p: not p.subjects and not p.a.sure and not p.b.sure and _changed_thing(p),
     _hard_family),
    ("only a topic in common: never more than a hint",
     lambda p: not p.subjects,
     lambda p: _hint(p) if p.a.change and _shares_phrase(p, changed=True) else None),
    ("a fixed attribute (a birthday) is never replaced by the rule", _fixed, None),
    ("the value holds on, or one more of several", _holds_on, None),
    ("both tell what happened once", lambda p: p.a.event and p.b.event and not p.a.change, None),
    ("one strong attribute of one subject", _strong, _hard_family),
    ("one weak attribute of one thing", _weak, _hard_family),
    ("other attributes: a move does not end one's duties", _other_attributes, None),
    ("a worded change about the same subject, sharing an attribute, a topic or a thing",
     lambda p: bool(p.a.change) and bool(p.shared_attributes or _shares_phrase(p)
                                         or _things(p.shared_terms, shortest=2)), _hint),
)


def judge(newer: Statement, older: Statement) -> Edge | None:
    """What ``newer`` is to ``older``: a hard edge (it replaces it), a hint, or None."""
    if (newer.path, newer.line) == (older.path, older.line):
        return None
    if declares(newer, older):
        return Edge("hard", "declared", "", "declared")
    if keeps(newer, older) or not newer.later_than(older):
        return None
    if older.kind not in STATE_KINDS or newer.kind not in CHANGE_KINDS:
        return None
    a, b = newer.reading, older.reading
    pair = _Pair(newer, older, a, b, a.named & b.named,
                 frozenset(s for s in a.subjects & b.subjects if s.startswith(TOPIC)))
    for _, condition, outcome in _RULES:
        if condition(pair):
            return None if outcome is None else outcome(pair)
    return None


def explain(newer: Statement, older: Statement) -> str:
    """The row of the table that decides the pair (for ``--misses`` and tests)."""
    if declares(newer, older):
        return "declared"
    if keeps(newer, older):
        return "kept by '- keeps:'"
    if not newer.later_than(older):
        return "not stated later"
    if older.kind not in STATE_KINDS or newer.kind not in CHANGE_KINDS:
        return "kinds that do not replace"
    a, b = newer.reading, older.reading
    pair = _Pair(newer, older, a, b, a.named & b.named,
                 frozenset(s for s in a.subjects & b.subjects if s.startswith(TOPIC)))
    for name, condition, _ in _RULES:
        if condition(pair):
            return name
    return "nothing in common that the rule reads"


def declares(newer: Statement, older: Statement) -> bool:
    """Whether ``newer``'s '- replaces:' item names ``older``: its fact id, or a citation of
    one of its lines."""
    return _names(newer.declared, older)


def keeps(newer: Statement, older: Statement) -> bool:
    """Whether ``newer``'s '- keeps:' item names ``older``."""
    return _names(newer.kept, older)


def _names(refs: frozenset[str], older: Statement) -> bool:
    if not refs:
        return False
    if older.fact_id and older.fact_id in refs:
        return True
    last = max(older.line, older.end_line)
    for ref in refs:
        path, sep, lines = ref.partition("#L")
        first = lines.split("-", 1)[0]
        if sep and path == older.path and first.isdigit() and older.line <= int(first) <= last:
            return True
    return False
