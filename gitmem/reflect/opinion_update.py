"""New ``O`` entries matched to the opinions of bank/opinions.md, and what the rule makes of them.

An entry is evidence about an opinion when they share an entity (aliases resolved, one's
entities within the other's) and :func:`gitmem.parse.judgements.relate` finds the same
judgement (evidence for it) or its opposite or a worded end (evidence against it); among several
the surest row wins, then the most similar statement. An entry that matches nothing starts a new
opinion; one that is only alike in part starts one too, and the report names the opinions it may
be the same as. A person decides instead with a ``- same as: o-…`` line: under an entry of a
note (that entry is evidence about that opinion; ``same as: new`` opens its own), or in a section
of the file (that opinion is merged into the other: its evidence and the entries that match it
go to the other one). An entry already cited as evidence anywhere in the file has been applied
before and counts for nothing: that is what makes reflect idempotent. Pure: the caller reads
the file and the index, and writes the result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gitmem.domain import Citation, Evidence, Warn
from gitmem.index.reflect_queries import FactRow
from gitmem.parse.judgements import Similarity, Verdict, relate
from gitmem.parse.opinions import OpinionSection, stale_evidence
from gitmem.parse.retain import ENTITY_RE, entity_key
from gitmem.parse.visible import visible
from gitmem.reflect.opinionfile import NewOpinion, OpinionEdit, OpinionsFile, one_line
from gitmem.reflect.rule import (
    SPEC_RULE,
    Move,
    Observation,
    RuleParams,
    apply_evidence,
    initial_confidence,
    record_day,
)

Canonical = Callable[[str], str]  # an entity key (or alias key) -> the entity's key


@dataclass(frozen=True)
class OpinionChange:
    """One opinion reflect changes, with the reason and the evidence (for the report)."""

    opinion_id: str
    statement: str
    created: bool
    before: float | None
    after: float
    capped_days: tuple[str, ...]  # the record days whose move the cap cut short
    evidence: tuple[Evidence, ...]  # merged: every entry the recomputation applied
    merged: bool = False  # both machines had changed it: recomputed from their ancestor
    possibly: tuple[str, ...] = ()  # created: opinions it may be the same as (not merged)
    merged_from: tuple[str, ...] = ()  # opinions a person merged into it ("- same as:")

    @property
    def capped(self) -> bool:
        return bool(self.capped_days)

    @property
    def reason(self) -> str:
        n = len(self.evidence)
        stated = ", ".join(("against, " if e.stance == "against" else "")
                           + ("no c" if e.confidence is None else f"c={e.confidence:.2f}")
                           for e in self.evidence)
        against = sum(e.stance == "against" for e in self.evidence)
        what = f"{n} {'' if self.merged else 'new '}O entr{'y' if n == 1 else 'ies'}"
        what += (" stating it" if not against else " stating it or against it" if against < n
                 else " against it")
        what += f" ({stated})" if n else ""
        if self.created:
            maybe = (f"; possibly the same as {', '.join(self.possibly)}: merge by editing the "
                     f"file ('- same as: …')" if self.possibly else "")
            return (f"no existing opinion says this; started at {self.after:.2f} from "
                    f"{what}{maybe}")
        cap = f"; the per-day cap held it on {', '.join(self.capped_days)}" if self.capped else ""
        if self.merged_from:
            what = f"{what}, merged by hand from {', '.join(self.merged_from)},"
        if self.merged:
            return (f"merged from two machines: recomputed from {self.before:.2f} with {what}: "
                    f"{self.after:.2f}{cap}")
        return f"{what} moved it {self.before:.2f} -> {self.after:.2f}{cap}"

    def to_json(self) -> dict[str, object]:
        return {
            "opinion_id": self.opinion_id,
            "statement": self.statement,
            "created": self.created,
            "before": self.before,
            "after": self.after,
            "capped": self.capped,
            "capped_days": list(self.capped_days),
            "reason": self.reason,
            "evidence": [e.to_json() for e in self.evidence],
            "merged": self.merged,
            "possibly_same_as": list(self.possibly),
            "merged_from": list(self.merged_from),
        }


@dataclass
class OpinionPlan:
    edits: list[OpinionEdit] = field(default_factory=list)
    new: list[NewOpinion] = field(default_factory=list)
    changes: list[OpinionChange] = field(default_factory=list)
    warnings: list[Warn] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.edits or self.new)


@dataclass
class _Target:
    """An opinion entries can be matched to: an existing section or one started this run."""

    opinion_id: str
    statement: str
    keys: frozenset[str]
    confidence: float | None
    malformed_at: int | None  # the section's line when it must not be touched
    order: int
    updated: str | None = None
    problems: tuple[Warn, ...] = ()
    first: FactRow | None = None  # the entry that started a new opinion
    entries: list[FactRow] = field(default_factory=list)
    held: str = "which is malformed"  # why entries are not applied (with malformed_at)
    merged: int | None = None  # the merge driver's stale line, to remove once recomputed
    cited: frozenset[str] = frozenset()  # entries among ``entries`` the file already cites
    names: tuple[str, ...] = ()  # its entities as written (what matching masks)
    against: set[str] = field(default_factory=set)  # entries among ``entries`` against it
    same_as: str | None = None  # a person merged it into this opinion ("- same as: o-…")
    possibly: tuple[str, ...] = ()  # started this run: opinions it may be the same as
    merged_from: list[str] = field(default_factory=list)  # opinions merged into it by hand


# Where a statement's reason or aside starts: a ';' before a space, a dash between spaces, a
# full stop that ends a sentence, or an ideographic full stop (outside parentheses and code).
_REASON = re.compile(r"\s*(?:;(?=\s)|；|\s[—–]\s|\.\s+(?=[^\W\d_])|。)")
_SHIELDED = re.compile(r"\([^()]*\)|（[^（）]*）|`[^`]*`")


def _statement(text: str) -> str:
    """An entry's statement: its text on one line, up to the reason or aside after it."""
    text = one_line(own_text(text))
    shielded = _SHIELDED.sub(lambda m: "x" * len(m.group()), text)
    for cut in _REASON.finditer(shielded):
        if cut.start() > 0 and (not cut.group().strip().startswith(".")
                                or shielded[cut.end():cut.end() + 1].isupper()):
            text = text[: cut.start()]
            break
    return text.rstrip(" .。")


