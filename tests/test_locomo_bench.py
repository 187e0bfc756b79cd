"""The LoCoMo retrieval benchmark (bench/locomo/) on a tiny LoCoMo-shaped conversation."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bench.locomo.build import build
from bench.locomo.dataset import BenchError
from bench.locomo.evaluate import evaluate, evidence_lines, markdown, read_order, recall_at
from bench.locomo.methods import MethodUnavailable, load_workspaces
from testing.repo import git

NOW = datetime(2024, 1, 1, tzinfo=UTC)

CONVERSATION: dict[str, Any] = {
    "sample_id": "conv-t",
    "conversation": {
        "speaker_a": "Alice",
        "speaker_b": "Bob",
        "session_1_date_time": "9:05 am on 3 March, 2023",
        "session_1": [
            {"speaker": "Alice", "dia_id": "D1:1", "text": "Morning Bob, how was your weekend?"},
            {
                "speaker": "Bob",
                "dia_id": "D1:2",
                "text": "Great: we adopted a greyhound called Zephyr!",
                "img_url": ["https://example.invalid/dog.jpg"],
                "blip_caption": "a photo of a grey dog on a sofa",
            },
            {"speaker": "Alice", "dia_id": "D1:3", "text": "Lovely news, congratulations."},
        ],
        "session_2_date_time": "7:40 pm on 3 March, 2023",
        "session_2": [
            {"speaker": "Alice", "dia_id": "D2:1", "text": "I finally repaired my violin bow."},
            {"speaker": "Bob", "dia_id": "D2:2", "text": "Nice work!\nPlay me something."},
        ],
        # LoCoMo's conv-26 has date keys for sessions that do not exist.
        "session_3_date_time": "1:00 pm on 9 March, 2023",
    },
    "qa": [
        {
            "question": "Which greyhound got adopted?",
            "answer": "Zephyr",
            "evidence": ["D1:2"],
            "category": 4,
        },
        {
            "question": "What did Alice repair after Bob's news?",
            "answer": 2023,
            "evidence": ["D1:2; D2:1"],
            "category": 1,
        },
        {"question": "Is Alice musical?", "answer": "Likely yes", "evidence": [], "category": 3},
        {
            "question": "When was the bow repaired?",
            "answer": "3 March 2023",
            "evidence": ["D:2:1", "D7:7"],
            "category": 2,
        },
        {
            "question": "What did Bob paint?",
            "adversarial_answer": "Nothing",
            "evidence": ["D1:1"],
            "category": 5,
        },
    ],
    "observation": {
        "session_1_observation": {"Bob": [["Bob adopted a greyhound called Zephyr.", "D1:2"]]},
    },
}


def build_workspaces(tmp_path: Path, variant: str = "turns") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    out = tmp_path / f"ws-{variant.replace('+', '-')}"
    build(out, data, variant)
    return out


def test_build_commits_each_session_at_its_time(tmp_path: Path) -> None:
    repo = build_workspaces(tmp_path) / "conv-t"
    log = git(repo, "log", "--reverse", "--format=%aI %cI %an", "--name-only").split()
    assert log == [
        "2023-03-03T09:05:00+00:00",
        "2023-03-03T09:05:00+00:00",
        "LoCoMo",
        "bench",
        "memory/2023-03-03.md",
        "2023-03-03T19:40:00+00:00",
        "2023-03-03T19:40:00+00:00",
        "LoCoMo",
        "bench",
        "memory/2023-03-03-session-2.md",
    ]
    assert git(repo, "status", "--porcelain") == ""
    # Deterministic: the same data gives the same commits.
    again = build_workspaces(tmp_path / "again") / "conv-t"
    assert git(again, "rev-parse", "HEAD") == git(repo, "rev-parse", "HEAD")


def test_sidecar_maps_turns_to_lines(tmp_path: Path) -> None:
    out = build_workspaces(tmp_path)
    sidecar = json.loads((out / "conv-t.json").read_text(encoding="utf-8"))
    turns = sidecar["turns"]
    assert turns["D2:1"]["path"] == "memory/2023-03-03-session-2.md"

    def line(dia: str) -> str:
        info = turns[dia]
        lines = (out / "conv-t" / str(info["path"])).read_text(encoding="utf-8").split("\n")
        return lines[int(info["line"]) - 1]

    assert line("D1:1") == "- [9:05 am] Alice: Morning Bob, how was your weekend?"
    assert line("D1:2") == (
        "- [9:05 am] Bob: Great: we adopted a greyhound called Zephyr! "
        "(image: a photo of a grey dog on a sofa)"
    )
    assert line("D2:2") == "- [7:40 pm] Bob: Nice work! Play me something."
    first = (out / "conv-t" / "memory/2023-03-03.md").read_text(encoding="utf-8")
    assert first.startswith("# Session 1: 9:05 am on 3 March, 2023 (Alice and Bob)\n")

    questions = {q["index"]: q for q in sidecar["questions"]}
    assert sorted(questions) == [0, 1, 3]  # no evidence (2) and category 5 (4) are left out
    assert questions[1]["evidence"] == ["D1:2", "D2:1"]  # "D1:2; D2:1" split
    assert questions[1]["answer"] == "2023"
    assert questions[3]["evidence"] == ["D2:1"]  # "D:2:1" normalised, D7:7 dropped
    skipped = json.loads((out / "build-report.json").read_text(encoding="utf-8"))["skipped"]
    assert {reason: info["count"] for reason, info in skipped.items()} == {
        "answer not a string (converted)": 1,
        "evidence id naming no turn (dropped)": 1,
        "evidence string holding several ids (split)": 1,
        "malformed evidence id (normalised)": 1,
        "question of category 5 (not evaluated)": 1,
        "question without evidence (not evaluated)": 1,
        "session date_time without a session (ignored)": 1,
        "turn text with line breaks (folded into one line)": 1,
    }


def test_observations_variant_adds_retain_facts(tmp_path: Path) -> None:
    out = build_workspaces(tmp_path, "turns+observations")
    sidecar = json.loads((out / "conv-t.json").read_text(encoding="utf-8"))
    (obs,) = sidecar["observations"]
    lines = (out / "conv-t" / obs["path"]).read_text(encoding="utf-8").split("\n")
    assert lines[obs["line"] - 1] == "- S @Bob: Bob adopted a greyhound called Zephyr."
    assert "## Retain" in lines[: obs["line"]]
    assert obs["evidence"] == ["D1:2"]


def test_eval_lexical_and_bm25(tmp_path: Path) -> None:
    out = build_workspaces(tmp_path)
    workspaces = load_workspaces(out, now=NOW, k=10)
    details: list[dict[str, Any]] = []
    report = evaluate(workspaces, ["bm25", "lexical"], [500, 1000], details)
    assert report["questions"] == 3
    for method in ("bm25", "lexical"):
        summary = report["methods"][method]
        for value in summary["overall"].values():
            assert 0.0 <= value <= 1.0
        assert summary["questions_failed"] == 0
    # "Which greyhound got adopted?": its words appear only in its evidence turn.
    unique = [d for d in details if d["index"] == 0]
    assert {d["method"] for d in unique} == {"bm25", "lexical"}
    for d in unique:
        assert d["recall"]["500"] == 1.0, d
    assert "| bm25 |" in markdown(report)


def test_budget_reads_whole_lines_in_rank_order(tmp_path: Path) -> None:
    out = build_workspaces(tmp_path)
    (workspace,) = load_workspaces(out, now=NOW)
    cover = evidence_lines(workspace)
    d11, d12 = workspace.sidecar["turns"]["D1:1"], workspace.sidecar["turns"]["D1:2"]
    spans = [(d11["path"], d11["line"], d11["line"]), (d12["path"], d12["line"], d12["line"])]
    order = read_order(spans, workspace)
    first_cost = (len(workspace.line(d11["path"], d11["line"])) + 1) / 4
    assert order[0][0] == first_cost
    assert recall_at(order, cover, ["D1:2"], first_cost) == 0.0  # D1:2 does not fit
    assert recall_at(order, cover, ["D1:2"], order[1][0]) == 1.0
    assert recall_at(order, cover, ["D1:2", "D2:1"], None) == 0.5


def test_semantic_needs_an_embedding_provider(tmp_path: Path) -> None:
    out = build_workspaces(tmp_path)
    workspaces = load_workspaces(out, now=NOW)
    with pytest.raises(MethodUnavailable, match="embedding"):
        evaluate(workspaces, ["semantic"], [500])
    with pytest.raises(BenchError, match="unknown method"):
        evaluate(workspaces, ["nonesuch"], [500])


def test_command_line_as_script_and_module(tmp_path: Path, repo_root: Path) -> None:
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps([CONVERSATION]), encoding="utf-8")
    out = tmp_path / "ws"
    script = [sys.executable, str(repo_root / "bench" / "locomo"), "build", str(out)]
    built = subprocess.run(
        [*script, "--data", str(data)], cwd=tmp_path, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    assert "built 1 workspaces (turns)" in built.stdout
    report = tmp_path / "report.json"
    module = [sys.executable, "-m", "bench.locomo", "eval", str(out), "--methods", "bm25"]
    evaluated = subprocess.run(
        [*module, "--budgets", "500", "--out", str(report)],
        cwd=repo_root,
        capture_output=True,
        text=True,
    )
    assert evaluated.returncode == 0, evaluated.stderr
    assert json.loads(report.read_text(encoding="utf-8"))["questions"] == 3
