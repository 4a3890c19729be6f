"""For the tournament tests that kill a run mid-round: a tournament's matches
counted by status as another process sees them (read-only, both counts from
one snapshot, on one connection kept open), and the wait for the moment to
kill it."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from pathlib import Path


class MatchCounts:
    """The committed and checked-out matches of `table` in the SQLite file
    `database` (a `bfjoust tournament run` state file: "matches"; a hill:
    "tournament_matches"); (0, 0) while the file or the table is missing."""

    def __init__(self, database: Path, table: str) -> None:
        self.database = database
        self.query = (
            "SELECT count(*) FILTER (WHERE status = 'committed'),"
            f" count(*) FILTER (WHERE status = 'checked_out') FROM {table}"
        )
        self._db: sqlite3.Connection | None = None

    def __call__(self) -> tuple[int, int]:
        try:
            if self._db is None:
                uri = f"file:{self.database}?mode=ro"
                self._db = sqlite3.connect(uri, uri=True, timeout=30)
            committed, checked_out = self._db.execute(self.query).fetchone()
            return committed, checked_out
        except sqlite3.Error:  # not created yet
            self.close()
            return 0, 0

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> MatchCounts:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_mid_round(
    process: subprocess.Popen[str] | subprocess.Popen[bytes],
    counts: MatchCounts,
    committed: int,
    timeout: float = 300,
) -> None:
    """Until `committed` results or more are committed while matches are
    checked out without one (mid-round), the `process` playing them alive."""
    deadline = time.monotonic() + timeout
    while True:
        done, out = counts()
        if done >= committed and out:
            return
        assert process.poll() is None, "the run ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.005)
