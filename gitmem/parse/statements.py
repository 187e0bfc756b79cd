"""Statements: what the rule of knowledge updates compares (``gitmem.parse.updates``).

A statement is a Retain entry of any kind, or a plain note line outside Retain sections that is
about someone or something (a chat turn is about its speaker when it speaks in the first
person). Each is read once into a :class:`Reading`: the subjects it is about, the single-valued
attributes it sets for them, the change it words, the old value it names, its content terms.

The subject is the thing the statement is about, not every entity or name it mentions: a Retain
entry's subjects are the entities before its colon, a note line's the name it opens with (or
its speaker); and a possessive at the start makes another subject ("Sara's team moves office",
"her parents live in Hamburg": the team, the parents), unless it names one of the owner's own
attributes ("Sara's email is …", "Frank's manager is Oskar now").

Pure functions, no I/O; the language knowledge is data (``gitmem.lang``).
"""

from __future__ import annotations

import functools
import itertools
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, fields

from gitmem.domain import Fact, ParsedFile, ResultKind
from gitmem.lang import FAMILIES, Cue, Tables, plain, tables
from gitmem.parse.retain import ENTITY_RE, entity_key
from gitmem.workspace import OPINIONS_PATH

NEAR = 12  # characters between a change word and an attribute's cue that say it changed
SELF = "self"  # the subject of a first-person note line ("I moved to Lisbon")
TOPIC = "topic:"  # the prefix of a topic subject ("topic:gatew host"), and of a content word of a
# statement that sets an attribute ("topic:svomn"): what statements without a named subject in
# common are compared by
RELATED = "/"  # owner/noun: a subject owned by another ("sara/team")
THING = "thing:"  # an attribute a possessive names that no family knows ("Lena's flight")

STATE_KINDS = frozenset({"world", "observation", "note"})  # what a later statement can replace
CHANGE_KINDS = frozenset({"world", "observation", "note", "experience"})  # what can state one


@dataclass(frozen=True)
class Statement:
    """A fact or a note line, where it stands and when it was stated."""

    kind: ResultKind
    text: str
    path: str
    line: int
    end_line: int
    stated: str  # its daily note's day, else the day it was recorded; '' unknown
    recorded_at: str = ""
    subjects: tuple[str, ...] = ()  # entity slugs before the colon (a fact) or '' (a note line)
    period: tuple[str, str] | None = None  # the event period it states itself, if any
    fact_id: str = ""
    declared: frozenset[str] = frozenset()  # fact ids its '- replaces:' names
    kept: frozenset[str] = frozenset()  # fact ids its '- keeps:' names

    def later_than(self, other: Statement) -> bool:
        """Stated after ``other``: a later day, then a later record time, then further down
        the same file (two files of one day and one commit have no order)."""
        mine, theirs = (self.stated, self.recorded_at), (other.stated, other.recorded_at)
        if mine != theirs:
            return mine > theirs
        return self.path == other.path and self.line > other.line

    @functools.cached_property
    def reading(self) -> Reading:  # a frozen dataclass may cache: its __dict__ is its own
        return read(self.text, self.subjects, self.kind)


@dataclass(frozen=True)
class Reading:
    """What the rule reads of one statement's text."""

    subjects: frozenset[str]  # subject keys (``name_key``), ``SELF``, ``owner/noun``, topics
    sure: frozenset[str]  # those that are surely names or entities (see ``_line_subjects``)
    mentions: frozenset[str]  # the keys of the @entities its text names
    attributes: frozenset[str]  # the attribute families it sets for its subjects
    changed: frozenset[str]  # those it words a change of, right beside it ("moved standup to")
    change: str  # the change it words ('' none): "moved", "switched"
    old_values: tuple[str, ...]  # the old values it names ("replaced the Synology with …")
    terms: frozenset[str]  # its content terms, names left out
    qualifiers: frozenset[str]  # "work" of "work phone": which of several values it sets
    identifiers: frozenset[str]  # host names, keys, code spans, tickets: what it is about exactly
    continuity: bool  # "still", "keeps": the value holds on
    plan: bool  # "will", "decided to": nothing has changed yet
    event: bool  # tells of something that happened once ("visited")
    many: bool  # one of several things one has at once ("speaks", "plays")
    additive: bool  # one more ("also", "another")
    norm: str  # the text, spaces and case folded: a repetition is no update
    named: frozenset[str] = frozenset()  # the subjects that are names, not topics: the ones an
    # attribute can belong to

    @property
    def may_change(self) -> bool:
        """Whether it can be the newer statement of an edge without sharing an attribute: it
        words a change or names an old value (a cheap necessary condition, for the indexer)."""
        return bool(self.change or self.old_values)


