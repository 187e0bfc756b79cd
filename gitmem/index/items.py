"""What one parsed file version contributes to the index: item versions with identity keys.

A version key says when two file versions hold "the same" fact or chunk: same kind, text,
confidence and lines. History compares keys: a key that disappears ends a version, a new key
starts one. Keeping lines in the key means every stored version cites lines that were true at
its commit; a moved but unchanged fact keeps its first record time (carried by fact id).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from gitmem.domain import ParsedFile, ResultKind
from gitmem.parse.chunking import passage_lines, unit_text
from gitmem.parse.pages import page_aliases
from gitmem.parse.retain import entity_key, find_entities
from gitmem.parse.stemming import stem_text
from gitmem.parse.textfold import fold, han_text
from gitmem.parse.timeparse import counted_back
from gitmem.workspace import OPINIONS_PATH

if TYPE_CHECKING:
    from gitmem.parse.statements import Drafted


@dataclass(frozen=True)
class ItemVersion:
    vkey: str
    type: str  # fact | chunk
    kind: ResultKind
    fact_id: str | None
    confidence: float | None
    start_line: int
    end_line: int
    heading: str
    content: str
    tokens: int
    event_start: str | None
    event_end: str | None
    search_text: str  # folded text for the full-text index
    stem_text: str  # its words' stems (the lower-weighted column)
    han_text: str  # its Han characters, spaced apart (the character table; often empty)
    links: tuple[tuple[str, str], ...]  # (entity as written, role)
    replaces: tuple[str, ...] = ()  # refs its '- replaces:' item declares (facts only)
    keeps: tuple[str, ...] = ()  # refs its '- keeps:' item names (facts only)
    # the statements it holds (parse.statements): a fact is one, a chunk holds its note lines
    statements: tuple[Drafted, ...] = ()
    # (line, importance, trigger phrases '; '-joined) of its annotated lines (parse.annotations)
    annotations: tuple[tuple[int, int | None, str], ...] = ()
    # (line, first day, last day) of each day a line of a dated note counts back to
    days: tuple[tuple[int, str, str], ...] = ()


def _key(*parts: object) -> str:
    import hashlib  # indexing only: not on a recall's path

    raw = "\x1f".join("" if p is None else str(p) for p in parts)
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=12).hexdigest()


def page_entity(path: str) -> str:
    """The entity an entity page names: bank/entities/<Slug>.md → Slug."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def item_versions(parsed: ParsedFile) -> list[ItemVersion]:
    """Facts, then chunks, of one parsed file version."""
    from gitmem.parse.statements import fact_statement, note_statements  # indexing only

    mf = parsed.file
    day = mf.day.isoformat() if mf.day else None
    page = page_entity(mf.path) if mf.file_class == "entity" else None
    out: list[ItemVersion] = []
    for f in parsed.facts:
        links = tuple([(s, "subject") for s in f.subjects] + [(m, "mention") for m in f.mentions])
        annotated = ((f.start_line, f.importance, "; ".join(f.triggers)),) if (
            f.importance is not None or f.triggers) else ()
        # trigger phrases say when the fact matters: searchable like its text
        searched = " ".join([*f.subjects, f.text, *f.triggers]) if f.triggers else (
            f"{' '.join(f.subjects)} {f.text}")
        out.append(
            ItemVersion(
                vkey=_key(
                    "fact", f.fact_id, f.kind, f.confidence, f.start_line, f.end_line, f.text,
                    *f.replaces, *(f"keeps:{k}" for k in f.keeps),
                    *(str(n) for n in annotated)
                ),
                type="fact",
                kind=f.kind,
                fact_id=f.fact_id,
                confidence=f.confidence,
                start_line=f.start_line,
                end_line=f.end_line,
                heading="",
                content=f.text,
                tokens=0,
                event_start=f.event_start.isoformat() if f.event_start else None,
                event_end=f.event_end.isoformat() if f.event_end else None,
                search_text=fold(searched),
                stem_text=stem_text(searched),
                han_text=han_text(f"{' '.join(f.subjects)} {f.text}"),
                links=links,
                replaces=f.replaces,
                keeps=f.keeps,
                statements=(fact_statement(f),),
                annotations=annotated,
                days=counted_back_days(f.start_line, f.text, day),
            )
        )
    # bank/opinions.md restates what O entries said (its headings name their entities): the
    # entries are the mentions, so its text counts for no entity's mentions or last mention
    restates = mf.path == OPINIONS_PATH
    # a page names its own entity (by its name or an alias of its own) by being its page
    itself = {entity_key(n) for n in [page, *page_aliases(parsed.front_matter)]} if page else set()
    notes = note_statements(parsed)
    for c, lines in zip(parsed.chunks, notes, strict=True):
        links = () if restates else tuple((e, "mention") for e in find_entities(c.text))
        if page:
            links = tuple(lk for lk in links if entity_key(lk[0]) not in itself)
            links += ((page, "page"),)
        body = c.text if not c.heading else f"{c.heading}\n{c.text}"
        out.append(
            ItemVersion(
                vkey=_key("chunk", c.start_line, c.end_line, c.heading, c.text),
                type="chunk",
                kind="note",
                fact_id=None,
                confidence=None,
                start_line=c.start_line,
                end_line=c.end_line,
                heading=c.heading,
                content=c.text,
                tokens=c.tokens,
                event_start=day,
                event_end=day,
                search_text=fold(body),
                stem_text=stem_text(body),
                han_text=han_text(body),
                links=links,
                statements=tuple(lines),
                annotations=chunk_annotations(c.start_line, c.text),
                days=counted_back_days(c.start_line, c.text, day),
            )
        )
    return out


def chunk_annotations(start: int, text: str) -> tuple[tuple[int, int | None, str], ...]:
    """(line, importance, phrases) of each annotated line of a chunk's text."""
    if "<!--" not in text:
        return ()
    from gitmem.parse.annotations import line_notes  # indexing only: not on recall's path

    found = ((start + i, line_notes(line)) for i, line in enumerate(text.split("\n")))
    return tuple((n, notes.importance, "; ".join(notes.triggers)) for n, notes in found
                 if notes is not None)


def counted_back_days(start: int, text: str, day: str | None
                      ) -> tuple[tuple[int, str, str], ...]:
    """(line, first day, last day) of each day a line of a text of the note of ``day`` counts
    back to ("yesterday", "last week": ``timeparse.counted_back``); none for an undated file."""
    if day is None:
        return ()
    return tuple(dict.fromkeys(
        (start + n, first.isoformat(), last.isoformat())
        for n, (first, last) in counted_back(text, date.fromisoformat(day[:10]))))


def path_search_text(path: str) -> str:
    return fold(path.replace("/", " ").replace(".", " "))


MAX_PASSAGES = 64  # vec_bits rowid = item id * MAX_PASSAGES + passage number
VECTOR_LAYOUT = "units-96:bits-v1"  # a change re-embeds (from the cache)
PASSAGE_TOKENS = 96


def embedding_passages(item_type: str, content: str, subjects: str) -> list[str]:
    """What is embedded for an item: a fact with its subjects; a chunk as its units (a list
    item, a paragraph: ``passage_lines``), each alone. Not under the chunk's heading: a heading
    shared by every unit pulls them towards one meaning (issue 41: 0.65 of the cross-language
    questions found with it, 0.85 without; BENCHMARKS.md)."""
    if item_type == "fact":
        return [f"{subjects}: {content}" if subjects else content]
    lines = content.split("\n")
    return [unit_text(lines, part)
            for part in passage_lines(content, PASSAGE_TOKENS, MAX_PASSAGES)]
