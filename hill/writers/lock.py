"""The one way the writers change the database: under the hill's lock
(across threads and processes: the bot and the command line), one
transaction a change, and every transaction short.

SQLite lets one connection write at a time: a transaction that writes holds
the database's write lock until it commits, and everyone else who writes
(a player's request recorded in the request book, perhaps from another
process) waits meanwhile.  So a big piece of work (a tournament's round of
half a million matches) is written in short transactions
(`in_short_transactions`: at most about TRANSACTION_SECONDS each), with the
lock let go between them for as long as it was held, and it is ordered so
that whatever prefix of it was committed when a process stops is a
consistent state.
"""

from __future__ import annotations

import fcntl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from sqlalchemy.orm import Session

from hill.store.database import Database
from hill.writers.metrics import LOCK_WAIT

# a bulk writer holds the database's write lock about this long at most at
# once (plus its commit), then lets it go for as long: a player's request
# waits for it a fraction of a second, never seconds
TRANSACTION_SECONDS = 0.05

Write = Callable[[Session], None]  # a small piece of a big write


class HillLock:
    """The hill's lock over its database: `held()` for a span of work (a
    hill change reads, plays, writes and commits to git under it), and
    `transaction()` for one write.  A thread that holds it may take it again."""

    def __init__(self, path: Path, db: Database) -> None:
        self.path = path
        self.db = db
        self._thread_lock = threading.RLock()
        self._depth = 0  # how many times the holding thread took it
        self._file: IO[str] | None = None

    @contextmanager
    def held(self) -> Iterator[None]:
        asked = time.monotonic()
        with self._thread_lock:
            if self._depth == 0:
                handle = open(self.path, "a")  # noqa: SIM115 - held across the span
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX)
                    LOCK_WAIT.observe(time.monotonic() - asked)  # other threads', processes' turns
                except BaseException:
                    handle.close()
                    raise
                self._file = handle
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0 and self._file is not None:
                    fcntl.flock(self._file, fcntl.LOCK_UN)
                    self._file.close()
                    self._file = None

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose work is committed as one transaction under the lock."""
        with self.held(), self.db.transaction() as session:
            yield session

    def in_short_transactions(
        self, writes: Iterable[Write], between: Callable[[], None] | None = None
    ) -> None:
        """Run `writes` in order, as many of them a transaction (under the
        lock) as fit in TRANSACTION_SECONDS; after each transaction the lock
        is let go for as long as it was held, so that others write
        meanwhile, and `between()` is called: it may wait (while a player's
        request is open), or raise to stop there.  The caller orders the
        writes so that every prefix of them is a consistent state."""
        pending = iter(writes)
        write = next(pending, None)
        while write is not None:
            with self.transaction() as session:
                started = last = time.monotonic()
                while write is not None:
                    write(session)
                    write = next(pending, None)
                    now = time.monotonic()
                    # the next piece would take about as long as this one
                    if 2 * now - last - started >= TRANSACTION_SECONDS:
                        break
                    last = now
            if write is not None:
                time.sleep(time.monotonic() - started)  # the others' turn
                if between is not None:
                    between()
