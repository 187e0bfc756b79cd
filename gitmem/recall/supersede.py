"""Knowledge updates: a later fact about the same entities that says the same kind of thing
(``parse.similarity.same_claim``) replaces an earlier one. Daily notes are append-only, so the
old fact stays at HEAD ("the gateway host is the NUC") after a newer one replaces it ("moved the
gateway host to The Castle"); these functions tell current facts from history.

Computed when asked, for the facts an answer shows, never stored: whether B replaces A depends
on the state the question is asked of (``--as-of``, ``--until``) and on the matching rule,
which will be tuned; an index column would go stale with either. The cost stays small because
only shown facts are checked, against candidates the full-text index preselects.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gitmem.domain import Basis, Citation, ResultKind
from gitmem.index import queries
from gitmem.index.queries import ItemFilter, Row
from gitmem.index.store import WORKTREE, Store
from gitmem.parse.retain import entity_key
from gitmem.parse.similarity import Claim, claim, common_terms
from gitmem.parse.stemming import COMPOUND_PART, RUSSIAN_PREFIX
from gitmem.parse.textfold import _QUESTION_CHARS
from gitmem.parse.updates import (
    UPDATABLE,
    Statement,
    shared_families,
    topic_phrases,
    words_change,
)
from gitmem.parse.updates import replaces as statement_replaces

CANDIDATES = 40  # later facts of its kind checked per shown fact, newest first
SCANNED = 160  # later fact versions with one of its subjects read to find them


def citation(row: Row) -> str:
    """``path#Lx[-Ly]``, with ``@commit`` when the row is not the current version."""
    commit = row.get("commit_id")
    historical = row.get("valid_to") is not None and commit and commit != WORKTREE
    return str(Citation(row["path"], int(row["start_line"]), int(row["end_line"]),
                        str(commit) if historical else None))


def stated(row: Row) -> str:
    """The day a fact was stated: its daily note's day, else the day it was recorded."""
    return str(row.get("day") or (row.get("recorded_at") or "")[:10])


def _explicit_period(row: Row) -> tuple[str, str] | None:
    """The event period an entry states itself, when it differs from its note's day."""
    start, end = row.get("event_start"), row.get("event_end")
    if not start or (start == row.get("day") and end in (None, start)):
        return None
    return str(start), str(end or start)


def statement(row: Row, entities: Sequence[str]) -> Statement:
    """A fact or chunk row as the knowledge-update rule sees it."""
    return Statement(
        kind=row["kind"], text=str(row["content"]), entities=tuple(entities),
        stated=stated(row), recorded_at=str(row.get("recorded_at") or ""),
        path=str(row["path"]), line=int(row["start_line"]), period=_explicit_period(row),
        fact_id=str(row.get("fact_id") or ""), declared=frozenset(row.get("declared") or ()))


def replaces(newer: Row, newer_entities: Sequence[str], older: Row,
             older_entities: Sequence[str], common: frozenset[str] = frozenset()) -> Basis | None:
    """Does ``newer`` replace ``older``, and on what basis (``parse.updates.replaces``)?"""
    if newer.get("id") == older.get("id"):
        return None
    return statement_replaces(statement(newer, newer_entities),
                              statement(older, older_entities), common)


class _Statements:
    """Each row's :class:`Statement`, made once per answer: a shown fact is compared with up to
    CANDIDATES later ones, and one later fact with several shown ones. By row object (a row
    read as a declaring fact carries what it declares; the same item read otherwise does not)
    and entities."""

    def __init__(self) -> None:
        self._made: dict[tuple[int, tuple[str, ...]], tuple[Row, Statement]] = {}

    def of(self, row: Row, entities: Sequence[str]) -> Statement:
        key = id(row), tuple(entities)
        if key not in self._made:  # the row is kept with it: its id is not reused meanwhile
            self._made[key] = row, statement(row, entities)
        return self._made[key][1]


@dataclass
class Thread:
    """A current fact and the older facts it replaced, newest first."""

    current: Row
    history: list[Row] = field(default_factory=list)
    bases: list[Basis] = field(default_factory=list)  # how each history fact was replaced


