"""``gitmem entity`` (docs/memory-format.md): "tell me about X" — the page people wrote, the
entity's facts by kind (newest first, current facts apart from the ones they replaced), its
opinions, first and last mention, a timeline, and the entities most often mentioned with it; and the
list of entities. Read-only; answers from the memory now or as it stood at a time (record time)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, cast

from gitmem.domain import KIND_NAMES, Basis, ResultKind
from gitmem.git import GitRepo, blob_id
from gitmem.index import entity_queries as eq
from gitmem.index import graph, queries
from gitmem.index.entity_queries import State
from gitmem.index.items import page_entity
from gitmem.index.queries import ItemFilter, Row
from gitmem.index.session import Session
from gitmem.index.store import Store
from gitmem.parse.pages import human_text
from gitmem.parse.retain import entity_key, find_entities
from gitmem.recall.lookup import EntityRef, resolve_entity, state_at
from gitmem.recall.opinions_view import OpinionView, about, opinion_view
from gitmem.recall.update_marks import citation, stated
from gitmem.workspace import Workspace

KINDS = tuple(KIND_NAMES.values())  # world, experience, opinion, observation
SHOW = 10  # current facts shown per kind
SCAN = 200  # facts read at a time for their replacements, newest first


@dataclass(frozen=True)
class PastFact:
    """A fact a later one replaced: "was … until <date>"."""

    content: str
    source: str
    stated: str
    until: str
    fact_id: str | None
    confidence: float | None
    basis: Basis = "rule"
    replaced_by: str = ""  # the citation of what replaced it

    def to_json(self) -> dict[str, Any]:
        return {"content": self.content, "source": self.source, "date": self.stated,
                "until": self.until, "fact_id": self.fact_id, "confidence": self.confidence,
                "basis": self.basis, "replaced_by": self.replaced_by or None}


@dataclass(frozen=True)
class FactView:
    kind: ResultKind  # a fact's kind, as the index holds it
    content: str
    source: str
    stated: str  # the note's day, else the record date
    event_start: str | None
    event_end: str | None
    recorded_at: str | None
    confidence: float | None
    fact_id: str | None
    entities: tuple[str, ...]
    history: tuple[PastFact, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "content": self.content, "source": self.source,
                "date": self.stated, "event_start": self.event_start,
                "event_end": self.event_end, "recorded_at": self.recorded_at,
                "confidence": self.confidence, "fact_id": self.fact_id,
                "entities": list(self.entities), "history": [p.to_json() for p in self.history]}


@dataclass(frozen=True)
class Mention:
    date: str
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"date": self.date, "source": self.source}


@dataclass(frozen=True)
class Page:
    path: str
    text: str  # the human part: front matter and generated blocks left out
    source: str | None  # path#Lx-Ly of that text

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "text": self.text, "source": self.source}


@dataclass
class EntityView:
    name: str
    key: str
    aliases: list[str]
    as_of: str | None
    page: Page | None
    counts: dict[str, int]  # mentions, facts, and facts per kind
    facts: dict[str, list[FactView]]  # kind -> current facts, newest first
    opinions: list[OpinionView]
    first_mention: Mention | None
    last_mention: Mention | None
    timeline: list[dict[str, Any]]  # per month: period, mentions, facts
    related: list[dict[str, Any]]  # name, key, mentions
    warnings: list[str] = field(default_factory=list)
    # facts replaced by a statement that is not one of this entity's facts shown above
    replaced: list[PastFact] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "entity": self.name,
            "key": self.key,
            "aliases": self.aliases,
            "as_of": self.as_of,
            "page": None if self.page is None else self.page.to_json(),
            "counts": self.counts,
            "first_mention": None if self.first_mention is None else self.first_mention.to_json(),
            "last_mention": None if self.last_mention is None else self.last_mention.to_json(),
            "facts": {k: [f.to_json() for f in v] for k, v in self.facts.items()},
            "replaced": [p.to_json() for p in self.replaced],
            "opinions": [o.to_json() for o in self.opinions],
            "timeline": self.timeline,
            "related": self.related,
            "warnings": self.warnings,
        }


def entity_view(session: Session, name: str, *, as_of: str | None = None, show: int = SHOW,
                related: int = 10, now: datetime | None = None) -> EntityView:
    """Everything the memory holds about one entity (an unknown name is an error that lists
    the closest ones)."""
    ws = session.ws
    warnings = list(session.cfg.warnings) + session.catch_up()
    with session.reading() as store:
        state, shown = state_at(ws, store, as_of, now or datetime.now(UTC))
        ref = resolve_entity(store, name, state)
        items = eq.entity_items(store, ref.keys, state)
        mentions = [r for r in items if r[_MENTIONS]]  # as the entity list counts them
        facts, counts, replaced = _facts(store, [r for r in items if r[_TYPE] == "fact"],
                                         show, state)
        first, last = (mentions[-1], mentions[0]) if mentions else (None, None)
        view = EntityView(
            name=ref.name, key=ref.key, aliases=_spelled(store, ref.keys[1:]), as_of=shown,
            page=_page(ws, store, ref, state), counts={"mentions": len(mentions), **counts},
            facts=facts, replaced=replaced,
            opinions=[opinion_view(r) for r in eq.opinions_at(store, state) if about(r, ref)],
            first_mention=_mention(first), last_mention=_mention(last),
            timeline=_timeline(mentions),
            related=_related(store, ref, items, state, related),
            warnings=warnings)
    view.opinions.sort(key=lambda o: -(o.confidence or 0.0))
    return view


_ID, _TYPE, _KIND, _PATH, _START, _END, _STATED, _MENTIONS = (eq.ITEM_FIELDS.index(f) for f in (
    "id", "type", "kind", "path", "start_line", "end_line", "stated", "mentions"))


def _spelled(store: Store, keys: Sequence[str]) -> list[str]:
    """Aliases as their page writes them (``Alice Meyer``, not the key ``alice-meyer``)."""
    spelled = eq.alias_spellings(store)
    return [spelled.get(k, k) for k in keys]


def _row(item: tuple[Any, ...]) -> Row:
    return cast(Row, dict(zip(eq.ITEM_FIELDS, item, strict=True)))


def _facts(store: Store, items: list[tuple[Any, ...]], show: int, state: State,
           ) -> tuple[dict[str, list[FactView]], dict[str, int], list[PastFact]]:
    """Current facts per kind, newest first, each with the facts it replaced (hard edges of the
    replacement graph, ``index.graph``); a fact stays current unless a hard edge says
    otherwise. Replaced facts whose replacement is not one of the entity's facts (a note line,
    another subject's entry) come back apart, each with what replaced it."""
    rows = [_row(i) for i in items]
    by_id = {int(r["id"]): r for r in rows}
    flt = ItemFilter(as_of_seq=state.seq)
    replaced: dict[int, tuple[Row, Basis]] = {}  # item id -> (newest replacing row, basis)
    for first in range(0, len(rows), SCAN):
        part = rows[first:first + SCAN]
        places = [(int(r["id"]), int(r["start_line"]), int(r["end_line"])) for r in part]
        sids = {place[0]: found[0] for place, found in
                graph.statements_of(store, places, flt).items() if found}
        later = graph.newer_than(store, list(sids.values()), flt)
        for item_id, sid in sids.items():
            hard = [n for n in later.get(sid, []) if n.edge.strength == "hard"]
            if hard:
                replaced[item_id] = (hard[0].row, hard[0].edge.basis)
        current = [r for r in rows[:first + SCAN] if int(r["id"]) not in replaced]
        if len(current) >= show * len(KINDS):
            break
    by_kind: dict[str, list[Row]] = {k: [] for k in KINDS}
    for r in rows:
        if int(r["id"]) not in replaced:
            by_kind.setdefault(str(r["kind"]), []).append(r)
    shown = {k: v[:show] for k, v in by_kind.items()}
    names = queries.entity_names_of(store, [int(r["id"]) for v in shown.values() for r in v])
    history: dict[int, list[PastFact]] = {}
    apart: list[PastFact] = []
    shown_ids = {int(r["id"]) for v in shown.values() for r in v}
    for item_id, (newer, basis) in sorted(replaced.items(), key=lambda kv: -kv[0]):
        old = by_id[item_id]
        past = PastFact(old["content"], citation(old), stated(old), stated(newer),
                        old["fact_id"], old["confidence"], basis, citation(newer))
        if newer["type"] == "fact" and int(newer["id"]) in shown_ids:
            history.setdefault(int(newer["id"]), []).append(past)
        else:
            apart.append(past)
    out: dict[str, list[FactView]] = {
        kind: [_fact_view(r, names, history.get(int(r["id"]), [])) for r in v]
        for kind, v in shown.items() if v}
    counts: dict[str, int] = {"facts": len(items)}
    counts.update((k, sum(1 for r in rows if r["kind"] == k)) for k in KINDS)
    return out, counts, apart


