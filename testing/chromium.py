"""Debian's Chromium (the ``chromium`` package; ``.ci/run`` installs it), headless, driven over
the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON messages ended by a NUL
byte, commands on fd 3, answers and events on fd 4), with the standard library only.

One page at a time: ``Browser.open`` loads a file and waits for its load event, ``evaluate``
awaits a promise the page made (so a test waits on the page's own condition, never on a sleep),
``screenshot`` captures the whole page as a PNG. ``GITMEM_CHROMIUM`` names another binary.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from testing.bounds import FAILURE_SECONDS

# A deadline for failures only: a page that renders does so in seconds, a loaded machine is slow.
WAIT_SECONDS = FAILURE_SECONDS
VIEWPORT_WIDTH = 900  # about the width of a pull request comment on GitHub


class ChromiumError(RuntimeError):
    """Chromium exited, answered with an error, or did not answer before the deadline."""


def find_chromium() -> Path | str:
    """The Chromium binary, or why there is none."""
    named = os.environ.get("GITMEM_CHROMIUM")
    found = named or shutil.which("chromium")
    if found and Path(found).is_file():
        return Path(found)
    return (f"{named or 'chromium'} not found: install Debian's package with 'apt-get install "
            "--no-install-recommends chromium' (.ci/run does)")


class Browser:
    """One headless Chromium and one page in it."""

    def __init__(self, proc: subprocess.Popen[bytes], to_browser: int, from_browser: int,
                 log: Path) -> None:
        self.proc = proc
        self.log = log
        self._out = to_browser
        self._in = from_browser
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session: str = self.call("Target.attachToTarget", targetId=target,
                                      flatten=True)["sessionId"]
        self.call("Page.enable", on_page=True)

    def call(self, method: str, *, on_page: bool = False, **params: Any) -> dict[str, Any]:
        """Send one command (to the page's session with ``on_page``) and return its result."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if on_page:
            message["sessionId"] = self.session
        data = json.dumps(message).encode("utf-8") + b"\0"
        while data:
            data = data[os.write(self._out, data):]
        answer = self._receive(lambda m: m.get("id") == message["id"], method)
        if "error" in answer:
            raise ChromiumError(f"{method}: {answer['error'].get('message')}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    def wait_event(self, method: str) -> dict[str, Any]:
        """The page's next event called ``method`` (one that came already counts)."""
        for n, event in enumerate(self._events):
            if event.get("method") == method and event.get("sessionId") == self.session:
                del self._events[: n + 1]
                return event
        self._events.clear()
        return self._receive(lambda m: m.get("method") == method
                             and m.get("sessionId") == self.session, method)

    def open(self, page: Path, width: int = VIEWPORT_WIDTH) -> None:
        """Load ``page`` (a file) at ``width`` CSS pixels and wait for its load event."""
        self.call("Emulation.setDeviceMetricsOverride", on_page=True, width=width, height=800,
                  deviceScaleFactor=1, mobile=False)
        self._events.clear()
        self.call("Page.navigate", on_page=True, url=page.resolve().as_uri())
        self.wait_event("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page, a promise's once it settles."""
        result = self.call("Runtime.evaluate", on_page=True, expression=expression,
                           awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise ChromiumError(f"{expression[:60]}: "
                                f"{details.get('exception', {}).get('description', details)}")
        return result["result"].get("value")

    def screenshot(self, png: Path) -> None:
        """The whole page, top to bottom, as a PNG."""
        height = int(self.evaluate("document.documentElement.scrollHeight"))
        width = int(self.evaluate("document.documentElement.scrollWidth"))
        shot = self.call("Page.captureScreenshot", on_page=True, format="png",
                         captureBeyondViewport=True,
                         clip={"x": 0, "y": 0, "width": width, "height": height, "scale": 1})
        png.write_bytes(base64.b64decode(shot["data"]))

    def _receive(self, wanted: Any, what: str) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            while b"\0" in self._buffer:
                raw, self._buffer = self._buffer.split(b"\0", 1)
                message: dict[str, Any] = json.loads(raw)
                if wanted(message):
                    return message
                if "method" in message:
                    self._events.append(message)
            left = deadline - time.monotonic()
            if left <= 0:
                raise ChromiumError(f"no answer to {what} within {WAIT_SECONDS:.0f} s")
            ready, _, _ = select.select([self._in], [], [], left)
            if ready:
                chunk = os.read(self._in, 1 << 20)
                if not chunk:
                    said = self.log.read_text("utf-8", "replace").strip().splitlines()[-5:]
                    raise ChromiumError(f"chromium exited (status {self.proc.wait()}) while "
                                        f"waiting for {what}; its last words: {said}")
                self._buffer += chunk


@contextmanager
def chromium(binary: Path, profile: Path) -> Iterator[Browser]:
    """A headless Chromium with its profile in ``profile``, stopped on the way out."""
    to_browser_r, to_browser_w = os.pipe()
    from_browser_r, from_browser_w = os.pipe()
    # Chromium reads fd 3 and writes fd 4. The child moves the pipes there (by way of fds above
    # 9, so neither overwrites the other). Python opens every fd close-on-exec, so with
    # close_fds=False these two (dup2 clears the flag) and stdio are all that Chromium inherits.
    args = [str(binary), "--headless", "--no-sandbox", "--remote-debugging-pipe",
            f"--user-data-dir={profile}", "--no-first-run", "--no-default-browser-check",
            "--disable-gpu", "--disable-extensions", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--hide-scrollbars",
            "--mute-audio", "--disable-dev-shm-usage", "--font-render-hinting=none", "about:blank"]

    def pipes_as_3_and_4() -> None:
        commands = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
        answers = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
        os.dup2(commands, 3)
        os.dup2(answers, 4)
        os.close(commands)
        os.close(answers)

    log = profile / "chromium.log"
    profile.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as stderr:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=stderr, stderr=stderr,
                                close_fds=False, preexec_fn=pipes_as_3_and_4)
    os.close(to_browser_r)
    os.close(from_browser_w)
    try:
        yield Browser(proc, to_browser_w, from_browser_r, log)
    finally:
        os.close(to_browser_w)  # Chromium exits when its command pipe closes
        os.close(from_browser_r)
        try:
            proc.wait(timeout=WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
