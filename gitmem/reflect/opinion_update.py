"""New ``O`` entries matched to the opinions of bank/opinions.md, and what the rule makes of them.

An entry is evidence about an opinion when they share an entity (aliases resolved) and say the
same thing (:func:`gitmem.parse.similarity.same_claim`); among several matches the most similar
statement wins. An entry that matches nothing starts a new opinion. An entry already cited as
evidence anywhere in the file has been applied before and counts for nothing: that is what makes
reflect idempotent. Pure: the caller reads the file and the index, and writes the result.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from gitmem.domain import Citation, Evidence, Warn
from gitmem.index.reflect_queries import FactRow
from gitmem.parse.opinions import OpinionSection, stale_evidence
from gitmem.parse.retain import ENTITY_RE, entity_key
from gitmem.parse.similarity import same_claim, statement_similarity
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

    @property
    def capped(self) -> bool:
        return bool(self.capped_days)

    @property
    def reason(self) -> str:
        n = len(self.evidence)
        stated = ", ".join("no c" if e.confidence is None else f"c={e.confidence:.2f}"
                           for e in self.evidence)
        what = f"{n} {'' if self.merged else 'new '}O entr{'y' if n == 1 else 'ies'} stating it"
        what += f" ({stated})" if n else ""
        if self.created:
            return f"no existing opinion says this; started at {self.after:.2f} from {what}"
        cap = f"; the per-day cap held it on {', '.join(self.capped_days)}" if self.capped else ""
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


# Where a statement's reason or aside starts: a ';' before a space, a dash between spaces, a
# full stop that ends a sentence, or an ideographic full stop (outside parentheses and code).
_REASON = re.compile(r"\s*(?:;(?=\s)|；|\s[—–]\s|\.\s+(?=[^\W\d_])|。)")
_SHIELDED = re.compile(r"\([^()]*\)|（[^（）]*）|`[^`]*`")


def statement_of(fact: FactRow) -> str:
    """The heading of a new opinion (docs/opinions-file.md): the statement as its entry wrote it —
    case, script and wording kept — on one line, prefixed by its subjects, without the reason or
    aside after it ("Prefers concise replies (under 1500 chars); long content goes to a file" ->
    "@Peter Prefers concise replies (under 1500 chars)") and without a final full stop. A
    subject the text opens with by name becomes that name's @entity ("Bob prefers async" ->
    "@Bob prefers async")."""
    text = one_line(fact.text)
    shielded = _SHIELDED.sub(lambda m: "x" * len(m.group()), text)
    for cut in _REASON.finditer(shielded):
        if cut.start() > 0 and (not cut.group().strip().startswith(".")
                                or shielded[cut.end():cut.end() + 1].isupper()):
            text = text[: cut.start()]
            break
    text = text.rstrip(" .。")
    subjects = [name for _, name, role in fact.entities
                if role == "subject" and f"@{name}" not in text]
    opening = re.match(r"[^\W_][\w\-]*", text)
    named = next((n for n in subjects if opening and entity_key(opening.group()) == entity_key(n)),
                 None)
    if opening and named is not None:
        text = f"@{named}{text[opening.end():]}"
    head = " ".join(f"@{n}" for n in subjects if n != named)
    return f"{head} {text}".strip()


def _bare(text: str) -> str:
    """The statement without its @entity tokens (entities are compared as keys), with control
    characters as a heading shows them (``one_line``), so an entry matches its own heading."""
    return ENTITY_RE.sub(" ", visible(text))


def _fact_keys(fact: FactRow, canonical: Canonical) -> frozenset[str]:
    return frozenset(canonical(key) for key, _, _ in fact.entities if key)


def _matches(target: _Target, fact: FactRow, keys: frozenset[str]) -> bool:
    if not target.keys & keys:
        return False
    return same_claim(_bare(target.statement), sorted(target.keys), _bare(fact.text), sorted(keys))


def plan_opinions(doc: OpinionsFile, facts: Sequence[FactRow], canonical: Canonical,
                  params: RuleParams = SPEC_RULE,
                  merged_evidence: Mapping[str, FactRow] | None = None) -> OpinionPlan:
    """Match the new ``O`` entries among ``facts`` to opinions and apply the rule. An opinion
    the merge driver flagged (both machines changed it) is recomputed from its stale line's
    starting point with the evidence it names (``merged_evidence``: fact id -> the fact)."""
    cited = {e.fact_id for op in doc.opinions for e in op.cited}  # folded ones included
    plan = OpinionPlan()
    targets = [
        _Target(s.opinion.opinion_id, s.opinion.statement,
                frozenset(canonical(entity_key(e)) for e in s.opinion.entities),
                s.opinion.confidence, s.heading + 1 if s.malformed else None, n,
                s.opinion.updated, s.problems)
        for n, s in enumerate(doc.sections)
    ]
    for target, section in zip(targets, doc.sections, strict=True):
        if section.stale is not None and target.malformed_at is None:
            plan.warnings += _replay_merge(target, section, merged_evidence or {}, doc.path,
                                           params)
    taken: set[str] = set()
    for fact in sorted((f for f in facts if f.kind == "opinion"), key=lambda f: f.order):
        if fact.fact_id in cited or not fact.text.strip():
            continue
        cited.add(fact.fact_id)
        keys = _fact_keys(fact, canonical)
        found = [t for t in targets if _matches(t, fact, keys)]
        if not found:
            statement = statement_of(fact)
            oid = doc.new_id(statement, taken)
            taken.add(oid)
            targets.append(_Target(oid, statement, keys, None, None, len(targets), first=fact))
            continue
        best = max(found, key=lambda t: (statement_similarity(_bare(t.statement),
                                                              _bare(fact.text)), -t.order))
        if best.malformed_at is not None:
            plan.warnings.extend(w for w in best.problems if w not in plan.warnings)
            plan.warnings.append(Warn(doc.path, best.malformed_at, "reflect-skipped",
                                      f"{Citation(fact.path, fact.start_line, fact.end_line)} "
                                      f"is evidence about this opinion, {best.held}; "
                                      "not applied until the section is fixed"))
            continue
        best.entries.append(fact)
    for target in targets:
        if target.first is not None:
            _new(plan, target, params)
        elif target.malformed_at is None and (target.entries or target.merged is not None):
            _update(plan, target, params)
    return plan


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
    target.merged, target.cited = mark.line, frozenset(ids)
    return []


def _observations(entries: Sequence[FactRow]) -> list[Observation]:
    return [Observation(f.fact_id, f.confidence, f.recorded_at, f.path, f.start_line)
            for f in entries]


def _evidence_of(fact: FactRow) -> Evidence:
    """An entry as evidence. Its ``c`` is how strongly it holds the statement
    (docs/opinions-file.md): one below the opinion's confidence weakens it, but it still states it,
    so it is "for". The matching rule never pairs a statement with its negation or an antonym
    (``same_claim``), so every entry reflect finds states the opinion; "against" lines are a
    person's."""
    return Evidence("for", fact.fact_id, str(Citation(fact.path, fact.start_line,
                                                      fact.end_line)), fact.confidence)


