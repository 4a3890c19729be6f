"""The one way the writers change the database: under the hill's lock
(across threads and processes: the bot and the command line), one
transaction a change."""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from sqlalchemy.orm import Session

from hill.store.database import Database


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
        with self._thread_lock:
            if self._depth == 0:
                handle = open(self.path, "a")  # noqa: SIM115 - held across the span
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX)
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
