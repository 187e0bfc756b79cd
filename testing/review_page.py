"""The ``gitmem review`` comment as a reviewer sees it on GitHub: its Markdown rendered by
GitHub's own renderer (cmark-gfm, through the ``cmarkgfm`` bindings) into a page that turns each
```` ```mermaid ```` block into a diagram with Mermaid (pinned in
``integrations/render-toolchain``, ``npm ci``; ``GITMEM_RENDER_TOOLCHAIN`` names another
folder) and styles it with GitHub's Markdown CSS, shown in headless Chromium
(``testing.chromium``).

``python -m testing.review_page docs/review-comment.png`` regenerates the picture the README
shows: the review of ``reflected_history``, a memory whose opinions three reflect commits moved.
"""

from __future__ import annotations

import html
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cmarkgfm
from cmarkgfm.cmark import Options

from testing.chromium import Browser, chromium, find_chromium

REPO = Path(__file__).resolve().parent.parent


def toolchain_dir() -> Path:
    return Path(os.environ.get("GITMEM_RENDER_TOOLCHAIN")
                or REPO / "integrations" / "render-toolchain")


def find_toolchain() -> tuple[Path, Path] | str:
    """(mermaid.min.js, github-markdown.css), or why they are not there."""
    modules = toolchain_dir() / "node_modules"
    files = (modules / "mermaid" / "dist" / "mermaid.min.js",
             modules / "github-markdown-css" / "github-markdown-light.css")
    for path in files:
        if not path.is_file():
            return (f"{path} is missing: install the render toolchain with "
                    "'bash integrations/render-toolchain/install' (npm ci)")
    return files


def missing() -> str | None:
    """Why the comment cannot be rendered here (no Chromium, no toolchain), or None."""
    for found in (find_chromium(), find_toolchain()):
        if isinstance(found, str):
            return found
    return None


# GitHub keeps the raw HTML the comment uses (<details>, <summary>, <sub>; the hidden marker is
# an HTML comment); cmark-gfm's tagfilter extension (on in github_flavored_markdown_to_html)
# neutralises the tags GitHub filters (<script>, <iframe>, ...). Memory text in the comment is
# escaped by gitmem itself (review_markdown.inline).
GFM_OPTIONS = Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_GITHUB_PRE_LANG


def comment_html(markdown: str, mermaid_js: Path, css: Path) -> str:
    """The comment as a page: GitHub's Markdown HTML in GitHub's comment styles, with a script
    that renders its Mermaid blocks and leaves the outcome in ``window.reviewRendered``."""
    body = cmarkgfm.github_flavored_markdown_to_html(markdown, options=GFM_OPTIONS)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gitmem review</title>
<link rel="stylesheet" href="{html.escape(css.as_uri())}">
<style>body {{ margin: 0; background: #fff; }}
.markdown-body {{ box-sizing: border-box; max-width: 900px; padding: 16px 24px; }}</style>
</head><body><article class="markdown-body">
{body}
</article>
<script src="{html.escape(mermaid_js.as_uri())}"></script>
<script>{RENDER_SCRIPT}</script>
</body></html>
"""


# What GitHub does with a ```mermaid block (cmark-gfm writes <pre lang="mermaid"><code>): the
# block becomes a diagram. The promise settles once every diagram rendered or one failed.
RENDER_SCRIPT = """
window.reviewRendered = (async () => {
  const blocks = document.querySelectorAll('pre[lang="mermaid"] > code');
  for (const code of blocks) {
    const chart = document.createElement('pre');
    chart.className = 'mermaid';
    chart.textContent = code.textContent;
    code.parentElement.replaceWith(chart);
  }
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: 'default' });
  await mermaid.run({ querySelector: 'pre.mermaid' });
  return { ok: true, blocks: blocks.length };
})().catch((e) => ({ ok: false, error: String(e && e.message || e) }));
"""

# The rendered page, read back: every table's cells, and every diagram's bars with the label of
# the category each belongs to (xychart-beta horizontal: categories on the left axis, bars
# growing to the right; positions in page pixels, so they compare across elements).
READ_SCRIPT = """
(() => {
  const box = (el) => { const b = el.getBoundingClientRect();
    return { x: b.x, y: b.y, width: b.width, height: b.height }; };
  const tables = [...document.querySelectorAll('.markdown-body table')].map((t) =>
    [...t.rows].map((r) => [...r.cells].map((c) => c.textContent.trim())));
  const charts = [...document.querySelectorAll('pre.mermaid')].map((pre) => {
    const svg = pre.querySelector('svg');
    if (!svg) return { role: null, title: null, bars: [], labels: [], ticks: [] };
    const texts = (sel) => [...svg.querySelectorAll(sel)].map((t) =>
      ({ text: t.textContent.trim(), ...box(t) }));
    return {
      role: svg.getAttribute('aria-roledescription'),
      title: (svg.querySelector('.chart-title text') || {}).textContent || null,
      bars: [...svg.querySelectorAll('.plot [class^="bar-plot"] rect')].map(box),
      labels: texts('.left-axis .label text'),
      ticks: texts('.top-axis .label text, .bottom-axis .label text'),
    };
  });
  const items = [...document.querySelectorAll('.markdown-body li')].map((li) =>
    li.textContent.trim());
  return { tables, charts, items, nestedLists: document.querySelectorAll('li ul, li ol').length };
})()
"""


@dataclass(frozen=True)
class Box:
    text: str
    x: float
    y: float
    width: float
    height: float

    @property
    def middle(self) -> float:
        return self.y + self.height / 2


@dataclass(frozen=True)
class Chart:
    """One diagram as rendered: its SVG's role (Mermaid's error diagram says 'error'), title,
    bars (top to bottom), the category labels and the value axis ticks."""

    role: str | None
    title: str | None
    bars: tuple[Box, ...]
    labels: tuple[Box, ...]
    ticks: tuple[Box, ...]

    def bar_of(self, label: str) -> Box:
        """The bar in ``label``'s row."""
        (row,) = (b for b in self.labels if b.text == label)
        return min(self.bars, key=lambda bar: abs(bar.middle - row.middle))

    def value_at(self, x: float) -> float:
        """The value the value axis gives to page position ``x`` (its ticks: numbers)."""
        first, last = self.ticks[0], self.ticks[-1]
        x0, x1 = first.x + first.width / 2, last.x + last.width / 2
        v0, v1 = float(first.text), float(last.text)
        return v0 + (x - x0) * (v1 - v0) / (x1 - x0)

    def value_of(self, label: str) -> float:
        """What the bar in ``label``'s row shows: where its right end sits on the value axis."""
        bar = self.bar_of(label)
        return self.value_at(bar.x + bar.width)


