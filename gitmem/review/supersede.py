"""Superseded facts: an older fact that a newer one about the same entities replaces.

Daily notes are append-only, so "the gateway host is the NUC" stays in the memory after "moved
the gateway host to The Castle". A fact the range added supersedes an older fact when the rule of
knowledge updates (``parse.updates.judge``, the one recall, ``entity`` and reflect read through
the index's graph) makes a hard edge between them: a hint is no supersession.

Only a state can be replaced: world facts (``W``) and observations (``S``), as recall's knowledge
updates rule it; any entry that can state a change may replace one (``W``, ``S``, and ``B``:
"Replaced the Synology with a TrueNAS box"). Experiences stay true as history; opinion entries
are evidence about an opinion, which ``bank/opinions.md`` tracks. Two
entries that each state their own, separate period ("in Oslo Dec 21-26", "in Boston Nov 24-30")
are two events, not an update.

What a new fact replaces is the claim that was current before it, so the newest match wins. A
new fact is compared with a bounded set of earlier facts about its entities: the ``RECENT``
newest (whatever their words: a paraphrase may share none) and the ``WORDED`` that share the most
words with it from any time (a claim current for years). That keeps review's cost bounded on a
long memory without reading it: one ``git grep`` at the head lists the W and S lines that
mention the entities, each line is read on its own, and only the files of lines that match are
read and parsed to confirm the fact (full text, id, in a Retain section) — unless the line can
only be a one-line item and, read with its period, is no replacement: then no parse can make it
one.
"""

from __future__ import annotations

import functools
import heapq
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date

from gitmem.domain import Citation, Classified, Edge, Fact, MemoryFile
from gitmem.git import GrepJob
from gitmem.lifetime import split_map
from gitmem.parse.markdown import entry_fact
from gitmem.parse.retain import ENTITY_RE, EntryLines, entity_key, find_entities, parse_entry
from gitmem.parse.statements import CHANGE_KINDS
from gitmem.parse.textfold import STOPWORDS
from gitmem.parse.updates import judge
from gitmem.review.review_model import ReviewFact, Supersession
from gitmem.review.snapshot import Snapshot

# Review reports superseded world facts and observations (the states the rule replaces,
# parse.updates), replaced by an added fact of any kind that can state a change (a B entry:
# "Replaced the Synology with a TrueNAS box"); opinion entries are evidence, which review's
# opinion section reports.
REVIEWED_KINDS = frozenset({"world", "observation"})
REPLACING_KINDS = CHANGE_KINDS - {"note"}
RECENT = 10  # the newest earlier facts about its entities a new fact is compared with
WORDED = 10  # and those, from any time, that share the most words with it
SPLIT_AT = 24  # new facts from which their searches are split over two cores (a fork: ~5 ms)
_POSTINGS = 200  # lines per (entity, word) scored, newest first
_WORD = re.compile(r"[^\W\d_]{4,}")
# A top-level list item of kind W or S (git grep -E): what an older, replaceable fact looks like.
_UPDATABLE_ITEM = r"^([-*+]|[0-9]+[.)])[[:space:]]+[WS][[:space:]]*[@:]"
_ITEM = re.compile(r"([-*+]|[0-9]{1,9}[.)])\s+[WS]\s*[@:]")
# A line at the margin that ends the list item above it: a bullet item with text, a heading.
_ENDS_ITEM = re.compile(r"[-*+][ \t]+\S|#{1,6}([ \t]|$)")


