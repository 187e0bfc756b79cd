"""``memory_search`` through the OpenClaw plugin and a running gateway, against gitmem's warm time.

    python bench/bench_openclaw.py [--rounds 30] [--out bench/results/openclaw.json]

Needs the toolchain (``bash integrations/openclaw-toolchain/install``). On a copy of the sample
workspace (``fixtures/``), with the plugin installed (``--link``) into a temporary OpenClaw and
its gateway running on 127.0.0.1, interleaved per round over the same queries:

1. ``POST /tools/invoke`` ``memory_search`` (request sent to answer parsed): the plugin's tool,
   answered through the warm process it started;
2. ``gitmem recall QUERY --json`` as a process through a warm process (the thin client): gitmem's
   warm time as the command line sees it;
3. the warm process's own part: one request on its socket (``gitmem.front.warm.client.request``), as
   the plugin sends it;
4. ``gitmem recall QUERY --json`` alone (``GITMEM_WARM=0``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a script: the repository's packages are importable
    sys.path.insert(0, str(BENCH_DIR.parent))

from fixtures.build_fixture import build_fixture  # noqa: E402
from gitmem.front.warm import client  # noqa: E402
from testing.chat_stub import chat_stub  # noqa: E402
from testing.gitenv import TEST_GITCONFIG, hermetic_environ  # noqa: E402
from testing.openclaw import (  # noqa: E402
    Gateway,
    find_toolchain,
    gitmem_command,
    install_plugin,
    new_home,
)

QUERIES = ["gateway host", "Marrakech trip", "WhatsApp replies", "The Castle", "warelay"]


def summary(samples: list[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples)
    return {"p50": round(statistics.median(ms), 1), "p95": round(ms[int(len(ms) * 0.95) - 1], 1),
            "min": round(ms[0], 1), "n": len(ms)}


def timed(work: Any) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def one_round(samples: dict[str, list[float]], gateway: Gateway, cli: list[str],
              env: dict[str, str], ws: str, query: str) -> None:
    """One query each way, interleaved."""
    samples["tool"].append(timed(lambda: gateway.invoke("memory_search", {"query": query})))
    samples["warm_cli"].append(timed(lambda: subprocess.run(
        [*cli, query, "--json"], env=env, check=True, capture_output=True)))
    samples["warm_socket"].append(timed(lambda: client.request(
        ws, "run", argv=["-C", ws, "recall", query, "--json"])))
    samples["cold_cli"].append(timed(lambda: subprocess.run(
        [*cli, query, "--json"], env={**env, "GITMEM_WARM": "0"}, check=True,
        capture_output=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "openclaw.json")
    args = parser.parse_args()
    found = find_toolchain()
    if isinstance(found, str):
        sys.exit(found)
    node, entry = found
    with tempfile.TemporaryDirectory(prefix="gitmem-openclaw-bench-") as tmp, \
            chat_stub("memory_search", {"query": "gateway host"}) as stub:
        root = Path(tmp)
        home = root / "home"
        home.mkdir()
        (home / ".gitconfig").write_text(TEST_GITCONFIG, encoding="utf-8")
        env = hermetic_environ(home)
        env["XDG_RUNTIME_DIR"] = str(root / "run")
        (root / "run").mkdir(mode=0o700)
        ws = build_fixture(root / "ws")
        claw = new_home(node, entry, root / "claw", ws, env, stub.base_url)
        install_plugin(claw, {"command": gitmem_command(), "idleTimeout": 600})
        cli = [gitmem_command(), "-C", str(ws), "recall"]
        subprocess.run([*cli[:3], "index"], env=env, check=True, capture_output=True)
        samples: dict[str, list[float]] = {k: [] for k in ("tool", "warm_cli", "warm_socket",
                                                           "cold_cli")}
        with claw.gateway() as gateway:
            gateway.invoke("memory_search", {"query": "warm up"})  # starts the warm process
            os.environ.update(env)  # the socket request carries this environment's fingerprint
            for n in range(args.rounds):
                one_round(samples, gateway, cli, env, str(ws), QUERIES[n % len(QUERIES)])
            served = client.request(str(ws), "ping")
        report: dict[str, Any] = {name: summary(values) for name, values in samples.items()}
        report["load_average"] = list(os.getloadavg())
        report["served_by_warm_process"] = (served or {}).get("served")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
        print(json.dumps(report, indent=2))
        shutil.rmtree(root / "claw", ignore_errors=True)


if __name__ == "__main__":
    main()