def statement_of(fact: FactRow) -> str:
    """The heading of a new opinion (docs/opinions-file.md): the statement as its entry wrote it —
    case, script and wording kept — on one line, prefixed by its subjects, without the reason or
    aside after it ("Prefers concise replies (under 1500 chars); long content goes to a file" ->
    "@Peter Prefers concise replies (under 1500 chars)") and without a final full stop. A
    subject the text opens with by name becomes that name's @entity ("Bob prefers async" ->
    "@Bob prefers async")."""
    text = _statement(fact.text)
    subjects = [name for _, name, role in fact.entities
                if role == "subject" and f"@{name}" not in text]
    opening = re.match(r"[^\W_][\w\-]*", text)
    named = next((n for n in subjects if opening and entity_key(opening.group()) == entity_key(n)),
                 None)
    if opening and named is not None:
        text = f"@{named}{text[opening.end():]}"
    head = " ".join(f"@{n}" for n in subjects if n != named)
    return f"{head} {text}".strip()


# A person's decision under an entry of a note: "- same as: o-3fa9c2e1" (it is evidence about
# that opinion) or "- same as: new" (it starts its own). A nested line, so it is in the entry's
# text: kept out of its statement.
_SAME_AS = re.compile(r"^[-*+]\s*same as\s*:\s*(?P<ref>\S+)\s*$", re.I | re.M)


def own_text(text: str) -> str:
    """An entry's text without its ``- same as:`` line."""
    return _SAME_AS.sub("", text).strip()


def _same_as(text: str) -> str | None:
    m = _SAME_AS.search(text)
    return m.group("ref").casefold() if m else None


def _bare(text: str) -> str:
    """The statement without its @entity tokens (entities are compared as keys), with control
    characters as a heading shows them (``one_line``), so an entry matches its own heading."""
    return ENTITY_RE.sub(" ", visible(own_text(text)))


