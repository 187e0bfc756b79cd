"""Retain entries (docs/memory-format.md): kinds, confidence, @entities and stable fact ids."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from gitmem.domain import KIND_NAMES, Fact, Warn

# An entity: '@', then a letter or digit, then letters, digits, '_', '-', '.'. Not after a word
# character (so 'user@host' is no entity). A trailing '.' is punctuation.
ENTITY_RE = re.compile(r"(?<![\w@])@([^\W_][\w.\-]*)")
_HEAD_RE = re.compile(
    r"^(?P<kind>[A-Za-z])(?:\(\s*c\s*=\s*(?P<c>[^)]*)\))?(?P<subjects>(?:\s+@[^\s:]+)*)\s*:\s?(?P<text>.*)$",
    re.DOTALL,
)
# A nested item of an entry that declares what it replaces ("  - replaces: f-3fa9c2e11aa0") or
# that it does not replace, whatever the rule says ("  - keeps: memory/2025-11-10.md#L14").
REPLACES_RE = re.compile(r"^\s+(?:[-*+]|\d{1,9}[.)])\s+(replaces|keeps)\s*:\s*(.*?)\s*$",
                       re.IGNORECASE)
FACT_REF_RE = re.compile(r"f-[0-9a-f]{12}")
CITATION_REF_RE = re.compile(r"(?P<path>[^#\s]+\.md)#L(?P<line>\d+)(?:-L?\d+)?")
_BULLET_RE = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])(?:\s+|$)")
_SPACE_RE = re.compile(r"\s+")
_SLUG_GAP = re.compile(r"[\s_\-]+")


def entity_key(slug: str) -> str:
    """The matching key of an entity: case-insensitive; '-', '_' and space alike."""
    return _SLUG_GAP.sub("-", slug.strip().casefold()).strip("-")


def find_entities(text: str) -> list[str]:
    """Every @entity slug in text, in order, without duplicates (trailing dots removed)."""
    seen: dict[str, None] = {}
    for m in ENTITY_RE.finditer(text):
        slug = m.group(1).rstrip(".")
        if slug:
            seen.setdefault(slug, None)
    return list(seen)


def fact_id(kind: str, text: str, entities: tuple[str, ...], day: date | None) -> str:
    """A short, stable hash of what the fact says; survives line moves and unrelated edits."""
    import hashlib  # parsing only: recall imports this module for entity_key

    norm = _SPACE_RE.sub(" ", text).strip()
    keys = ",".join(sorted({entity_key(e) for e in entities}))
    payload = "\x1f".join([kind, norm, keys, day.isoformat() if day else ""])
    return "f-" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class EntryLines:
    """The source lines of one top-level list item (1-based, inclusive)."""

    start_line: int
    lines: tuple[str, ...]


def strip_bullet(line: str) -> str:
    return _BULLET_RE.sub("", line, count=1)


def entry_body(entry: EntryLines) -> tuple[str, str]:
    """The head (first line without its bullet) and the continuation text of an entry."""
    head = strip_bullet(entry.lines[0]).strip()
    rest = [ln.strip() for ln in entry.lines[1:] if ln.strip()]
    return head, "\n".join(rest)


def declared_replacements(entry: EntryLines, path: str, warns: list[Warn],
                          ) -> tuple[EntryLines, tuple[str, ...], tuple[str, ...]]:
    """The entry without its nested ``- replaces: <ref>[, <ref>]`` and ``- keeps: <ref>`` items,
    and their refs (fact ids or citations, docs/memory-format.md): (entry, replaces, keeps). A
    ref of neither form is a warning."""
    kept = [entry.lines[0]]
    refs: dict[str, list[str]] = {"replaces": [], "keeps": []}
    for n, line in enumerate(entry.lines[1:], start=1):
        m = REPLACES_RE.match(line)
        if m is None:
            kept.append(line)
            continue
        how = m.group(1).casefold()
        for ref in (r.strip() for r in m.group(2).split(",")):
            if FACT_REF_RE.fullmatch(ref) or CITATION_REF_RE.fullmatch(ref):
                refs[how].append(ref)
            elif ref:
                warns.append(Warn(path, entry.start_line + n, f"{how}-ref",
                                  f"'{how}: {ref}' names neither a fact id (f-3fa9c2e11aa0) "
                                  "nor a citation (memory/2025-11-10.md#L14); ignored"))
    return (EntryLines(entry.start_line, tuple(kept)), tuple(dict.fromkeys(refs["replaces"])),
            tuple(dict.fromkeys(refs["keeps"])))


def parse_entry(
    entry: EntryLines, path: str, day: date | None
) -> tuple[Fact | None, list[Warn]]:
    """Parse one Retain list item: the fact (None when the item does not match the grammar)
    and warnings. Never raises."""
    end_line = entry.start_line + len(entry.lines) - 1
    warns: list[Warn] = []
    entry, refs, keeps = declared_replacements(entry, path, warns)
    notes = None
    if any("<!--" in ln for ln in entry.lines):  # recall's start-up imports none of this
        from gitmem.parse.annotations import line_notes, merged, without_notes

        notes = merged([n for n in map(line_notes, entry.lines) if n is not None])
        if notes is not None:  # annotations are not the fact's text (nor its id)
            entry = EntryLines(entry.start_line, tuple(without_notes(ln) for ln in entry.lines))
    head, rest = entry_body(entry)
    m = _HEAD_RE.match(head)
    if m is None or m.group("kind").upper() not in KIND_NAMES or m.group("kind").islower():
        warns.append(
            Warn(
                path,
                entry.start_line,
                "retain-malformed",
                "Retain item does not match '- W|B|O|S[(c=0.9)] [@Entity ...]: text'; "
                "indexed as plain text",
            )
        )
        return None, warns
    letter = m.group("kind")
    subjects = tuple(
        s for s in (find_entities(" " + m.group("subjects")) if m.group("subjects") else [])
    )
    raw_subjects = m.group("subjects").split()
    if len(subjects) != len(raw_subjects):
        warns.append(
            Warn(
                path,
                entry.start_line,
                "retain-entity",
                "a subject before the colon is not a valid @entity slug",
            )
        )
    text = m.group("text").strip()
    if rest:
        text = f"{text}\n{rest}" if text else rest
    confidence = _confidence(m.group("c"), letter, path, entry.start_line, warns)
    if confidence == _UNREADABLE:
        # an opinion whose strength cannot be read is no opinion fact: reflect would take it
        # for agreement (an O entry without c) and start or move an opinion on it
        # (docs/opinions-file.md)
        return None, warns
    if not text:
        warns.append(Warn(path, entry.start_line, "retain-empty", "Retain entry has no text"))
    mentions = tuple(e for e in find_entities(text) if e not in subjects)
    kind = KIND_NAMES[letter]
    fid = fact_id(kind, text, subjects + mentions, day)
    fact = Fact(
        fact_id=fid,
        kind=kind,
        text=text,
        subjects=subjects,
        mentions=mentions,
        confidence=confidence,
        start_line=entry.start_line,
        end_line=end_line,
        event_start=None,
        event_end=None,
        replaces=refs,
        keeps=keeps,
        importance=notes.importance if notes else None,
        triggers=notes.triggers if notes else (),
    )
    return fact, warns


# What ``_confidence`` gives for an O entry's ``c`` that is not a number in [0, 1].
_UNREADABLE = -1.0
_NOT_EVIDENCE = ("the entry is no opinion and no evidence for reflect; indexed as plain text "
                 "(write c as a number such as c=0.8, or leave it out)")


def _confidence(
    raw: str | None, letter: str, path: str, line: int, warns: list[Warn]
) -> float | None:
    """The confidence an entry states: None when it states none (or on a kind other than O,
    where it is ignored with a warning), ``_UNREADABLE`` when an O entry's is no number in
    [0, 1] (with a warning)."""
    if raw is None:
        return None
    if letter != "O":
        warns.append(
            Warn(
                path,
                line,
                "retain-confidence",
                f"(c={raw}) is only meaningful on O entries; ignored on {letter}",
            )
        )
        return None
    try:
        value = float(raw.strip())
    except ValueError:
        problem = f"confidence '{raw}' is not a number in [0, 1]"
    else:
        if 0.0 <= value <= 1.0:
            return value
        problem = f"confidence {raw} is outside [0, 1]"
    warns.append(Warn(path, line, "retain-confidence", f"{problem}: {_NOT_EVIDENCE}"))
    return _UNREADABLE