def threads(facts: Sequence[Row], names: dict[int, list[str]], *, show: int,
            scan: int) -> tuple[list[Thread], int]:
    """Facts of one kind, newest first, grouped into threads: each older fact that a shown
    current fact replaces joins its history. At most ``show`` threads; at most ``scan`` facts
    are examined (the rest are counted, not grouped). Returns (threads, facts examined)."""
    if not facts or facts[0]["kind"] not in UPDATABLE:
        return [Thread(row) for row in facts[:show]], min(show, len(facts))
    scanned = facts[:scan]
    claims = [claim(r["content"], tuple(names.get(int(r["id"]), []))) for r in scanned]
    common = _frame(scanned, claims)
    out: list[Thread] = []
    for row in scanned:
        ents = names.get(int(row["id"]), [])
        for thread in out:
            cur = thread.current
            basis = replaces(cur, names.get(int(cur["id"]), []), row, ents, common)
            if basis is not None:
                thread.history.append(row)
                thread.bases.append(basis)
                break
        else:
            if len(out) < show:
                out.append(Thread(row))
    return out, len(scanned)


def _frame(rows: Sequence[Row], claims: Sequence[Claim]) -> frozenset[str]:
    """The terms most of these statements share (each text counted once)."""
    distinct = {r["content"]: c for r, c in zip(rows, claims, strict=True)}
    return common_terms(distinct.values())


@dataclass(frozen=True)
class Replacement:
    """The newest fact that replaces a shown one, and whether its writer declared it."""

    row: Row
    basis: Basis


def superseders(store: Store, rows: Sequence[Row], flt: ItemFilter) -> dict[int, Replacement]:
    """Item id -> the newest fact that replaces it, for the facts among ``rows``.

    Candidates are the newest fact versions recorded after it with one of its subjects (ids
    from the entity index alone; only the newest SCANNED are read), of a kind that may replace
    it, that obey the answer's filters (state, time window) except its entity filter, and the
    facts that declare they replace it. Bounded work per shown fact: a replacement older than
    that is missed, never invented."""
    facts = [r for r in rows if r["type"] == "fact"]
    if not facts:
        return {}
    names = queries.entity_names_of(store, [int(r["id"]) for r in facts])
    scope = replace(flt, entity_keys=(), prefer=None)  # the answer's kinds, if it has any
    # a declared replacement holds whatever the rule says, for any kind
    declaring = queries.declaring_facts(store, [str(r.get("fact_id") or "") for r in facts],
                                        scope)
    later_of = _later_by_subject(store, facts, names, scope)
    pending: list[tuple[Row, list[Row], list[Row]]] = []
    for row in facts:
        item_id = int(row["id"])
        declared = declaring.get(str(row.get("fact_id") or ""), [])
        later = later_of.get(item_id, [])
        if row["kind"] in ("world", "observation"):  # same topic, other subjects: among
            seen = {int(r["id"]) for r in later}  # the shown facts (no query: recall's path)
            kinds = _replacing_kinds(str(row["kind"]), flt.kinds)
            later += [r for r in facts if int(r["id"]) not in seen | {item_id}
                      and r["kind"] in kinds and topic_phrases(str(r["content"]))
                      & topic_phrases(str(row["content"]))]
            later.sort(key=_newest, reverse=True)
        if later or declared:
            pending.append((row, declared, later))
    later_names = queries.entity_names_of(
        store, list({int(r["id"]) for _, declared, later in pending for r in (*declared, *later)}))
    out: dict[int, Replacement] = {}
    made = _Statements()
    for row, declared, later in pending:
        ents = names.get(int(row["id"]), [])
        pool = [row, *later]
        common = _frame(pool, [claim(r["content"], tuple(later_names.get(int(r["id"]), ents)))
                               for r in pool])
        older = made.of(row, ents)
        for cand in (*declared, *later):  # newest first: the first that replaces it is current
            basis = None if cand["id"] == row["id"] else statement_replaces(
                made.of(cand, later_names.get(int(cand["id"]), [])), older, common)
            if basis is not None:
                out[int(row["id"])] = Replacement(cand, basis)
                break
    _by_topic(store, facts, names, out)
    return out