@dataclass(frozen=True)
class RenderedComment:
    """The page as rendered: each table's rows of cell texts, the diagrams, the text of every
    list item, and how many lists sit inside a list item."""

    tables: tuple[tuple[tuple[str, ...], ...], ...]
    charts: tuple[Chart, ...]
    items: tuple[str, ...]
    nested_lists: int

    def table_with(self, header: str) -> tuple[tuple[str, ...], ...]:
        """The table whose first row holds ``header``: its rows, header row first."""
        (table,) = (t for t in self.tables if t and header in t[0])
        return table


def _boxes(raw: list[dict[str, Any]]) -> tuple[Box, ...]:
    return tuple(Box(b.get("text", ""), b["x"], b["y"], b["width"], b["height"]) for b in raw)


def render_comment(browser: Browser, markdown: str, folder: Path) -> RenderedComment:
    """Render ``markdown`` as GitHub would and read the page back. Raises AssertionError, with
    Mermaid's message, when a diagram did not render."""
    found = find_toolchain()
    assert not isinstance(found, str), found
    page = folder / "comment.html"
    page.write_text(comment_html(markdown, *found), encoding="utf-8")
    browser.open(page)
    outcome = browser.evaluate("window.reviewRendered")
    assert outcome["ok"], f"Mermaid could not render the chart: {outcome['error']}"
    raw = browser.evaluate(READ_SCRIPT)
    charts = tuple(Chart(c["role"], c["title"], _boxes(sorted(c["bars"], key=lambda b: b["y"])),
                         _boxes(c["labels"]), _boxes(sorted(c["ticks"], key=lambda b: b["x"])))
                   for c in raw["charts"])
    tables = tuple(tuple(tuple(row) for row in t) for t in raw["tables"])
    return RenderedComment(tables, charts, tuple(raw["items"]), raw["nestedLists"])


def main(argv: list[str]) -> int:
    """``python -m testing.review_page PNG``: the review of ``reflected_history`` as a picture,
    made with git and gitmem sealed in a scratch folder (fixed dates: the same commit ids)."""
    from testing.gitenv import TEST_GITCONFIG, hermetic_environ
    from testing.review_history import reflected_history, review_markdown

    if len(argv) != 1:
        print("usage: python -m testing.review_page PNG", file=sys.stderr)
        return 2
    binary = find_chromium()
    why = binary if isinstance(binary, str) else missing()
    if why or isinstance(binary, str):
        print(why, file=sys.stderr)
        return 1
    png = Path(argv[0]).resolve()
    with tempfile.TemporaryDirectory(prefix="gitmem-review-page-") as tmp:
        folder = Path(tmp)
        (folder / "home").mkdir()
        (folder / "home" / ".gitconfig").write_text(TEST_GITCONFIG, encoding="utf-8")
        saved = dict(os.environ)
        os.environ.clear()
        os.environ.update(hermetic_environ(folder / "home", base=saved))
        repo, base = reflected_history(folder)
        with chromium(binary, folder / "profile") as browser:
            render_comment(browser, review_markdown(repo, base), folder)
            browser.screenshot(png)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
