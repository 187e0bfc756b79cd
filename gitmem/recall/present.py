"""What a front end shows of a recall answer: a minimum score, bounded contents, and citations
in snippets.

``recall`` is the one function the command line and the MCP server call, so both print the
same JSON. Citations follow OpenClaw's ``memory_search``: a ``Source: path#Lx-Ly`` footer ends
each snippet (``[mcp] citations``: ``auto`` puts it in MCP results only, ``on`` also in the
command line's, ``off`` nowhere). The snippet stays within the 700-character limit, footer
included.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from gitmem.config import Config
from gitmem.index.session import Session
from gitmem.parse.textfold import query_terms
from gitmem.recall.answer import RecallRequest, RecallResponse, answer
from gitmem.recall.ranking import SNIPPET_CHARS, make_snippet
from gitmem.recall.search import Result

FrontEnd = Literal["cli", "mcp"]


def citations_on(cfg: Config, front: FrontEnd) -> bool:
    """Whether snippets end with a ``Source:`` footer for this front end."""
    return cfg.mcp_citations == "on" or (cfg.mcp_citations == "auto" and front == "mcp")


def recall(session: Session, req: RecallRequest, *, min_score: float | None = None,
           front: FrontEnd = "cli") -> RecallResponse:
    """``answer`` as a front end shows it: results under ``min_score`` left out, contents
    bounded, snippets cited when the configuration says so."""
    cfg = session.cfg
    return present(answer(session, req), min_score=min_score,
                   citations=citations_on(cfg, front),
                   max_content=cfg.recall_max_content_chars)


def bounded(results: list[Result], max_content: int) -> list[Result]:
    """Each result's content cut at ``max_content`` characters and marked ``truncated``: an
    agent never receives megabytes because one note held a pasted log (docs/json.md); ``gitmem get``
    reads the cited lines whole."""
    if all(len(r.content) <= max_content for r in results):
        return results
    return [r if len(r.content) <= max_content else
            replace(r, content=r.content[:max_content], truncated=True) for r in results]


def present(response: RecallResponse, *, min_score: float | None = None,
            citations: bool = False, max_content: int | None = None) -> RecallResponse:
    results, warnings = response.results, response.warnings
    if max_content is not None:
        results = bounded(results, max_content)
    if min_score is not None:
        results = [r for r in results if round(r.score, 4) >= min_score]
        if response.results and not results:  # an empty answer says why
            best = max(r.score for r in response.results)
            count = len(response.results)
            warnings = [*warnings, f"{count} result{'s' if count > 1 else ''} scored below "
                        f"--min-score {min_score:g} (the best scored {best:.3f})"]
    if citations:
        terms = query_terms(response.query)
        cited = []
        for r in results:
            footer = f"\n\nSource: {r.source}"
            body, _, _ = make_snippet(r.snippet.strip(), terms,
                                      limit=max(1, SNIPPET_CHARS - len(footer)))
            cited.append(replace(r, snippet=body + footer))
        results = cited
    if results is response.results:
        return response
    return replace(response, results=results, warnings=warnings)
