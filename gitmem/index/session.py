"""One answer's view of its workspace: the session recall asks, cold or warm.

A session holds the workspace and its configuration and gives an answer what it needs from
around it: the index brought up to date (``catch_up``), a read connection (``reading``), what
depends on the index's content alone (``of_index``), the vectors' sign bits, and whether the
query is embedded while its words are searched. :class:`Session` is a command run alone: it
opens what it needs and closes it after. :class:`WarmSession` is the warm process
(``index.watch.WarmState``): it keeps the connection, the counts and the sign bits between
answers and skips the freshness check while nothing changed. Front ends choose one; the core
never asks which it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from gitmem.config import Config
from gitmem.index.run import catch_up, ensure_index
from gitmem.index.store import Store, open_store
from gitmem.workspace import Workspace

if TYPE_CHECKING:
    from gitmem.index.signbits import SignBits
    from gitmem.index.watch import WarmState

T = TypeVar("T")


class Session:
    """A command run alone: everything is opened for the answer and closed after it."""

    embeds_early = False  # embed the query in a thread while its words are searched

    def __init__(self, ws: Workspace, cfg: Config) -> None:
        self.ws, self.cfg = ws, cfg

    def catch_up(self) -> list[str]:
        """Bring the index up to date with HEAD and the working tree (``index.run``); the
        notes it has for the answer."""
        return ensure_index(self.ws, self.cfg)

    @contextmanager
    def reading(self) -> Iterator[Store]:
        """A read connection to the index for the length of the block."""
        store = open_store(self.ws.index_path, readonly=True)
        try:
            yield store
        finally:
            store.close()

    def of_index(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()``: what depends on the index's content alone (``name`` says which)."""
        return compute()

    def sign_bits(self) -> SignBits | None:
        """The vectors' sign bits held in memory; None: the index's vec0 table answers."""
        return None


class WarmSession(Session):
    """The warm process: the read connection, the counts and the sign bits outlive an answer
    (``WarmState``); the freshness check is skipped while nothing changed."""

    embeds_early = True

    def __init__(self, ws: Workspace, cfg: Config, warm: WarmState) -> None:
        super().__init__(ws, cfg)
        self.warm = warm

    def catch_up(self) -> list[str]:
        """No check at all while nothing the index depends on changed since it was last
        found current (``WarmState.index_known``); else the command's catch-up, remembered."""
        known, counts = self.warm.index_known(self.ws, self.cfg)
        if known and self.ws.index_path.exists():  # ('gitmem reset' removes the file)
            return []
        done = catch_up(self.ws, self.cfg)
        if done.current:
            self.warm.found_current(self.ws, self.cfg, counts)
        elif done.stamp is not None:
            # current with what changed before ``counts``: the next request needs no check
            # while nothing but this write changed (the watch sees the write itself)
            self.warm.wrote_current(self.ws, self.cfg, counts, done.stamp)
        return done.notes

    @contextmanager
    def reading(self) -> Iterator[Store]:
        """The connection kept since the last answer (``WarmState.reader``), kept again
        after this one unless the block failed."""
        store = self.warm.reader(self.ws.index_path)
        failed = True
        try:
            yield store
            failed = False
        finally:
            self.warm.release(self.ws.index_path, store, failed=failed)

    def of_index(self, name: str, compute: Callable[[], T]) -> T:
        """Counted once per state of the index file (``WarmState.of_index``)."""
        return self.warm.of_index(self.ws.index_path, name, compute)

    def sign_bits(self) -> SignBits | None:
        return self.warm.sign_bits(self.ws)