def _later_by_subject(store: Store, facts: Sequence[Row], names: dict[int, list[str]],
                      scope: ItemFilter) -> dict[int, list[Row]]:
    """Shown fact id -> its candidates: of the newest SCANNED fact versions recorded after it
    with one of its subjects, the CANDIDATES newest stated after it, of a kind that may replace
    it, that pass ``scope``; newest first. Three queries for all the shown facts together."""
    wanted: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for row in facts:
        keys = tuple(sorted({entity_key(e) for e in names.get(int(row["id"]), [])}))
        kinds = _replacing_kinds(str(row["kind"]), scope.kinds)
        if keys and kinds and row["kind"] in UPDATABLE:
            wanted[int(row["id"])] = keys, kinds
    if not wanted:
        return {}
    newest = queries.subject_facts_newest(
        store, [k for keys, _ in wanted.values() for k in keys], min(wanted), SCANNED)
    ids: dict[int, list[int]] = {
        item_id: sorted({i for k in keys for i in newest[k] if i > item_id},
                        reverse=True)[:SCANNED]
        for item_id, (keys, _) in wanted.items()}
    kinds_wanted = tuple(sorted({k for _, kinds in wanted.values() for k in kinds}))
    found = queries.facts_by_id(store, sorted({i for part in ids.values() for i in part}),
                                replace(scope, kinds=kinds_wanted))
    out: dict[int, list[Row]] = {}
    for row in facts:
        if int(row["id"]) not in wanted:
            continue
        kinds = wanted[int(row["id"])][1]
        later = [found[i] for i in ids[int(row["id"])] if i in found
                 and found[i]["kind"] in kinds and queries.stated_after(found[i], row)]
        later.sort(key=lambda r: (r["day"] or (r["recorded_at"] or "")[:10],
                                  r["recorded_at"] or "", r["path"], r["start_line"]),
                   reverse=True)
        out[int(row["id"])] = later[:CANDIDATES]
    return out


def _by_topic(store: Store, facts: Sequence[Row], names: dict[int, list[str]],
              out: dict[int, Replacement]) -> None:
    """The replacements found for shown facts, which the answer will show too, may replace
    another shown fact about the same topic under other subjects ("The gateway host for
    warelay is the old NUC" / "Moved the gateway host to The Castle")."""
    shown = {int(r["id"]) for r in facts}
    extra = {int(rep.row["id"]): rep.row for rep in out.values()
             if int(rep.row["id"]) not in shown and rep.row["type"] == "fact"}
    if not extra:
        return
    extra_names = queries.entity_names_of(store, list(extra))
    for row in facts:
        if int(row["id"]) in out or row["kind"] not in ("world", "observation"):
            continue
        topics = topic_phrases(str(row["content"]))
        for cand in sorted(extra.values(), key=_newest, reverse=True):
            if not topics & topic_phrases(str(cand["content"])):
                continue
            basis = replaces(cand, extra_names.get(int(cand["id"]), []), row,
                             names.get(int(row["id"]), []))
            if basis is not None:
                out[int(row["id"])] = Replacement(cand, basis)
                break


def _newest(row: Row) -> tuple[str, str, int]:
    return stated(row), str(row.get("recorded_at") or ""), int(row["start_line"])


def _replacing_kinds(kind: str, wanted: Sequence[str]) -> tuple[str, ...]:
    """The fact kinds that may replace a fact of ``kind`` (``parse.updates``), of those the
    answer asks for (all when it names none)."""
    kinds = ("world", "observation") if kind in ("world", "observation") else (kind,)
    return tuple(k for k in kinds if not wanted or k in wanted)


