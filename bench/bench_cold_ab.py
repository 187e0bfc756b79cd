"""Cold commands of two checkouts, interleaved in one run: what a change did to start-up.

    python bench/bench_cold_ab.py --before DIR --after DIR [--rounds 20] [--years 10]
        [--cache DIR] [--warm [--embed-model FILE.gguf]] [--out bench/results/cold-ab.json]

Each checkout (a worktree, clone or ``git archive`` export: its directory goes first on
``PYTHONPATH``, and its commands run from a folder of their own) is byte-compiled as pip does
on install and gets its own copies of the sample workspace (``fixtures/build_fixture.py``) and
of the cached N-year synthetic workspace, each indexed by that checkout, and its own user
folders (config, cache), warmed by one run of each command. Then round after round, the
checkout going first alternating: ``python -c pass``, a lexical ``gitmem recall`` on the sample
workspace and on the N-year one, and ``gitmem index`` after a one-file commit on the N-year one
(the command a post-commit hook runs): no warm process answers these. Then, with ``--warm``, the
same recall on a third copy of the sample workspace that the checkout's own ``gitmem serve``
answers (the warm process every workspace gets after its first command), and with
``--embed-model`` also a hybrid recall there: that copy is indexed with the model's embeddings
and its server embeds each query (the default model is ``gitmem.embed.convert_e5``'s GGUF of
multilingual-e5-small; give its file). Wall and CPU time (user
+ system, git children included; for the warm row the client's alone); read each against
``python -c pass`` of the same rounds. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

from bench import bench_history as hist  # noqa: E402
from bench import bench_lexical as lex  # noqa: E402

QUERY = "gateway host"
Samples = tuple[list[float], list[float]]  # (wall seconds, CPU seconds)


class Checkout:
    """One checkout's environment and workspaces."""

    def __init__(self, name: str, code: Path, scratch: Path, src: Path,
                 model: Path | None = None) -> None:
        self.name, self.code = name, code.resolve()
        self.home = home = scratch / name
        home.mkdir(parents=True)
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("GITMEM_EMBED_PROVIDER", None)
        env.update(PYTHONPATH=str(self.code), GITMEM_WARM_AUTOSTART="false",
                   XDG_CONFIG_HOME=str(home / "config"), XDG_CACHE_HOME=str(home / "cache"))
        self.env = env
        py = sys.executable
        subprocess.run([py, "-m", "compileall", "-q", str(self.code / "gitmem")], check=True,
                       env=env)
        self.gm = [py, "-m", "gitmem"]
        self.fixture = home / "fixture"
        subprocess.run([py, str(self.code / "fixtures" / "build_fixture.py"), str(self.fixture)],
                       check=True, capture_output=True, env=env)
        self.ws = home / "ws"
        subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(src), str(self.ws)],
                       check=True)
        for key, value in (("user.name", "bench"), ("user.email", "bench@example.invalid")):
            hist.git(self.ws, "config", key, value)
        self.must([*self.gm, "-C", str(self.fixture), "index"])
        self.must([*self.gm, "-C", str(self.ws), "index", "--no-embed"])
        self.commits = 0
        self.served: Path | None = None  # the copy a warm process serves (--warm)
        # The served copy's environment: the model, when a hybrid row is asked for.
        self.served_env = dict(env, GITMEM_EMBED_MODEL=str(model.resolve())) if model else env
        self.hybrid = model is not None

    def must(self, argv: list[str], env: dict[str, str] | None = None) -> lex.Run:
        # Run from the checkout's own folder: ``python -m`` puts the working directory first on
        # sys.path, which would otherwise import whatever gitmem stands where the bench runs.
        run = lex.run_child(argv, cwd=self.home, env=env or self.env)
        if run.returncode:
            raise SystemExit(f"{self.name}: {' '.join(argv)} failed: {lex.tail(run.stderr)}")
        return run

    def commands(self) -> dict[str, tuple[list[str], dict[str, str]]]:
        """What each row runs, and in which environment."""
        commands = {
            "recall (lexical, sample workspace)": ([*self.gm, "-C", str(self.fixture), "recall",
                                                    QUERY, "--mode", "lexical"], self.env),
            "recall (lexical, N y)": ([*self.gm, "-C", str(self.ws), "recall", QUERY, "--mode",
                                       "lexical"], self.env),
        }
        if self.served is not None:
            served = [*self.gm, "-C", str(self.served), "recall", QUERY, "--mode"]
            commands["recall (lexical, sample workspace, warm process)"] = (
                [*served, "lexical"], self.served_env)
            if self.hybrid:
                commands["recall (hybrid, sample workspace, warm process)"] = (
                    [*served, "hybrid"], self.served_env)
        return commands

    def warm_rows(self) -> int:
        """How many rows the warm process answers (each once a round, once in the warm-up)."""
        return sum("warm process" in what for what in self.commands())

    def serve(self, stack: ExitStack) -> None:
        """A copy of the sample workspace answered by this checkout's ``gitmem serve``, until
        ``stack`` closes (the server says when it listens: ``serve --json``)."""
        self.served = self.home / "served"
        shutil.copytree(self.fixture, self.served, symlinks=True)
        if self.hybrid:  # embeddings for every item, before the server opens the index
            self.must([*self.gm, "-C", str(self.served), "index"], self.served_env)
            self._check_hybrid()
        server = subprocess.Popen([*self.gm, "-C", str(self.served), "serve", "--json",
                                   "--idle-timeout", "3600"], cwd=self.home, env=self.served_env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        stack.callback(server.wait, timeout=30)
        stack.callback(server.terminate)
        assert server.stdout is not None
        if not server.stdout.readline():
            raise SystemExit(f"{self.name}: gitmem serve did not start")

    def _check_hybrid(self) -> None:
        """A hybrid recall of the served copy uses the model (no quiet fall-back to words)."""
        assert self.served is not None
        run = self.must([*self.gm, "-C", str(self.served), "recall", QUERY, "--mode", "hybrid",
                         "--json"], self.served_env)
        reply = json.loads(run.stdout)
        if reply["mode"] != "hybrid" or reply["provider"]["fallback_used"]:
            raise SystemExit(f"{self.name}: the hybrid recall did not use the model: "
                             f"{reply['provider']} {reply['warnings']}")

    def served_count(self) -> int:
        """How many commands this checkout's warm process has answered."""
        from gitmem import __version__
        from gitmem.front.warm import client  # the bench's own: the protocol both checkouts speak

        root = str(self.served.resolve()) if self.served else ""
        reply = client.exchange(client.socket_path(root), {
            "protocol": client.PROTOCOL, "version": __version__, "repo": root,
            "env": client.env_fingerprint(self.served_env), "op": "ping"})
        return int(reply["served"]) if reply else 0

    def index_after_commit(self) -> lex.Run:
        hist.commit_one(self.ws, self.commits, self.env)
        self.commits += 1
        return self.must([*self.gm, "-C", str(self.ws), "index", "--no-embed"])


def bench(before: Path, after: Path, rounds: int, years: int, cache: Path,
          warm: bool = False, model: Path | None = None) -> dict[str, Any]:
    scratch = Path(tempfile.mkdtemp(prefix="gitmem-cold-ab-"))
    try:
        src, info = lex.workspace(years, 0, cache)
        sides = [Checkout("before", before, scratch, src, model),
                 Checkout("after", after, scratch, src, model)]
        with ExitStack() as stack:
            if warm:
                for side in sides:
                    side.serve(stack)
            samples = _rounds(sides, rounds)
            for side in sides if warm else ():
                served, asked = side.served_count(), side.warm_rows() * (rounds + 1)
                if served < asked:  # a recall the warm process did not answer ran alone
                    raise SystemExit(f"{side.name}: the warm process answered {served} of "
                                     f"{asked} recalls")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    base_wall, base_cpu = (lex.pct(xs, 50) for xs in samples["python -c pass"])
    rows = [{"what": what.replace("N y", f"{years} y"), **lex.summary_ms(wall),
             "cpu_p50_ms": round(lex.pct(cpu, 50) * 1000, 2),
             "over_pass_p50_ms": round((lex.pct(wall, 50) - base_wall) * 1000, 1),
             "cpu_over_pass_p50_ms": round((lex.pct(cpu, 50) - base_cpu) * 1000, 1)}
            for what, (wall, cpu) in samples.items()]
    return {"rounds": rounds, "years": years, "days": info["days"], "before": str(before),
            "after": str(after), "python": sys.version.split()[0],
            "embed_model": str(model) if model else None,
            "load": os.getloadavg(), "rows": rows}


def _rounds(sides: list[Checkout], rounds: int) -> dict[str, Samples]:
    samples: dict[str, Samples] = {}

    def add(key: str, run: lex.Run) -> None:
        wall, cpu = samples.setdefault(key, ([], []))
        wall.append(run.seconds)
        cpu.append(run.cpu_seconds)

    for side in sides:  # warm-up: page cache, bytecode, the user cache folder
        for argv, env in side.commands().values():
            side.must(argv, env)
        side.index_after_commit()
    for n in range(rounds):
        order = sides if n % 2 == 0 else sides[::-1]
        add("python -c pass", order[0].must([sys.executable, "-c", "pass"]))
        for side in order:
            for what, (argv, env) in side.commands().items():
                add(f"{what} | {side.name}", side.must(argv, env))
        for side in order:
            add(f"index after a one-file commit (N y) | {side.name}", side.index_after_commit())
        add("python -c pass", order[1].must([sys.executable, "-c", "pass"]))
    return samples


def markdown(result: dict[str, Any]) -> str:
    lines = ["| what | wall p50 / p95 / min ms | over pass p50 | CPU p50 ms | CPU over pass |",
             "| --- | --- | --- | --- | --- |"]
    for r in result["rows"]:
        lines.append(f"| {r['what']} | {r['p50_ms']:.0f} / {r['p95_ms']:.0f} / {r['min_ms']:.0f}"
                     f" | {r['over_pass_p50_ms']:+.0f} | {r['cpu_p50_ms']:.0f} | "
                     f"{r['cpu_over_pass_p50_ms']:+.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True)
    parser.add_argument("--after", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--years", type=int, default=10)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitmem-bench")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "cold-ab.json")
    parser.add_argument("--warm", action="store_true",
                        help="also a recall answered by each checkout's own warm process")
    parser.add_argument("--embed-model", type=Path, metavar="FILE.gguf",
                        help="with --warm, also a hybrid recall the warm process embeds with "
                             "this model")
    args = parser.parse_args(argv)
    if args.embed_model and not args.warm:
        parser.error("--embed-model measures the warm process: give --warm too")
    if args.embed_model and not args.embed_model.is_file():
        parser.error(f"no model file at {args.embed_model}")
    result = bench(args.before, args.after, args.rounds, args.years, args.cache, args.warm,
                   args.embed_model)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