def _tables() -> Tables:
    """Every language's cues (``gitmem.lang``), compiled by ``re.compile``."""
    return tables(re.compile)


# --- subjects ---------------------------------------------------------------------------------

_RU_ENDINGS = ("ами", "ями", "ого", "его", "ой", "ей", "ом", "ем", "ою", "ею", "ам", "ям", "ах",
               "ях", "а", "я", "у", "ю", "е", "ы", "и", "ь", "й")


def name_key(name: str) -> str:
    """A name's key: ``entity_key``, and a Russian name without its case ending ("Ивана",
    "Иваном" -> "иван"; ё as е), so inflected mentions of one person meet."""
    key = entity_key(name).replace("ё", "е")
    if len(key) >= 4 and "\u0400" <= key[-1] <= "\u04ff":
        for end in _RU_ENDINGS:
            if key.endswith(end) and len(key) - len(end) >= 3:
                return key[: -len(end)]
    return key


_TURN = re.compile(r"^\s*(?:\[[^\]]{1,20}\]\s*)?([^\W\d][\w .'-]{0,30}):\s")
_NAME_START = re.compile(
    r"^\s*(?:[-*+]\s+|\d{1,9}[.)]\s+)?(?:(?:\d{1,2}[:.]\d{2}|\[[^\]]{1,20}\])\s+)?"
    r"(?:(?P<the>The|the|Den|Det|den|det)\s+)?"
    r"(?P<name>[A-ZÆØÅÄÖÜА-ЯЁ][\w-]+(?:\s+[A-ZÆØÅÄÖÜА-ЯЁ][\w-]+)?)"
    r"(?:\s+(?:and|og|и)\s+(?P<other>[A-ZÆØÅА-ЯЁ][\w-]+))?(?P<after>'s|’s|s\b|[:,]|\s+[\w@(])")
_CJK_NAME = re.compile(r"^\s*(?:[-*+]\s+)?@?(?P<name>[\u3400-\u9fff\u30a0-\u30ff]{1,6}?)"
                       r"(?P<hon>さん|様|君|ちゃん|氏)")
_WORD_RE = re.compile(r"[^\W\d_][\w'-]*")
_NAMED_AFTER = re.compile(r"\s+([A-ZÆØÅÄÖÜА-ЯЁ][\w-]+)")
_CJK_FIRST_PERSON = re.compile("私|僕|俺|わたし|我")
_KEY_GAP = re.compile(r"[\s/_-]+")
_JA_OBJECT = re.compile(r"^\s*(?:[-*+]\s+)?(?P<name>[\u3400-\u9fff\u30a0-\u30ffA-Za-z0-9]{2,10}?)"
                      r"(?:を|の(?=[\u3400-\u9fff\u30a0-\u30ff]{1,4}[、，]))")
_NOT_NAMES = frozenset(
    """oh ah well so btw anyway hey hi yeah yep nope also and but then decision decisions
    update updates plan plans idea ideas question answer reminder fyi status result summary
    action outcome context background problem fix
    the a an this that these those it its there here today yesterday tomorrow tonight now
    then also some all every each no not new old next last first our my his her their we i
    you they he she quiet still maybe perhaps finally yes ok okay note notes todo done met
    call monday tuesday wednesday thursday friday saturday sunday january february march
    april may june july august september october november december morning evening afternoon
    week den det de en et jeg vi han hun de der her nu i dag i går mandag tirsdag onsdag
    torsdag fredag lørdag søndag efter før он она они мы я это этот эта вчера сегодня завтра
    теперь сейчас утром вечером""".split())  # noqa: SIM905 - a word list reads better as text


def _names_opening(text: str) -> list[str]:
    """The names a plain line's clauses open with ("Alice moved …", "Ines and Bo …", "Elm
    Street closed, so Biscuit goes …", "田中さんは …")."""
    out: list[str] = []
    for n, clause in enumerate(_CLAUSES.split(text)):
        if n and len(out) >= 1 and n > 3:
            break
        out.extend(n for n in _clause_names(clause) if n not in out)
    return out


_CLAUSES = re.compile(r"[;:]\s+|,\s+(?:so|but|and|then|now|så|men|og|но|а|и)\s+|\.\s+|。|、")


_JA_TOPIC = re.compile(r"^\s*(?:[-*+]\s+)?@?(?P<name>[\u3400-\u9fff\u30a0-\u30ff\w]{1,10}?)"
                       r"(?:さん|様|君|ちゃん|氏)?(?:は|が)")
