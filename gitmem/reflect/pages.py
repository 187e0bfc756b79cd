"""Entity pages (SPEC §4, §11): the generated block of ``bank/entities/<Slug>.md``.

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
from collections.abc import Sequence
from dataclasses import dataclass

from gitmem.domain import Citation, Warn
from gitmem.index.reflect_queries import FactRow
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
class EntityDigest:
    """What an entity's block says: its facts, opinions about it and the entities beside it."""

    key: str
    name: str
    facts: tuple[FactRow, ...]
    opinions: tuple[PageOpinion, ...]
    related: tuple[tuple[str, int], ...]  # (name, facts shared), most shared first


def page_path(name: str) -> str:
    return f"{ENTITIES_DIR}/{name}.md"


def fact_day(fact: FactRow) -> str:
    """When a fact happened: its event time, else the day it was recorded."""
    return fact.event_start or fact.recorded_at[:10]


def _text(text: str) -> str:
    flat = one_line(text).replace("<!--", "&lt;!--")  # never open an HTML comment
    return flat if len(flat) <= TEXT_CHARS else flat[: TEXT_CHARS - 1].rstrip() + "…"


def _newest_first(facts: Sequence[FactRow]) -> list[FactRow]:
    by_place = sorted(facts, key=lambda f: (f.path, f.start_line))
    return sorted(by_place, key=fact_day, reverse=True)


def render_block(digest: EntityDigest, items: int = 5) -> list[str]:
    """The block's lines, markers included."""
    facts = digest.facts
    days = sorted(fact_day(f) for f in facts)
    n = len(facts)
    out = [BEGIN, "## Memory digest", ""]
    if days:
        out += [f"{n} fact{'s' if n != 1 else ''} about {digest.name}, first mentioned "
                f"{days[0]}, last {days[-1]}.", ""]
    by_kind: dict[str, list[FactRow]] = defaultdict(list)
    for f in facts:
        by_kind[f.kind].append(f)
    for kind, label in _KINDS:
        group = _newest_first(by_kind.get(kind, []))
        if not group:
            continue
        out.append(f"**{label}** ({len(group)})")
        for f in group[:items]:
            c = f" (c={f.confidence:.2f})" if f.confidence is not None else ""
            cite = Citation(f.path, f.start_line, f.end_line)
            out.append(f"- {fact_day(f)}{c}: {_text(f.text)} ({cite})")
        if len(group) > items:
            out.append(f"- … {len(group) - items} more: `gitmem entity {digest.name}`")
        out.append("")
    if digest.opinions:
        out.append("**Current opinions**")
        for op in digest.opinions:
            c = "?" if op.confidence is None else f"{op.confidence:.2f}"
            out.append(f"- {c}: {_text(op.statement)} ({op.opinion_id})")
        out.append("")
    out += _timeline(facts)
    if digest.related:
        out += ["**Related**", ", ".join(f"{name} ({count})" for name, count in digest.related),
                ""]
    out.append(END)
    return out


def _timeline(facts: Sequence[FactRow]) -> list[str]:
    months: dict[str, Counter[str]] = defaultdict(Counter)
    for f in facts:
        months[fact_day(f)[:7]][f.kind] += 1
    if not months:
        return []
    out = ["**Timeline**"]
    for month in sorted(months, reverse=True)[:TIMELINE_MONTHS]:
        counts = months[month]
        parts = ", ".join(f"{counts[k]} {k}" for k, _ in _KINDS if counts[k])
        total = sum(counts.values())
        out.append(f"- {month}: {total} fact{'s' if total != 1 else ''} ({parts})")
    if len(months) > TIMELINE_MONTHS:
        out.append(f"- … {len(months) - TIMELINE_MONTHS} earlier months")
    out.append("")
    return out


def related(key: str, facts: Sequence[FactRow], canonical: dict[str, str],
            names: dict[str, str]) -> tuple[tuple[str, int], ...]:
    """The entities most often mentioned with ``key`` (facts shared), most first."""
    counts: Counter[str] = Counter()
    for f in facts:
        others = {canonical.get(k, k) for k, _, _ in f.entities if k} - {key}
        counts.update(others)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], names.get(kv[0], kv[0]).casefold()))
    return tuple((names.get(k, k), n) for k, n in ranked[:RELATED])


def new_page(name: str) -> list[str]:
    """The human-editable start of a page reflect creates."""
    return ["---", "aliases: []", "---", f"# {name}", "",
            f"<!-- Notes about {name}: write anything outside the gitmem markers; "
            "reflect keeps it. -->", ""]


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
