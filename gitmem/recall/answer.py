"""A recall request end to end: time flags and phrases resolved, as-of state chosen, results
ranked, and the JSON contract of docs/json.md assembled."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from gitmem.config import Config
from gitmem.domain import RecallMode, ResultKind, TimeWindow
from gitmem.embed.base import Embedder, EmbeddingError
from gitmem.embed.selection import Selection, fallback, select
from gitmem.errors import GitmemError, SearchUnavailable, UsageError
from gitmem.index.session import Session
from gitmem.index.store import BUSY, UNUSABLE, WORKTREE, Store
from gitmem.parse.textfold import query_terms
from gitmem.parse.timeparse import show_time
from gitmem.recall.asof import AsOf, as_of_seq, resolve_as_of
from gitmem.recall.ranking import Ranking
from gitmem.recall.search import (
    RecallQuery,
    Result,
    WordsSearched,
    parse_kinds,
    rank,
    resolve_entities,
    search_words,
)
from gitmem.recall.timing import WindowUsed, last_day, shown_dates, time_filters
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    from gitmem.index.signbits import SignBits

ALL_WEAK = ("every result is a weak match (under half of the words naming the query's topic, "
            "little semantic similarity): the memory likely holds nothing about this")
NO_TOPIC = ("{query!r} names nothing to search for (only question, stop or time words): "
            "these are the newest notes, newest first; add a word to search for, or a time "
            "phrase ('last week') or --since to list a window")
# How the results were chosen when the query named no topic (JSON ``listing``): what was written
# in the window, newest first; or without a window, the newest notes.
Listing = Literal["window", "recent"]


@dataclass(frozen=True)
class RecallRequest:
    query: str
    k: int | None = None
    since: str | None = None
    until: str | None = None
    around: str | None = None
    as_of: str | None = None
    entities: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    mode: RecallMode = "hybrid"
    committed: bool = False  # answer from HEAD alone, without the uncommitted layer
    verbose: bool = False  # repeat the hints that are otherwise given once per workspace


@dataclass(frozen=True)
class RecallFilters:
    """The filters a recall applied (``until`` is the last day included)."""

    since: str | None = None
    until: str | None = None
    as_of: str | None = None
    entity: tuple[str, ...] = ()
    kind: tuple[ResultKind, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"since": self.since, "until": self.until, "as_of": self.as_of,
                "entity": list(self.entity), "kind": list(self.kind)}


@dataclass(frozen=True)
class ProviderUsed:
    """The embedding provider that embedded the query, and whether it was the fallback."""

    name: str = "none"
    model: str | None = None
    fallback_used: bool = False
    # Why results are lexical when semantic search is not set up yet ('auto' found no model),
    # and how to turn it on: said in every answer, as a field, not as a warning
    notice: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "fallback_used": self.fallback_used,
                "notice": self.notice}


@dataclass
class RecallResponse:
    query: str
    mode: RecallMode
    filters: RecallFilters
    results: list[Result]
    warnings: list[str] = field(default_factory=list)
    time_window: WindowUsed | None = None
    provider: ProviderUsed = field(default_factory=ProviderUsed)
    listing: Listing | None = None  # no topic in the query: a listing by date, not a search

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "filters": self.filters.to_json(),
            "provider": self.provider.to_json(),
            "results": [r.to_json() for r in self.results],
            "warnings": self.warnings,
            "time_window": self.time_window.to_json() if self.time_window else None,
            "listing": self.listing,
        }


def _semantic_off(cfg: Config, reason: str | None, missing: bool) -> SearchUnavailable:
    if cfg.embed_provider == "none":
        why = "embed.provider is 'none'"
        how = "'gitmem config set embed.provider auto' (or local)"
    else:
        why = "no embedding model yet" if missing else str(reason)
        how = "'gitmem model pull' or 'gitmem config set embed.model FILE.gguf'"
    return SearchUnavailable.naming("{mode} semantic needs an embedding provider ({why}); {how} "
                                    "turns semantic search on (then 'gitmem index'); or use "
                                    "{mode} hybrid or lexical", why=why, how=how)


def answer(
    session: Session,
    req: RecallRequest,
    *,
    now: datetime | None = None,
    ranking: Ranking | None = None,
) -> RecallResponse:
    """The answer to ``req`` in ``session``'s workspace (``index.session``: a command run
    alone, or the warm process)."""
    ws, cfg = session.ws, session.cfg
    now = now or datetime.now(UTC)
    times = time_filters(req.query, req.since, req.until, req.around, now, cfg.around_days)
    window, text, time_window = times.window, times.text, times.used
    as_of = resolve_as_of(ws, req.as_of, now) if req.as_of is not None else None
    listing: Listing | None = None
    if not query_terms(text):
        if window is None and not query_terms(req.query):
            raise UsageError(
                f"query {req.query!r} has no searchable words; use words, ids, "
                "phrases, or a time phrase such as 'last week'"
            )
        listing = "window" if window is not None else "recent"
    kinds = parse_kinds(req.kinds)
    q = RecallQuery(
        text=text,
        k=req.k or cfg.recall_k,
        window=window,
        kinds=kinds,
        half_life_days=cfg.half_life_days,
        decay_floor=cfg.decay_floor,
        prefer=times.prefer,
        fade_days=times.fade_days,
    )
    warnings = list(cfg.warnings) + session.catch_up()
    if listing == "recent":
        warnings.append(NO_TOPIC.format(query=req.query))
    # A warm process embeds the query while it searches the words (``_QueryVector.pending``).
    semantic = (_QueryVector(ws, cfg, req, text, warnings, early=session.embeds_early)
                if text.strip() else None)
    try:
        results, mode = _search(session, q, req, as_of, semantic, ranking, warnings, now)
    except UNUSABLE as exc:  # damaged beyond its first page: rebuild once, then answer
        from gitmem.index.replay import index_workspace

        if semantic is not None:
            semantic.wait()  # the rebuild may embed, and fork its parsers: no thread beside it

        warnings.append(f"the index was unreadable ({exc}); rebuilt it")
        index_workspace(ws, cfg, force=True)
        results, mode = _search(session, q, req, as_of, semantic, ranking, warnings, now)
    except BUSY:
        raise GitmemError("the index is locked by a long update in another process; "
                          "try again in a moment") from None
    filtered_by = window if time_window and time_window.applied_as == "filter" else None
    filters = RecallFilters(
        since=show_time(filtered_by.start) if filtered_by else None,
        until=last_day(filtered_by.end) if filtered_by else None,
        as_of=as_of.shown if as_of else None,
        entity=req.entities,
        kind=kinds,
    )
    provider = semantic.provider_used() if semantic else ProviderUsed()
    return RecallResponse(req.query, mode, filters, results, warnings, time_window, provider,
                          listing)


def _search(session: Session, q: RecallQuery, req: RecallRequest, as_of: AsOf | None,
            semantic: _QueryVector | None, ranking: Ranking | None, warnings: list[str],
            now: datetime) -> tuple[list[Result], RecallMode]:
    with session.reading() as store:
        # what the index's content alone decides: a warm process counts it once per state
        backlog = partial(session.of_index, "committed_backlog", store.committed_backlog)
        found, seq, said = _state(store, req, as_of)
        q = replace(q, as_of_seq=seq)
        first = (_words_first(store, q, req.entities)
                 if found and semantic is not None and semantic.pending and req.mode != "semantic"
                 else None)
        qvec = semantic.usable_vector(store, backlog) if semantic else None
        mode: RecallMode = req.mode if qvec is not None else "lexical"
        if said:
            warnings.append(said)
        if not found:
            return [], mode
        if qvec is not None and req.as_of is not None:
            warnings.append("as of an earlier commit, text that is no longer current "
                            "is found lexically only (vectors cover current text)")
        # A warm process scans the vectors' sign bits in memory; a command alone asks vec0.
        bits = session.sign_bits() if qvec is not None else None
        results = _ranked(store, q, now, req.entities, qvec, mode, ranking, bits, first)
        if not results:
            from gitmem.recall.empty import why_empty  # only for an empty answer: start-up time

            warnings.extend(why_empty(store, session.ws, session.cfg, q,
                                      _left_out(store, req, session.cfg, seq),
                                      req.entities))
        elif all(r.weak for r in results):
            warnings.append(ALL_WEAK)
        return results, mode


def _state(store: Store, req: RecallRequest,
           as_of: AsOf | None) -> tuple[bool, int | None, str | None]:
    """Which indexed state answers: (False, None, why) when there is none, else (True, the
    seq of a commit for --as-of and --committed, or None for the current state: HEAD with the
    uncommitted layer, None)."""
    if as_of is not None:
        seq = as_of_seq(store, as_of)
        if seq is None:
            return False, None, f"the memory has no commit at or before {as_of.shown}"
        return True, seq, None
    if not req.committed or store.seq_of(WORKTREE) is None:
        return True, None, None
    last = store.last_commit(committed=True)
    if last is None:
        return False, None, ("the repository has no commits yet; without --committed, recall "
                             "reads the uncommitted memory files")
    return True, last[0], None


def _words_first(store: Store, q: RecallQuery, names: Sequence[str]) -> WordsSearched | None:
    """The query's words searched while its embedding is under way; None when that fails
    (ranking then searches them again, and fails where it always did)."""
    try:
        return search_words(store, q, resolve_entities(store, names))
    except GitmemError:
        return None


def _left_out(store: Store, req: RecallRequest, cfg: Config, seq: int | None) -> str | None:
    """Why uncommitted edits were not searched, when they were not. ``--as-of`` reads commits
    only: said when it asked about the last commit (HEAD, today), not about an earlier one."""
    if req.as_of is not None:
        last = store.last_commit(committed=True)
        return "--as-of (it reads commits)" if last is not None and last[0] == seq else None
    if req.committed:
        return "--committed"
    return None if store.get_meta("worktree") != "off" else "index.worktree = false"


def _embed_query(embedder: Embedder, text: str) -> bytes:
    from gitmem.embed.batch import embed_texts  # semantic only: not on a lexical path

    return embed_texts(embedder, [text], input_type="query")[0]


class _Embedding:
    """One query embedded on a thread of its own, while the request goes on (the worker
    process or the remote provider does the work; this thread only waits for it)."""

    def __init__(self, embedder: Embedder, text: str) -> None:
        self._vector: bytes | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(embedder, text),
                                        name="gitmem-query-embedding", daemon=True)
        self._thread.start()

    def _run(self, embedder: Embedder, text: str) -> None:
        try:
            self._vector = _embed_query(embedder, text)
        except BaseException as exc:  # handed to the request's thread by result()
            self._error = exc

    def done(self) -> None:
        self._thread.join()

    def result(self) -> bytes:
        """The vector, or the embedding's error raised here."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._vector is not None
        return self._vector


