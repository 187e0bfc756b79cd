"""Ten days of ordinary notes, as a new user writes them (issue 18): November 2026, a daily note
every few days with prose, a standup list and a Retain section, a person's page for Alice with
an alias, and opinions that swing (Nadia on Rust through November, Bob on async updates).

Used by tests (what reflect makes of them) and by ``bench/bench_reflect.py`` (the reviewer
table, recall@3 of ``QUESTIONS`` before and after reflect). Each day is one commit at 21:00 UTC.
"""

from __future__ import annotations

from pathlib import Path

from testing.repo import notes_history

MEMORY = """# Memory

## Work
- I work on the platform team; the ingest service is ours.
- Standups are on Tuesdays and Thursdays.
"""

ALICE_PAGE = """---
aliases: [Alice Meyer]
---
# Alice

Tech lead on the platform team. Prefers written proposals over meetings.
"""

DAYS: dict[str, str] = {
    "2026-11-03": """# 2026-11-03

First day keeping notes in gitmem. Kicked off the ingest rewrite with @Alice.

## Standup
- Alice is back from Lisbon and owns the ingest rewrite.
- Bob asked for async updates instead of the daily call.

## Retain
- W @Alice: Joined the platform team as tech lead; she leads the @ingest rewrite.
- W @ingest: The ingest service drops messages larger than 1 MB.
- O(c=0.8) @Bob: Bob prefers async updates; he declined all optional meetings this month.
- O(c=0.7) @Nadia: Thinks @Rust is the right choice for the ingest workers.
""",
    "2026-11-05": """# 2026-11-05

Paired with Nadia on the Rust prototype all afternoon. The clean build takes four minutes.
田中さん from the Tokyo office joined the gateway call.

## Retain
- W @田中: 東京オフィスのゲートウェイ担当。
- W @Nadia: The Rust ingest prototype handles 40k messages per second on one core.
- O(c=0.4) @Nadia: Thinks @Rust is the right choice for the ingest workers, but the builds hurt.
- B @Alice: Reviewed the ingest backpressure design with Alice.
""",
    "2026-11-09": """# 2026-11-09

Quiet Monday. Wrote the migration plan for the ingest queue.

## Retain
- W @Alice: Alice presents the ingest rewrite at the Berlin meetup on 2026-12-08.
- W @ingest: The new queue is Redpanda; the Kafka cluster goes away in December.
- O(c=0.9) @Bob: Prefers async updates; the weekly written summary replaced the call.
- B: Wrote the queue migration plan (docs/ingest-queue.md).
""",
    "2026-11-11": """# 2026-11-11

Long review of the Rust workers. Nadia is less sure after the borrow-checker fight.

## Standup
- 田中さん confirmed the gateway cut-over for November 20.
- Nadia wants another week before deciding on Rust.

## Retain
- W @田中: Gateway cut-over scheduled for 2026-11-20.
- O(c=0.3) @Nadia: Thinks @Rust is the right choice for the ingest workers; not sure any more.
- W @Nadia: Nadia moved to the Copenhagen office.
""",
    "2026-11-13": """# 2026-11-13

Friday. Demo of the ingest prototype went well; Bob liked the dashboard.

## Retain
- B @ingest: Demoed the ingest prototype to the team.
- W @Bob: Bob runs the on-call rota for December.
- O(c=0.7) @Alice: Prefers written design docs over slide decks.
""",
    "2026-11-17": """# 2026-11-17

Nadia ran the benchmark suite on the Rust workers: p99 latency halved.

## Retain
- O(c=0.9) @Nadia: Thinks @Rust is the right choice for the ingest workers after the benchmarks.
- W @ingest: p99 latency of the Rust workers is 12 ms, down from 25 ms.
- W @Alice: Alice is on holiday from 2026-11-24 to 2026-11-28.
""",
    "2026-11-19": """# 2026-11-19

Gateway prep with 田中さん. Bob skipped the sync again and sent a written update.

## Retain
- B @田中: 田中さんとゲートウェイの切り替え手順を確認した。
- O @Bob: Prefers async updates over meetings.
- W @ingest: The 1 MB limit is lifted in the @Redpanda queue (10 MB now).
""",
    "2026-11-23": """# 2026-11-23

The gateway cut-over slipped by two days; nothing else moved.

## Retain
- W @田中: ゲートウェイの切り替えは11月22日に完了した。
- O(c=0.5) @Nadia: Thinks @Rust is the right choice for the ingest workers, with reservations.
- B: Cleaned up the old Kafka dashboards.
""",
    "2026-11-26": """# 2026-11-26

Planning for December. Bob wants the on-call handbook written down.

## Retain
- O(c=0.6) @Bob: Bob thinks the on-call handbook should live in the repository.
- W @Bob: Bob is on call from 2026-12-01.
- B @ingest: Wrote the ingest runbook for on-call.
""",
    "2026-11-30": """# 2026-11-30

Alice is back. We agreed to ship the Rust workers in December.

## Retain
- W @Alice: Alice approved shipping the Rust ingest workers in December.
- O(c=0.85) @Nadia: Thinks @Rust is the right choice for the ingest workers.
- O(c=0.9) @Bob: Prefers async updates; still no meetings.
""",
}

# Ordinary questions and the note that answers each (recall@3: one of the first three results
# is from that file). Reflect's pages must not push these notes out.
QUESTIONS: tuple[tuple[str, str], ...] = (
    ("who leads the ingest rewrite", "memory/2026-11-03.md"),
    ("largest message the ingest service accepts", "memory/2026-11-03.md"),
    ("how fast is the Rust ingest prototype", "memory/2026-11-05.md"),
    ("when does Alice present at the Berlin meetup", "memory/2026-11-09.md"),
    ("which queue replaces Kafka", "memory/2026-11-09.md"),
    ("when is the gateway cut-over", "memory/2026-11-11.md"),
    ("where does Nadia work now", "memory/2026-11-11.md"),
    ("who runs the on-call rota in December", "memory/2026-11-13.md"),
    ("p99 latency of the Rust workers", "memory/2026-11-17.md"),
    ("when is Alice on holiday", "memory/2026-11-17.md"),
    ("on-call handbook", "memory/2026-11-26.md"),
    ("did we decide to ship the Rust workers", "memory/2026-11-30.md"),
)


def build(parent: Path, name: str = "ten-days") -> Path:
    """The repository: a first commit with MEMORY.md and Alice's page, then one per day."""
    return notes_history(parent, name, {"MEMORY.md": MEMORY, "bank/entities/Alice.md": ALICE_PAGE},
                         "2026-11-02T20:00:00+00:00", DAYS)
