"""Knowledge updates in an answer: which shown results a later statement replaced (hard
marks) or may have changed (hints), read from the replacement graph the index stored
(``index.graph``; the rule is ``parse.updates``). Decided at index time: an answer never depends
on ``--k`` or on what else is shown. Query time keeps only what needs the question: which of a
result's statements answers it (a text result's line that holds most of its words).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gitmem.domain import Basis, Citation
from gitmem.index import graph
from gitmem.index.queries import ItemFilter, Row
from gitmem.index.store import WORKTREE, Store


def citation(row: Row) -> str:
    """``path#Lx[-Ly]``, with ``@commit`` when the row is not the current version."""
    commit = row.get("commit_id")
    historical = row.get("valid_to") is not None and commit and commit != WORKTREE
    return str(Citation(row["path"], int(row["start_line"]), int(row["end_line"]),
                        str(commit) if historical else None))


def stated(row: Row) -> str:
    """The day a fact was stated: its daily note's day, else the day it was recorded."""
    return str(row.get("day") or (row.get("recorded_at") or "")[:10])


@dataclass(frozen=True)
class Replacement:
    """A later statement and what it is to a shown result: it replaced it (hard, with the
    basis, attribute and reason of the edge) or may have changed it (a hint)."""

    row: Row
    basis: Basis
    attribute: str = ""
    reason: str = ""
    hint: bool = False


@dataclass(frozen=True)
class Marks:
    """Per shown result (by place: item id, first line): what replaced it, what may have."""

    replaced: dict[tuple[int, int], Replacement]
    hinted: dict[tuple[int, int], Replacement]


def marks(store: Store, question: str, chosen: Sequence[tuple[float, Row]],
          flt: ItemFilter) -> Marks:
    """The marks of the shown results: each result's answering statement (a fact; a text
    result's line with most of the question's words) and the edges into it that ``flt``'s
    state and window see, of the kinds it asks for."""
    from gitmem.parse.similarity import statement_terms

    rows = [row for _, row in chosen if row["type"] in ("fact", "chunk")]
    places = [(int(r["id"]), int(r["start_line"]), int(r["end_line"])) for r in rows]
    on_lines = graph.statements_of(store, places, flt)
    asked = set(statement_terms(question))
    answering: dict[tuple[int, int], int] = {}
    texts = _texts(store, [s for sids in on_lines.values() for s in sids])
    for row, lines in zip(rows, places, strict=True):
        sids = on_lines.get(lines, [])
        if row["type"] == "fact":
            sid = sids[0] if sids else None
        else:
            held = [(len(asked & set(statement_terms(texts.get(s, "")))), s) for s in sids]
            best = max((h for h in held if h[0]), key=lambda h: h[0], default=None)
            sid = best[1] if best else None
        if sid is not None:
            answering[(lines[0], lines[1])] = sid
    later = graph.newer_than(store, list(answering.values()), flt)
    replaced: dict[tuple[int, int], Replacement] = {}
    hinted: dict[tuple[int, int], Replacement] = {}
    for place, sid in answering.items():
        for newer in later.get(sid, []):
            kind = "note" if newer.row["type"] == "chunk" else newer.row["kind"]
            if flt.kinds and kind not in flt.kinds:
                continue
            found = Replacement(newer.row, newer.edge.basis, newer.edge.attribute,
                                newer.edge.reason, hint=newer.edge.strength == "hint")
            if not found.hint:
                replaced.setdefault(place, found)
            elif place not in hinted and place not in replaced:
                hinted[place] = found
        if place in replaced:
            hinted.pop(place, None)
    return Marks(replaced, hinted)


def _texts(store: Store, sids: Sequence[int]) -> dict[int, str]:
    return graph.statement_texts(store, sids)


def current_first(chosen: Sequence[tuple[float, Row]], found: Marks, k: int,
                  ) -> list[tuple[float, Row, Replacement | None, Replacement | None]]:
    """The ranked rows, each with the statement that replaced it and the one that may have
    (or None), every replacing statement placed above the result it replaced (brought in when
    the search had not found it). Prefix-stable: the first k of a longer list are the same."""
    out: list[tuple[float, Row, Replacement | None, Replacement | None]] = []
    # (item id, first line) -> the score it was placed with: several passages of one chunk are
    # several results, a fact is one
    placed: dict[tuple[int, int], float] = {}
    scores = {_place(r): score for score, r in chosen}
    for score, row in chosen:
        if _place(row) in placed:
            continue
        by = found.replaced.get(_place(row))
        if by is not None:
            newer = by.row
            if _place(newer) not in placed:
                placed[_place(newer)] = max(score, scores.get(_place(newer), 0.0))
                out.append((placed[_place(newer)], newer, found.replaced.get(_place(newer)),
                            found.hinted.get(_place(newer))))
            score = min(score, placed[_place(newer)])
        placed[_place(row)] = score
        out.append((score, row, by, found.hinted.get(_place(row))))
    return out[:k]


def _place(row: Row) -> tuple[int, int]:
    return int(row["id"]), int(row["start_line"])