_JA_NOT_TOPICS = frozenset(
    "今日 昨日 明日 今 最近 今週 先週 来週 今月 先月 来月 今年 去年 来年 それ これ".split())  # noqa: SIM905


def _clause_names(text: str) -> list[str]:
    m = _CJK_NAME.match(text)
    if m is not None:
        return [m.group("name")]
    m = _JA_TOPIC.match(text) or _JA_OBJECT.match(text)
    if m is not None and m.group("name") not in _JA_NOT_TOPICS:
        # "犬の散歩は": the walk; "燃えるゴミは": the rubbish, however it is qualified;
        # "朝会を10時に変更": what was changed; "設計レビューの司会、…": what it is of
        return [m.group("name").rsplit("の", 1)[-1]]
    m = _NAME_START.match(text)
    if m is None or _stopped(m.group("name")):
        m = _later_name(text)
    if m is None:
        return []
    names = [m.group("name"), *([m.group("other")] if m.group("other") else [])]
    first, _, rest = names[0].partition(" ")
    if rest and (_tables().relations.match(first.casefold())
                 or _attribute_noun(first.casefold()) is not None
                 or _tables().change.fullmatch(first.casefold())):  # "Switched CI from …"
        names[0] = rest  # "Команда Сары …": the team of Sara, a capital at the sentence start
    # a capital that opens a sentence with its verb ("Switched the VPN …") names nobody
    names = [n for n in names if not _stopped(n)
             and _tables().change.fullmatch(n.split()[0].casefold()) is None]
    if m.group("the") and names:  # "The Castle has …": the name with and without its article
        names.append(f"{m.group('the')} {names[0]}")
    return names


_NAME_WITHIN = re.compile(r"(?<=[\s(])([A-ZÆØÅÄÖÜА-ЯЁ][a-zæøåäöüа-яё][\w-]*)"
                        r"|([\u3400-\u9fff\u30a0-\u30ff]{1,6}?)(?:さん|様|君|ちゃん|氏)")


def _names_within(text: str) -> list[str]:
    """The names inside a line (capitals after its first word, a name before an honorific)."""
    out: list[str] = []
    for m in _NAME_WITHIN.finditer(text):
        name = m.group(1) or m.group(2)
        if name and not _stopped(name) and name not in out:
            out.append(name)
    return out[:2]


def _stopped(name: str) -> bool:
    first = name.split()[0].casefold()
    # a past tense or a gerund opens a note's sentence, not a name ("Renewed the certificate")
    verb = len(first) > 4 and first.isascii() and first.endswith(("ed", "ing"))
    return first in _NOT_NAMES or first in _stop_words() or verb


_NAME_LATER = re.compile(r"(?P<the>)(?<!^)"
                       r"(?P<name>[A-ZÆØÅÄÖÜА-ЯЁ][\w-]+(?:\s+[A-ZÆØÅÄÖÜА-ЯЁ][\w-]+)?)"
                       r"(?P<other>)(?P<after>'s|’s|s\b|:|\s+[\w@(])")


def _later_name(text: str) -> re.Match[str] | None:
    """A name among a clause's first words after an opening of function words ("Since the
    reorg Atlas is run by …", "По совету ветеринара Барсик …")."""
    words = text.split()[:5]
    first = words[0].strip(",.") if words else ""
    if not first or not (_stopped(first) or _tables().change.fullmatch(first.casefold())):
        return None
    for m in _NAME_LATER.finditer(" ".join(words) + " "):
        if not _stopped(m.group("name")):
            return m
    return None


@functools.lru_cache(maxsize=4096)
def _line_subjects(text: str) -> tuple[list[str], set[str], str]:
    """A note line's subjects as written, those that are surely names (a chat turn's speaker,
    an @entity, a name before an honorific, the writer: not a capital that may open any
    sentence, "Svømningen er nu …"), and its text without a chat turn's speaker."""
    body = text.strip().lstrip("-*+ ").strip()
    turn = _turn(body)
    if turn is not None:
        speaker, rest = turn.group(1).strip(), body[turn.end():]
        topics = _names_opening(rest)
        # in the first person, or about one of the speaker's own attributes ("上司が変わった":
        # the speaker's boss changed), a turn is about its speaker
        if _first_person(rest) or (topics and _attribute_noun(topics[0].casefold())):
            return [speaker], {speaker}, rest
        body = rest
    mentions = [m.group(1).rstrip(".") for m in ENTITY_RE.finditer(body) if m.start() == 0]
    cjk = _CJK_NAME.match(body)
    names = _names_opening(body) or mentions
    if not names and _first_person(body):
        return [SELF], {SELF}, body
    if not names:  # "Moved to Paris with Alice": whom a line without a subject names
        names = _names_within(body)
    return names, {*mentions, *([cjk.group("name")] if cjk else [])}, body