class SupersedeSearch:
    """Started as soon as the changed files are read: ``git grep`` looks for the world-fact and
    observation lines that mention their entities while the caller parses; ``find`` finishes."""

    def __init__(self, head: Snapshot, pathspecs: Sequence[str]) -> None:
        self.head = head
        slugs: set[str] = set()
        for _, data in head.raw.values():
            slugs.update(find_entities(_updatable_items(data.decode("utf-8", "replace"))))
        # One alternation: git grep tries each -e pattern on every line, one regex is faster.
        names = sorted({_pattern(s) for s in slugs} | {_pattern(_key(s)) for s in slugs})
        self.job = GrepJob(head.ws.repo_root, head.commit,
                           [f"@({'|'.join(names)})"] if names else [], pathspecs,
                           require=_UPDATABLE_ITEM)

    def find(self, added: Sequence[ReviewFact]) -> list[Supersession]:
        """Pairs (older fact at the head, the newest added fact that replaces it), oldest
        first."""
        new = sorted((f for f in added if f.entities and f.kind in REPLACING_KINDS),
                     key=_recency, reverse=True)
        earlier = _Lines(self.head, new)
        for batch in self.job.batches():  # read while git still searches
            earlier.add(batch)
        earlier.sort()

        def replaced(part: Sequence[ReviewFact]) -> list[ReviewFact | None]:
            """What each fact of ``part`` replaces: a fact the range added earlier, or one at
            the head from before the range."""
            olds = [_within_range(f, new) for f in part]
            earlier.prefetch([f for f, old in zip(part, olds, strict=True) if old is None])
            return [old or earlier.replaced_by(f) for f, old in zip(part, olds, strict=True)]

        found: dict[str, Supersession] = {}
        # each fact's search is its own: half of them on a second core when there are many
        olds = split_map(replaced, new, minimum=SPLIT_AT, group=_subject)
        for fact, old in zip(new, olds, strict=True):
            edge = None if old is None else _hard(fact, old)
            if old is not None and edge is not None and old.fact_id not in found:
                # newest first: the first wins
                found[old.fact_id] = Supersession(old, fact, edge.basis, edge.attribute,
                                                  edge.reason)
        return sorted(found.values(), key=lambda s: (s.old.day or "", s.old.source))

    def close(self) -> None:
        self.job.close()


def _subject(f: ReviewFact) -> str:
    """Facts about one subject look at the same older lines: one process searches for them."""
    return _key(f.entities[0])


def _recency(f: ReviewFact) -> tuple[str, str, int]:
    return (f.day or "", f.path, f.start_line)


def _within_range(fact: ReviewFact, new: list[ReviewFact]) -> ReviewFact | None:
    """The newest fact the range itself added earlier that ``fact`` replaces."""
    for old in new:  # newest first
        if _replaces(fact, old):
            return old
    return None


def _hard(new: ReviewFact, old: ReviewFact) -> Edge | None:
    """The one update rule (``parse.updates.judge``): a hard edge, or None (a hint is no
    supersession)."""
    if old.kind not in REVIEWED_KINDS:
        return None
    edge = judge(new.statement, old.statement)
    return edge if edge is not None and edge.strength == "hard" else None


def _replaces(new: ReviewFact, old: ReviewFact) -> bool:
    return _hard(new, old) is not None


def _line_fact(fact: Fact, hit: _Hit) -> ReviewFact:
    """A line read on its own, as a fact of its file's day (its period is checked once the
    file is parsed)."""
    return ReviewFact(fact.fact_id, fact.kind, fact.text, fact.entities,
                      Citation(hit.path, hit.line, hit.line, None), hit.day or None, None,
                      fact.replaces, fact.subjects, fact.keeps)


@functools.lru_cache(maxsize=8192)
def _key(slug: str) -> str:
    return entity_key(slug)


@dataclass(frozen=True)
class _Hit:
    rank: tuple[int, str, int]  # sorts newest first: undated files, then later days
    path: str
    line: int
    text: str
    day: str  # '' for an undated file


