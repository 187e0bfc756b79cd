"""What front ends show of a recall answer: the minimum score and the citation footer."""

from __future__ import annotations

from dataclasses import replace

from gitmem.config import Config
from gitmem.recall.answer import RecallFilters, RecallResponse
from gitmem.recall.present import citations_on, present
from gitmem.recall.search import Result

LINES = [f"line {n} about the gateway host and other things to fill the note" for n in range(30)]


def result(snippet: str, score: float, start: int = 3, end: int = 40) -> Result:
    return Result(kind="note", content=snippet, snippet=snippet, path="memory/2025-11-27.md",
                  start_line=start, end_line=end, commit="c" * 40,
                  source=f"memory/2025-11-27.md#L{start}-L{end}", timestamp="2025-11-27",
                  event_start=None, event_end=None, recorded_at=None, entities=(),
                  confidence=None, fact_id=None, score=score)


def response(*results: Result) -> RecallResponse:
    return RecallResponse(query="gateway host", mode="lexical", filters=RecallFilters(),
                          results=list(results))


def test_footer_keeps_the_snippet_within_700_characters() -> None:
    long = "\n".join(LINES)[:700]
    short = "Moved the gateway host to The Castle."
    shown = present(response(result(long, 0.9), result(short, 0.5, 14, 14)), citations=True)
    first, second = shown.results
    assert first.snippet.endswith("\n\nSource: memory/2025-11-27.md#L3-L40")
    assert len(first.snippet) <= 700 and first.snippet.startswith("line ")
    assert second.snippet == f"{short}\n\nSource: memory/2025-11-27.md#L14-L14"
    assert first.content == long  # only the snippet carries the footer


def test_min_score_and_nothing_to_change() -> None:
    answer = response(result("a", 0.9), result("b", 0.2999), result("c", 0.29999))
    # compared as shown: 0.29999 is printed (and kept) as 0.3
    assert [r.snippet for r in present(answer, min_score=0.3).results] == ["a", "c"]
    assert present(answer) is answer


def test_which_front_ends_cite() -> None:
    auto, on, off = (replace(Config(), mcp_citations=v) for v in ("auto", "on", "off"))
    assert (citations_on(auto, "mcp"), citations_on(auto, "cli")) == (True, False)
    assert (citations_on(on, "mcp"), citations_on(on, "cli")) == (True, True)
    assert (citations_on(off, "mcp"), citations_on(off, "cli")) == (False, False)