def superseded_within(store: Store, rows: Sequence[Row], flt: ItemFilter,
                      found: dict[int, Replacement]) -> dict[tuple[int, int], Replacement]:
    """(item id, first line) -> the newest fact that replaces a fact inside that text result's
    lines, for the chunks among ``rows``. A Retain section's text can outrank the facts in it
    (date words, say) and then stands for them: it must not show a replaced fact as current.
    ``found`` is ``superseders`` of ``rows``: facts among them are not checked again, and the
    facts inside all chunks are checked in one call."""
    # the facts in it the answer's state and entity filter admit (a replacement keeps the
    # replaced fact's entities, so it passes that filter too)
    state = ItemFilter(as_of_seq=flt.as_of_seq, entity_keys=flt.entity_keys)
    inside = {_place(row): queries.facts_within(store, str(row["path"]), int(row["start_line"]),
                                                int(row["end_line"]), state)
              for row in rows if row["type"] == "chunk"}
    checked = {int(row["id"]) for row in rows}
    unchecked = {int(f["id"]): f for facts in inside.values() for f in facts
                 if int(f["id"]) not in checked}
    replaced = {**found, **superseders(store, list(unchecked.values()), flt)}
    out: dict[tuple[int, int], Replacement] = {}
    for place, facts in inside.items():
        newer = next((replaced[int(f["id"])] for f in facts if int(f["id"]) in replaced), None)
        if newer is not None:
            out[place] = newer
    return out


def answered_updates(question: str, chosen: Sequence[tuple[float, Row]],
                     found: dict[int, Replacement],
                     within: dict[tuple[int, int], Replacement],
                     runners_up: Sequence[tuple[float, Row]] = (),
                     parts: Sequence[str] = ()) -> dict[tuple[int, int], Replacement]:
    """(item id, first line) -> the newest shown result that replaces it, found through the
    question itself: two results about the question's subject (a shared entity, or the name
    the question asks about) whose answering lines (the line of each that holds most of its
    words) hold the same other word of it answer the same question, so they state the same
    attribute; the rule's guards still apply (``parse.updates``). This is how an update written
    in plain note lines outside Retain sections is found ("Ines's team sits on the 3rd floor"
    / "Ines and her people moved up to the fifth floor"). Results already marked are kept.
    ``runners_up``: the results ranked next, which may replace a shown one (and are then
    shown above it): the update that changed the answer often shares fewer of the question's
    words than what it replaced. ``parts``: the stems of the question's compounds' parts,
    words of it too ("bestyrelsesmøderne": bestyr, mod; ``recall.search.query_words``)."""
    names, attributes, written = _question_terms(question)
    compounds = frozenset(parts) - names
    attributes |= compounds
    if not attributes:
        return {}
    asked = names | attributes
    lines = _answering_lines(chosen, asked, compounds)
    shown = {entry.place for entry in lines}
    # the runners-up only where no shown result replaces it: shown results are the stronger
    # evidence, and the newest of all would otherwise win
    extra = [entry for entry in _answering_lines(runners_up, asked, compounds)
             if entry.place not in shown]
    about = _Question(names, attributes, written or ("question-subject",))
    out: dict[tuple[int, int], Replacement] = {}
    for older in lines:
        if int(older.row["id"]) in found or older.place in within:
            continue
        for tier in (lines, extra):
            newest: Replacement | None = None
            for newer in tier:
                basis = _pair_basis(about, newer, older)
                if basis is not None and (newest is None
                                          or _newest(newer.row) > _newest(newest.row)):
                    newest = Replacement(newer.row, basis)
            if newest is not None:
                out[older.place] = newest
                break
    return out


_CYRILLIC = re.compile("[\u0400-\u04ff]")


@dataclass(frozen=True)
class _Question:
    names: frozenset[str]  # the name terms asked about
    attributes: frozenset[str]  # its other full-weight terms
    subject: tuple[str, ...]  # the names as written (the subject of both lines)


@dataclass(frozen=True)
class _Answering:
    """A result's line that answers the question: its place, row, text, line and terms."""

    place: tuple[int, int]
    row: Row
    text: str
    line: int
    terms: frozenset[str]


