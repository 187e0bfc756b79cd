"""``gitmem recall``, the command agents and plugins run most: a module of its own, so that a
recall builds no other command's options (:class:`gitmem.front.cli.LazyGroup`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from gitmem.domain import RecallMode
from gitmem.front.cli import CONTEXT, autostart_after, session_of
from gitmem.front.terminal import echo, print_json, style

if TYPE_CHECKING:
    from gitmem.recall.search import Result


@click.command(context_settings=CONTEXT)
@click.argument("query")
@click.option(
    "--k",
    "k",
    type=click.IntRange(1, 1000),
    default=None,
    help="How many results (default 8, or recall.k in config).",
)
@click.option("--since", help="Event time (or the daily note's date) on or after: 30d, 2w, "
              "2025-11, 2025-11-27, today, 'last week', 'March 6, 2025'...")
@click.option("--until", help="Event time (or the daily note's date) on or before (a month or "
              "year means its end).")
@click.option("--around", help="A window of +-3 days (recall.around_days) around a date.")
@click.option(
    "--as-of",
    "as_of",
    help="Answer from the memory as it was recorded by then: a time (2025-11 means the end of "
    "November 2025) or a commit. Record time only: add --until to limit event time too.",
)
@click.option(
    "--entity",
    "entities",
    multiple=True,
    help="Only results about this entity (repeatable; aliases resolve).",
)
@click.option(
    "--kind", "kinds", multiple=True,
    help="W, B, O, S (or note for plain text); repeatable, or a list: W,O."
)
@click.option(
    "--mode",
    type=click.Choice(["hybrid", "lexical", "semantic"]),
    default="hybrid",
    show_default=True,
    help="Search mode; without an embedding provider hybrid is lexical and semantic is an "
    "error (exit status 4).",
)
@click.option("--min-score", "min_score", type=click.FloatRange(0.0, 1.0), default=None,
              help="Leave out results scoring below this (scores are in [0, 1]).")
@click.option("--verbose", "-v", is_flag=True,
              help="Repeat hints that are otherwise given once per workspace.")
@click.option(
    "--committed",
    is_flag=True,
    help="Answer from HEAD alone (by default uncommitted edits of memory files are "
    "searched too, marked uncommitted).",
)
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON (a stable contract: fields are added, never renamed).")
@click.pass_context
def recall(
    ctx: click.Context,
    query: str,
    k: int | None,
    since: str | None,
    until: str | None,
    around: str | None,
    as_of: str | None,
    entities: tuple[str, ...],
    kinds: tuple[str, ...],
    mode: RecallMode,  # click.Choice of its names
    min_score: float | None,
    verbose: bool,
    committed: bool,
    as_json: bool,
) -> None:
    """Find memory about QUERY, each result cited as path#Lline.

    Date phrases in QUERY ("around Nov 27", "last week", "11月27日ごろ", "先週") become a time
    window when no --since/--until/--around is given; --json says which window was applied.
    """
    from gitmem.recall.answer import RecallRequest
    from gitmem.recall.present import recall as recall_answer
    from gitmem.workspace import first_time

    req = RecallRequest(query=query, k=k, since=since, until=until, around=around, as_of=as_of,
                        entities=entities, kinds=kinds, mode=mode, committed=committed,
                        verbose=verbose)
    session = session_of(ctx)
    ws, cfg = session.ws, session.cfg
    response = recall_answer(session, req, min_score=min_score)
    if as_json:
        print_json(response.to_json())
    else:
        tw = response.time_window
        if tw and tw.source == "query":
            span = f"{tw.since or '...'} .. {tw.until or '...'}"
            near = "near" if tw.since and tw.until else "in"  # "before today": ... .. day
            how = f"preferring results {near}" if tw.applied_as == "boost" else "only"
            echo(f"{how} {span} ('{tw.phrase}')", err=True)
        elif tw and response.listing == "window":  # the flags' window, and no words to search
            echo(f"listing what was written {tw.since or '...'} .. {tw.until or '...'}, newest "
                 "first (no words to search for)", err=True)
        print_results(response.results, response.warnings)
        notice = response.provider.notice
        if notice and (req.verbose or first_time(ws, "lexical")):  # JSON has it every time
            echo(f"note: {notice}", err=True)
    autostart_after(ctx, ws, cfg)


def print_results(results: list[Result], warnings: list[str]) -> None:
    """Recall's results as text: a bold score line, the citation, the snippet."""
    from gitmem.recall.timing import shown_dates

    if not results:
        echo("no results")
    for r in results:
        ents = " ".join(f"@{e}" for e in r.entities)
        conf = f" c={r.confidence:.2f}" if r.confidence is not None else ""
        weak = "  (weak match)" if r.weak else ""
        echo(style(f"{r.score:.3f}  {r.kind}{conf}  {shown_dates(r)}  {ents}{weak}", bold=True))
        echo(style(r.source + ("  (uncommitted)" if r.uncommitted else ""), fg="cyan"))
        if r.superseded_by:
            why = ("declared" if r.superseded_basis == "declared" else
                   ": ".join(p for p in (r.superseded_attribute, r.superseded_reason) if p))
            echo(style(f"replaced by {r.superseded_by} ({r.superseded_on}"
                       f"{'; ' + why if why else ''})", fg="yellow"))
        elif r.newer:
            about = f" about @{r.newer.about}" if r.newer.about else ""
            echo(style(f"newer{about}: {r.newer.source} ({r.newer.date})", fg="yellow"))
        for e in r.opinion.evidence if r.opinion else ():
            c = "" if e.confidence is None else f" (c={e.confidence:.2f})"
            echo(f"  {e.stance:<7} {e.source}{c}  {e.fact_id}")
        for line in r.snippet.split("\n"):  # splitlines() would turn \x0c or \x85 into breaks
            echo(f"  {line}")
        if r.truncated:
            echo(style(f"  (truncated: longer than {len(r.content):,} characters; 'gitmem get "
                       f"{r.source}' prints it whole)", fg="yellow"))
        echo("")
    for w in warnings:
        echo(f"note: {w}", err=True)


