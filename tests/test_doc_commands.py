"""Every fenced shell command of the README and of docs/ (```bash blocks, and the ``$ `` lines of
```console blocks) runs here on a fresh workspace, so a documented line cannot rot (issue 37).

Stand-ins, by text substitution, for what a reader fills in: the sample workspace (built by
fixtures/build_fixture.py) for ``/path/to/memory`` and ``$demo``, a tiny GGUF model (llama.cpp
runs it) for ``/path/model.gguf``, and a bare repository as ``origin`` for the review range. Each
block runs as one bash script (``set -e``), its commands in order; a console block's documented
output is compared with what the command prints. Commands this test does not run are listed
below with the reason: they install packages, need the network or a program that is not
gitmem's, or another test runs them as written with a local stand-in (checked to exist).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from gguf_model import tiny_gguf

from testing.gitenv import ABSENT_MODEL
from testing.repo import git

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FAILURE_SECONDS = 120.0  # a bound for failures only: a loaded machine is slow, not wrong

# Not run here: the command as written -> why.
NOT_RUN = {
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e \'.[dev]\' && demo="$(mktemp '
    '-d)" && python fixtures/build_fixture.py "$demo" && gitmem -C "$demo" recall "gateway host"':
        "installs packages; tests/test_readme.py runs it past the install steps, twice",
    "bash .ci/run": "it is CI: a fresh virtual environment, then ruff, mypy and this suite",
    "pipx install .                 # the gitmem command, in its own environment":
        "installs packages (tests/test_wheel.py installs the built wheel into a clean venv)",
    "pip install '.[local]'         # or into an environment of yours, with semantic search on "
    "this machine": "installs packages (and compiles llama.cpp)",
    "pipx install 'git+https://github.com/OWNER/gitmem'":
        "installs packages from the network; OWNER is the reader's",
    "gitmem config set embed.model hf:ORG/REPO/FILE.gguf   # a model on Hugging Face, or":
        "names a model on the network (ORG/REPO/FILE are the reader's); the next line pulls it",
    "gitmem model pull                              # fetch embed.model into "
    "~/.cache/gitmem/models": "downloads a model from Hugging Face (the network); "
                              "tests/test_local_provider.py pulls from a local mirror",
    "claude mcp add gitmem -- gitmem -C /path/to/memory mcp      # Claude Code":
        "Claude Code's command, not gitmem's; tests/test_mcp.py runs the server it registers",
    'openclaw plugins install --link --force --accept-capabilities "$PWD/integrations/openclaw"'
    ' && openclaw config set plugins.entries.gitmem.config.env.XDG_CONFIG_HOME "$HOME/.config" '
    "&& openclaw memory status": "needs OpenClaw (Node, npm); tests/test_openclaw.py installs "
                                 "the plugin with these flags against the real OpenClaw",
}
# Run as written by another test, with local stand-ins: (file, test) for each command.
TWO_MACHINES = ("tests/test_sync.py", "test_the_readme_two_machine_setup_works_as_written")
RUN_ELSEWHERE = {
    "ssh castle 'git init --bare -b main ~/memory.git'": TWO_MACHINES,
    "cd ~/memory": TWO_MACHINES,
    "git remote add origin castle:memory.git": TWO_MACHINES,
    "gitmem hooks install": TWO_MACHINES,
    'git add .gitattributes && { git diff --cached --quiet || git commit -m "Merge memory files '
    'with gitmem merge-file"; }': TWO_MACHINES,
    "git push -u origin main": TWO_MACHINES,
    "git clone ~/memory.git ~/memory && cd ~/memory && gitmem hooks install": TWO_MACHINES,
}


def blocks() -> Iterator[tuple[str, str, list[str], str]]:
    """(file, language, commands, documented output) of every bash and console block."""
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"```(bash|console)\n(.*?)\n```", text, flags=re.S):
            lines = m.group(2).splitlines()
            if m.group(1) == "bash":
                commands = [ln for ln in lines if ln.strip() and not ln.startswith("#")]
                yield doc.name, "bash", commands, ""
            else:
                commands = [ln.removeprefix("$ ") for ln in lines if ln.startswith("$ ")]
                output = "\n".join(ln for ln in lines if not ln.startswith("$ "))
                yield doc.name, "console", commands, output


def every_command() -> list[str]:
    return [c for _, _, commands, _ in blocks() for c in commands]


def test_every_documented_command_is_run_or_said_why_not() -> None:
    """A new command in the README or docs/ is run by this test unless listed, with a reason;
    a listed command that is gone from the docs is taken off the list."""
    documented = set(every_command())
    assert documented >= set(NOT_RUN) | set(RUN_ELSEWHERE), \
        set(NOT_RUN) | set(RUN_ELSEWHERE) - documented
    for path, name in set(RUN_ELSEWHERE.values()):
        assert f"def {name}(" in (ROOT / path).read_text(encoding="utf-8"), (path, name)


@pytest.fixture
def workspace(built_fixture: Path, tmp_path: Path) -> Path:
    """The sample workspace, with a bare repository as ``origin`` that holds an earlier state
    (what a pull request's base would be)."""
    import shutil

    ws = tmp_path / "memory"
    shutil.copytree(built_fixture, ws, symlinks=True)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(ws, "remote", "add", "origin", str(origin))
    git(ws, "push", "-q", "origin", "HEAD~3:refs/heads/main")
    git(ws, "fetch", "-q", "origin")
    return ws


def run_block(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """One block as one bash script; whatever it left running in the background (``serve &``,
    when its ``serve --stop`` came before it listened) is ended with its process group. The
    output goes to files, not pipes: a background process holds those until it ends."""
    import tempfile

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(["bash", "-c", f"set -e\n{script}"], cwd=cwd, env=env,
                                text=True, stdout=out, stderr=err, start_new_session=True)
        try:
            code = proc.wait(timeout=FAILURE_SECONDS)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess(proc.args, code, out.read(), err.read())


def test_the_documented_commands_run_on_a_fresh_workspace(
        workspace: Path, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    model = tiny_gguf(tmp_path_factory)
    shims = tmp_path / "bin"
    shims.mkdir()
    gitmem = shims / "gitmem"  # the gitmem of this checkout, as 'pipx install .' would give
    gitmem.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m gitmem \"$@\"\n",
                      encoding="utf-8")
    gitmem.chmod(0o755)
    runtime = tmp_path_factory.mktemp("run")  # the warm process's socket folder (a short path)
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}",
           "demo": str(workspace), "XDG_RUNTIME_DIR": str(runtime), "GITMEM_WARM": "1"}
    # no model until the docs configure one, and then theirs: the hermetic environment's
    # absent model moves from the environment (which outranks 'gitmem config set') to the
    # user's config file
    absent = env.pop("GITMEM_EMBED_MODEL", ABSENT_MODEL)
    config = Path(env["XDG_CONFIG_HOME"]) / "gitmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[embed]\nmodel = "{absent}"\n', encoding="utf-8")
    stand_ins = {"/path/to/memory": shlex.quote(str(workspace)),
                 "/path/model.gguf": shlex.quote(str(model))}
    ran = []
    for name, language, commands, output in blocks():
        todo = [c for c in commands if c not in NOT_RUN and c not in RUN_ELSEWHERE]
        if not todo:
            continue
        script = "\n".join(todo)
        for placeholder, value in stand_ins.items():
            script = script.replace(placeholder, value)
        proc = run_block(script, workspace, env)
        assert proc.returncode == 0, (name, script, proc.stdout[-2000:], proc.stderr[-2000:])
        if language == "console" and output:  # what the docs show is what it prints
            assert proc.stdout.rstrip("\n") == output, (name, script, proc.stdout)
        ran.append((name, script, proc))
    said = {script: proc for _, script, proc in ran}
    semantic = next(p for s, p in said.items() if "birthday trip abroad" in s)
    assert "embedded" in semantic.stdout and "memory/" in semantic.stdout, semantic.stdout
    review = next(p for s, p in said.items() if "gitmem review" in s)
    assert review.stdout.startswith("<!-- gitmem-review -->"), review.stdout[:500]
    warm = next(p for s, p in said.items() if "serve --stop" in s)
    assert "memory/2025-11-27.md#L14" in warm.stdout, warm.stdout
