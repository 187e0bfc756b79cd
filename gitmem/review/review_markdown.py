"""A review as a pull request comment: headings, tables, citations, and a Mermaid chart of the
confidence changes that GitHub renders.

Memory text is untrusted Markdown: table cells have their pipes and line breaks escaped, HTML is
neutralised, and every ``@entity`` is written as code, so that a comment about ``@Peter`` does not
notify a GitHub user called Peter. The first line is a hidden marker an Action uses to find and
update its own comment.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from gitmem.domain import Citation
from gitmem.parse.retain import ENTITY_RE
from gitmem.review.review_model import (
    EvidenceChange,
    OpinionDiff,
    Review,
    ReviewFact,
    plural,
)

MARKER = "<!-- gitmem-review -->"
CHART_MAX = 10  # opinions in the chart (two bars each): the largest moves
FACT_ROWS_MAX = 200  # fact rows in the comment; the JSON output has them all
ROWS_MAX = 100  # rows of the other long tables (superseded facts, files)
FOLD_ROWS = 15  # longer fact or file lists are folded into <details>
FOLD_OPINIONS = 5  # so is the evidence of more opinions than this
TEXT_MAX = 240


class _Refs:
    """Citations as code, or as links to the cited lines at their commit (GitHub's
    ``/blob/<commit>/<path>#L12-L14``) when the repository's address is known."""

    def __init__(self, link_base: str | None, prefix: str) -> None:
        self.base = link_base.rstrip("/") if link_base else None
        self.prefix = prefix

    def __call__(self, at: Citation) -> str:
        if self.base is None or at.commit is None:
            return f"`{at}`"
        lines = (f"L{at.start_line}" if at.start_line == at.end_line
                 else f"L{at.start_line}-L{at.end_line}")
        return f"[`{at}`]({self.base}/blob/{at.commit}/{quote(self.prefix + at.path)}#{lines})"


def render(review: Review, link_base: str | None = None) -> str:
    r = review.range
    if not review.memory_changed:  # one line (after the hidden marker)
        return f"{MARKER}\n{review.summary()}\n"
    ref = _Refs(link_base, review.prefix)
    out = [MARKER, f"### Memory review: `{r.spec}`", ""]
    out += [_headline(review), ""]
    out += _opinions(review, ref)
    out += _facts(review, ref)
    out += _superseded(review, ref)
    out += _pages(review)
    out += _files(review)
    out += _warnings(review)
    out.append(f"<sub>gitmem review · {plural(r.commits, 'commit')} · `{r.base[:7]}..{r.head[:7]}`"
               f" · `gitmem review {r.spec} --format json` gives all of it as data</sub>")
    return "\n".join(out) + "\n"


def _headline(review: Review) -> str:
    return "> " + " · ".join(review.counts())


# -- opinions ----------------------------------------------------------------------------------


def _opinions(review: Review, ref: _Refs) -> list[str]:
    if not review.opinions:
        return []
    out = ["#### Opinions", "", "| # | opinion | confidence | change | evidence |",
           "| --: | --- | --- | --- | --- |"]
    for n, op in enumerate(review.opinions, start=1):
        out.append(f"| {n} | {cell(op.statement)} | {_conf(op.confidence_before)} → "
                   f"{_conf(op.confidence_after)} | {_move(op)} | {_evidence_count(op)} |")
    out.append("")
    out += chart(review.opinions)
    details = [line for n, op in enumerate(review.opinions, start=1)
               for line in _opinion_detail(n, op, ref)]
    return out + _fold(f"The evidence behind each of the {len(review.opinions)} opinions",
                       details, len(review.opinions) > FOLD_OPINIONS)


def _conf(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


MERGE_SAID = {"flagged": "merged from two machines; the next reflect recomputes it",
              "recomputed": "merged, recomputed by reflect"}


def _move(op: OpinionDiff) -> str:
    said = f" ({MERGE_SAID[op.merge]})" if op.merge else ""
    hand = (f"merged by hand into `{op.same_as}`" if op.same_as and op.same_as != op.same_as_before
            else f"no longer merged into `{op.same_as_before}`"
            if op.same_as_before and not op.same_as else "")
    said += f" ({hand})" if hand else ""
    if op.status != "changed":
        return op.status + said
    delta = op.delta
    if delta is None:
        return ("confidence set" if op.confidence_after is not None
                else "confidence cleared") + said
    if delta == 0:
        return MERGE_SAID[op.merge] if op.merge else hand or (
            "edited" if op.statement_before else "evidence only")
    return f"{'▲ +' if delta > 0 else '▼ −'}{abs(delta):.2f}{said}"


def _evidence_count(op: OpinionDiff) -> str:
    parts = []
    for stance in ("for", "against"):
        n = sum(e.stance == stance for e in op.evidence_added)
        if n:
            parts.append(f"+{n} {stance}")
    if op.evidence_removed:
        parts.append(f"−{len(op.evidence_removed)} dropped")
    return ", ".join(parts) or "none new"


def chart(opinions: tuple[OpinionDiff, ...]) -> list[str]:
    """A Mermaid ``xychart-beta`` bar chart: each moved opinion's confidence before and after,
    side by side, labelled with its row number in the table (short, plain labels: Mermaid's
    quoted strings cannot hold quotes)."""
    moved = [(n, op) for n, op in enumerate(opinions, start=1)
             if op.status == "changed" and op.delta]
    if not moved:
        return []
    shown = sorted(sorted(moved, key=lambda m: -abs(m[1].delta or 0))[:CHART_MAX])
    labels = ", ".join(f'"{n} before", "{n} after"' for n, _ in shown)
    values = ", ".join(f"{op.confidence_before:.2f}, {op.confidence_after:.2f}"
                       for _, op in shown)
    title = "Confidence before and after (by row)"
    if len(moved) > len(shown):
        title = f"Confidence before and after: the {len(shown)} largest moves"
    # Horizontal: the labels sit one under the other, so they never overlap.
    return ["```mermaid", "xychart-beta horizontal", f'    title "{title}"',
            f"    x-axis [{labels}]", '    y-axis "confidence" 0 --> 1', f"    bar [{values}]",
            "```", ""]


def _opinion_detail(n: int, op: OpinionDiff, ref: _Refs) -> list[str]:
    out = [f"**{n}. {inline(op.statement)}** · `{op.opinion_id}` · {op.status} · {ref(op.at)}",
           ""]
    if op.statement_before:
        out.append(f"- statement was: {inline(op.statement_before)}")
    if op.status == "changed":
        updated = (f" (updated {op.updated_before or '—'} → {op.updated_after or '—'})"
                   if op.updated_before != op.updated_after else "")
        out.append(f"- confidence {_conf(op.confidence_before)} → "
                   f"{_conf(op.confidence_after)}{updated}")
    else:
        added = op.status == "added"
        confidence = op.confidence_after if added else op.confidence_before
        day = op.updated_after if added else op.updated_before
        out.append(f"- {'' if added else 'was '}confidence {_conf(confidence)}, "
                   f"updated {day or '—'}")
    out += [_evidence_line(e, "+", ref) for e in op.evidence_added]
    out += [_evidence_line(e, "−", ref) for e in op.evidence_removed]
    if op.same_as and op.same_as != op.same_as_before:
        out.append(f"- a person marked it the same as `{op.same_as}` (`- same as:`): the next "
                   "`gitmem reflect` applies its evidence to that opinion, and sends the "
                   "entries that match it there")
    elif op.same_as_before and not op.same_as:
        out.append(f"- the `same as: {op.same_as_before}` line was removed: it is an opinion "
                   "of its own again")
    if op.merge == "flagged":
        out.append("- both machines changed it since their common ancestor; the merge kept "
                   "both sides' evidence, and the next `gitmem reflect` recomputes the "
                   "confidence from it")
    elif op.merge == "recomputed":
        out.append("- merged from two machines, recomputed by reflect from both sides' "
                   "evidence (the rule of docs/opinions-file.md, from their common "
                   "ancestor's confidence)")
    elif op.status == "changed" and op.delta and not op.evidence_added:
        out.append("- no new evidence: the confidence was edited by hand")
    out.append("")
    return out


def _evidence_line(e: EvidenceChange, sign: str, ref: _Refs) -> str:
    c = f" (c={e.confidence:.2f})" if e.confidence is not None else ""
    # "- + for" would be a list in a list item (GFM: "+ " starts one), showing no sign at all.
    mark = "\\+" if sign == "+" else sign
    head = f"- {mark} {e.stance} `{e.fact_id}`{c}"
    if e.text is not None and e.found is not None:
        return f"{head}: {inline(e.text)} · {ref(e.found)}"
    if sign == "−":
        return f"{head} · was `{e.cited_as}`"
    return f"{head} · `{e.cited_as}` (no such fact there at this revision)"


# -- facts -------------------------------------------------------------------------------------


def _facts(review: Review, ref: _Refs) -> list[str]:
    if not (review.facts_added or review.facts_removed):
        return []
    rows = 0
    body: list[str] = []
    for group in review.entities:
        if rows >= FACT_ROWS_MAX:
            break
        body += [f"**`@{group.entity}`** (+{len(group.added)} −{len(group.removed)})", "",
                 "| | kind | fact | source |", "| --- | --- | --- | --- |"]
        for sign, facts in (("+", group.added), ("−", group.removed)):
            for fact in facts:
                body.append(_fact_row(sign, fact, ref))
                rows += 1
        body.append("")
    loose = ([("+", f) for f in review.facts_added if not f.entities]
             + [("−", f) for f in review.facts_removed if not f.entities])
    if loose and rows < FACT_ROWS_MAX:
        body += ["**No entity**", "", "| | kind | fact | source |", "| --- | --- | --- | --- |"]
        body += [_fact_row(sign, fact, ref) for sign, fact in loose]
        rows += len(loose)
        body.append("")
    total = sum(len(g.added) + len(g.removed) for g in review.entities) + len(loose)
    if rows < total:
        body += [f"… and {total - rows} more rows: see `--format json`.", ""]
    summary = (f"facts +{len(review.facts_added)} −{len(review.facts_removed)} about "
               f"{plural(len(review.entities), 'entity', 'entities')}")
    return ["#### Facts by entity", "", *_fold(summary, body, rows > FOLD_ROWS)]


def _fact_row(sign: str, fact: ReviewFact, ref: _Refs) -> str:
    return f"| {sign} | {fact.kind} | {cell(fact.text)} | {ref(fact.at)} |"


def _superseded(review: Review, ref: _Refs) -> list[str]:
    if not review.superseded:
        return []
    rows = [f"| {cell(s.old.text)} · {ref(s.old.at)} | {cell(s.new.text)} · {ref(s.new.at)} |"
            for s in review.superseded]
    body = ["| was | now |", "| --- | --- |", *_capped(rows), ""]
    return ["#### Superseded facts", "",
            "Older facts still in the memory that a newer fact about the same entities replaces.",
            "", *_fold(plural(len(rows), "superseded fact"), body, len(rows) > FOLD_ROWS)]


def _capped(rows: list[str], most: int = ROWS_MAX) -> list[str]:
    if len(rows) <= most:
        return rows
    return [*rows[:most], "", f"… and {len(rows) - most} more: see `--format json`."]


# -- pages, files, warnings --------------------------------------------------------------------

_WHERE = {"generated": "generated block", "human": "human text",
          "both": "generated block and human text", "blank": "human text (blank lines)",
          None: ""}


def _pages(review: Review) -> list[str]:
    if not review.pages:
        return []
    out = ["#### Entity pages", "", "| page | change | lines | where |",
           "| --- | --- | --- | --- |"]
    for page in review.pages:
        out.append(f"| `{page.path}` | {page.status} | +{page.lines_added} −{page.lines_removed}"
                   f" | {_WHERE[page.where]} |")
    return [*out, ""]


def _files(review: Review) -> list[str]:
    """The changed memory files the entity pages table does not list already."""
    others = [f for f in review.files if f not in review.pages]
    if not others:
        return []
    body = ["| file | class | change | lines |", "| --- | --- | --- | --- |"]
    body += _capped([f"| `{f.path}` | {f.file_class} | {f.status} | +{f.lines_added} "
                     f"−{f.lines_removed} |" for f in others])
    return ["#### Memory files", "",
            *_fold(plural(len(others), "memory file") + " changed", [*body, ""],
                   len(others) > FOLD_ROWS)]


def _warnings(review: Review) -> list[str]:
    if not review.warnings:
        return []
    out = ["#### Warnings", ""]
    out += [f"- `{w.location}`: {inline(w.message)}" for w in review.warnings]
    return [*out, ""]


def _fold(summary: str, body: list[str], fold: bool) -> list[str]:
    if not fold:
        return body
    return ["<details>", f"<summary>{summary}</summary>", "", *body, "</details>", ""]


# -- escaping ----------------------------------------------------------------------------------


def inline(text: str) -> str:
    """Memory text as one line of Markdown: HTML neutralised, ``@entities`` as code (no GitHub
    mention), long text shortened."""
    flat = " ".join(text.split())
    if len(flat) > TEXT_MAX:
        flat = flat[:TEXT_MAX - 1].rstrip() + "…"
    flat = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return ENTITY_RE.sub(_entity_code, flat)


def _entity_code(m: re.Match[str]) -> str:
    slug = m.group(1).rstrip(".")  # a trailing '.' ends the sentence, not the slug
    return f"`@{slug}`" + "." * (len(m.group(1)) - len(slug))


def cell(text: str) -> str:
    """``inline`` for a table cell: pipes escaped too."""
    return inline(text).replace("|", "\\|")
