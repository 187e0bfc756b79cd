"""The review comment as a reviewer sees it: ``gitmem review`` of a memory whose opinions moved
over three reflect commits, its Markdown rendered by GitHub's renderer (cmark-gfm), its Mermaid
chart drawn by Mermaid in headless Chromium (``testing.review_page``). The tables are tables
with the rows the comment wrote, and the chart is an SVG bar chart whose bars sit, in order, at
the confidences the table gives.

Without Chromium or the render toolchain these tests fail under CI (``CI=true``) and are
skipped with the reason elsewhere.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from gitmem.parse.retain import fact_id
from testing.chromium import Browser, chromium, find_chromium
from testing.review_history import reflected_history, review_markdown
from testing.review_page import Chart, RenderedComment, missing, render_comment

DEC2, DEC3 = date(2025, 12, 2), date(2025, 12, 3)
CLOSE = 0.01  # a hundredth of the axis: about 6 pixels of the bars' 600


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Browser]:
    why = missing()
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs Chromium and the render toolchain: {why}")
        pytest.skip(why)
    binary = find_chromium()
    assert not isinstance(binary, str)
    with chromium(binary, tmp_path / "chromium-profile") as running:
        yield running


@pytest.fixture
def comment(tmp_path: Path) -> str:
    repo, base = reflected_history(tmp_path)
    return review_markdown(repo, base)


def moves(rendered: RenderedComment) -> list[tuple[str, float, float]]:
    """(row number, before, after) of each opinion row whose confidence moved, as the
    rendered Opinions table shows them."""
    _, *rows = rendered.table_with("opinion")
    found = []
    for number, _, confidence, *_ in rows:
        before, after = confidence.split(" → ")
        if "—" not in (before, after) and before != after:
            found.append((number, float(before), float(after)))
    return found


def check_chart(chart: Chart, moved: list[tuple[str, float, float]]) -> None:
    """The chart is Mermaid's bar chart (not its error diagram) with one bar per confidence
    the table gives, in the table's order, each ending at that confidence on the value axis."""
    assert chart.role == "xychart", f"not a bar chart but {chart.role!r}"
    expected = [(f"{n} {when}", value) for n, before, after in moved
                for when, value in (("before", before), ("after", after))]
    assert len(chart.bars) == len(expected)
    assert [b.text for b in sorted(chart.labels, key=lambda b: b.middle)] == \
        [label for label, _ in expected]
    shown = [(label, round(chart.value_of(label), 3)) for label, _ in expected]
    for (label, value), (_, drawn) in zip(expected, shown, strict=True):
        assert abs(drawn - value) < CLOSE, f"bar {label!r} shows {drawn}, the table {value}: {shown}"
    assert {chart.bar_of(label) for label, _ in expected} == set(chart.bars)  # one bar each


def test_review_comment_renders_as_github_shows_it(browser: Browser, comment: str,
                                                    tmp_path: Path) -> None:
    rendered = render_comment(browser, comment, tmp_path)

    opinions = rendered.table_with("opinion")
    assert opinions == (
        ("#", "opinion", "confidence", "change", "evidence"),
        ("1", "@The-Castle is a reliable gateway host", "0.30 → 0.72", "▲ +0.42", "+3 for"),
        ("2", "@Peter prefers concise WhatsApp replies", "0.90 → 0.60", "▼ −0.30", "+2 for"),
        ("3", "@warelay Reconnects cleanly after a network drop", "— → 0.80", "added",
         "+1 for"),
    )
    assert rendered.table_with("page")[1:] == (
        ("bank/entities/Peter.md", "modified", "+28 −0", "generated block"),
        ("bank/entities/The-Castle.md", "added", "+35 −0", ""),
    )
    assert rendered.table_with("class")[1:] == (
        ("bank/opinions.md", "bank", "modified", "+16 −4"),
        ("memory/2025-12-02.md", "daily", "added", "+9 −0"),
        ("memory/2025-12-03.md", "daily", "added", "+8 −0"),
        ("memory/2025-12-04.md", "daily", "added", "+8 −0"),
    )
    facts = [t for t in rendered.tables if t[0] == ("", "kind", "fact", "source")]
    assert [len(t) - 1 for t in facts] == [6, 4, 1]  # @The-Castle, @Peter, @warelay
    assert facts[2][1][:3] == ("+", "opinion", "Reconnects cleanly after a network drop.")
    # Each evidence line is one item that keeps its sign ("- + for" would nest a list instead).
    assert rendered.nested_lists == 0
    assert [i.split(" · ")[0] for i in rendered.items if i.startswith("+ for")][:2] == [
        f"+ for {fact_id('opinion', 'Is a reliable gateway host.', ('The-Castle',), DEC2)} "
        "(c=1.00): Is a reliable gateway host.",
        f"+ for {fact_id('opinion', 'Is a reliable gateway host (no restarts).', ('The-Castle',), DEC3)} "
        "(c=1.00): Is a reliable gateway host (no restarts).",
    ]

    (chart,) = rendered.charts
    assert chart.title == "Confidence before and after (by row)"
    check_chart(chart, moves(rendered))
    assert moves(rendered) == [("1", 0.30, 0.72), ("2", 0.90, 0.60)]  # the reflect rule's steps


def test_a_bar_at_the_wrong_confidence_fails_the_check(browser: Browser, comment: str,
                                                       tmp_path: Path) -> None:
    """The check can fail: one bar moved from 0.60 to 0.65 in the chart's source, or a chart
    Mermaid cannot draw, and the rendered comment no longer passes."""
    bars = re.search(r"^    bar \[(.*)\]$", comment, re.M)
    assert bars is not None and bars.group(1) == "0.30, 0.72, 0.90, 0.60"
    wrong = comment.replace("bar [0.30, 0.72, 0.90, 0.60]", "bar [0.30, 0.72, 0.90, 0.65]")
    rendered = render_comment(browser, wrong, tmp_path)
    with pytest.raises(AssertionError, match=r"'2 after' shows 0\.65, the table 0\.6\b"):
        check_chart(rendered.charts[0], moves(rendered))

    broken = comment.replace("xychart-beta horizontal", "xychart-beta sideways")
    with pytest.raises(AssertionError, match="Mermaid could not render the chart"):
        render_comment(browser, broken, tmp_path)