def _answering_lines(results: Sequence[tuple[float, Row]], asked: frozenset[str],
                     parts: frozenset[str] = frozenset()) -> list[_Answering]:
    out: list[_Answering] = []
    for _, row in results:
        found = (_answering_line(row, asked, parts) if row["type"] in ("fact", "chunk")
                 else None)
        if found is not None:
            out.append(_Answering(_place(row), row, *found))
    return out


def _pair_basis(q: _Question, newer: _Answering, older: _Answering) -> Basis | None:
    """Whether the newer answering line replaces the older one, and on what basis."""
    if newer.place == older.place:
        return None
    if older.row["type"] == newer.row["type"] == "chunk" and not _note_lines(older.text,
                                                                               newer.text):
        return None
    shared = newer.terms & older.terms
    # Both answer the question with the same word of it, about the same subject: the name
    # asked about, a shared entity, or (a question that names nobody: "when is the summer
    # party?") the thing asked about and one more of its words, the attribute.
    answered = bool(shared & q.attributes) and bool(
        shared & q.names or _share_entity(newer.row, older.row)
        or (not q.names and _words(shared & q.attributes) >= 2))
    # Or the older line answers the question (two of its words) and the newer words a change
    # of what it is about without the question's attribute word: the name asked about ("Lena's
    # flight to Montreal is AC 837" / "Lena rebooked, she now leaves on the 16th"; with the
    # name, a shared attribute family counts as the change: "松本さんは産休中" / "職場に戻って
    # きた"), or for a question naming nobody the thing ("Sommerfesten holdes i Fælledparken" /
    # "rykker vi sommerfesten indendørs"). Then the rule decides without the question's
    # support: it still wants a family or a shared word.
    change = words_change(newer.text)
    relaxed = not answered and _words(older.terms) >= 2 and bool(
        (shared & q.names and (change or shared_families(newer.text, older.text)))
        or (not q.names and change and _thing(shared & q.attributes, newer.text, older.text)))
    if not (answered or relaxed):
        return None
    # the names asked about are the subject, not words the lines share
    return statement_replaces(_line_statement(newer.row, newer.text, newer.line, q.subject),
                              _line_statement(older.row, older.text, older.line, q.subject),
                              answered=answered)


@functools.lru_cache(maxsize=4096)
def _words(terms: frozenset[str]) -> int:
    """How many words these terms stand for: overlapping CJK bigrams (定例, 例会, 会議) are one
    word's pieces (cached: asked of every pair of answering lines)."""
    cjk = sorted((t for t in terms if not t.isascii() and all(ord(c) >= 0x3000 for c in t)),
                 key=lambda t: (-len(t), t))
    seen: set[str] = set()
    words = len(terms) - len(cjk)
    for term in cjk:
        if not seen & set(term):
            words += 1
        seen.update(term)
    return words


def _thing(terms: frozenset[str], *texts: str) -> bool:
    """Whether these shared terms name a thing by themselves: a word that is not itself a
    change word (现在, "now"), and in CJK text a word of three characters or more (two
    overlapping bigrams: 歓迎会), not one bigram (会議 of 定例会議 is not 会議室), unless the
    bigram is a whole katakana word in every text (ゴミ: the script marks its ends)."""
    plain = frozenset(t for t in terms if not words_change(t))
    cjk = {t for t in plain if not t.isascii() and all(ord(c) >= 0x3000 for c in t)}
    if plain - cjk:
        return True
    if any(a != b and a[1:] == b[:-1] for a in cjk for b in cjk):
        return True
    return any(all(t in _katakana_words(text) for text in texts) for t in cjk)


def _katakana_words(text: str) -> set[str]:
    return set(_katakana_run().findall(text))


@functools.cache
def _katakana_run() -> re.Pattern[str]:
    return re.compile(r"[\u30a0-\u30ff]{2,}")


