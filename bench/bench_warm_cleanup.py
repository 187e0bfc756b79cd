"""Warm processes left behind by throw-away workspaces (issue 37, item 2).

    python bench/bench_warm_cleanup.py [--workspaces 50] [--cap 4] [--baseline /work/main]
                                       [--out bench/results/warm_cleanup.json]

A script asks one question (``gitmem recall``, warm.autostart on, as for a user or an agent) in
each of N temporary copies of the sample workspace, one after the other:

- ``deleted``: each workspace is deleted right after its recall (an eval harness, a user trying
  gitmem on test folders). Target: 0 live ``gitmem serve`` of the run 10 s after the last one.
- ``kept``: the workspaces stay. The live servers are bounded by ``warm.max_servers``.

For each, the live ``gitmem serve`` processes of the run are sampled every 0.1 s from ``/proc``
(those whose ``-C`` path lies in the run's folder): the peak count and the peak total resident
memory (RSS) while it ran, and the count 10 s after the last recall. ``--baseline PATH`` runs the
same with the gitmem code of another checkout (``PYTHONPATH=PATH``, every command run outside
this checkout, whose ``gitmem`` would come first; its servers are killed after each scenario,
they would live 15 minutes). Linux only (``/proc``); prints a Markdown table and
writes JSON.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(ROOT))

from fixtures.build_fixture import build_fixture  # noqa: E402
from testing.chaos import reap, servers_under  # noqa: E402
from testing.gitenv import TEST_GITCONFIG, hermetic_environ  # noqa: E402

SETTLE_SECONDS = 10.0  # the count of live servers is taken this long after the last recall
SAMPLE_SECONDS = 0.1


def rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


class Sampler:
    """The live servers under ``folder`` every SAMPLE_SECONDS: peak count and total RSS."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.peak_count = 0
        self.peak_rss = 0
        self.started: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(SAMPLE_SECONDS):
            pids = servers_under(self.folder)
            self.started.update(pids)
            self.peak_count = max(self.peak_count, len(pids))
            self.peak_rss = max(self.peak_rss, sum(rss_bytes(p) for p in pids))


def scenario(template: Path, folder: Path, env: dict[str, str], n: int,
             delete: bool) -> dict[str, Any]:
    folder.mkdir(parents=True)
    recall_seconds: list[float] = []
    failures: list[str] = []
    with Sampler(str(folder)) as sampler:
        for i in range(n):
            ws = folder / f"ws{i:02d}"
            shutil.copytree(template, ws, symlinks=True)
            began = time.monotonic()
            run = subprocess.run([sys.executable, "-m", "gitmem", "-C", str(ws), "recall",
                                  "gateway host", "--json"], env=env, capture_output=True,
                                 text=True, check=False, cwd=folder)
            recall_seconds.append(time.monotonic() - began)
            if run.returncode:
                failures.append(f"ws{i}: exit {run.returncode}: {run.stderr.strip()[-200:]}")
            if delete:
                shutil.rmtree(ws)
        at_end = len(servers_under(str(folder)))
        time.sleep(SETTLE_SECONDS)
        left = servers_under(str(folder))
    listed = subprocess.run([sys.executable, "-m", "gitmem", "serve", "--list", "--json"],
                            env=env, capture_output=True, text=True, cwd=folder, check=False)
    # the next scenario starts with none (a baseline's would live 15 minutes)
    reap(servers_under(str(folder)))
    return {"workspaces": n, "deleted": delete, "servers_started": len(sampler.started),
            "peak_servers": sampler.peak_count, "peak_rss_mb": round(sampler.peak_rss / 2**20, 1),
            "live_after_last_recall": at_end, "live_after_10s": len(left),
            "live_pids": left, "serve_list": listed.stdout.strip()[:2000],
            "recall_p50_s": round(sorted(recall_seconds)[len(recall_seconds) // 2], 3),
            "failures": failures}


def run_code(code: Path, scratch: Path, template: Path, n: int, cap: int) -> dict[str, Any]:
    home = scratch / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(TEST_GITCONFIG, encoding="utf-8")
    env = hermetic_environ(home)
    env.pop("CI", None)
    runtime = scratch / "run"
    runtime.mkdir(mode=0o700)
    env.update(GITMEM_WARM_AUTOSTART="true", GITMEM_WARM_MAX_SERVERS=str(cap),
               XDG_RUNTIME_DIR=str(runtime), PYTHONPATH=str(code))
    out: dict[str, Any] = {"code": str(code)}
    try:
        for name, delete in (("deleted", True), ("kept", False)):
            out[name] = scenario(template, scratch / name, env, n, delete)
    finally:
        left = servers_under(str(scratch))
        reap(left)
        out["killed_at_end"] = len(left)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workspaces", type=int, default=50)
    parser.add_argument("--cap", type=int, default=4, help="warm.max_servers")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="a checkout whose gitmem runs the same scenarios first")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "warm_cleanup.json")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="gwc-"))  # short: socket paths are ~100 bytes
    results: dict[str, Any] = {"workspaces": args.workspaces, "cap": args.cap}
    try:
        template = build_fixture(scratch / "template")
        env = hermetic_environ(scratch / "tpl-home")
        subprocess.run([sys.executable, "-m", "gitmem", "-C", str(template), "index"],
                       env={**env, "PYTHONPATH": str(ROOT)}, check=True, capture_output=True,
                       cwd=scratch)
        if args.baseline is not None:
            results["baseline"] = run_code(args.baseline.resolve(), scratch / "b", template,
                                           args.workspaces, args.cap)
        results["this"] = run_code(ROOT, scratch / "t", template, args.workspaces, args.cap)
    finally:
        reap(servers_under(str(scratch)))
        shutil.rmtree(scratch, ignore_errors=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(table(results))


def table(results: dict[str, Any]) -> str:
    rows = ["| code | workspaces | servers started | peak live | peak RSS (MB) "
            "| live at last recall | live 10 s later |", "|---|---|---|---|---|---|---|"]
    for code in ("baseline", "this"):
        if code not in results:
            continue
        for name in ("deleted", "kept"):
            r = results[code][name]
            rows.append(f"| {code} | {r['workspaces']} {name} | {r['servers_started']} "
                        f"| {r['peak_servers']} | {r['peak_rss_mb']} "
                        f"| {r['live_after_last_recall']} | {r['live_after_10s']} |")
    return "\n".join(rows)


if __name__ == "__main__":
    main()
