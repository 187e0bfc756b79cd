"""Searching content: ``git grep`` at a revision or in the work tree, and what holds a text."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from gitmem.errors import GitmemError
from gitmem.git import process


def _scratch_file() -> BinaryIO:
    """An unnamed file for a child's output, gone when closed: in memory on Linux
    (``memfd_create``: no ``tempfile`` import, no disk), else a temporary file."""
    if hasattr(os, "memfd_create"):
        try:
            return os.fdopen(os.memfd_create("gitmem-out", os.MFD_CLOEXEC), "w+b")
        except OSError:
            pass
    import tempfile

    return tempfile.TemporaryFile()


class GrepJob:
    """``git grep`` at a revision, started in the background: the caller parses while git
    searches (the output goes to an unnamed file, so git never waits for a full pipe), and
    ``batches()`` hands over what git has written so far while it still searches.

    ``lines()`` gives (repository-relative path, line number, line) of every line that matches
    any of the extended regular expressions (and ``require`` too, when given), ignoring case;
    binary files are skipped. The patterns are run as Perl-compatible regular expressions
    (``-P``: the same matches for this subset of ERE, about twice as fast over a long history as
    ``-E``), and again with ``-E`` when this git was built without PCRE. git searches with one
    thread: reading the blobs is its work, and more threads add CPU, not speed (the caller
    uses the other core meanwhile)."""

    POLL_SECONDS = 0.002  # how long ``batches()`` waits for more output while git runs

    def __init__(self, repo_root: Path, rev: str, patterns: Sequence[str],
                 pathspecs: Sequence[str], require: str | None = None) -> None:
        self.rev = rev
        self._proc: subprocess.Popen[bytes] | None = None
        if not patterns:
            return
        self._git = ["git", "-C", str(repo_root), "--literal-pathspecs", "grep"]
        args = ["-n", "-z", "-I", "-i", "--no-color", "--threads", "1"]
        if require is not None:
            args += ["-e", require, "--and", "("]
        for pattern in patterns:
            args += ["-e", pattern]
        if require is not None:
            args.append(")")
        self._args = [*args, rev, "--", *pathspecs]
        self._start("-P")

    def _start(self, syntax: str) -> None:
        self._syntax = syntax
        self._out, self._err = _scratch_file(), _scratch_file()
        try:
            self._proc = subprocess.Popen([*self._git, syntax, *self._args], stdout=self._out,
                                          stderr=self._err, stdin=subprocess.DEVNULL)
        except OSError as exc:
            self._out.close()
            self._err.close()
            raise GitmemError(f"cannot run git ({exc}); gitmem needs git on PATH") from exc

    def lines(self) -> list[tuple[str, int, str]]:
        return [line for batch in self.batches() for line in batch]

    def batches(self) -> Iterator[list[tuple[str, int, str]]]:
        """The matching lines in batches, each as soon as git has written it."""
        if self._proc is None:
            return
        proc, fd, offset, rest = self._proc, self._out.fileno(), 0, b""
        try:
            while True:
                finished = proc.poll() is not None
                # pread: git's file offset (shared with this descriptor) stays where git is
                chunk = os.pread(fd, 1 << 20, offset)
                if chunk:
                    offset += len(chunk)
                    data = rest + chunk
                    cut = data.rfind(b"\n") + 1
                    rest = data[cut:]
                    if cut:
                        yield self._records(data[:cut])
                elif finished:
                    break
                else:
                    time.sleep(self.POLL_SECONDS)
            if proc.returncode == 128 and self._syntax == "-P" and not offset:  # no PCRE
                self.close()
                self._start("-E")
                yield from self.batches()
                return
            if proc.returncode not in (0, 1):  # 1: nothing matched
                reason = os.pread(self._err.fileno(), 1 << 16, 0).decode("utf-8", "replace")
                raise GitmemError(f"cannot search {self.rev[:7]}: {reason.strip()}")
            if rest:
                yield self._records(rest)
        finally:
            self.close()

    def _records(self, data: bytes) -> list[tuple[str, int, str]]:
        lead = f"{self.rev}:".encode()
        out: list[tuple[str, int, str]] = []
        for record in data.split(b"\n"):
            if record.startswith(lead):
                path, number, text = record[len(lead):].split(b"\x00", 2)
                out.append((path.decode("utf-8", "surrogateescape"), int(number),
                            text.decode("utf-8", "replace")))
        return out

    def close(self) -> None:
        """Stop git if it still runs (the caller gave up) and drop its output."""
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
                self._proc.wait()
            self._out.close()
            self._err.close()
            self._proc = None


def files_containing(repo_root: Path, text: str, folder: str, revision: str | None = None
                     ) -> list[str]:
    """Repository paths of the files below ``folder`` that contain ``text``: at ``revision``,
    else in the work tree (untracked files included). One ``git grep``."""
    where = [revision] if revision is not None else ["--untracked"]
    proc = process.run(repo_root, "--literal-pathspecs", "grep", "-l", "-z", "-F", "-e", text,
                       *where, "--", folder)
    if proc.returncode not in (0, 1):
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"git grep failed in {repo_root}: {reason}")
    names = [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]
    return [n.removeprefix(f"{revision}:") for n in names] if revision else names


def commits_containing(repo_root: Path, text: str) -> list[str]:
    """Commits of any ref whose changes add or remove ``text`` or whose message holds it
    (``git log --all -S`` and ``--grep``), newest first."""
    found: dict[str, None] = {}
    for how in (["-S", text], ["--fixed-strings", "--grep", text]):
        proc = process.run(repo_root, "log", "--all", "--format=%H", *how)
        if proc.returncode != 0:
            reason = proc.stderr.decode("utf-8", "replace").strip()
            raise GitmemError(f"git log failed in {repo_root}: {reason}")
        found.update(dict.fromkeys(process.output(proc).split()))
    return list(found)


def objects_containing(repo_root: Path, texts: Sequence[str]) -> list[str]:
    """Ids of the objects in the repository's object store (reachable or not) whose content
    holds any of ``texts``: one ``git cat-file --batch-all-objects --batch``."""
    proc = process.run(repo_root, "cat-file", "--batch-all-objects", "--batch")
    if proc.returncode != 0:
        reason = proc.stderr.decode("utf-8", "replace").strip()
        raise GitmemError(f"git cat-file failed in {repo_root}: {reason}")
    needles = [t.encode("utf-8") for t in texts if t]
    data, at, hits = proc.stdout, 0, []
    while at < len(data):
        header_end = data.index(b"\n", at)
        oid, _, size = data[at:header_end].split(b" ")
        body = data[header_end + 1:header_end + 1 + int(size)]
        if any(n in body for n in needles):
            hits.append(oid.decode())
        at = header_end + 1 + int(size) + 1
    return hits