def _note_lines(*texts: str) -> bool:
    """Two plain note lines are compared only when both are statements: not a chat turn
    ("[1:56 pm] Caroline: ...", "Caroline: ...") nor a question. A conversation log is full of
    changes and names, and its turns tell what happened, not what holds (measured on LoCoMo:
    comparing turns cost 7 points of evidence recall at 500 tokens)."""
    turn = _turn()

    def is_turn(text: str) -> bool:
        # a speaker is a name: no word of it lower-case ("No more Oak room: ..." is a statement)
        match = turn.match(text)
        return match is not None and not any(w[0].islower() for w in match.group(1).split())

    return not any(is_turn(t) or "?" in t for t in texts)


def _share_entity(a: Row, b: Row) -> bool:
    return bool(_entities_in(str(a["content"])) & _entities_in(str(b["content"])))


@functools.lru_cache(maxsize=4096)
def _entities_in(text: str) -> frozenset[str]:
    """The keys of the entities a text names (cached: each shown result is paired with every
    other one and with the runners-up)."""
    from gitmem.parse.retain import find_entities

    return frozenset(entity_key(e) for e in find_entities(text))


@functools.cache
def _turn() -> re.Pattern[str]:
    return re.compile(r"^\s*(?:[-*+]\s+)?(?:\[[^\]]{1,20}\]\s*)?([^\W\d][\w .'-]{0,30}):\s")


@functools.cache
def _question_patterns() -> tuple[re.Pattern[str], ...]:
    """What ``_question_terms`` reads names and attributes with (compiled once: it runs for
    every recall): a capitalised word inside the question, a CJK name before an honorific, a
    Japanese kinship noun opening it, a counter after 何/幾/几, a kanji alone between kana."""
    return (re.compile(r"(?<!^)(?<![.?!]\s)\b[A-ZÆØÅА-ЯЁ][\w'-]+"),
            re.compile(r"([\u3400-\u9fff\u30a0-\u30ff]{1,4})(?:さん|様|君|ちゃん|氏)"),
            re.compile(r"^\s*(祖父|祖母|父|母|兄|姉|弟|妹|夫|妻|息子|娘)(?=[はがのも])"),
            re.compile(r"[何幾几]([\u3400-\u9fff])"),
            re.compile(r"(?<![\u3400-\u9fff])([\u3400-\u9fff])(?![\u3400-\u9fff])"))


def _question_terms(question: str) -> tuple[frozenset[str], frozenset[str], tuple[str, ...]]:
    """The question's name terms (capitalised words inside it; a CJK name before さん, 様,
    君, ちゃん, 氏) and its other full-weight terms (the attribute it asks about)."""
    from gitmem.parse.similarity import statement_terms

    capital, honorific, kinship, counter, lone = _question_patterns()
    terms = statement_terms(question)
    names: set[str] = set()
    written: list[str] = []
    for word in capital.findall(question.strip()):
        written.append(word.removesuffix("'s"))
        names.update(statement_terms(written[-1]))
    for match in honorific.finditer(question):
        written.append(name := match.group(1))
        # the name whole (and its bigrams), not its characters one by one: 田 of 前田 is in
        # 山田 and 田中 too, other people
        names.update(t for t in statement_terms(name) if len(t) > 1 or len(name) == 1)
    # Japanese names one's own family by kinship nouns alone (父は…, 母が…): the person asked
    # about
    kin = kinship.match(question)
    if kin is not None:
        written.append(kin.group(1))
        names.update(statement_terms(kin.group(1)))
    attributes = {t for t, w in terms.items() if w == 1.0 and t not in names}
    # 何階 / 几点 ask for a number of floors / hours: the counter is the attribute asked about
    # (the lines say 三階 and 五階, never 何階)
    attributes.update(m.group(1) for m in counter.finditer(question))
    # a kanji alone between kana is a word of its own in Japanese: a verb's or adjective's
    # stem before its ending (燃える), or a noun (日, 猫); the lines may write it in another
    # word (可燃, 回収日), which still holds it
    if any("\u3040" <= ch <= "\u30ff" for ch in question):
        attributes.update(m.group(1) for m in lone.finditer(question)
                          if m.group(1) not in _QUESTION_CHARS and m.group(1) not in names)
    return frozenset(names), frozenset(attributes), tuple(dict.fromkeys(written))


