"""Evidence recall under token budgets: methods answer, an agent reads, we count.

Every method is asked each question and the ranked results are read as an agent would: in rank
order, each result's cited line range (the file's lines ``start_line..end_line``, each line
costing its characters plus its newline, 4 characters a token) until the budget is spent. The unit
read is a line, which is a turn: the result that crosses the budget is truncated to its lines that
still fit, and reading stops at the first line that does not fit. Lines are paid for every time
they are delivered (overlapping chunks cost twice). A question's evidence recall is the share of
its evidence turns whose line was read; in the ``turns+observations`` variant, reading an
observation line also covers the turns that observation cites. Reported: mean recall per budget,
overall and per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop), plus recall over
all returned results with no budget, how often a method ran out of results before the budget, and
mean result size.
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.locomo.dataset import CATEGORIES, BenchError
from bench.locomo.methods import METHODS, BenchWorkspace, QuestionFailed, Span

DEFAULT_BUDGETS = (500, 1000, 2000, 4000)
CHARS_PER_TOKEN = 4


def read_order(spans: Sequence[Span], workspace: BenchWorkspace) -> list[tuple[float, str, int]]:
    """Every delivered line in reading order with the tokens spent once it is read."""
    spent = 0.0
    out: list[tuple[float, str, int]] = []
    for path, start, end in spans:
        for number in range(start, end + 1):
            spent += (len(workspace.line(path, number)) + 1) / CHARS_PER_TOKEN
            out.append((spent, path, number))
    return out


def evidence_lines(workspace: BenchWorkspace) -> dict[tuple[str, int], set[str]]:
    """(path, line) -> the turns whose evidence reading that line delivers."""
    cover: dict[tuple[str, int], set[str]] = {}
    for dia, info in workspace.sidecar["turns"].items():
        cover.setdefault((info["path"], info["line"]), set()).add(dia)
    for obs in workspace.sidecar["observations"]:
        cover.setdefault((obs["path"], obs["line"]), set()).update(obs["evidence"])
    return cover


def recall_at(
    order: Sequence[tuple[float, str, int]],
    cover: dict[tuple[str, int], set[str]],
    evidence: Sequence[str],
    budget: float | None,
) -> float:
    """Share of ``evidence`` covered by the lines read within ``budget`` tokens (None: all)."""
    wanted = set(evidence)
    found: set[str] = set()
    for spent, path, number in order:
        if budget is not None and spent > budget:
            break  # reading stops at the first line that does not fit
        found |= cover.get((path, number), set()) & wanted
    return len(found) / len(wanted)


@dataclass
class Tally:
    """Running sums for one method."""

    budgets: tuple[int, ...]
    recall: dict[int | None, dict[int, list[float]]] = field(default_factory=dict)
    exhausted: dict[int, int] = field(default_factory=dict)
    results: int = 0
    result_tokens: float = 0.0
    empty: int = 0
    failed: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(
        self,
        category: int,
        order: list[tuple[float, str, int]],
        scores: dict[int | None, float],
        n_results: int,
    ) -> None:
        for budget, value in scores.items():
            self.recall.setdefault(budget, {}).setdefault(category, []).append(value)
        total = order[-1][0] if order else 0.0
        for budget in self.budgets:
            if total < budget:
                self.exhausted[budget] = self.exhausted.get(budget, 0) + 1
        self.results += n_results
        self.result_tokens += total
        self.empty += n_results == 0

    def summary(self, questions: int) -> dict[str, Any]:
        def mean(values: Sequence[float]) -> float:
            return round(sum(values) / len(values), 4) if values else 0.0

        def by_budget(categories: Sequence[int]) -> dict[str, float]:
            return {
                _budget_key(b): mean(
                    [v for c in categories for v in self.recall.get(b, {}).get(c, [])]
                )
                for b in [*self.budgets, None]
            }

        return {
            "overall": by_budget(list(CATEGORIES)),
            "per_category": {name: by_budget([c]) for c, name in CATEGORIES.items()},
            "ran_out_before_budget": {
                str(b): round(self.exhausted.get(b, 0) / max(questions, 1), 4) for b in self.budgets
            },
            "mean_results": round(self.results / max(questions, 1), 2),
            "mean_tokens_per_result": round(self.result_tokens / max(self.results, 1), 1),
            "questions_without_results": self.empty,
            "questions_failed": len(self.failed),
            "failures": self.failed[:10],
            "seconds": round(self.seconds, 2),
        }


def _budget_key(budget: int | None) -> str:
    return "all" if budget is None else str(budget)


def evaluate(
    workspaces: Sequence[BenchWorkspace],
    methods: Sequence[str],
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    details: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Evidence recall of each method per budget, overall and per category.

    ``details``, when given, receives one record per (question, method).
    """
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise BenchError(f"unknown method(s) {', '.join(unknown)}; known: {', '.join(METHODS)}")
    tallies = {m: Tally(tuple(budgets)) for m in methods}
    first = next((w for w in workspaces if w.sidecar["questions"]), None)
    setup: dict[str, float] = {}
    for name in methods:  # fail fast, before any long loop, when a method cannot run here
        started = time.monotonic()
        if first is not None:
            with contextlib.suppress(QuestionFailed):
                METHODS[name](first.sidecar["questions"][0]["question"], first)
        setup[name] = round(time.monotonic() - started, 2)
    questions = 0
    for workspace in workspaces:
        cover = evidence_lines(workspace)
        for q in workspace.sidecar["questions"]:
            questions += 1
            for name in methods:
                tally = tallies[name]
                started = time.monotonic()
                try:
                    spans = METHODS[name](q["question"], workspace)
                except QuestionFailed as exc:
                    tally.failed.append(f"{workspace.sidecar['sample_id']} qa[{q['index']}]: {exc}")
                    spans = []
                tally.seconds += time.monotonic() - started
                order = read_order(spans, workspace)
                scores: dict[int | None, float] = {
                    b: recall_at(order, cover, q["evidence"], b) for b in [*budgets, None]
                }
                tally.add(q["category"], order, scores, len(spans))
                if details is not None:
                    details.append(
                        {
                            "sample_id": workspace.sidecar["sample_id"],
                            "index": q["index"],
                            "category": q["category"],
                            "method": name,
                            "recall": {_budget_key(b): v for b, v in scores.items()},
                            "results": len(spans),
                        }
                    )
    per_category = Counter(
        CATEGORIES[q["category"]] for w in workspaces for q in w.sidecar["questions"]
    )
    return {
        "questions": questions,
        "questions_per_category": {c: per_category.get(c, 0) for c in CATEGORIES.values()},
        "budgets": list(budgets),
        "setup_seconds": setup,
        "methods": {m: tallies[m].summary(questions) for m in methods},
    }


