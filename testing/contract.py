"""The keys of ``gitmem recall --json``, and sample memory text the tests share.

docs/json.md: the keys of the example ``recall --json`` output. The contract only adds fields; the
additions so far are listed here so that a new key is a deliberate, reviewed change.
"""

from __future__ import annotations

TOP_KEYS = {"query", "mode", "filters", "provider", "results", "warnings"}
# docs/json.md: the window applied (from flags or the query); a listing by date (no topic words)
TOP_KEYS_ADDED = {"time_window", "listing"}
FILTER_KEYS = {"since", "until", "as_of", "entity", "kind"}
PROVIDER_KEYS = {"name", "model", "fallback_used",
                 "notice"}  # added: why results are lexical and how to change it (issue 37)
RESULT_KEYS = {
    "kind",
    "content",
    "snippet",
    "path",
    "start_line",
    "end_line",
    "commit",
    "source",
    "timestamp",
    "event_start",
    "event_end",
    "recorded_at",
    "entities",
    "confidence",
    "fact_id",
    "score",
    "uncommitted",  # added (docs/json.md: add fields, never rename): from index --worktree
    "superseded_by",  # added: the citation of a later fact that replaced this one (issue 8)
    "superseded_basis",  # added: declared (by its writer) or rule (issue 17)
    "superseded_attribute",  # added: the attribute both statements set (issue 38)
    "superseded_reason",  # added: the words that made the mark (issue 38)
    "newer",  # added: a hint, a later statement that may have changed it (issue 38)
    "opinion",  # added: for bank/opinions.md results, opinion_id, updated and evidence
    "weak",  # added: few of the query's words and little semantic lift (issue 16)
    "truncated",  # added: content cut at recall.max_content_chars (issue 37)
    "importance",  # added: the <!-- importance: N --> on its lines, or null (issue 42)
    "triggers",  # added: the <!-- trigger: ... --> phrases on its lines (issue 42)
}

# A daily note with one well-formed Retain entry.
GOOD_DAILY = "memory/2025-11-27.md"
GOOD_TEXT = "## Retain\n- W @Peter: Moved the gateway host to The Castle.\n"