def turn_speaker(line: str) -> str | None:
    """Who speaks a line that is a chat turn ("- [1:14 pm] Maria: …", "- user: …"), else None.
    A label of one letter is a Retain entry's kind ("- W: …"), not a speaker."""
    turn = _turn(line.strip().lstrip("-*+ ").strip())
    speaker = turn.group(1).strip() if turn is not None else ""
    return speaker if len(speaker) >= 2 else None


def _turn(body: str) -> re.Match[str] | None:
    """A chat turn's opening ("[1:14 pm] Maria: "), its label the speaker's, at the start of a
    line's text (``body``: no list marker); None when there is none or it names no speaker."""
    turn = _TURN.match(body)
    return turn if turn is not None and _speaker(turn.group(1)) else None


def _speaker(label: str) -> bool:
    """Whether the label before a colon names who speaks ("Maria", "user"), not a thing
    ("Телефон Ивана", "Guest wifi")."""
    words = label.split()
    first = words[0].casefold()
    if first in ("user", "assistant"):
        return len(words) == 1
    return (words[0][:1].isupper() and not any(w[:1].islower() for w in words[1:])
            and _tables().relations.match(first) is None and _attribute_noun(first) is None
            and first not in _NOT_NAMES)


def _first_person(text: str) -> bool:
    words = _WORD_RE.findall(plain(text)[:40])[:3]
    if _CJK_FIRST_PERSON.search(text[:6]):
        return True
    return any(_tables().first_person.fullmatch(w) for w in words)


_ADJECTIVES = frozenset(
    """new old current former previous latest nye ny nyt gamle gammel""".split())  # noqa: SIM905 - a word list reads better as text


# Words that follow "X's" without being owned: "Kim's back!" is "Kim is back".
_NOT_OWNED = frozenset(
    """back been got gone going not also now still just moving leaving away out off home here
    there done ok fine""".split())  # noqa: SIM905 - a word list reads better as text


@dataclass(frozen=True)
class _Owned:
    """A possessive a statement opens with: the owner's key, the noun, and what follows the
    noun: a copula ("is"), a link (a preposition or punctuation: "job at Globex") or another
    word ("car insurance renews")."""

    owner: str
    noun: str
    follows: str  # copula | link | word
    named: str = ""  # a name right after the noun: "my sister Cleo" is about Cleo


@functools.lru_cache(maxsize=16384)
def _possessed(text: str, owners: tuple[str, ...]) -> _Owned | None:
    """The possessive the statement opens with, for an owner among ``owners`` or a pronoun."""
    t = _tables()
    head = unicodedata.normalize("NFKC", text)[:90]
    for rx in t.possessive:
        for m in rx.finditer(head):
            found = _owned(m, head, owners)
            if found is not None:
                return found
    return None


def _owned(m: re.Match[str], head: str, owners: tuple[str, ...]) -> _Owned | None:
    t = _tables()
    groups = m.groupdict()
    group = "noun" if groups.get("noun") else "noun2"
    noun = (groups.get(group) or "").casefold()
    if noun[:1] in "おご" and len(noun) > 2:  # ご両親, お母さん: the honorific prefix
        noun = noun[1:]
    owner = groups.get("owner")
    if groups.get("pronoun"):
        key = owners[0] if owners else ""
        start = m.start("pronoun")
    elif owner:
        key = name_key(owner)
        if key not in owners and f"{key}s" not in owners:
            return None
        start = min(m.start("owner"), m.start(group))
    else:
        return None
    # at the statement's start, or right after its subject's name; deeper in, only an
    # attribute of the subject's ("Kwabena switched his work phone to …")
    deep = len(_WORD_RE.findall(head[:start])) > 1
    if (deep and len(_WORD_RE.findall(head[:start])) > 3) or not key:
        return None
    words = noun.split()
    while len(words) > 1 and (words[0] in _ADJECTIVES or t.qualifiers.fullmatch(words[0])):
        words = words[1:]  # "new job", "work phone": the noun
    if not words or words[0] in _NOT_OWNED:
        return None
    if len(words) > 1 and _attribute_noun(" ".join(words)) is None:
        words = words[:1]  # "Sara's team moves": the noun, not the verb after it
    phrase = " ".join(words)
    if deep and _attribute_noun(phrase) is None:
        return None
    if owner and "'" not in m.group(0) and "’" not in m.group(0) and not (
            t.relations.match(phrase) or _attribute_noun(phrase)):
        return None  # a genitive -s without an apostrophe ("Mettes job") needs a known noun
    at = m.start(group) + m.group(group).casefold().find(phrase)
    owner_end = m.end("owner") if owner and m.start("owner") > at else -1
    after = plain(head[max(at + len(phrase), owner_end):].strip())
    if after and (after[0] in ":=：→" or t.copula.match(after)):
        follows = "copula"
    elif not after or not after[0].isalnum() or _WORD_RE.match(after) is None or (
            _WORD_RE.match(after).group(0) in _stop_words()):  # type: ignore[union-attr]
        follows = "link"
    else:
        follows = "word"
    name = _NAMED_AFTER.match(head[at + len(phrase):])
    return _Owned(key, phrase, follows, name.group(1) if name and not _stopped(name.group(1))
                  else "")