def _fact_keys(fact: FactRow, canonical: Canonical) -> frozenset[str]:
    return frozenset(canonical(key) for key, _, _ in fact.entities if key)


def _verdict(target: _Target, fact: FactRow, keys: frozenset[str],
             similarity: Similarity | None) -> Verdict | None:
    """What the entry is to the opinion: about its entities (one side's within the other's),
    then :func:`gitmem.parse.judgements.relate`."""
    if not (target.keys & keys and (target.keys <= keys or keys <= target.keys)):
        return None
    names = tuple(name for _, name, _ in fact.entities)
    heading = _bare(target.statement)
    # its statement as a heading would show it first (a long aside drowns nothing), then all
    found = relate(heading, target.names, _bare(_statement(fact.text)), names, similarity)
    if found is not None and found.relation != "unsure":
        return found
    return relate(heading, target.names, _bare(fact.text), names, similarity) or found


def plan_opinions(doc: OpinionsFile, facts: Sequence[FactRow], canonical: Canonical,
                  params: RuleParams = SPEC_RULE,
                  merged_evidence: Mapping[str, FactRow] | None = None,
                  similarity: Similarity | None = None) -> OpinionPlan:
    """Match the new ``O`` entries among ``facts`` to opinions and apply the rule. An opinion
    the merge driver flagged (both machines changed it) is recomputed from its stale line's
    starting point with the evidence it names, and an opinion a person merged into another
    (``- same as:``) hands the other one its evidence (``merged_evidence``: fact id -> the
    fact, for both). ``similarity``: a model's cosine of two statements, when configured."""
    cited = {e.fact_id for op in doc.opinions for e in op.cited}  # folded ones included
    plan = OpinionPlan()
    targets = [
        _Target(s.opinion.opinion_id, s.opinion.statement,
                frozenset(canonical(entity_key(e)) for e in s.opinion.entities),
                s.opinion.confidence, s.heading + 1 if s.malformed else None, n,
                s.opinion.updated, s.problems, names=s.opinion.entities, same_as=s.same_as)
        for n, s in enumerate(doc.sections)
    ]
    for target, section in zip(targets, doc.sections, strict=True):
        if section.stale is not None and target.malformed_at is None:
            plan.warnings += _replay_merge(target, section, merged_evidence or {}, doc.path,
                                           params)
    by_id = {t.opinion_id: t for t in targets}
    plan.warnings += _hand_merges(targets, doc, by_id, merged_evidence or {})
    taken: set[str] = set()
    for fact in sorted((f for f in facts if f.kind == "opinion"), key=lambda f: f.order):
        if fact.fact_id in cited or not own_text(fact.text):
            continue
        cited.add(fact.fact_id)
        keys = _fact_keys(fact, canonical)
        ref = _same_as(fact.text)
        chosen: tuple[_Target, bool] | None = None
        unsure: list[_Target] = []
        if ref is not None and ref != "new":
            named = by_id.get(ref)
            if named is None:
                plan.warnings.append(Warn(fact.path, fact.start_line, "opinion-same-as",
                                          f"'same as: {ref}' names no opinion of {doc.path}; "
                                          "matched by the rule instead"))
            else:
                found = _verdict(named, fact, keys | named.keys, similarity)
                chosen = (_home(named, by_id), found is not None and found.relation == "against")
        if chosen is None and ref != "new":
            verdicts = [(t, v) for t in targets if (v := _verdict(t, fact, keys, similarity))]
            sure = [(t, v) for t, v in verdicts if v.relation != "unsure"]
            if sure:
                best, v = min(sure, key=lambda tv: (tv[1].row, -tv[1].score, tv[0].order))
                chosen = (_home(best, by_id), v.relation == "against")
            else:
                unsure = [_home(t, by_id) for t, _ in verdicts]
        if chosen is None:
            statement = statement_of(fact)
            oid = doc.new_id(statement, taken)
            taken.add(oid)
            target = _Target(oid, statement, keys, None, None, len(targets), first=fact,
                             names=tuple(name for _, name, _ in fact.entities),
                             possibly=tuple(dict.fromkeys(t.opinion_id for t in unsure)))
            targets.append(target)
            by_id[oid] = target
            continue
        best, against = chosen
        if best.malformed_at is not None:
            plan.warnings.extend(w for w in best.problems if w not in plan.warnings)
            plan.warnings.append(Warn(doc.path, best.malformed_at, "reflect-skipped",
                                      f"{Citation(fact.path, fact.start_line, fact.end_line)} "
                                      f"is evidence about this opinion, {best.held}; "
                                      "not applied until the section is fixed"))
            continue
        best.entries.append(fact)
        if against:
            best.against.add(fact.fact_id)
    for target in targets:
        if target.first is not None:
            _new(plan, target, params)
        elif target.malformed_at is None and (target.entries or target.merged is not None):
            _update(plan, target, params)
    return plan


