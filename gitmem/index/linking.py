"""The replacement graph, as the indexer makes it (docs/knowledge-updates.md, "Decided once").

Each item version's statements (``parse.statements``: a fact, or a note line about someone or
something) are stored with their subject keys when the version is inserted
(``Store.insert_versions``). After a commit's versions are in, :func:`link` compares each new
statement with the current statements that share a subject key (the last indexed ``PER_KEY``
of each key, and every fact a ``- replaces:`` or ``- keeps:`` item names) and stores what
``parse.updates.judge`` says, with the commit's seq: a rollback removes it with the versions,
so an incremental index equals a rebuild. ``index.graph`` reads the edges.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitmem.domain import Edge
from gitmem.index.store import Store, batched, marks
from gitmem.parse.statements import ATTRIBUTE, TOPIC, Statement, remember
from gitmem.parse.updates import judge

PER_ATTRIBUTE = 200  # newest current statements of one subject's one attribute compared
PER_KEY = 20  # of a named subject, whatever they say (a change, a named old value, a hint)
PER_TOPIC = 20  # of a topic ("gateway host", a content word of a statement with an attribute)

_STATEMENT = (
    "SELECT s.id, s.kind, s.content, s.path, s.line, s.end_line, s.subjects, i.day, "
    "i.recorded_at, i.event_start, i.event_end, i.fact_id, i.type, s.item_id, s.reading "
    "FROM statements s JOIN items i ON i.id = s.item_id")


def _statements(store: Store, ids: Sequence[int]) -> dict[int, Statement]:
    """Statements by id, with their item's times and what their facts declare."""
    rows: list[Sequence[Any]] = []
    for part in batched(list(ids)):
        rows.extend(store.conn.execute(f"{_STATEMENT} WHERE s.id IN ({marks(part)})", part))
    declared: dict[int, dict[str, set[str]]] = {}
    items = [int(r[13]) for r in rows if r[12] == "fact"]
    for part in batched(items):
        for item_id, fact_id, how in store.conn.execute(
                "SELECT item_id, fact_id, how FROM item_replaces WHERE fact_id IS NOT NULL "
                f"AND item_id IN ({marks(part)})", part):
            declared.setdefault(int(item_id), {}).setdefault(str(how), set()).add(str(fact_id))
    out: dict[int, Statement] = {}
    for (sid, kind, content, path, line, end_line, subjects, day, recorded, start, end,
         fact_id, kind_of_item, item_id, packed) in rows:
        written = tuple(s for s in str(subjects).split("\t") if s)
        if packed is not None:  # read when it was indexed (else Statement.reading reads it)
            remember(str(content), written, str(kind), str(packed))
        refs = declared.get(int(item_id), {})
        stated = str(day or (recorded or "")[:10])
        period = None
        if kind_of_item == "fact" and start and not (start == day and end in (None, start)):
            period = (str(start), str(end or start))
        out[int(sid)] = Statement(
            kind=kind, text=str(content), path=str(path), line=int(line),
            end_line=int(end_line), stated=stated, recorded_at=str(recorded or ""),
            subjects=written, period=period,
            fact_id=str(fact_id or "") if kind_of_item == "fact" else "",
            declared=frozenset(refs.get("replaces", ())), kept=frozenset(refs.get("keeps", ())))
    return out


def _current_by_key(store: Store, keys: Sequence[str]) -> dict[str, list[int]]:
    """Per subject key, the last indexed current statements that have it. The walk runs down
    the key's index from the last one and stops at the limit: a subject's whole history is never
    read or sorted by day, so a commit's cost does not grow with the years before it. (Leaving
    out the statements replaced already was measured: a chat answer lost its newer turn, 9 of 15
    held-out chat questions → 8, at no gain in speed.)"""
    out: dict[str, list[int]] = {}
    for key in keys:
        limit = (PER_TOPIC if key.startswith(TOPIC) else
                 PER_ATTRIBUTE if key.startswith(ATTRIBUTE) else PER_KEY)
        out[key] = [int(r[0]) for r in store.conn.execute(
            "SELECT k.statement_id FROM statement_keys k JOIN statements s "
            "ON s.id = k.statement_id JOIN items i ON i.id = s.item_id "
            "WHERE k.key = ? AND i.valid_to IS NULL "
            "ORDER BY k.statement_id DESC LIMIT ?",
            (key, limit))]
    return out