def markdown(report: dict[str, Any], at: int = 2000) -> str:
    budgets = report["budgets"]
    head = " | ".join(f"{b:,}" for b in budgets)
    lines = [
        f"Evidence recall, {report['questions']} questions (categories 1-4), "
        "results read in rank order until the budget (tokens) is spent:",
        "",
        f"| method | {head} | all results |",
        "|---" * (len(budgets) + 2) + "|",
    ]
    for name, m in report["methods"].items():
        cells = " | ".join(f"{m['overall'][str(b)]:.3f}" for b in budgets)
        lines.append(f"| {name} | {cells} | {m['overall']['all']:.3f} |")
    at = at if at in budgets else budgets[len(budgets) // 2]
    counts = report["questions_per_category"]
    cats = " | ".join(f"{c} ({counts[c]})" for c in CATEGORIES.values())
    lines += ["", f"Per category at {at:,} tokens:", "", f"| method | {cats} |"]
    lines.append("|---" * (len(CATEGORIES) + 1) + "|")
    for name, m in report["methods"].items():
        cells = " | ".join(f"{m['per_category'][c][str(at)]:.3f}" for c in CATEGORIES.values())
        lines.append(f"| {name} | {cells} |")
    lines += [
        "",
        f"| method | results/question | tokens/result | ran out before {at:,} | failed | s |",
    ]
    lines.append("|---|---|---|---|---|---|")
    for name, m in report["methods"].items():
        out = m["ran_out_before_budget"].get(str(at), 0.0)
        lines.append(
            f"| {name} | {m['mean_results']} | {m['mean_tokens_per_result']} | {out:.3f} | "
            f"{m['questions_failed']} | {m['seconds']} |"
        )
    return "\n".join(lines)