class _Lines:
    """The world-fact and observation lines at the head (not added by the range) that mention
    the entities of the new facts, indexed by entity key (and by entity key and word), newest
    first: filled batch by batch as ``git grep`` finds them, once for both halves of the
    search (a forked half sees it as it was)."""

    def __init__(self, head: Snapshot, new: Sequence[ReviewFact]) -> None:
        self.head = head
        self._added_at = {(f.path, f.start_line) for f in new}
        self._keys = {_key(e) for f in new for e in f.entities}
        self._asked = {w for f in new for w in _words(f.text)}  # the words _candidates looks up
        self._classes: dict[str, Classified | None] = {}
        self.by_key: dict[str, list[_Hit]] = {}
        self.by_word: dict[tuple[str, str], list[_Hit]] = {}  # filled by _worded
        self._worded_keys: set[str] = set()
        self._facts: dict[tuple[str, int], ReviewFact | None] = {}
        self._plausible: dict[str, list[_Hit]] = {}
        self._texts: dict[str, list[str] | None] = {}  # loaded files' lines, for _alone

    def add(self, grep_lines: list[tuple[str, int, str]]) -> None:
        keys, classes, prefix = self._keys, self._classes, self.head.ws.prefix
        for repo_path, number, text in grep_lines:
            path = repo_path[len(prefix):]
            about = {_key(e) for e in find_entities(text)} & keys
            if not about or (path, number) in self._added_at:
                continue
            if path not in classes:
                classes[path] = self.head.classify(path) if repo_path.startswith(prefix) else None
            found = classes[path]
            if found is None:
                continue
            day = found[1]
            hit = _Hit((-day.toordinal() if day else -(10**9), path, number), path, number,
                       text.rstrip("\r"), day.isoformat() if day else "")
            for key in about:
                self.by_key.setdefault(key, []).append(hit)

    def sort(self) -> None:
        """Newest first (once every batch is in)."""
        for hits in self.by_key.values():
            hits.sort(key=lambda h: h.rank)

    def _worded(self, key: str) -> None:
        """Index the lines about ``key`` by their words, newest first, when first asked (in the
        half of the search that looks at that subject)."""
        if key in self._worded_keys:
            return
        self._worded_keys.add(key)
        for hit in self.by_key.get(key, ()):
            for word in _words(hit.text) & self._asked:
                self.by_word.setdefault((key, word), []).append(hit)

    def prefetch(self, new: list[ReviewFact]) -> None:
        """Find each new fact's candidates (lines that, read on their own, it replaces) and
        read their files in one batch (parsed only when a candidate is confirmed)."""
        for fact in new:
            self._plausible[fact.fact_id] = list(self._candidates(fact))
        self.head.load(h.path for hits in self._plausible.values() for h in hits)

    def _candidates(self, fact: ReviewFact) -> Iterator[_Hit]:
        """The lines about its entities (not from a later day than it) that ``fact``, read
        against each line on its own, replaces; newest first. Looked at: the ``RECENT`` newest,
        whatever their words (a paraphrase may share none), and the ``WORDED`` that share the
        most words with it from any time (a claim current for years: "the gateway host is the
        NUC")."""
        keys = {_key(e) for e in fact.entities}
        chosen: dict[tuple[str, int], _Hit] = {}
        for hit in self._newest_first(keys):
            if len(chosen) >= RECENT:
                break
            if not _later_day(hit, fact):
                chosen[(hit.path, hit.line)] = hit
        shared: Counter[tuple[str, int]] = Counter()
        by_place: dict[tuple[str, int], _Hit] = {}
        for key in keys:
            self._worded(key)
            for word in _words(fact.text):
                for hit in self.by_word.get((key, word), [])[:_POSTINGS]:
                    if not _later_day(hit, fact):
                        shared[(hit.path, hit.line)] += 1
                        by_place[(hit.path, hit.line)] = hit
        best = sorted(shared, key=lambda p: (-shared[p], by_place[p].rank))[:WORDED]
        chosen.update((p, by_place[p]) for p in best)
        for hit in sorted(chosen.values(), key=lambda h: h.rank):
            one = self._one_line(hit)  # its period is checked once the file is parsed
            if one is not None and _replaces(fact, one):
                yield hit

    def replaced_by(self, fact: ReviewFact) -> ReviewFact | None:
        """The newest fact at the head (not added by the range) that ``fact`` replaces."""
        for hit in self._plausible.get(fact.fact_id, ()):
            alone = self._alone(hit)
            if alone is not None and not _replaces(fact, alone):
                continue  # what the parse would confirm, if anything, is this: no replacement
            old = self._confirm(hit)
            if old is not None and _replaces(fact, old):
                return old
        return None

    def _newest_first(self, keys: set[str]) -> Iterator[_Hit]:
        seen: set[tuple[str, int]] = set()
        for hit in heapq.merge(*(self.by_key.get(k, []) for k in sorted(keys)),
                               key=lambda h: h.rank):
            if (hit.path, hit.line) not in seen:
                seen.add((hit.path, hit.line))
                yield hit

    def _one_line(self, hit: _Hit) -> ReviewFact | None:
        """The line read on its own as a Retain entry (cached: many new facts share lines), of
        its note's day (a fact's id is: a '- replaces:' item may name it)."""
        key = (hit.path, hit.line)
        if key not in self._facts:
            day = date.fromisoformat(hit.day) if hit.day else None
            fact = parse_entry(EntryLines(hit.line, (hit.text,)), hit.path, day)[0]
            self._facts[key] = None if fact is None else _line_fact(fact, hit)
        return self._facts[key]

    def _alone(self, hit: _Hit) -> ReviewFact | None:
        """The hit's fact with its period, read without parsing the file, when the line can
        only be a one-line item: the next line that is not blank is none, or starts at the
        margin after a blank line, or starts a bullet item or a heading at the margin (none of
        them a lazy continuation). Were the line a Retain item, parsing would give this fact;
        if it is not one, parsing gives none. None when that cannot be told so."""
        if hit.path not in self._texts:
            text = self.head.unparsed_text(hit.path)
            self._texts[hit.path] = None if text is None else text.split("\n")
        lines = self._texts[hit.path]
        if lines is None or hit.line > len(lines) or lines[hit.line - 1] != hit.text:
            return None
        at, blank = hit.line, False  # the index of the line after the hit's
        while at < len(lines) and not lines[at].strip():
            at, blank = at + 1, True
        if at < len(lines) and (lines[at][:1].isspace()
                                or not (blank or _ENDS_ITEM.match(lines[at]))):
            return None
        found = self._classes[hit.path]
        assert found is not None  # a hit is of a memory file
        mf = MemoryFile(hit.path, "", found[0], found[1])
        fact = entry_fact(EntryLines(hit.line, (hit.text,)), mf.path, mf.day)[0]
        return None if fact is None else ReviewFact.of(fact, mf, self.head.commit)

    def _confirm(self, hit: _Hit) -> ReviewFact | None:
        """The fact that really starts at the hit's line (its file parsed), if any."""
        parsed = self.head.get(hit.path)
        if parsed is None:
            return None
        fact = next((f for f in parsed.facts if f.start_line == hit.line), None)
        return ReviewFact.of(fact, parsed.file, self.head.commit) if fact else None