def _stop_words() -> frozenset[str]:
    from gitmem.parse.similarity import stop_words

    return stop_words()


def _attribute_noun(noun: str) -> str | None:
    for name, rx in _tables().attribute_nouns:
        if rx.match(noun):
            return name
    return None


def subjects_of(text: str, written: Sequence[str]) -> tuple[frozenset[str], str | None]:
    """The subject keys of a statement whose writer names ``written`` (a Retain entry's
    subjects; none for a note line: they are read from the line), and the attribute a
    possessive names ("Carol's email is …": email)."""
    names = list(written)
    body = text
    if not names:
        names, _, body = _line_subjects(text)
    keys = tuple(name_key(n) if n != SELF else SELF for n in names if name_key(n))
    if not keys:
        return frozenset(), None
    owned = _possessed(body, keys)
    if owned is None:
        return frozenset(keys), None
    owner, noun = owned.owner, owned.noun
    # "Mettes nye job": the name was read with its genitive ending
    keys = tuple(owner if k == f"{owner}s" else k for k in keys)
    attribute = _attribute_noun(noun)
    relation = _tables().relations.match(noun) is not None
    if attribute is not None and (owned.follows == "copula"
                                  or (owned.follows == "link" and not relation)):
        return frozenset(keys), attribute  # "Carol's email is …", "his new job at Globex"
    if relation or (owned.follows == "word" and attribute is not None):
        # another subject: the owner's team, parents, dog, "partner Sam", "car insurance";
        # when the relation is named ("my sister Cleo"), that name is the subject too
        named = name_key(owned.named) if owned.named else ""
        other = {f"{owner}{RELATED}{noun}", *([named] if named and named != owner else [])}
        return frozenset(k for k in keys if k != owner) | other, None
    return frozenset(keys), f"{THING}{noun}"  # "Lena's flight": a thing of hers


# --- readings ---------------------------------------------------------------------------------


_STAMP = re.compile(r"^\s*(?:[-*+]\s+)?(?:\[[^\]]{1,20}\]\s*|\d{1,2}[:.]\d{2}(?:\s*[ap]m)?\s+)")
# Words a conversation says in every turn: no thing two turns are both about.
_CHAT_WORDS = frozenset(
    """thank thanks hey hi hello great awesom wow cool glad sorri realli lot talk chat yeah yes
    sure nice amaz love good know think feel get got""".split())  # noqa: SIM905 - a word list reads better as text


def _said(text: str) -> str:
    """A line without its time stamp and, for a chat turn, its speaker."""
    rest = _STAMP.sub("", text, count=1)
    turn = _turn(rest)
    return rest[turn.end():] if turn is not None else rest


MAX_READ = 600  # characters of a statement read: a statement is a sentence or two, a longer
# line a pasted log (a 20 MB line must not cost its square in pattern matches)


_READ: dict[tuple[str, tuple[str, ...], str], Reading] = {}
_READ_KEEP = 65536  # readings kept per process (the whole cache goes when it is full)


def read(text: str, written: tuple[str, ...], kind: str) -> Reading:
    """Read a statement once (cached: the index compares each with many; the parser's worker
    processes hand theirs over with each statement: ``remember``)."""
    key = (text, written, kind)
    found = _READ.get(key)
    if found is None:
        if len(_READ) >= _READ_KEEP:
            _READ.clear()
        found = _READ[key] = _read(text, written, kind)
    return found


def pack(reading: Reading) -> str:
    """A reading as the index stores it (``statements.reading``): read once, when its statement
    is indexed; the indexer compares each new statement with earlier ones by their stored
    readings instead of reading them again (the rule's version re-indexes everything)."""
    return json.dumps([sorted(v) if isinstance(v, frozenset) else v
                       for v in (getattr(reading, name) for name in _FIELDS)],
                      ensure_ascii=False, separators=(",", ":"))