def _evidence(move: Move, facts: dict[str, FactRow]) -> list[Evidence]:
    return [_evidence_of(facts[step.observation.fact_id]) for step in move.steps]


def _update(plan: OpinionPlan, target: _Target, params: RuleParams) -> None:
    assert target.confidence is not None  # a section without one is malformed
    move = apply_evidence(target.confidence, _observations(target.entries), params)
    evidence = _evidence(move, {f.fact_id: f for f in target.entries})
    # never back in time: a later run over a wider window may find older, uncited evidence
    days = [record_day(move.steps[-1].observation.recorded_at)] if move.steps else []
    updated = max([*days, target.updated or ""]) or None
    new = tuple(e for e in evidence if e.fact_id not in target.cited)
    plan.edits.append(OpinionEdit(target.opinion_id, move.end, updated, new, target.merged))
    plan.changes.append(OpinionChange(target.opinion_id, target.statement, False, move.start,
                                      move.end, move.capped_days,
                                      tuple(evidence) if target.merged is not None else new,
                                      merged=target.merged is not None))


def _new(plan: OpinionPlan, target: _Target, params: RuleParams) -> None:
    first = target.first
    assert first is not None
    start = initial_confidence(first.confidence, params)
    opening = _evidence_of(first)
    move = apply_evidence(start, _observations(target.entries), params)
    evidence = (opening, *_evidence(move, {f.fact_id: f for f in target.entries}))
    last = target.entries[-1] if target.entries else first
    plan.new.append(NewOpinion(target.opinion_id, target.statement, move.end,
                               record_day(last.recorded_at), evidence))
    plan.changes.append(OpinionChange(target.opinion_id, target.statement, True, None, move.end,
                                      move.capped_days, evidence))


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