def _updatable_items(text: str) -> str:
    """The W and S list items of a text with their indented continuation lines: where the
    entities of the facts a range adds, and could supersede with, are written."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if _ITEM.match(line):
            inside = True
        elif not line[:1].isspace():
            inside = False
        if inside:
            out.append(line)
    return "\n".join(out)


def _later_day(hit: _Hit, fact: ReviewFact) -> bool:
    """Whether the line is from a later day than the new fact (the range backfilled history)."""
    return bool(fact.day and hit.day and hit.day > fact.day)


@functools.lru_cache(maxsize=8192)
def _words(text: str) -> frozenset[str]:
    """A line's content words for the lexical look-up: four letters or more, not a stop word
    or an entity, cut to four letters (a crude stem: 'hosts' meets 'host', 'moved' 'moves')."""
    plain = ENTITY_RE.sub(" ", text).casefold()
    return frozenset(w[:4] for w in _WORD.findall(plain) if w not in STOPWORDS)


def _pattern(slug: str) -> str:
    """An extended regular expression for a slug in any spelling that names one entity
    (docs/memory-format.md) (case by ``git grep -i``; '-', '_' and runs of them alike)."""
    parts = [p for p in re.split(r"[\s_\-]+", slug) if p]
    return "[-_]+".join("".join(c if c.isalnum() else f"[{c}]" for c in p) for p in parts)