def unpack(packed: str) -> Reading:
    """The reading ``pack`` stored."""
    values = [how(v) for how, v in zip(_KINDS, json.loads(packed), strict=True)]
    return Reading(*values)  # type: ignore[arg-type]  # each field's own type, by _KINDS


def _as_is(value: object) -> object:
    return value


_FIELDS = tuple(f.name for f in fields(Reading))
_KINDS = tuple(frozenset if str(f.type).startswith("frozenset") else
               tuple if str(f.type).startswith("tuple") else _as_is for f in fields(Reading))


def remember(text: str, written: tuple[str, ...], kind: str, reading: Reading | str) -> None:
    """Keep a reading made elsewhere (a parser process; or one the index stored, ``pack``ed,
    unpacked only when it is not known yet) for ``read``."""
    key = (text, written, kind)
    if len(_READ) < _READ_KEEP and key not in _READ:
        _READ[key] = unpack(reading) if isinstance(reading, str) else reading


def _read(text: str, written: tuple[str, ...], kind: str) -> Reading:
    text = text[:MAX_READ]
    from gitmem.parse.similarity import statement_terms

    t = _tables()
    subjects, owned = subjects_of(text, written)
    # what it says, without a chat turn's time and speaker or a log line's time: "[1:14 pm]
    # Caroline:" or "- 11:45" set no schedule and name no thing
    low = plain(_said(text))
    spans = ({name: [m.span() for m in rx.finditer(low)] for name, rx in t.families.items()}
             if t.any_family.search(low) else {})
    attributes = {name for name, found in spans.items() if found}
    if owned:
        attributes.add(owned)
    if "residence" in attributes and t.household.search(low):
        attributes = (attributes - {"residence"}) | {"household"}
    if "study" in attributes:
        attributes.discard("employer")  # "started at Hillcrest Secondary": a school
    change = t.change.search(low)
    changes = [m.span() for m in t.change.finditer(low)]
    changed = frozenset(name for name in attributes for a, b in spans.get(name, ())
                        if any(c - NEAR <= b and a <= d + NEAR for c, d in changes))
    olds = tuple(dict.fromkeys(v for v in (_value(m.group("old")) for rx in t.old_value
                                           for m in rx.finditer(low)) if v)) if change else ()
    names = subject_words(subjects)
    terms = frozenset(term for term, weight in statement_terms(_said(text)).items()
                      if weight >= 0.5 and term not in names and term not in _CHAT_WORDS
                      and not any(name_key(term) == n or (len(term) >= 3 and n.startswith(term))
                                  for n in names))
    topics = {f"{TOPIC}{p}" for p in topic_phrases(text)}
    if attributes:  # the things it sets an attribute of may be any of its content words, but
        # not the words that set it: "Retro er flyttet til fredag" and "Anders er flyttet til
        # Aarhus" are about no one thing ("flyttet" is the cue of both)
        cues = {term for a, b in [*(x for found in spans.values() for x in found), *changes]
                for term in statement_terms(low[a:b])}
        topics.update(f"{TOPIC}{term[:5]}" for term in terms
                      if len(term) >= 3 and not term.isdigit() and term not in _LIGHT
                      and term not in cues)
    return Reading(
        subjects=frozenset(subjects) | topics,
        named=frozenset(subjects),
        sure=_sure(text, written, frozenset(subjects)),
        mentions=frozenset(name_key(m.group(1).rstrip(".")) for m in ENTITY_RE.finditer(text)),
        attributes=frozenset(attributes),
        changed=changed,
        change=change.group(0) if change else "",
        old_values=olds,
        terms=terms,
        qualifiers=_qualifiers(low),
        identifiers=frozenset(m.group(0).strip("`.,;:()") for m in _IDENTIFIER.finditer(low)),
        continuity=bool(t.continuity.search(low)),
        plan=bool(t.plan.search(plain(text))),  # "Decision: …" is said before the colon
        event=bool(t.event.search(low)),
        many=bool(t.many.search(low)),
        additive=bool(t.additive.search(low)),
        norm=" ".join(low.split()),
    )


# a host name or dotted key (pebble.example.net, memorysearch.query.hybrid), a code span, a
# ticket or pull request number
_IDENTIFIER = re.compile(r"[a-z0-9][\w-]*(?:\.[a-z0-9][\w-]*){1,}(?<![.\d])|`[^`]{2,60}`|#\d{2,}")


