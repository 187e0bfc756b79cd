"""Entity pages (docs/memory-format.md): the generated block of ``bank/entities/<Slug>.md``.

Generated text lives only between ``<!-- gitmem:begin ... -->`` and ``<!-- gitmem:end -->``;
everything outside the markers belongs to people and is written back byte for byte. A page
without markers gets the block appended at its end; a new page gets a short header a person can
edit, then the block. A page whose markers are unbalanced is left alone, with a warning.

The block is a function of the memory as it stands (every current fact of the entity, the
opinions after this run's update), never of the time reflect runs, so a second run writes the
same bytes. It opens with a level-2 heading, so that it can never extend a person's Retain
section, and none of its lines reads as a Retain entry: reflect's own output is never evidence.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from gitmem.domain import Citation, Warn
from gitmem.index.reflect_queries import FactLink, FactRow, Replaced
from gitmem.reflect.opinionfile import one_line
from gitmem.reflect.textfile import Editor, split_text

ENTITIES_DIR = "bank/entities"
BEGIN = "<!-- gitmem:begin reflect (generated; edits between these markers are replaced) -->"
END = "<!-- gitmem:end -->"
_BEGIN = re.compile(r"^\s*<!--\s*gitmem:begin\b.*-->\s*$")
_END = re.compile(r"^\s*<!--\s*gitmem:end\s*-->\s*$")
_KINDS = (("world", "World"), ("experience", "Experience"), ("opinion", "Opinion entries"),
          ("observation", "Observations"))
TEXT_CHARS = 200
TIMELINE_MONTHS = 6
RELATED = 8


@dataclass(frozen=True)
class PageOpinion:
    opinion_id: str
    statement: str
    confidence: float | None


@dataclass(frozen=True)
class EntitySummary:
    """An entity's current facts, summed up: counts by kind, first and last day, the newest
    facts of each kind (item ids, newest first), the most recent months by kind, and the
    entities most often named with it (facts shared)."""

    counts: dict[str, int]
    first_day: str
    last_day: str
    newest: dict[str, list[int]]
    months: list[tuple[str, dict[str, int]]]  # newest first
    months_total: int
    related: list[tuple[str, int]]  # (entity key, facts shared), most shared first
    replaced: list[int] = field(default_factory=list)  # facts a later statement replaced,
    # newest first (the replacement graph): shown apart, never as current facts

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def group_links(links: Sequence[FactLink], canonical: Callable[[str], str]
                ) -> tuple[dict[str, dict[int, FactLink]], dict[int, set[str]]]:
    """(entity key -> its facts by item id, item id -> its entity keys), aliases resolved."""
    by_entity: dict[str, dict[int, FactLink]] = defaultdict(dict)
    keys_of: dict[int, set[str]] = defaultdict(set)
    for link in links:
        key = canonical(link.entity)
        by_entity[key].setdefault(link.item_id, link)
        keys_of[link.item_id].add(key)
    return by_entity, keys_of


def summarise(key: str, facts: dict[int, FactLink], keys_of: dict[int, set[str]], *,
              newest: int, months: int = TIMELINE_MONTHS, related: int = RELATED,
              replaced: frozenset[int] = frozenset()) -> EntitySummary:
    counts: Counter[str] = Counter(f.kind for f in facts.values())
    ordered = sorted(sorted(facts.values(), key=lambda f: (f.path, f.start_line)),
                     key=lambda f: f.day, reverse=True)
    top: dict[str, list[int]] = defaultdict(list)
    gone: list[int] = []
    by_month: dict[str, Counter[str]] = defaultdict(Counter)
    shared: Counter[str] = Counter()
    for f in ordered:
        if f.item_id in replaced:
            if len(gone) < newest:
                gone.append(f.item_id)
        elif len(top[f.kind]) < newest:
            top[f.kind].append(f.item_id)
        by_month[f.day[:7]][f.kind] += 1
        shared.update(keys_of[f.item_id] - {key})
    days = [f.day for f in ordered]
    recent = sorted(by_month, reverse=True)
    return EntitySummary(dict(counts), min(days, default=""), max(days, default=""), dict(top),
                         [(m, dict(by_month[m])) for m in recent[:months]], len(recent),
                         sorted(shared.items(), key=lambda kv: (-kv[1], kv[0]))[:related],
                         gone)


@dataclass(frozen=True)
class EntityDigest:
    """What an entity's block says: its facts, opinions about it and the entities beside it."""

    key: str
    name: str
    summary: EntitySummary
    newest: dict[str, list[FactRow]]  # the summary's newest facts, read in full
    opinions: tuple[PageOpinion, ...]
    related: tuple[tuple[str, int], ...]  # (name, facts shared), most shared first
    replaced: tuple[tuple[FactRow, Replaced], ...] = ()  # the summary's replaced facts, in full