def _named_by_refs(store: Store, new: Sequence[int]) -> dict[int, set[int]]:
    """New statement -> the current statements of the facts its ``replaces:``/``keeps:`` name,
    and of the current facts whose items name it."""
    out: dict[int, set[int]] = {}
    for part in batched(list(new)):
        for sid, other in store.conn.execute(
                "SELECT s.id, o.id FROM statements s JOIN item_replaces r ON r.item_id = s.item_id "
                "JOIN items f ON f.fact_id = r.fact_id AND f.valid_to IS NULL "
                "JOIN statements o ON o.item_id = f.id "
                f"WHERE s.id IN ({marks(part)})", part):
            out.setdefault(int(sid), set()).add(int(other))
        for sid, other in store.conn.execute(
                "SELECT s.id, o.id FROM statements s JOIN items i ON i.id = s.item_id "
                "JOIN item_replaces r ON r.fact_id = i.fact_id "
                "JOIN items d ON d.id = r.item_id AND d.valid_to IS NULL "
                "JOIN statements o ON o.item_id = d.id "
                f"WHERE s.id IN ({marks(part)}) AND i.type = 'fact'", part):
            out.setdefault(int(sid), set()).add(int(other))
    return out


def _may_edge(x: Statement, c: Statement) -> bool:
    """A cheap necessary condition of an edge either way (``parse.updates.judge``): a
    declared ref, a worded change or named old value on one side, or an attribute both set.
    Most pairs of a subject's statements have none of them."""
    if x.declared or x.kept or c.declared or c.kept:
        return True
    a, b = x.reading, c.reading
    return a.may_change or b.may_change or bool(a.attributes & b.attributes)


def link(store: Store, seq: int) -> int:
    """Compare the statements first recorded at ``seq`` with the current ones about their
    subjects and store the edges found; returns how many."""
    new = [int(r[0]) for r in store.conn.execute(
        "SELECT s.id FROM statements s JOIN items i ON i.id = s.item_id WHERE i.valid_from = ?",
        (seq,))]
    if not new:
        return 0
    keys_of: dict[int, list[str]] = {}
    for part in batched(new):
        for sid, key in store.conn.execute(
                f"SELECT statement_id, key FROM statement_keys WHERE statement_id IN "
                f"({marks(part)})", part):
            keys_of.setdefault(int(sid), []).append(str(key))
    by_key = _current_by_key(store, sorted({k for keys in keys_of.values() for k in keys}))
    named = _named_by_refs(store, new)
    candidates = {sid: ({c for k in keys_of.get(sid, []) for c in by_key.get(k, [])}
                        | named.get(sid, set())) - {sid} for sid in new}
    stmts = _statements(store, sorted(set(new) | {c for cs in candidates.values() for c in cs}))
    edges: dict[tuple[int, int], Edge] = {}
    for sid in new:
        x = stmts.get(sid)
        if x is None:
            continue
        for cid in sorted(candidates[sid]):
            c = stmts.get(cid)
            if c is None or (cid, sid) in edges or (sid, cid) in edges or not _may_edge(x, c):
                continue
            if (found := judge(x, c)) is not None:
                edges[(cid, sid)] = found
            elif (found := judge(c, x)) is not None:
                edges[(sid, cid)] = found
    store.conn.executemany(
        "INSERT OR REPLACE INTO edges (older, newer, seq, strength, basis, attribute, reason) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(older, newer, seq, e.strength, e.basis, e.attribute, e.reason)
         for (older, newer), e in edges.items()])
    return len(edges)