def _qualifiers(low: str) -> frozenset[str]:
    """The qualifiers right before an attribute's noun ("work phone", "личный номер"), or
    anywhere in a text without spaces (仕事用の携帯)."""
    t = _tables()
    if not any(ch.isspace() for ch in low.strip()):
        return frozenset(m.group(0) for m in t.qualifiers.finditer(low))
    words = _WORD_RE.findall(low)
    return frozenset(a for a, b in itertools.pairwise(words)
                     if t.qualifiers.fullmatch(a) and _attribute_noun(b) is not None)


def _value(words: str) -> str:
    """A named old value without the stop words around it ("corolla in" -> "corolla")."""
    from gitmem.parse.similarity import stop_words

    kept = words.strip(" .,;:").split()
    while kept and kept[-1] in stop_words():
        kept.pop()
    while kept and kept[0] in stop_words():
        kept.pop(0)
    return " ".join(kept)


TIME_WORDS = frozenset(
    """last next this month months week weeks year years day days today yesterday tomorrow
    morning evening night ago sidste næste måned uge år dag dage""".split())  # noqa: SIM905 - a word list reads better as text
def _sure(text: str, written: Sequence[str], subjects: frozenset[str]) -> frozenset[str]:
    """The subjects that are surely someone or something named: all of a Retain entry's (its
    writer named them), a note line's speaker, @entities, honorific names, the writer."""
    if written:
        return subjects
    _, sure, _ = _line_subjects(text)
    keys = {name_key(n) if n != SELF else SELF for n in sure}
    return frozenset(s for s in subjects if s.split(RELATED)[0] in keys)


def subject_words(subjects: frozenset[str]) -> frozenset[str]:
    """The words of subject keys ("the-castle", "sara/team" -> the, castle, sara, team)."""
    return frozenset(w for s in subjects if not s.startswith(TOPIC)
                     for w in _KEY_GAP.split(s) if w)


_LIGHT = frozenset(
    """move now current old new still today longer sinc becom chang updat replac set keep also
    time week month year day""".split())  # noqa: SIM905 - a word list reads better as text
_ALPHABETIC = re.compile(r"[a-zà-öø-ÿа-яё'-]+")
_TOPIC_WORD = re.compile(r"[^\W\d_][\w'-]*")


@functools.lru_cache(maxsize=16384)
def topic_phrases(text: str) -> frozenset[str]:
    """Two adjacent content words ("gateway host", "build server"), cut to five letters (a
    crude stem): what a statement without a named subject can still be about."""
    t = _tables()
    from gitmem.parse.similarity import stop_words

    stop = stop_words()
    out: set[str] = set()
    previous = ""
    for n, word in enumerate(_TOPIC_WORD.findall(unicodedata.normalize("NFKC", text))):
        low = word.casefold()
        if not _ALPHABETIC.fullmatch(low):  # CJK has no spaces: its topics are read by は
            previous = ""
            continue
        content = (len(low) > 2 and low not in stop and low not in TIME_WORDS
                   and (n == 0 or not word[:1].isupper() or word.isupper())
                   and not t.change.fullmatch(low))
        current = low if content else ""
        if previous and current:
            out.add(f"{previous[:5]} {current[:5]}")
        previous = current
    return frozenset(out)


def schedule_cue() -> Cue:
    """What sets a schedule (a weekday, a clock time): a value, not a thing."""
    return _tables().families["schedule"]


def family_strength(attribute: str) -> str:
    return FAMILIES.get(attribute, "weak")  # a possessed thing ("thing:flight") is weak


# --- from a parsed file -----------------------------------------------------------------------


@dataclass(frozen=True)
class Drafted:
    """A statement of one file version, before the index gives it its item and times."""

    kind: ResultKind
    line: int
    end_line: int
    text: str
    subjects: tuple[str, ...]  # a fact's written subjects; () for a note line
    keys: tuple[str, ...]  # its subject keys (topics too): what candidates are looked up by
    reading: Reading | None = None  # as read where it was parsed (a worker hands it over)


ATTRIBUTE = "attr:"  # the prefix of a key of a subject's attribute ("attr:ivan|residence")


def lookup_keys(reading: Reading) -> tuple[str, ...]:
    """The keys a statement's candidates are looked up by: its subjects, mentions and topics,
    and each of its named subjects' attributes (so that a statement meets every earlier one
    that set the same attribute, however many other statements about the subject came
    between them)."""
    attributes = {f"{ATTRIBUTE}{s}|{a}" for s in reading.named for a in reading.attributes}
    return tuple(sorted(reading.subjects | reading.mentions | attributes))