def _home(target: _Target, by_id: Mapping[str, _Target]) -> _Target:
    """Where an opinion's evidence goes: the opinion a person merged it into, if any (followed
    along a chain; a loop or an unknown id stops at the last known one)."""
    seen = {target.opinion_id}
    while target.same_as is not None and target.same_as not in seen:
        nxt = by_id.get(target.same_as)
        if nxt is None:
            break
        seen.add(nxt.opinion_id)
        target = nxt
    return target


def _hand_merges(targets: Sequence[_Target], doc: OpinionsFile, by_id: Mapping[str, _Target],
                 facts: Mapping[str, FactRow]) -> list[Warn]:
    """Each opinion a person merged into another (``- same as: o-…``) hands it the evidence it
    cites that the other does not, with its stance: the other one applies it as new evidence,
    once (then it cites it). The merged section itself is left as it is."""
    warns: list[Warn] = []
    for target, section in zip(targets, doc.sections, strict=True):
        if target.same_as is None or target.malformed_at is not None:
            continue
        line = (section.same_as_line or section.heading) + 1
        home = _home(target, by_id)
        if target.same_as not in by_id or home is target:
            why = ("names no opinion of this file" if target.same_as not in by_id
                   else "leads back to this opinion")
            warns.append(Warn(doc.path, line, "opinion-same-as",
                              f"'same as: {target.same_as}' {why}; not merged"))
            target.same_as = None
            continue
        if home.malformed_at is not None:
            continue
        known = {e.fact_id for e in doc.opinions[home.order].cited} | {f.fact_id
                                                                      for f in home.entries}
        moved = [e for e in section.opinion.cited if e.fact_id not in known]
        missing = [e.fact_id for e in moved if e.fact_id not in facts]
        if missing:
            warns.append(Warn(doc.path, line, "opinion-same-as", (
                f"the index does not know {', '.join(missing[:3])}"
                f"{' …' if len(missing) > 3 else ''} (a note not committed yet?): not merged "
                f"into {home.opinion_id} yet")))
            continue
        for e in moved:
            home.entries.append(facts[e.fact_id])
            if e.stance == "against":
                home.against.add(e.fact_id)
        if moved:
            home.merged_from.append(target.opinion_id)
    return warns


def _replay_merge(target: _Target, section: OpinionSection, facts: Mapping[str, FactRow],
                  path: str, params: RuleParams) -> list[Warn]:
    """Set ``target`` up to be recomputed from the stale line's starting point: as one machine
    holding both sides' evidence would have computed it (docs/opinions-file.md: a function of
    history)."""
    mark = section.stale
    assert mark is not None
    ids = stale_evidence(section)
    missing = [i for i in ids if i not in facts]
    if missing:
        target.malformed_at = mark.line + 1
        target.held = "which two machines changed and reflect cannot recompute yet"
        target.problems = (Warn(path, mark.line + 1, "opinion-merge", (
            f"both machines changed this opinion and the index does not know "
            f"{', '.join(missing[:3])}{' …' if len(missing) > 3 else ''} (a note not synced or "
            f"not committed yet?): not recomputed, the stale line stays")),)
        return list(target.problems)
    rows = sorted((facts[i] for i in ids), key=lambda f: (*f.order, f.fact_id))
    if mark.base is not None:
        target.confidence = mark.base
    elif rows:  # neither side had it at their ancestor: from its first evidence, as created
        target.confidence = initial_confidence(rows[0].confidence, params)
        rows = rows[1:]
    target.entries = rows
    target.against = {e.fact_id for e in section.opinion.cited if e.stance == "against"}
    target.merged, target.cited = mark.line, frozenset(ids)
    return []


