"""A hill whose archive holds hundreds of programs, as a hill some years
old does, and a probe that measures from outside how long SQLite's write
lock keeps a writer waiting (what a player's request would wait)."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path

from hill.config import HillSettings
from hill.engine import code_hash
from hill.engine.varied import varied_pool
from hill.rules.events import LeaveReason, ProgramStatus
from hill.store.tables import ProgramRow
from hill.writers.hill import Hill


def quick_programs(count: int, seed: int = 7) -> list[tuple[str, bytes]]:
    """`count` short random programs: their jousts take microseconds, so a
    tournament of them is all bookkeeping (the part that must stay short)."""
    return varied_pool(count, seed, shares={"noise": 1.0})


def archive_hill(data: Path, programs: list[tuple[str, bytes]]) -> None:
    """A hill (empty now) whose archive holds `programs`, each submitted
    once long ago and pushed off since (stored at once: submitting them
    one at a time would cost a git commit each)."""
    hill = Hill(HillSettings(data_dir=data, size=10), jobs=1)
    try:
        with hill.lock.transaction() as session:
            session.add_all(
                ProgramRow(
                    owner="old",
                    name=name,
                    code=code,
                    code_hash=code_hash(code),
                    status=ProgramStatus.LEFT,
                    left_reason=LeaveReason.PUSHED_OFF,
                )
                for name, code in programs
            )
    finally:
        hill.close()


def committed_matches(data: Path) -> int:
    """The tournament matches committed in the hill at `data` (all its
    tournaments), counted in SQL: a view of a big tournament takes seconds."""
    with contextlib.closing(sqlite3.connect(data / "hill.sqlite3", timeout=30)) as db:
        query = "SELECT count(*) FROM tournament_matches WHERE status = 'committed'"
        return db.execute(query).fetchone()[0]


class WriteLockProbe:
    """Takes SQLite's write lock of `database` again and again (an empty
    transaction, as the request book's insert would), from a thread of the
    test: `longest` is the longest it waited for the lock."""

    def __init__(self, database: Path, every: float = 0.02) -> None:
        self.database = database
        self.every = every
        self.longest = 0.0
        self.tries = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> WriteLockProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with contextlib.closing(
            sqlite3.connect(self.database, timeout=600, isolation_level=None)
        ) as db:
            while not self._stop.wait(self.every):
                asked = time.monotonic()
                db.execute("BEGIN IMMEDIATE")
                db.execute("COMMIT")
                self.longest = max(self.longest, time.monotonic() - asked)
                self.tries += 1