def _timeline(mentions: Sequence[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """Mentions and facts per month, oldest first."""
    months: dict[str, list[int]] = {}
    for item in mentions:
        counts = months.setdefault(str(item[_STATED])[:7], [0, 0])
        counts[0] += 1
        counts[1] += item[_TYPE] == "fact"
    return [{"period": p, "mentions": n, "facts": f} for p, (n, f) in sorted(months.items())]


def _fact_view(row: Row, names: dict[int, list[str]], history: list[PastFact]) -> FactView:
    return FactView(
        kind=row["kind"], content=row["content"], source=citation(row), stated=stated(row),
        event_start=row["event_start"], event_end=row["event_end"],
        recorded_at=row["recorded_at"], confidence=row["confidence"], fact_id=row["fact_id"],
        entities=tuple(names.get(int(row["id"]), [])),
        history=tuple(sorted(history, key=lambda p: p.stated, reverse=True)))


def _mention(item: tuple[Any, ...] | None) -> Mention | None:
    return None if item is None else Mention(str(item[_STATED]), citation(_row(item)))


def _page(ws: Workspace, store: Store, ref: EntityRef, state: State) -> Page | None:
    if ref.page is None:
        return None
    blob = eq.page_blob(store, ref.page, state)
    if blob is None:
        return Page(ref.page, "", None)
    text, first, last = human_text(_blob_bytes(ws, ref.page, blob))
    source = None
    if first:
        source = f"{ref.page}#L{first}" if first == last else f"{ref.page}#L{first}-L{last}"
    return Page(ref.page, text, source)


def _blob_bytes(ws: Workspace, path: str, blob: str) -> bytes:
    """A page's text at a blob: the work tree's copy when it is that blob (no git process),
    else git's object."""
    try:
        data = (ws.root / path).read_bytes()
    except OSError:
        data = None
    if data is not None and blob_id(data) == blob:
        return data
    return GitRepo(ws.repo_root, ws.git_dir).blob(blob)


def _related(store: Store, ref: EntityRef, items: Sequence[tuple[Any, ...]], state: State,
             limit: int) -> list[dict[str, Any]]:
    """The entities named together with this one — in one fact, or on one line of a note (or
    of its page) — each counted once per fact or line, aliases folded into their entity, the
    most frequent first. Entities that only share a note with it are not related."""
    aliases = eq.alias_map(store)
    totals = Counter(_co_named(store, ref, items, lambda k: aliases.get(k, k)))
    top = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    names = eq.spellings(store, [k for k, _ in top], State())  # current spellings: display
    by_key = {entity_key(n): n for n in names}
    out: list[dict[str, Any]] = []
    for key, n in top:
        if key not in by_key:  # not mentioned any more: as it was written then
            spelled = eq.spellings(store, (key,), state)
            by_key[key] = max(spelled, key=lambda s: (spelled[s], s)) if spelled else key
        out.append({"entity": by_key[key], "key": key, "mentions": n})
    return out


def _co_named(store: Store, ref: EntityRef, items: Sequence[tuple[Any, ...]],
              canonical: Callable[[str], str]) -> Iterator[str]:
    """Each other entity once for every fact, then every note line, that names it with this
    one (a fact's own lines are its fact; a line two chunks overlap on counts once)."""
    facts = [i for i in items if i[_TYPE] == "fact"]
    covered = {(str(f[_PATH]), n) for f in facts
               for n in range(int(f[_START]), int(f[_END]) + 1)}
    for keys in eq.fact_entities(store, [int(f[_ID]) for f in facts]).values():
        yield from {canonical(k) for k in keys} - set(ref.keys)
    chunks = [int(i[_ID]) for i in items if i[_TYPE] == "chunk"]
    for path, first, text in eq.chunks_naming_others(store, chunks, ref.keys):
        least = 1 if path == ref.page else 2  # '@'s a line needs to name two entities
        for n, line in enumerate(text.split("\n"), start=first):
            if line.count("@") < least or (path, n) in covered:
                continue
            covered.add((path, n))
            named = {canonical(entity_key(e)) for e in find_entities(line)}
            if least == 1 or named & set(ref.keys):
                yield from named - set(ref.keys)


@dataclass(frozen=True)
class EntitySummary:
    name: str
    key: str
    mentions: int
    facts: int
    last: str | None
    page: str | None
    aliases: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"entity": self.name, "key": self.key, "mentions": self.mentions,
                "facts": self.facts, "last_mention": self.last, "page": self.page,
                "aliases": list(self.aliases)}


@dataclass
class EntityList:
    as_of: str | None
    entities: list[EntitySummary]
    warnings: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"as_of": self.as_of, "entities": [e.to_json() for e in self.entities],
                "warnings": self.warnings}