class _QueryVector:
    """Embeds the query with the configured provider, applying the provider failure rules.

    Without a provider: nothing is said when lexical was chosen (``none``); ``auto`` with no
    model yet gives a short ``notice`` with every answer (``provider.notice``: text output
    says it once per workspace, every time with ``verbose``);
    ``--mode semantic`` is an error (exit 4), never a lexical answer."""

    def __init__(self, ws: Workspace, cfg: Config, req: RecallRequest, text: str,
                 warnings: list[str], *, early: bool = False) -> None:
        """``early``: embed on a thread of its own and go on (``pending`` until it is asked
        for); a long-running process's request, whose embedder outlives it."""
        self.ws, self.cfg, self.warnings, self.mode = ws, cfg, warnings, req.mode
        self.embedder: Embedder | None = None
        self.fallback_used = False
        self.notice: str | None = None
        self.vector: bytes | None = None
        self._text = text
        self._job: tuple[_Embedding, Selection] | None = None
        if req.mode == "lexical":
            return
        try:
            sel = select(cfg)
        except EmbeddingError as exc:  # an explicitly named provider that cannot start
            self._fallback_or_fail(exc, text)
            return
        if sel.embedder is None:
            if req.mode == "semantic":
                raise _semantic_off(cfg, sel.reason, sel.missing)
            if cfg.embed_provider == "auto" and sel.hint:  # not set up yet: no problem
                self.notice = f"results are lexical: {sel.hint}"
            elif cfg.embed_provider != "none":  # configured, and failing: said every time
                warnings.append(f"{sel.reason}; results are lexical")
            return
        if early:
            self._job = (_Embedding(sel.embedder, text), sel)
            return
        self._embedded(sel, partial(_embed_query, sel.embedder, text))

    @property
    def pending(self) -> bool:
        """Still being embedded (``early``): nothing of it is known or said yet."""
        return self._job is not None

    def wait(self) -> None:
        """Until a pending embedding is done (its outcome is still taken by the next ask)."""
        if self._job is not None:
            self._job[0].done()

    def _settle(self) -> None:
        if self._job is not None:
            job, sel = self._job
            self._job = None
            self._embedded(sel, job.result)

    def _embedded(self, sel: Selection, vector: Callable[[], bytes]) -> None:
        """The query's vector from ``vector()``, or what its failure means (the rules above)."""
        assert sel.embedder is not None
        try:
            self.vector = vector()
            self.embedder = sel.embedder
        except EmbeddingError as exc:
            if sel.explicit:
                self._fallback_or_fail(exc, self._text)
            elif self.mode == "semantic":
                raise SearchUnavailable(f"semantic search failed: {exc}") from exc
            else:
                self.warnings.append(f"semantic search failed ({exc}); results are lexical")

    def _fallback_or_fail(self, exc: EmbeddingError, text: str) -> None:
        try:
            backup = fallback(self.cfg)
        except EmbeddingError as second:
            raise SearchUnavailable(f"{exc}; the fallback failed too: {second}") from exc
        if backup is None:
            raise SearchUnavailable(str(exc)) from exc
        try:
            self.vector = _embed_query(backup, text)
        except EmbeddingError as second:
            raise SearchUnavailable(f"{exc}; the fallback failed too: {second}") from exc
        self.embedder, self.fallback_used = backup, True
        self.warnings.append(
            f"{self.cfg.embed_provider} failed ({exc}); used the fallback provider {backup.name}"
        )

    def usable_vector(self, store: Store,
                      backlog: Callable[[], tuple[int, int]] | None = None) -> bytes | None:
        """The query vector, if the index holds vectors made by the same model. ``backlog``:
        ``store.committed_backlog``, or what remembers it."""
        self._settle()
        if self.vector is None or self.embedder is None:
            return None
        if store.get_meta("embed_fingerprint") != self.embedder.fingerprint:
            missing = (f"the index has no embeddings from {self.embedder.name} "
                       f"({self.embedder.model}) yet")
            if self.mode == "semantic":
                raise SearchUnavailable.naming("{mode} semantic: {missing}; run 'gitmem index' "
                                               "to add them", missing=missing)
            self.warnings.append(f"{missing} ({self._fill()}); results are lexical")
            return None
        dims = int(store.get_meta("embed_dims") or 0)
        if dims and len(self.vector) // 4 != dims:  # a server that changed its output size
            reason = (f"{self.embedder.name} returned a query vector of "
                      f"{len(self.vector) // 4} dimensions; the index holds {dims}-dimension "
                      "vectors from the same settings")
            if self.cfg.embed_provider not in ("auto", "local"):
                raise SearchUnavailable(reason)
            self.warnings.append(f"{reason}; results are lexical")
            return None
        # Uncommitted edits are embedded by the next 'gitmem index' or commit; until then they
        # are found by their words, as expected during a session: not worth a warning.
        pending, total = (backlog or store.committed_backlog)()
        if pending > 0:
            self.warnings.append(
                f"{pending} of {total} items are not embedded yet ({self._fill()}); they are "
                "found by their words"
            )
        return self.vector

    def _fill(self) -> str:
        """Pending work resumes by itself: a background run is started unless a gitmem process
        is at it already (or index.background is off); says which."""
        from gitmem.index.run import FILL_SAID, pending_fill

        return FILL_SAID[pending_fill(self.ws, self.cfg, start=True)]

    def provider_used(self) -> ProviderUsed:
        self._settle()
        if self.embedder is None:
            return ProviderUsed(notice=self.notice)
        return ProviderUsed(self.embedder.name, self.embedder.model, self.fallback_used)


def _ranked(
    store: Store,
    q: RecallQuery,
    now: datetime,
    names: Sequence[str],
    qvec: bytes | None,
    mode: RecallMode,
    ranking: Ranking | None,
    bits: SignBits | None,
    first: WordsSearched | None = None,
) -> list[Result]:
    """``first``: the words already searched (``_words_first``), with these entities resolved."""
    keys = first.flt.entity_keys if first is not None else resolve_entities(store, names)
    return rank(store, q, now, keys, qvec=qvec, mode=mode, ranking=ranking, bits=bits,
                first=first)


__all__ = ["RecallRequest", "RecallResponse", "TimeWindow", "answer", "shown_dates"]