def _observations(entries: Sequence[FactRow], against: set[str]) -> list[Observation]:
    return [Observation(f.fact_id, f.confidence, f.recorded_at, f.path, f.start_line,
                        f.fact_id in against)
            for f in entries]


def _evidence_of(fact: FactRow, against: bool = False) -> Evidence:
    """An entry as evidence. Its ``c`` is how strongly it holds what it states
    (docs/opinions-file.md): "for" an entry that states the opinion (one below the opinion's
    confidence weakens it, but it still states it), "against" one that states the opposite or
    words an end of it."""
    return Evidence("against" if against else "for", fact.fact_id,
                    str(Citation(fact.path, fact.start_line, fact.end_line)), fact.confidence,
                    entry_words(fact.text))


WORDS_SHOWN = 100  # characters of an entry's own words on its evidence line


def entry_words(text: str) -> str:
    """An entry's own words as its evidence line shows them: its statement as a heading would
    show it (one line, visible escapes, no reason or aside), cut to ``WORDS_SHOWN``
    characters."""
    words = _statement(text)
    return words if len(words) <= WORDS_SHOWN else words[:WORDS_SHOWN - 1].rstrip() + "…"


def _evidence(move: Move, facts: dict[str, FactRow]) -> list[Evidence]:
    return [_evidence_of(facts[step.observation.fact_id], step.observation.against)
            for step in move.steps]


def _update(plan: OpinionPlan, target: _Target, params: RuleParams) -> None:
    assert target.confidence is not None  # a section without one is malformed
    move = apply_evidence(target.confidence, _observations(target.entries, target.against),
                          params)
    evidence = _evidence(move, {f.fact_id: f for f in target.entries})
    # never back in time: a later run over a wider window may find older, uncited evidence
    days = [record_day(move.steps[-1].observation.recorded_at)] if move.steps else []
    updated = max([*days, target.updated or ""]) or None
    new = tuple(e for e in evidence if e.fact_id not in target.cited)
    plan.edits.append(OpinionEdit(target.opinion_id, move.end, updated, new, target.merged))
    plan.changes.append(OpinionChange(target.opinion_id, target.statement, False, move.start,
                                      move.end, move.capped_days,
                                      tuple(evidence) if target.merged is not None else new,
                                      merged=target.merged is not None,
                                      merged_from=tuple(target.merged_from)))


def _new(plan: OpinionPlan, target: _Target, params: RuleParams) -> None:
    first = target.first
    assert first is not None
    start = initial_confidence(first.confidence, params)
    opening = _evidence_of(first)
    move = apply_evidence(start, _observations(target.entries, target.against), params)
    evidence = (opening, *_evidence(move, {f.fact_id: f for f in target.entries}))
    last = target.entries[-1] if target.entries else first
    plan.new.append(NewOpinion(target.opinion_id, target.statement, move.end,
                               record_day(last.recorded_at), evidence))
    plan.changes.append(OpinionChange(target.opinion_id, target.statement, True, None, move.end,
                                      move.capped_days, evidence, possibly=target.possibly))


@dataclass(frozen=True)
class DormantOpinion:
    """An opinion that rests on one entry, recorded before the dormancy cut-off."""

    opinion_id: str
    statement: str
    updated: str

    def to_json(self) -> dict[str, str]:
        return {"opinion_id": self.opinion_id, "statement": self.statement,
                "updated": self.updated}


def dormant(doc: OpinionsFile, before: str) -> list[DormantOpinion]:
    """The opinions of the file with one evidence entry, last updated before the day ``before``
    (``reflect.dormant_days`` ago): one-off judgements nothing has repeated since. Listed in
    the report for a person to keep or remove; reflect never deletes an opinion."""
    return [DormantOpinion(op.opinion_id, op.statement, op.updated)
            for s in doc.sections if not s.malformed
            for op in (s.opinion,)
            if len(op.cited) == 1 and op.updated is not None and op.updated < before]