def list_entities(session: Session, *, as_of: str | None = None,
                  now: datetime | None = None) -> EntityList:
    """Every entity (mentioned, or with a page), the most mentioned first; aliases folded in."""
    warnings = list(session.cfg.warnings) + session.catch_up()
    with session.reading() as store:
        state, shown = state_at(session.ws, store, as_of, now or datetime.now(UTC))
        aliases = eq.alias_map(store)
        pages = {entity_key(page_entity(p)): p for p in eq.entity_pages(store, state)}
        rows: dict[str, dict[str, Any]] = {}
        for row in eq.entity_counts(store, state):
            key = aliases.get(str(row["key"]), str(row["key"]))
            into = rows.setdefault(key, {"name": row["name"], "mentions": 0, "facts": 0,
                                         "last": None})
            if key == row["key"]:
                into["name"] = row["name"]
            into["mentions"] += int(row["mentions"])
            into["facts"] += int(row["facts"])
            into["last"] = max(filter(None, (into["last"], row["last"])), default=None)
        for key, path in pages.items():
            rows.setdefault(key, {"name": page_entity(path), "mentions": 0, "facts": 0,
                                  "last": None})["name"] = page_entity(path)
        by_target: dict[str, list[str]] = {}
        for alias, target in sorted(aliases.items()):
            by_target.setdefault(target, []).append(alias)
        by_target = {k: _spelled(store, v) for k, v in by_target.items()}
    found = [EntitySummary(str(r["name"]), key, r["mentions"], r["facts"], r["last"],
                           pages.get(key), tuple(by_target.get(key, ())))
             for key, r in rows.items()]
    found.sort(key=lambda e: (-e.mentions, e.key))
    return EntityList(shown, found, warnings)


def entity_answer(session: Session, name: str | None, *, as_of: str | None = None,
                  show: int = 10) -> EntityView | EntityList:
    """``gitmem entity [NAME]`` and ``memory_entity``: NAME's view; without a name, every
    entity."""
    if name is None:
        return list_entities(session, as_of=as_of)
    return entity_view(session, name, as_of=as_of, show=show)
