"""What one parsed file version contributes to the index: item versions with identity keys.

A version key says when two file versions hold "the same" fact or chunk: same kind, text,
confidence and lines. History compares keys: a key that disappears ends a version, a new key
starts one. Keeping lines in the key means every stored version cites lines that were true at
its commit; a moved but unchanged fact keeps its first record time (carried by fact id).
"""

from __future__ import annotations

from gitmem.domain import ParsedFile, ResultKind
from gitmem.parse.chunking import passage_lines, unit_text
from gitmem.parse.pages import page_aliases
from gitmem.parse.retain import entity_key, find_entities
from gitmem.parse.stemming import stem_text
from gitmem.parse.textfold import fold, han_text
from gitmem.records import dataclass
from gitmem.workspace import OPINIONS_PATH


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


def _key(*parts: object) -> str:
    import hashlib  # indexing only: not on a recall's path

    raw = "\x1f".join("" if p is None else str(p) for p in parts)
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=12).hexdigest()


def page_entity(path: str) -> str:
    """The entity an entity page names: bank/entities/<Slug>.md → Slug."""
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def item_versions(parsed: ParsedFile) -> list[ItemVersion]:
    """Facts, then chunks, of one parsed file version."""
    mf = parsed.file
    day = mf.day.isoformat() if mf.day else None
    page = page_entity(mf.path) if mf.file_class == "entity" else None
    out: list[ItemVersion] = []
    for f in parsed.facts:
        links = tuple([(s, "subject") for s in f.subjects] + [(m, "mention") for m in f.mentions])
        out.append(
            ItemVersion(
                vkey=_key(
                    "fact", f.fact_id, f.kind, f.confidence, f.start_line, f.end_line, f.text,
                    *f.replaces
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
                search_text=fold(f"{' '.join(f.subjects)} {f.text}"),
                stem_text=stem_text(f"{' '.join(f.subjects)} {f.text}"),
                han_text=han_text(f"{' '.join(f.subjects)} {f.text}"),
                links=links,
                replaces=f.replaces,
            )
        )
    # bank/opinions.md restates what O entries said (its headings name their entities): the
    # entries are the mentions, so its text counts for no entity's mentions or last mention
    restates = mf.path == OPINIONS_PATH
    # a page names its own entity (by its name or an alias of its own) by being its page
    itself = {entity_key(n) for n in [page, *page_aliases(parsed.front_matter)]} if page else set()
    for c in parsed.chunks:
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
            )
        )
    return out


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