def fact_statement(f: Fact) -> Drafted:
    """A Retain entry as a statement."""
    reading = read(f.text, f.subjects, f.kind)
    return Drafted(f.kind, f.start_line, f.end_line, f.text, f.subjects,
                   lookup_keys(reading), reading)


def note_statements(parsed: ParsedFile) -> list[list[Drafted]]:
    """Per chunk of a parsed file version, the note lines it is the first to hold that are
    about someone or something (outside Retain entries, headings, tables and code)."""
    out: list[list[Drafted]] = [[] for _ in parsed.chunks]
    if parsed.file.path == OPINIONS_PATH:
        return out
    # the lines of an entity's page are about it, unless they open with someone else
    page = (parsed.file.path.rsplit("/", 1)[-1].removesuffix(".md"),) if (
        parsed.file.file_class == "entity") else ()
    fact_lines = {ln for f in parsed.facts for ln in range(f.start_line, f.end_line + 1)}
    seen: set[int] = set()
    large = sum(c.end_line - c.start_line + 1 for c in parsed.chunks) > LARGE_FILE_LINES
    for n, chunk in enumerate(parsed.chunks):
        for offset, line in enumerate(chunk.text.split("\n")):
            number = chunk.start_line + offset
            if number in seen or number in fact_lines:
                continue
            seen.add(number)
            stripped = line.strip()
            if len(stripped) < 8 or len(stripped) > MAX_READ or stripped.startswith(
                    ("#", "<!--", "```", "|", ">")):
                continue  # too short to say something, or a pasted log rather than a statement
            if not _may_state(stripped, large):
                continue
            for sentence in sentences(stripped):
                drafted = _note_statement(sentence, number, page)
                if drafted is not None:
                    out[n].append(drafted)
    return _without_frame(out)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÀ-ÖØ-ÞА-ЯЁ\d`\"'(])|(?<=[。！？])")


def sentences(line: str) -> list[str]:
    """A note line's sentences: each is a statement of its own (a line of a log or a diary
    often tells several things: "Paid the invoice. Latency dropped from 900 to 80 ms.")."""
    parts = [p.strip() for p in _SENTENCE_END.split(line) if p.strip()]
    if len(parts) <= 1:
        return [line]
    return [p for p in parts if len(p) >= 8]


def _note_statement(text: str, number: int, page: tuple[str, ...]) -> Drafted | None:
    """A sentence of a note line as a statement, or None when it is no claim about anyone."""
    reading = read(text, (), "note")
    written: tuple[str, ...] = ()
    if page and not reading.named:
        written, reading = page, read(text, page, "note")
    # a statement names someone or something, or sets an attribute or words a change of a
    # topic; a topic alone ("worker5 status ok") is no claim
    if reading.named or (reading.subjects and (reading.attributes or reading.change
                                                or reading.old_values)):
        return Drafted("note", number, number, text, written, lookup_keys(reading), reading)
    return None


_NAMING = re.compile(r"[A-ZÀ-ÖØ-ÞА-ЯЁ@]|[^\x00-\u024f]")  # a capital, an @entity, other scripts


LARGE_FILE_LINES = 2000  # a file longer than this is a log: only its lines that name someone


def _may_state(line: str, large: bool = False) -> bool:
    """A cheap necessary condition of a statement, for the many lines of a log: it may name
    someone (a capital, an @entity, a script without capitals), or word an attribute or a
    change (not read in a file of more than LARGE_FILE_LINES lines: the cues are many)."""
    if _NAMING.search(line):
        return True
    if large:
        return False
    low = plain(line)
    t = _tables()
    return bool(t.any_family.search(low) or t.change.search(low) or _first_person(line))


FRAME_LINES = 24  # a key more of a file's lines hold is its template ("heartbeat … from …")


def _without_frame(statements: list[list[Drafted]]) -> list[list[Drafted]]:
    """A templated log (thousands of lines of one shape) would make every line a candidate of
    every other: the keys more than FRAME_LINES of a file's note lines hold are dropped, and a
    line left with no key is no statement."""
    counts: dict[str, int] = {}
    for chunk in statements:
        for d in chunk:
            for key in d.keys:
                counts[key] = counts.get(key, 0) + 1
    frame = {key for key, n in counts.items() if n > FRAME_LINES}
    if not frame:
        return statements
    out: list[list[Drafted]] = []
    for chunk in statements:
        kept = []
        for d in chunk:
            keys = tuple(k for k in d.keys if k not in frame)
            if keys:
                kept.append(Drafted(d.kind, d.line, d.end_line, d.text, d.subjects, keys,
                                    d.reading))
        out.append(kept)
    return out