def page_path(name: str) -> str:
    return f"{ENTITIES_DIR}/{name}.md"


def _text(text: str) -> str:
    flat = one_line(text).replace("<!--", "&lt;!--")  # never open an HTML comment
    return flat if len(flat) <= TEXT_CHARS else flat[: TEXT_CHARS - 1].rstrip() + "…"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def render_block(digest: EntityDigest) -> list[str]:
    """The block's lines, markers included."""
    facts = digest.summary
    out = [BEGIN, "## Memory digest", ""]
    if facts.total:
        out += [f"{_plural(facts.total, 'fact')} about {digest.name}, first mentioned "
                f"{facts.first_day}, last {facts.last_day}.", ""]
    for kind, label in _KINDS:
        count = facts.counts.get(kind, 0)
        if not count:
            continue
        out.append(f"**{label}** ({count})")
        shown = digest.newest.get(kind, [])
        for f in shown:
            c = f" (c={f.confidence:.2f})" if f.confidence is not None else ""
            day = f.stated
            cite = Citation(f.path, f.start_line, f.end_line)
            out.append(f"- {day}{c}: {_text(f.text)} ({cite})")
        if count > len(shown):
            out.append(f"- … {count - len(shown)} more: `gitmem entity {digest.name}`")
        out.append("")
    if digest.replaced:
        out.append("**Replaced**")
        for f, by in digest.replaced:
            cite = Citation(f.path, f.start_line, f.end_line)
            newer = Citation(by.path, by.start_line, by.end_line)
            out.append(f"- was: {_text(f.text)} ({cite}), until {by.stated} ({newer})")
        out.append("")
    if digest.opinions:
        out.append("**Current opinions**")
        for op in digest.opinions:
            c = "?" if op.confidence is None else f"{op.confidence:.2f}"
            out.append(f"- {c}: {_text(op.statement)} ({op.opinion_id})")
        out.append("")
    if facts.months:
        out.append("**Timeline**")
        for month, counts in facts.months:
            parts = ", ".join(f"{counts[k]} {k}" for k, _ in _KINDS if counts.get(k))
            out.append(f"- {month}: {_plural(sum(counts.values()), 'fact')} ({parts})")
        if facts.months_total > len(facts.months):
            out.append(f"- … {_plural(facts.months_total - len(facts.months), 'earlier month')}")
        out.append("")
    if digest.related:
        out += ["**Related**", ", ".join(f"{name} ({count})" for name, count in digest.related),
                ""]
    out.append(END)
    return out


def new_page(name: str) -> list[str]:
    """The human-editable start of a page reflect creates."""
    return ["---", "aliases: []", "---", f"# {name}", "",
            f"<!-- gitmem: notes about {name} go anywhere outside the begin/end markers; "
            "reflect keeps them. -->", ""]


def splice(path: str, data: bytes | None, block: list[str], name: str
           ) -> tuple[bytes | None, Warn | None]:
    """The page with ``block`` in place (None and a warning when its markers are unbalanced)."""
    if data is None:
        text = split_text(("\n".join([*new_page(name), *block]) + "\n").encode())
        return text.encode(), None
    text = split_text(data)
    begins = [i for i, ln in enumerate(text.lines) if _BEGIN.match(ln)]
    ends = [i for i, ln in enumerate(text.lines) if _END.match(ln)]
    editor = Editor(text)
    if not begins and not ends:
        gap = [""] if text.lines and text.lines[-1].strip() else []
        editor.append([*gap, *block])
    elif len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0]:
        editor.replace_range(begins[0], ends[0] + 1, block)
    else:
        line = (begins or ends)[0] + 1
        return None, Warn(path, line, "reflect-markers",
                          "gitmem:begin/gitmem:end markers are unbalanced (there must be one "
                          "of each, begin first); the page is left untouched")
    return editor.result().encode(), None


def generated_span(lines: Sequence[str]) -> range:
    """The 0-based indexes of the lines inside a page's one generated block (none when the
    page has no block or unbalanced markers)."""
    begins = [i for i, ln in enumerate(lines) if _BEGIN.match(ln)]
    ends = [i for i, ln in enumerate(lines) if _END.match(ln)]
    if len(begins) == 1 and len(ends) == 1 and begins[0] < ends[0]:
        return range(begins[0] + 1, ends[0])
    return range(0)


def digest_entry(line: str) -> tuple[str, str] | None:
    """(text, citation) of a generated digest line (``- day[ (c=0.80)]: text (path#Lx-Ly)``)."""
    found = _DIGEST_LINE.match(line)
    return (found.group(1), found.group(2)) if found else None


def digest_text(text: str) -> str:
    """A fact's text as a digest line shows it."""
    return _text(text)


_DIGEST_LINE = re.compile(r"^- [^:]+?: (.*) \(([^()\s]+#L\d+(?:-L\d+)?)\)\s*$")
