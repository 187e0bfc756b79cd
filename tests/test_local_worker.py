"""The local provider's worker process: llama.cpp runs there, so a native crash is a provider
failure and never takes gitmem down. Real llama.cpp, real signals, real processes.

Native crashes are made two ways: a model file truncated while llama.cpp has it mapped (its next
embedding touches pages that no longer exist: SIGBUS inside llama.cpp), and a signal sent to the
worker (SIGKILL/SIGSEGV, as the AMX kernels of issue 10 did) while it loads or embeds.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from embed_server import EmbedServer, Fault
from gguf_model import N_EMBD, tiny_gguf

from gitmem.embed import local, worker
from gitmem.embed.base import EmbeddingError
from gitmem.embed.local import LocalEmbedder
from testing.bounds import FAILURE_SECONDS
from testing.cli import gitmem, recall_json
from testing.contract import GOOD_DAILY, GOOD_TEXT
from testing.gitenv import model_from_files
from testing.repo import commit_all, make_repo, write

pytest.importorskip("llama_cpp")

TEXTS = ["peter prefers concise whatsapp replies", "alice likes coffee in the morning",
         "the release was decided on monday"]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_gguf(tmp_path_factory)


@pytest.fixture
def model_copy(tiny_model: Path, tmp_path: Path) -> Path:
    """A private copy of the tiny model (tests truncate it; embedders are cached per path)."""
    return Path(shutil.copyfile(tiny_model, tmp_path / "model.gguf"))


def _cos(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True)) / math.sqrt(
        sum(x * x for x in a) * sum(y * y for y in b))


def _gone(pid: int, within: float = FAILURE_SECONDS) -> bool:
    """True when ``pid`` has exited (reaped, or a zombie nobody reaps) within the time (a
    deadline for failures only: a loaded machine is slow, not wrong)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False


