"""A memory whose opinions move over several reflect commits, and its ``gitmem review``: what
``tests/test_review_render.py`` renders and ``docs/review-comment.png`` shows.

Each day of 2025-12-02..04 commits a daily note, then ``gitmem reflect`` for that day and a
commit of what it wrote (fixed dates: the same commit ids every time). The notes contradict
"@Peter prefers concise WhatsApp replies" (0.90) and back "@The-Castle is a reliable gateway
host" (0.30), so the review of the seed commit..HEAD has both move, plus a new opinion, facts
about two entities and a new entity page.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from gitmem.parse.retain import fact_id
from gitmem.reflect.reflect import reflect
from gitmem.workspace import open_workspace
from testing.cli import gitmem
from testing.repo import commit_all, make_repo, write

SEED_DAY = "2025-12-01"
CONCISE = "Prefers concise WhatsApp replies."
RELIABLE = "Is a reliable gateway host."
SEED_OPINIONS = """# Opinions

## @Peter prefers concise WhatsApp replies
<!-- opinion: o-3fa9c2e1 -->
- confidence: 0.90
- updated: 2025-12-01
- evidence:
  - for {concise} memory/2025-12-01.md#L7 (c=0.90)

## @The-Castle is a reliable gateway host
<!-- opinion: o-5ca57e11 -->
- confidence: 0.30
- updated: 2025-12-01
- evidence:
  - for {reliable} memory/2025-12-01.md#L8 (c=0.30)
"""

DAYS = {
    "2025-12-02": ("O(c=0.1) @Peter: Prefers concise WhatsApp replies.",
                   "O(c=1.0) @The-Castle: Is a reliable gateway host.",
                   "W @Peter @The-Castle: Moved the gateway host to The Castle.",
                   "B: Sent @Peter the long release notes; he read all of them."),
    "2025-12-03": ("O(c=0.1) @Peter: Prefers concise WhatsApp replies (asked for detail).",
                   "O(c=1.0) @The-Castle: Is a reliable gateway host (no restarts).",
                   "S @The-Castle: No ECONNRESET since the move."),
    "2025-12-04": ("O(c=1.0) @The-Castle: Is a reliable gateway host (a week up).",
                   "O(c=0.8) @warelay: Reconnects cleanly after a network drop.",
                   "W @The-Castle: The Castle has a UPS now."),
}


def note(day: str, *entries: str) -> str:
    """A daily note: its first entry is on line 6."""
    return f"# {day}\n\nA working day.\n\n## Retain\n" + "".join(f"- {e}\n" for e in entries)


def opinion_id(text: str, subject: str) -> str:
    """The fact id of the ``O`` entry ``O @subject: text`` in the seed note."""
    return fact_id("opinion", text, (subject,), date.fromisoformat(SEED_DAY))


def reflected_history(parent: Path) -> tuple[Path, str]:
    """The repository (in ``parent``) and its seed commit: the base of the review."""
    repo = make_repo(parent)
    write(repo, "MEMORY.md", "# Memory\n\n## People\n- Peter is the user.\n")
    write(repo, "bank/opinions.md", SEED_OPINIONS.format(
        concise=opinion_id(CONCISE, "Peter"), reliable=opinion_id(RELIABLE, "The-Castle")))
    write(repo, "bank/entities/Peter.md", "# Peter\n\nThe user. Lives in Copenhagen.\n")
    write(repo, f"memory/{SEED_DAY}.md", note(
        SEED_DAY, "W @Peter: Lives in Copenhagen.", f"O(c=0.9) @Peter: {CONCISE}",
        f"O(c=0.3) @The-Castle: {RELIABLE}"))
    base = commit_all(repo, "seed", f"{SEED_DAY}T21:00:00+00:00")
    for day, entries in DAYS.items():
        write(repo, f"memory/{day}.md", note(day, *entries))
        commit_all(repo, f"memory: {day}", f"{day}T21:00:00+00:00")
        ws, cfg = open_workspace(repo)
        reflect(ws, cfg, since=day)
        commit_all(repo, f"reflect: {day}", f"{day}T23:00:00+00:00")
    return repo, base


def review_markdown(repo: Path, base: str) -> str:
    """What ``gitmem review BASE..HEAD`` prints, citations linked as the Action links them."""
    code, out, err = gitmem("-C", str(repo), "review", f"{base}..HEAD",
                            "--link-base", "https://github.com/example/agent-memory")
    assert code == 0, err
    return out
