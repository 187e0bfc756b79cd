"""A recall request end to end: time flags and phrases resolved, as-of state chosen, results
ranked, and the JSON contract of SPEC §8 assembled."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from gitmem import api
from gitmem.config import Config
from gitmem.errors import UsageError
from gitmem.model import TimeWindow
from gitmem.search import RecallQuery, Result, parse_kinds, rank, resolve_entities
from gitmem.store import open_store
from gitmem.textfold import query_terms
from gitmem.timeparse import as_of_instant, build_window, find_query_window
from gitmem.workspace import Workspace


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
    mode: str = "hybrid"


@dataclass
class RecallResponse:
    query: str
    mode: str
    filters: dict[str, Any]
    results: list[Result]
    warnings: list[str] = field(default_factory=list)
    time_window: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "filters": self.filters,
            "provider": {"name": "none", "model": None, "fallback_used": False},
            "results": [r.to_json() for r in self.results],
            "warnings": self.warnings,
            "time_window": self.time_window,
        }


def _show(t: datetime | None) -> str | None:
    if t is None:
        return None
    return t.date().isoformat() if t.time() == datetime.min.time() else t.isoformat()


def _as_of_bounds(value: str, now: datetime) -> tuple[datetime, str]:
    """(the last instant included, the last event day included) for --as-of."""
    instant = as_of_instant(value, now)
    if instant.time() == datetime.min.time() and instant != now:
        instant -= timedelta(microseconds=1)  # a date, month or year: up to its very end
    return instant, instant.date().isoformat()


def answer(
    ws: Workspace, cfg: Config, req: RecallRequest, *, now: datetime | None = None
) -> RecallResponse:
    now = now or datetime.now(UTC)
    window = build_window(
        since=req.since, until=req.until, around=req.around, now=now, around_days=cfg.around_days
    )
    text = req.query
    time_window: dict[str, Any] | None = None
    if window is not None:
        time_window = {
            "source": "flags",
            "phrase": None,
            "since": _show(window.start),
            "until": _show(window.end),
        }
    else:
        found = find_query_window(req.query, now, around_days=cfg.around_days)
        if found is not None:
            window, phrase = found
            text = req.query.replace(phrase, " ").strip()
            time_window = {
                "source": "query",
                "phrase": phrase,
                "since": _show(window.start),
                "until": _show(window.end),
            }
    if not query_terms(text) and window is None:
        raise UsageError(
            f"query {req.query!r} has no searchable words; use words, ids, "
            "phrases, or a time phrase such as 'last week'"
        )
    kinds = parse_kinds(req.kinds)
    q = RecallQuery(
        text=text,
        k=req.k or cfg.recall_k,
        window=window,
        kinds=kinds,
        half_life_days=cfg.half_life_days,
    )
    warnings = list(cfg.warnings) + api.ensure_index(ws, cfg)
    store = open_store(ws.index_path, readonly=True)
    try:
        if req.as_of is not None:
            instant, day = _as_of_bounds(req.as_of, now)
            seq = store.seq_at(instant.isoformat())
            if seq is None:
                warnings.append(f"the memory has no commit at or before {_show(instant)}")
                results: list[Result] = []
            else:
                q = replace(q, as_of_seq=seq, as_of_day=day)
                results = _ranked(store, q, now, req.entities)
        else:
            results = _ranked(store, q, now, req.entities)
    finally:
        store.close()
    if req.mode != "lexical":
        warnings.append("semantic search is off (no embedding provider); results are lexical")
    filters = {
        "since": time_window["since"] if time_window else None,
        "until": time_window["until"] if time_window else None,
        "as_of": req.as_of,
        "entity": list(req.entities),
        "kind": list(kinds),
    }
    return RecallResponse(req.query, "lexical", filters, results, warnings, time_window)


def _ranked(store: Any, q: RecallQuery, now: datetime, names: Sequence[str]) -> list[Result]:
    keys = resolve_entities(store, names)
    return rank(store, q, now, keys)


__all__ = ["RecallRequest", "RecallResponse", "TimeWindow", "answer"]
