"""``python -m bench.locomo build|eval``: the benchmark's command line."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import bench.locomo
from bench.locomo.build import VARIANTS, build
from bench.locomo.dataset import BenchError
from bench.locomo.evaluate import DEFAULT_BUDGETS, evaluate, markdown
from bench.locomo.methods import BM25_DEPTH, DEFAULT_NOW, METHODS, load_workspaces, parse_now
from testing.repo import GitFailed, git

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "bench" / "locomo-dev.json"
DEFAULT_OUT = REPO_ROOT / "bench" / "results" / "locomo.json"


def _int_list(text: str) -> list[int]:
    try:
        values = [int(v.replace("_", "")) for v in text.split(",") if v.strip()]
    except ValueError:
        message = f"expected numbers separated by commas: {text!r}"
        raise argparse.ArgumentTypeError(message) from None
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive numbers: {text!r}")
    return values


def _environment() -> dict[str, Any]:
    try:
        commit = git(REPO_ROOT, "rev-parse", "HEAD").strip()
        changed = git(REPO_ROOT, "status", "--porcelain", "--untracked-files=no", "gitmem")
        dirty = bool(changed.strip())
    except (GitFailed, OSError):
        commit, dirty = None, None
    return {
        "gitmem_commit": commit,
        "gitmem_dirty": dirty,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def cmd_build(args: argparse.Namespace) -> int:
    report = build(args.out_dir, args.data, args.variant)
    print(
        f"built {len(report['conversations'])} workspaces ({args.variant}) in {args.out_dir} "
        f"in {report['seconds']} s; {report['questions']} questions to evaluate"
    )
    for c in report["conversations"]:
        print(
            f"  {c['sample_id']}: {c['sessions']} sessions, {c['turns']} turns, "
            f"{c['observations']} observations, {c['questions']} questions"
        )
    print("skipped or repaired:")
    for reason, info in report["skipped"].items():
        print(f"  {info['count']:4d}  {reason}  e.g. {'; '.join(info['examples'][:2])}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    now = parse_now(args.now)
    model = args.embed_model
    if model is not None and Path(model).exists():
        model = str(Path(model).resolve())  # the index records it; keep it cwd-independent
    workspaces = load_workspaces(
        args.workspaces_dir,
        k=args.k,
        now=now,
        embed_model=model,
        embed_threads=args.embed_threads,
        reindex=not args.no_reindex,
    )
    details: list[dict[str, Any]] | None = [] if args.details else None
    started = time.monotonic()
    report = evaluate(workspaces, args.methods, args.budgets, details)
    report.update(
        dataset=str(args.workspaces_dir),
        variant=workspaces[0].sidecar["variant"],
        k=args.k,
        bm25_depth=BM25_DEPTH,
        now=now.isoformat(),
        seconds=round(time.monotonic() - started, 2),
        environment=_environment(),
    )
    build_report = args.workspaces_dir / "build-report.json"
    if build_report.exists():
        report["build_skipped"] = json.loads(build_report.read_text(encoding="utf-8"))["skipped"]
    print(markdown(report))
    print(f"\n{report['questions']} questions, {len(args.methods)} methods, {report['seconds']} s")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    if details is not None:
        args.details.write_text(json.dumps(details) + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m bench.locomo", description=(bench.locomo.__doc__ or "").splitlines()[0]
    )
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="LoCoMo conversations -> one gitmem workspace each")
    b.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    b.add_argument("--variant", choices=VARIANTS, default="turns")
    b.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the LoCoMo JSON")
    b.set_defaults(run=cmd_build)
    e = sub.add_parser("eval", help="evidence recall per token budget, per method")
    e.add_argument("workspaces_dir", type=Path, metavar="WORKSPACES_DIR")
    e.add_argument(
        "--methods",
        type=lambda s: [m.strip() for m in s.split(",") if m.strip()],
        default=["bm25", "lexical"],
        help=f"comma-separated: {', '.join(METHODS)}",
    )
    e.add_argument("--budgets", type=_int_list, default=list(DEFAULT_BUDGETS))
    e.add_argument("--k", type=int, default=60, help="results asked of gitmem recall")
    e.add_argument("--now", default=DEFAULT_NOW, help="recall's clock (recency decay, phrases)")
    e.add_argument("--embed-model", help="GGUF model for semantic/hybrid (provider 'local')")
    e.add_argument("--embed-threads", type=int,
                   help="llama.cpp threads (default: every core; 1 is faster on a busy machine)")
    e.add_argument("--no-reindex", action="store_true", help="reuse each workspace's index")
    e.add_argument("--out", type=Path, default=DEFAULT_OUT)
    e.add_argument("--details", type=Path, help="also write per-question recall here")
    e.set_defaults(run=cmd_eval)
    args = ap.parse_args(argv)
    try:
        return int(args.run(args))
    except (BenchError, GitFailed) as exc:
        print(f"locomo: {exc}", file=sys.stderr)
        return 1