def _workers(parent: int | None = None) -> set[int]:
    """The embedding workers of ``parent`` (default: this process), from /proc."""
    parent = os.getpid() if parent is None else parent
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (entry / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == parent and b"gitmem.embed.worker" in cmd:
            found.add(int(entry.name))
    return found


@contextlib.contextmanager
def killing_workers(sig: signal.Signals, parent: int | None = None) -> Iterator[list[int]]:
    """Send ``sig`` to every embedding worker ``parent`` (default: this process) starts
    meanwhile; yields the pids. This process's workers get it the moment they are started,
    before a request reaches them (so they die loading, however loaded the machine is: a
    watcher could see one only after it answered); another process's as soon as /proc shows
    them (loading or embedding)."""
    killed: list[int] = []
    if parent is None:
        start = worker.Worker.__init__

        def started_and_killed(self: worker.Worker) -> None:
            start(self)
            os.kill(self.pid, sig)
            killed.append(self.pid)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(worker.Worker, "__init__", started_and_killed)
            yield killed
        return
    stop = threading.Event()
    before = _workers(parent)

    def run() -> None:
        while not stop.is_set():
            for pid in _workers(parent) - before - set(killed):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
                killed.append(pid)
            time.sleep(0.002)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield killed
    finally:
        stop.set()
        thread.join(5)


# -- quantized models, and the AMX setting ---------------------------------------------------------


@pytest.mark.parametrize("qtype", ["q8_0", "q4_0"])
def test_quantized_tiny_model_embeds_close_to_f32(tmp_path_factory: pytest.TempPathFactory,
                                                  tiny_model: Path, qtype: str) -> None:
    quantized = LocalEmbedder(tiny_gguf(tmp_path_factory, qtype=qtype), threads=2)
    full = LocalEmbedder(tiny_model, threads=2)
    try:
        got = quantized.embed_batch(TEXTS, input_type="document")
        want = full.embed_batch(TEXTS, input_type="document")
    finally:
        quantized.close()
        full.close()
    assert len(got) == len(TEXTS) and all(len(g) == N_EMBD for g in got)
    for g, w in zip(got, want, strict=True):
        # 4 bits: coarser (the random weights' worst text is at 0.949-0.950, with flash
        # attention's f16 keys and values or without)
        assert _cos(g, w) > (0.999 if qtype == "q8_0" else 0.94)
        assert g != w  # really quantized weights, not the f32 model again


def test_weights_are_never_repacked(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Issue 10: llama.cpp's extra buffer types repack weights for special kernels; the AMX one
    crashes on Q8_0. The local provider keeps weights in the plain CPU buffer. On this CPU
    (AVX2) llama.cpp's default repacks Q4_0, which shows that the check sees a repack."""
    q4 = tiny_gguf(tmp_path_factory, qtype="q4_0")
    embedder = LocalEmbedder(q4, threads=1)
    try:
        buffers = embedder.model_info.buffers
        assert embedder.embed_batch(["coffee"], input_type="query")
    finally:
        embedder.close()
    assert buffers and all(b in ("CPU", "CPU_Mapped") for b in buffers), buffers

    # The default, in a child of its own (on an AMX machine it may crash): repacked.
    import llama_cpp

    features = llama_cpp.llama_print_system_info().decode()
    code = ("import sys; from pathlib import Path; from gitmem.embed.native import NativeModel; "
            "m = NativeModel(Path(sys.argv[1]), extra_buffers=True); print(*m.info.buffers)")
    run = subprocess.run([sys.executable, "-c", code, str(q4)], capture_output=True, text=True,
                         timeout=FAILURE_SECONDS)
    if "REPACK = 1" in features and ("AVX2 = 1" in features or "NEON = 1" in features):
        assert run.returncode < 0 or {"CPU_REPACK", "AMX"} & set(run.stdout.split()), run


# -- native crashes become EmbeddingError ---------------------------------------------------------


def test_a_native_crash_in_llama_cpp_is_an_embedding_error(model_copy: Path) -> None:
    """The model file shrinks while llama.cpp has it mapped: its next embedding dies of SIGBUS
    inside llama.cpp (before the worker, that killed the whole gitmem process). The worker is
    restarted once; the truncated file then does not load."""
    others = _workers()  # workers of embedders that earlier tests left in select's cache
    embedder = LocalEmbedder(model_copy, threads=1)
    try:
        first = embedder.embed_batch(["coffee"], input_type="query")
        assert len(first[0]) == N_EMBD
        workers = _workers() - others
        os.truncate(model_copy, model_copy.stat().st_size // 2)
        with pytest.raises(EmbeddingError) as err:
            embedder.embed_batch(TEXTS, input_type="document")
        message = str(err.value)
        assert "crashed with SIGBUS" in message and str(model_copy) in message
        assert "while embedding" in message and "cannot load" in message
        assert len(workers) == 1 and all(_gone(pid) for pid in workers)
        assert _workers() <= others
    finally:
        embedder.close()


def test_a_worker_killed_mid_embedding_is_restarted_once(tiny_model: Path) -> None:
    embedder = LocalEmbedder(tiny_model, threads=1)
    # ~1 s of CPU for the tiny model on one thread: a kill once it computes lands mid-embedding.
    texts = [f"{i} " + " ".join(["alice likes coffee and long walks in the garden"] * 12)
             for i in range(300)]
    try:
        want = embedder.embed_batch(texts[:3], input_type="document")
        pid = embedder.worker_pid
        assert pid is not None

        # SIGKILL once the worker is computing (its CPU time grows), not after a fixed delay:
        # a loaded machine may not have started the call by then, or may have finished it.
        killed_at: list[float] = []
        done = threading.Event()
        killer = threading.Thread(target=_signal_when_busy,
                                  args=(pid, pid, signal.SIGKILL, done, killed_at))
        killer.start()
        try:
            got = embedder.embed_batch(texts, input_type="document")
            returned_at = time.monotonic()
        finally:
            done.set()
            killer.join()
        assert killed_at and killed_at[0] < returned_at  # the kill landed during the call
        assert len(got) == len(texts) and got[:3] == want  # and the request was repeated
        assert embedder.worker_pid not in (None, pid) and _gone(pid)

        # Dying again right after the restart: given up, with the reason, for good.
        with killing_workers(signal.SIGSEGV) as killed:
            embedder.close()
            with pytest.raises(EmbeddingError) as err:
                embedder.embed_batch(["coffee"], input_type="query")
        message = str(err.value)
        assert "crashed with SIGSEGV (Segmentation fault)" in message, message
        assert "again after a restart" in message and str(tiny_model) in message
        assert len(killed) == 2 and all(_gone(p) for p in killed)
        before = _workers()
        with pytest.raises(EmbeddingError, match="not tried again"):
            embedder.embed_batch(["coffee"], input_type="query")
        assert _workers() == before  # no third worker
    finally:
        embedder.close()


def test_a_hung_worker_is_killed_after_the_timeout(tiny_model: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = LocalEmbedder(tiny_model, threads=1)
    try:
        assert embedder.dimension == N_EMBD
        pid = embedder.worker_pid
        assert pid is not None
        monkeypatch.setattr(local, "EMBED_TIMEOUT", 0.5)
        monkeypatch.setattr(local, "EMBED_TIMEOUT_PER_TEXT", 0.0)
        os.kill(pid, signal.SIGSTOP)  # a worker that never answers
        started = time.monotonic()
        with pytest.raises(EmbeddingError, match=r"did not answer within 0\.5 s"):
            embedder.embed_batch(["coffee"], input_type="query")
        # the patched 0.5 s (the message says so), not the default 60 s: a failure bound only
        assert 0.5 <= time.monotonic() - started < FAILURE_SECONDS
        assert _gone(pid) and embedder.worker_pid is None
    finally:
        embedder.close()


def test_ctrl_c_mid_call_stops_the_worker_and_the_next_call_works(tiny_model: Path) -> None:
    """The terminal's Ctrl-C reaches gitmem and its worker: the worker ignores it (gitmem
    decides), an interrupted call stops the worker, and a library caller that goes on gets a
    new one."""
    embedder = LocalEmbedder(tiny_model, threads=1)
    texts = [f"{i} " + " ".join(["alice likes coffee and long walks in the garden"] * 12)
             for i in range(40000)]  # far more work than the time to interrupt it
    try:
        want = embedder.embed_batch(["coffee"], input_type="query")
        pid = embedder.worker_pid
        assert pid is not None
        os.kill(pid, signal.SIGINT)
        assert embedder.embed_batch(["coffee"], input_type="query") == want
        assert embedder.worker_pid == pid

        # Ctrl-C once the worker is computing (its CPU time grows), not after a fixed delay:
        # a loaded machine may not have started the call by then.
        done = threading.Event()
        interrupt = threading.Thread(target=_signal_when_busy,
                                     args=(pid, os.getpid(), signal.SIGINT, done))
        # Ctrl-C as a gitmem process gets it: Python's own handler (an earlier test in the
        # same pytest process may have left another one installed: the call then ran to its end)
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        interrupt.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                embedder.embed_batch(texts, input_type="document")
        finally:
            done.set()  # never a Ctrl-C after the call, whatever happened
            interrupt.join()
            signal.signal(signal.SIGINT, previous)
        assert _gone(pid)
        assert embedder.embed_batch(["coffee"], input_type="query") == want
        assert embedder.worker_pid not in (None, pid)
    finally:
        embedder.close()


def _cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime


def _signal_when_busy(pid: int, target: int, sig: signal.Signals, done: threading.Event,
                      sent_at: list[float] | None = None,
                      timeout: float = FAILURE_SECONDS) -> None:
    """``sig`` to ``target`` as soon as worker ``pid`` has used CPU since this began, unless
    the call ended first (``done``); when it was sent goes to ``sent_at``."""
    start, deadline = _cpu_ticks(pid), time.monotonic() + timeout
    while _cpu_ticks(pid) == start and time.monotonic() < deadline and not done.is_set():
        time.sleep(0.005)
    if not done.is_set():
        os.kill(target, sig)
        if sent_at is not None:
            sent_at.append(time.monotonic())


def test_close_stops_the_worker_and_the_next_use_starts_one(tiny_model: Path) -> None:
    embedder = LocalEmbedder(tiny_model, threads=1)
    first = embedder.embed_batch(["git commit"], input_type="query")
    pid = embedder.worker_pid
    assert pid is not None
    embedder.close()
    assert _gone(pid) and embedder.worker_pid is None
    try:
        assert embedder.embed_batch(["git commit"], input_type="query") == first
        assert embedder.worker_pid not in (None, pid)
    finally:
        embedder.close()


def test_the_worker_holds_no_descriptor_of_gitmem(tiny_model: Path, tmp_path: Path) -> None:
    """Issue 10 §1: forked workers that inherited the index lock kept it forever. The worker
    inherits nothing: not a lock file the parent holds open while it starts the worker."""
    lock = tmp_path / "index.lock"
    with lock.open("w"):
        embedder = LocalEmbedder(tiny_model, threads=1)
        try:
            assert embedder.dimension == N_EMBD
            fds = Path(f"/proc/{embedder.worker_pid}/fd")
            targets = {os.readlink(fd) for fd in fds.iterdir()}
        finally:
            embedder.close()
    assert str(lock) not in targets
    assert not any(t.startswith(str(tmp_path)) for t in targets)


_ORPHAN = """
import os, signal, sys, threading
from gitmem.embed.local import LocalEmbedder
embedder = LocalEmbedder(sys.argv[1], threads=1)
if sys.argv[2] == "thread":  # started from a thread that ends before the process
    t = threading.Thread(target=lambda: embedder.dimension)
    t.start(); t.join()
else:
    embedder.dimension
print(embedder.worker_pid, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("started_from", ["main", "thread"])
def test_the_worker_dies_with_its_parent(tiny_model: Path, started_from: str) -> None:
    run = subprocess.run([sys.executable, "-c", _ORPHAN, str(tiny_model), started_from],
                         capture_output=True, text=True, timeout=FAILURE_SECONDS)
    assert run.returncode == -signal.SIGKILL, run.stderr
    pid = int(run.stdout)
    assert _gone(pid)


_SIGPIPE = """
import os, signal, sys, time
from gitmem.embed.local import LocalEmbedder
signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # as gitmem's command line does
embedder = LocalEmbedder(sys.argv[1], threads=1)
first = embedder.embed_batch(["coffee"], input_type="query")
pid = embedder.worker_pid
os.kill(pid, signal.SIGKILL)
while open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
    time.sleep(0.01)
again = embedder.embed_batch(["coffee"], input_type="query")  # writes to the dead worker first
print(again == first, embedder.worker_pid not in (None, pid))
"""


def test_a_worker_that_died_between_calls_cannot_kill_gitmem_with_sigpipe(
        tiny_model: Path) -> None:
    """gitmem's command line restores the default SIGPIPE action; the next request still goes
    to a worker that is already dead. That must restart it, not end gitmem."""
    run = subprocess.run([sys.executable, "-c", _SIGPIPE, str(tiny_model)],
                         capture_output=True, text=True, timeout=FAILURE_SECONDS)
    assert run.returncode == 0, (run.returncode, run.stderr)
    assert run.stdout.split() == ["True", "True"]


# -- the commands -------------------------------------------------------------------------------


def _configure(model: Path, **settings: str) -> None:
    model_from_files()
    config = Path.home() / ".config" / "gitmem" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"model = {json.dumps(str(model))}", *(f'{k} = "{v}"' for k, v in settings.items())]
    config.write_text("[embed]\n" + "\n".join(lines) + "\n", encoding="utf-8")


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    write(repo, GOOD_DAILY, GOOD_TEXT)
    commit_all(repo, "notes")
    return repo


@pytest.mark.parametrize("provider", ["auto", "local"])
def test_recall_answers_lexically_when_the_model_crashes(tmp_path: Path, model_copy: Path,
                                                         provider: str) -> None:
    _configure(model_copy, provider=provider)
    repo = _repo(tmp_path)
    code, out, err = gitmem("-C", str(repo), "index", "--json")
    assert code == 0 and json.loads(out)["embedding"]["pending"] == 0, err

    with killing_workers(signal.SIGSEGV) as killed:
        data = recall_json(repo, "gateway host", "--mode", "hybrid")
    assert len(killed) == 2
    assert data["mode"] == "lexical" and data["provider"]["name"] == "none"
    assert data["results"] and data["results"][0]["source"] == f"{GOOD_DAILY}#L2"
    [warning] = [w for w in data["warnings"] if "semantic search failed" in w]
    assert "crashed with SIGSEGV" in warning and "results are lexical" in warning


def test_index_keeps_the_lexical_index_when_the_model_crashes(tmp_path: Path,
                                                              model_copy: Path) -> None:
    _configure(model_copy, provider="local")
    repo = _repo(tmp_path)
    with killing_workers(signal.SIGKILL) as killed:
        code, out, err = gitmem("-C", str(repo), "index", "--json")
    assert code == 0, err
    assert len(killed) == 2
    result = json.loads(out)
    assert "crashed with SIGKILL" in result["embedding_note"]
    assert "the lexical index is up to date" in result["embedding_note"]
    data = recall_json(repo, "gateway host", "--mode", "lexical")
    assert data["results"] and data["results"][0]["source"] == f"{GOOD_DAILY}#L2"


def test_explicit_provider_with_a_crashing_local_fallback_exits_4(
        tmp_path: Path, model_copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _repo(tmp_path)
    with EmbedServer(dim=16) as server:
        monkeypatch.setenv("GITMEM_EMBED_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        _configure(model_copy, provider="openai", fallback="local")
        code, _, err = gitmem("-C", str(repo), "index")
        assert code == 0, err
        server.script(Fault(status=401))
        with killing_workers(signal.SIGSEGV) as killed:
            code, out, err = gitmem("-C", str(repo), "recall", "gateway", "--json")
    assert code == 4 and out == ""
    assert len(killed) == 2
    assert "memory search unavailable" in err and "the fallback failed too" in err
    assert "crashed with SIGSEGV" in err


def test_a_real_gitmem_process_survives_a_crashing_model(tmp_path: Path,
                                                         model_copy: Path) -> None:
    """``python -m gitmem`` (the command line's own signal set-up), its workers crashing."""
    _configure(model_copy, provider="auto")
    repo = _repo(tmp_path)
    for args in (["index", "--json"], ["recall", "gateway host", "--json"]):
        proc = subprocess.Popen([sys.executable, "-m", "gitmem", "-C", str(repo), *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with killing_workers(signal.SIGSEGV, parent=proc.pid) as killed:
            out, err = proc.communicate(timeout=FAILURE_SECONDS)
        assert proc.returncode == 0, err
        assert len(killed) == 2
        data = json.loads(out)
        if args[0] == "index":
            assert "crashed with SIGSEGV" in data["embedding_note"]
        else:
            assert data["mode"] == "lexical"
            assert data["results"][0]["source"] == f"{GOOD_DAILY}#L2"
            assert any("crashed with SIGSEGV" in w for w in data["warnings"])
