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

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from gitmem.domain import Citation
from gitmem.index import queries
from gitmem.index.queries import ItemFilter, Row
from gitmem.index.store import WORKTREE, Store
from gitmem.parse.retain import entity_key
from gitmem.parse.similarity import UPDATABLE, Claim, claim, common_terms, updates

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


def replaces(newer: Row, newer_entities: Sequence[str], older: Row,
             older_entities: Sequence[str], common: frozenset[str] = frozenset()) -> bool:
    """Does ``newer`` replace ``older``? Stated later (day, then record time), and the one
    update rule (``parse.similarity.updates``)."""
    if newer.get("id") == older.get("id"):
        return False
    if (stated(newer), newer.get("recorded_at") or "") <= (stated(older),
                                                           older.get("recorded_at") or ""):
        return False
    return updates(newer["kind"], newer["content"], newer_entities, _explicit_period(newer),
                   older["kind"], older["content"], older_entities, _explicit_period(older),
                   common)


@dataclass
class Thread:
    """A current fact and the older facts it replaced, newest first."""

    current: Row
    history: list[Row] = field(default_factory=list)


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
    signatures: list[frozenset[str]] = []
    for row, prepared in zip(scanned, claims, strict=True):
        ents = names.get(int(row["id"]), [])
        sig = prepared.signature - common
        for thread, other in zip(out, signatures, strict=True):
            cur = thread.current
            if sig & other and replaces(cur, names.get(int(cur["id"]), []), row, ents, common):
                thread.history.append(row)
                break
        else:
            if len(out) < show:
                out.append(Thread(row))
                signatures.append(sig)
    return out, len(scanned)


def _frame(rows: Sequence[Row], claims: Sequence[Claim]) -> frozenset[str]:
    """The terms most of these statements share (each text counted once)."""
    distinct = {r["content"]: c for r, c in zip(rows, claims, strict=True)}
    return common_terms(distinct.values())


def superseders(store: Store, rows: Sequence[Row], flt: ItemFilter) -> dict[int, Row]:
    """Item id -> the newest fact that replaces it, for the facts among ``rows``.

    Candidates are the newest fact versions recorded after it with one of its subjects (ids
    from the entity index alone; only the newest SCANNED are read), of its kind, that obey the
    answer's filters (state, time window) except its entity filter. Bounded work per shown
    fact: a replacement older than that is missed, never invented."""
    facts = [r for r in rows if r["type"] == "fact" and r["kind"] in UPDATABLE]
    if not facts:
        return {}
    names = queries.entity_names_of(store, [int(r["id"]) for r in facts])
    out: dict[int, Row] = {}
    for row in facts:
        ents = names.get(int(row["id"]), [])
        keys = tuple(sorted({entity_key(e) for e in ents}))
        if not keys or not claim(row["content"], tuple(ents)).signature:
            continue
        item_id = int(row["id"])
        ids = queries.subject_facts_after(store, keys, item_id, SCANNED)  # recorded later
        scope = replace(flt, kinds=(row["kind"],), entity_keys=(), prefer=None)
        later = queries.later_facts(store, row, ids, scope, CANDIDATES)
        later_names = queries.entity_names_of(store, [int(r["id"]) for r in later])
        pool = [row, *later]
        common = _frame(pool, [claim(r["content"], tuple(later_names.get(int(r["id"]), ents)))
                               for r in pool])
        for cand in later:  # newest first: the first that replaces it is the current one
            if replaces(cand, later_names.get(int(cand["id"]), []), row, ents, common):
                out[item_id] = cand
                break
    return out


def superseded_within(store: Store, rows: Sequence[Row], flt: ItemFilter,
                      found: dict[int, Row]) -> dict[tuple[int, int], Row]:
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
    out: dict[tuple[int, int], Row] = {}
    for place, facts in inside.items():
        newer = next((replaced[int(f["id"])] for f in facts if int(f["id"]) in replaced), None)
        if newer is not None:
            out[place] = newer
    return out


def current_first(chosen: Sequence[tuple[float, Row]], found: dict[int, Row],
                  k: int, within: dict[tuple[int, int], Row] | None = None,
                  ) -> list[tuple[float, Row, Row | None]]:
    """The ranked rows, each with the fact that replaced it (or None), every replacing fact
    placed above the fact it replaced (brought in when the search had not found it). A text
    result (``within``, by place) counts as the replaced fact it holds."""
    out: list[tuple[float, Row, Row | None]] = []
    # (item id, first line) -> the score it was placed with: several passages of one chunk are
    # several results, a fact is one
    placed: dict[tuple[int, int], float] = {}
    scores = {_place(r): score for score, r in chosen}
    for score, row in chosen:
        if _place(row) in placed:
            continue
        newer = found.get(int(row["id"])) or (within or {}).get(_place(row))
        if newer is not None:
            if _place(newer) not in placed:
                placed[_place(newer)] = max(score, scores.get(_place(newer), 0.0))
                out.append((placed[_place(newer)], newer, found.get(int(newer["id"]))))
            score = min(score, placed[_place(newer)])
        placed[_place(row)] = score
        out.append((score, row, newer))
    return out[:k]


def _place(row: Row) -> tuple[int, int]:
    return int(row["id"]), int(row["start_line"])