def _answering_line(row: Row, asked: frozenset[str], parts: frozenset[str] = frozenset(),
                    ) -> tuple[str, int, frozenset[str]] | None:
    """The line of a result that holds most of the question's terms (its text, line number,
    the question's terms in it); None when no line holds any."""
    from gitmem.parse.similarity import statement_terms

    best: tuple[int, str, int, frozenset[str]] | None = None
    for n, text in enumerate(str(row["content"]).split("\n")):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        held = _held(frozenset(statement_terms(text)), asked, parts)
        if held and (best is None or len(held) > best[0]):
            best = (len(held), text, int(row["start_line"]) + n, held)
    return None if best is None else (best[1], best[2], best[3])


def _held(terms: frozenset[str], asked: frozenset[str],
          parts: frozenset[str] = frozenset()) -> frozenset[str]:
    """The question's terms a line holds: the same term, or a word of five letters or more
    that starts with it or it with the word (a short line's language is guessed from its few
    words, so "Sommerfesten" may stay whole in one and be stemmed to "sommerfest" in another);
    a part of the question's compounds (``parts``) also by a compound of the line that begins
    or ends with it ("avis" in "Avisabonnementet")."""
    long = [t for t in terms if len(t) >= 5 and t.isalpha()]
    compounds = [t for t in terms if len(t) >= 2 * COMPOUND_PART and t.isalpha()]

    def holds(q: str) -> bool:
        if q in terms:
            return True
        if len(q) >= 5 and q.isalpha() and any(t.startswith(q) or q.startswith(t) for t in long):
            return True
        if q in parts and any(len(t) >= len(q) + COMPOUND_PART
                              and (t.startswith(q) or t.endswith(q)) for t in compounds):
            return True
        # a Russian stem of four letters starts the longer word the line inflects (депл)
        return (len(q) >= RUSSIAN_PREFIX and _CYRILLIC.match(q) is not None
                and any(t.startswith(q) for t in long))

    return frozenset(q for q in asked if holds(q))


def _line_statement(row: Row, text: str, line: int, subject: tuple[str, ...]) -> Statement:
    kind: ResultKind = "note" if row["type"] == "chunk" else row["kind"]
    body = text.strip().lstrip("-*+ ").strip()
    return Statement(kind=kind, text=body, entities=subject, stated=stated(row),
                     recorded_at=str(row.get("recorded_at") or ""), path=str(row["path"]),
                     line=line, period=_explicit_period(row) if row["type"] == "fact" else None,
                     fact_id=str(row.get("fact_id") or ""))


def current_first(chosen: Sequence[tuple[float, Row]], found: dict[int, Replacement],
                  k: int, within: dict[tuple[int, int], Replacement] | None = None,
                  ) -> list[tuple[float, Row, Replacement | None]]:
    """The ranked rows, each with the fact that replaced it (or None), every replacing fact
    placed above the fact it replaced (brought in when the search had not found it). A text
    result (``within``, by place) counts as the replaced fact it holds."""
    out: list[tuple[float, Row, Replacement | None]] = []
    # (item id, first line) -> the score it was placed with: several passages of one chunk are
    # several results, a fact is one
    placed: dict[tuple[int, int], float] = {}
    scores = {_place(r): score for score, r in chosen}
    for score, row in chosen:
        if _place(row) in placed:
            continue
        by = found.get(int(row["id"])) or (within or {}).get(_place(row))
        if by is not None:
            newer = by.row
            if _place(newer) not in placed:
                placed[_place(newer)] = max(score, scores.get(_place(newer), 0.0))
                out.append((placed[_place(newer)], newer, found.get(int(newer["id"]))))
            score = min(score, placed[_place(newer)])
        placed[_place(row)] = score
        out.append((score, row, by))
    return out[:k]


def _place(row: Row) -> tuple[int, int]:
    return int(row["id"]), int(row["start_line"])
