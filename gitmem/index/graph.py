"""The replacement graph, as recall, ``entity``, reflect and the warm process read it: which
statement replaces (or may change) which, decided once, when the later of the two was indexed
(``index.linking``; docs/knowledge-updates.md, "Decided once"). ``--as-of`` applies the
edges recorded by then.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from gitmem.domain import Edge
from gitmem.index.queries import ItemFilter, Row, rows_by_id
from gitmem.index.store import Store, batched, marks

# The version of the rule of knowledge updates and of its language data (parse.updates,
# parse.statements, gitmem.lang): the index records it, and a change re-derives every edge.
RULE_VERSION = "2026-12-06.4"


def rule_version() -> str:
    return RULE_VERSION


# --- what recall, entity and reflect read -------------------------------------------------------


@dataclass(frozen=True)
class Newer:
    """A later statement and what it is to an earlier one: its item's row (narrowed to its
    lines), and the edge."""

    row: Row
    edge: Edge
    statement: int


def _visible(flt: ItemFilter) -> tuple[str, list[Any]]:
    if flt.as_of_seq is None:
        return "i.valid_to IS NULL", []
    return ("i.valid_from <= ? AND (i.valid_to IS NULL OR i.valid_to > ?) AND e.seq <= ?",
            [flt.as_of_seq, flt.as_of_seq, flt.as_of_seq])


def statements_of(store: Store, places: Sequence[tuple[int, int, int]],
                  flt: ItemFilter) -> dict[tuple[int, int, int], list[int]]:
    """(item id, first line, last line) of shown results -> the statements on those lines
    (a fact's own; a text result's note lines, whichever chunk holds them), of the versions
    ``flt`` sees."""
    out: dict[tuple[int, int, int], list[int]] = {}
    where = ("i.valid_to IS NULL" if flt.as_of_seq is None
             else "i.valid_from <= ? AND (i.valid_to IS NULL OR i.valid_to > ?)")
    args: list[Any] = [] if flt.as_of_seq is None else [flt.as_of_seq, flt.as_of_seq]
    for item_id, first, last in places:
        found = store.conn.execute(
            "SELECT s.id FROM statements s JOIN items i ON i.id = s.item_id "
            "JOIN items r ON r.id = ? WHERE s.path = r.path AND s.line BETWEEN ? AND ? "
            f"AND {where} ORDER BY s.line", (item_id, first, last, *args)).fetchall()
        out[(item_id, first, last)] = [int(str(r[0])) for r in found]
    return out


def newer_than(store: Store, statements: Sequence[int], flt: ItemFilter,
               ) -> dict[int, list[Newer]]:
    """Statement -> the later statements with an edge to it that ``flt`` sees (its state, and
    its time window: a replacement outside the window asked about does not count), newest
    first, hard edges before hints."""
    if not statements:
        return {}
    visible, args = _visible(flt)
    found: list[tuple[int, int, int, str, str, str, str, int, int]] = []
    for part in batched(list(statements)):
        found.extend(store.conn.execute(
            "SELECT e.older, e.newer, s.item_id, e.strength, e.basis, e.attribute, e.reason, "
            "s.line, s.end_line FROM edges e JOIN statements s ON s.id = e.newer "
            f"JOIN items i ON i.id = s.item_id WHERE e.older IN ({marks(part)}) AND {visible}",
            (*part, *args)))
    if not found:
        return {}
    # the answer's state, window and entities (a replacement outside them is not its business)
    window = ItemFilter(as_of_seq=flt.as_of_seq, window=flt.window,
                        entity_keys=flt.entity_keys)
    rows = {int(r["id"]): r for r in rows_by_id(store, sorted({int(f[2]) for f in found}), window)}
    out: dict[int, list[Newer]] = {}
    for older, newer, item_id, strength, basis, attribute, reason, line, end_line in found:
        row = rows.get(int(item_id))
        if row is None:
            continue
        narrowed = dict(row)
        narrowed["start_line"], narrowed["end_line"] = int(line), int(end_line)
        if row["type"] == "chunk":
            narrowed["content"] = _line_of(row, int(line))
        out.setdefault(int(older), []).append(Newer(
            narrowed,  # type: ignore[arg-type]
            Edge(strength, basis, attribute, reason), int(newer)))  # type: ignore[arg-type]
    for newer_list in out.values():
        newer_list.sort(key=lambda n: (n.edge.strength != "hard", _newest_key(n.row)))
    return out


def _line_of(row: Row, line: int) -> str:
    lines = str(row["content"]).split("\n")
    offset = line - int(row["start_line"])
    return lines[offset].strip() if 0 <= offset < len(lines) else str(row["content"])


def _newest_key(row: Row) -> tuple[str, str, int]:
    """Sorts newest first."""
    day = str(row.get("day") or (row.get("recorded_at") or "")[:10])
    inverted = "".join(chr(0x10FFFF - ord(c)) for c in day)
    recorded = "".join(chr(0x10FFFF - ord(c)) for c in str(row.get("recorded_at") or ""))
    return inverted, recorded, -int(row["start_line"])


def statement_texts(store: Store, ids: Sequence[int]) -> dict[int, str]:
    """Statement id -> its text."""
    out: dict[int, str] = {}
    for part in batched(list(ids)):
        out.update((int(i), str(t)) for i, t in store.conn.execute(
            f"SELECT id, content FROM statements WHERE id IN ({marks(part)})", part))
    return out


def replaced_by_item(store: Store, item_id: int) -> set[int]:
    """The items whose statements a current item's statements replace (hard edges)."""
    return {int(r[0]) for r in store.conn.execute(
        "SELECT o.item_id FROM edges e JOIN statements n ON n.id = e.newer "
        "JOIN statements o ON o.id = e.older WHERE n.item_id = ? AND e.strength = 'hard'",
        (item_id,))}
