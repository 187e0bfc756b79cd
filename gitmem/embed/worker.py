"""The process that runs llama.cpp for the local provider, and its handle in gitmem.

llama.cpp can kill the process that runs it: a CPU-specific kernel (SIGSEGV/SIGILL with AMX), a
model file that shrinks while it is mapped (SIGBUS), a failed assertion (SIGABRT). So gitmem runs
it in a child process, started by ``Worker()`` and spoken to over a socket pair (the child's stdin
and stdout): frames of an 8-byte big-endian length and a pickle. The parent sends
``("load", path, n_ctx, threads)`` (the answer is a ``ModelInfo``) and
``("embed", texts, input_type)`` (the vectors); the child answers ``("ok", result)`` or
``("error", message)`` for an ``EmbeddingError``. When the child dies, the parent's ``call``
raises ``WorkerLost`` naming the signal or exit status and the child's last words on stderr;
``LocalEmbedder`` turns that into an ``EmbeddingError``. A socket rather than pipes:
gitmem's command line restores the default SIGPIPE action, so a write to a pipe whose reader
has died would end gitmem; a ``send`` with ``MSG_NOSIGNAL`` only fails.

The child never outlives gitmem: it exits when its socket closes, is killed by the kernel when the
parent dies (``PR_SET_PDEATHSIG`` on Linux), and also watches its parent id from a thread (a
parent in a forked copy, or one that is not Linux). It inherits no file descriptors (so no lock),
ignores Ctrl-C (the parent decides) and imports exactly the parent's modules.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import IO, Any

from gitmem.embed.base import EmbeddingError
from gitmem.embed.native import NativeModel
from gitmem.lifetime import die_with_parent

_HEADER = struct.Struct(">Q")
_EXIT_GRACE = 1.0  # seconds a worker gets to exit on its own before it is killed
_STDERR_TAIL = 4096
_NO_SIGPIPE = getattr(socket, "MSG_NOSIGNAL", 0)  # Linux; macOS has a socket option instead
_SO_NOSIGPIPE = 0x1022  # <sys/socket.h> on macOS; Python does not name it


class WorkerLost(Exception):
    """The worker died, or did not answer in time (``hung``); it is gone either way."""

    def __init__(self, reason: str, *, hung: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.hung = reason, hung
        self.op = ""  # the request it was answering: load | embed


# -- the parent's side ---------------------------------------------------------------------------


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # The parent's import path, so the child runs the same gitmem and llama-cpp-python (cwd is
    # left out: the child starts with -P, and a stray module in the user's folder is not ours).
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isabs(p))
    env["GGML_NO_BACKTRACE"] = "1"  # a failed assertion says why on stderr, then aborts
    return env


def _reap(proc: subprocess.Popen[bytes], sock: socket.socket, owner: int) -> None:
    """Stop a worker: close its socket (it exits at once), kill it if it does not."""
    sock.close()  # only this process's descriptor: a forked copy closing it harms nobody
    if os.getpid() != owner:  # a forked copy of the owner: the worker is not ours to stop
        return
    try:
        proc.wait(_EXIT_GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def describe_exit(returncode: int) -> str:
    """``crashed with SIGSEGV (Segmentation fault)`` or ``exited with status 1``."""
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
        except ValueError:
            return f"was killed by signal {-returncode}"
        return f"crashed with {sig.name} ({signal.strsignal(sig) or sig.name})"
    return f"exited with status {returncode}"


class Worker:
    """A running worker process, owned by the process that started it."""

    def __init__(self) -> None:
        self.owner = os.getpid()
        # Closed by stop(); read when the child dies, for its last words.
        self._stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        # PR_SET_PDEATHSIG fires when the *thread* that started the child ends, so the child
        # asks for it only when started from the main thread (which lives as long as gitmem).
        from_main = threading.current_thread() is threading.main_thread()
        self._sock, theirs = socket.socketpair()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-P", "-m", "gitmem.embed.worker", str(self.owner),
                 "1" if from_main else "0"],
                stdin=theirs.fileno(), stdout=theirs.fileno(), stderr=self._stderr,
                env=_child_env(), close_fds=True,
            )
        except BaseException:
            self._sock.close()
            self._stderr.close()
            raise
        finally:
            theirs.close()
        self._sock.setblocking(False)  # sends and receives wait in select, with the deadline
        if sys.platform == "darwin":
            self._sock.setsockopt(socket.SOL_SOCKET, _SO_NOSIGPIPE, 1)
        self._stop = weakref.finalize(self, _reap, self.proc, self._sock, self.owner)

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def stopped(self) -> bool:
        """True once the worker was stopped or killed (after a failed call, for instance)."""
        return not self._stop.alive

    def call(self, request: tuple[Any, ...], timeout: float) -> Any:
        """Send one request and return the answer. Raises EmbeddingError for an error the
        child reported (the worker stays usable) and WorkerLost when the child died or did not
        answer within ``timeout`` seconds (the worker is then stopped)."""
        if self.stopped:
            lost = WorkerLost("had been stopped")
            lost.op = str(request[0])
            raise lost
        deadline = time.monotonic() + timeout
        try:
            self._send(pickle.dumps(request, pickle.HIGHEST_PROTOCOL), deadline, timeout)
            status, payload = pickle.loads(self._receive(deadline, timeout))
        except WorkerLost as lost:
            lost.op = str(request[0])
            self.kill()
            raise
        except BaseException:  # interrupted mid-exchange (Ctrl-C): out of step for good
            self.kill()
            raise
        if status == "error":
            raise EmbeddingError(str(payload))
        return payload

    def _send(self, data: bytes, deadline: float, timeout: float) -> None:
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            self._wait(deadline, timeout, write=True)
            try:
                view = view[self._sock.send(view, _NO_SIGPIPE):]
            except BlockingIOError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise self._lost() from None

    def _receive(self, deadline: float, timeout: float) -> bytes:
        (size,) = _HEADER.unpack(self._read(_HEADER.size, deadline, timeout))
        return self._read(size, deadline, timeout)

    def _read(self, size: int, deadline: float, timeout: float) -> bytes:
        parts: list[bytes] = []
        while size:
            self._wait(deadline, timeout, write=False)
            try:
                part = self._sock.recv(min(size, 1 << 20))
            except BlockingIOError:
                continue
            except ConnectionResetError:
                part = b""
            if not part:
                raise self._lost()
            parts.append(part)
            size -= len(part)
        return b"".join(parts)

    def _wait(self, deadline: float, timeout: float, *, write: bool) -> None:
        left = max(deadline - time.monotonic(), 0)
        this: list[socket.socket] = [self._sock]
        ready = select.select([], this, [], left) if write else select.select(this, [], [], left)
        if not any(ready):
            raise WorkerLost(f"did not answer within {timeout:g} s", hung=True)

    def _lost(self) -> WorkerLost:
        """Why the child closed its end: its exit status or signal, and its last words."""
        try:
            reason = describe_exit(self.proc.wait(5))
        except subprocess.TimeoutExpired:  # alive but deaf: treat it as dead
            self.kill()
            reason = "closed its pipe"
        said = self._last_words()
        return WorkerLost(f"{reason}; it said: {said}" if said else reason)

    def _last_words(self) -> str:
        try:
            self._stderr.seek(0, os.SEEK_END)
            self._stderr.seek(max(0, self._stderr.tell() - _STDERR_TAIL))
            tail = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):  # the file is gone with a stopped worker
            return ""
        lines = [line.strip() for line in tail.splitlines() if line.strip()]
        return lines[-1][:300] if lines else ""

    def stop(self) -> None:
        """Let the worker exit (idempotent)."""
        self._stop()
        self._stderr.close()

    def kill(self) -> None:
        if os.getpid() == self.owner and self.proc.poll() is None:
            self.proc.kill()
        self.stop()


# -- the child's side ----------------------------------------------------------------------------


def _protocol_fds() -> tuple[int, int]:
    """The socket to the parent, moved off fds 0 and 1: a stray print (Python's or native code's)
    then lands on stderr instead of corrupting the protocol."""
    rfd, wfd = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(2, 1)
    os.close(devnull)
    return rfd, wfd


def _read_exactly(fd: int, size: int) -> bytes | None:
    parts: list[bytes] = []
    while size:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            return None
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def _answer(model: NativeModel | None, request: tuple[Any, ...]) -> tuple[NativeModel | None, Any]:
    op = request[0]
    if op == "load":
        if model is not None:
            model.close()
        _, path, n_ctx, threads = request
        model = NativeModel(Path(path), n_ctx=n_ctx, threads=threads)
        return model, model.info
    if op == "embed":
        if model is None:
            raise EmbeddingError("the embedding worker has no model loaded")
        _, texts, input_type = request
        return model, model.embed(texts, input_type)
    raise EmbeddingError(f"the embedding worker does not know the request {op!r}")


def serve(parent: int, pdeathsig: bool) -> None:
    """The child's loop: answer requests until stdin closes, then exit at once (the OS frees
    the model faster than llama.cpp would)."""
    die_with_parent(parent, use_prctl=pdeathsig, exit_code=0)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    rfd, wfd = _protocol_fds()
    model: NativeModel | None = None
    while True:
        header = _read_exactly(rfd, _HEADER.size)
        body = _read_exactly(rfd, _HEADER.unpack(header)[0]) if header else None
        if body is None:
            os._exit(0)
        try:
            model, result = _answer(model, pickle.loads(body))
            reply: tuple[str, Any] = ("ok", result)
        except EmbeddingError as exc:
            reply = ("error", str(exc))
        data = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        view = memoryview(_HEADER.pack(len(data)) + data)
        while view:
            view = view[os.write(wfd, view):]


if __name__ == "__main__":
    serve(int(sys.argv[1]), sys.argv[2] == "1")
