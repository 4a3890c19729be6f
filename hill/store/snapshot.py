"""A consistent copy of a live hill database, through SQLite's online backup
API, and what that copy holds at its moment.

`copy_database` copies in short steps (`STEP_PAGES` pages each, the source
read-locked only during a step), so a writer is held a moment at most.
SQLite starts a stepped copy over whenever another connection writes to the
source between two steps; a busy hill (a tournament commits every tenth of
a second) could keep a big copy from ever ending, so after `RESTARTS`
restarts it is copied in one step: in WAL mode (the hill's database is
always in it) that step reads one snapshot of the database and blocks no
writer (they append to the WAL meanwhile); in another journal mode the
writers wait for that step.
"""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from hill.rules.events import HILL_CHANGES

STEP_PAGES = 1024  # 4 MB of 4 KB pages: a few milliseconds of reading
RESTARTS = 3  # stepped restarts before a WAL database is read in one snapshot
PAUSE = 0.005  # before a step tried again when the database is busy


@dataclass(frozen=True)
class Copied:
    """How a copy went: its pages, the steps taken, the restarts, whether
    it ended in one step (one snapshot), how long it took, the longest step."""

    pages: int
    steps: int
    restarts: int
    one_snapshot: bool
    seconds: float
    longest_step: float


@dataclass(frozen=True)
class Moment:
    """What a hill database holds: its last hill change (the last event of
    its history, tests aside) and the commit noted for it, if any."""

    event: int | None
    commit: str | None


def copy_database(source: Path, target: Path, *, step_pages: int = STEP_PAGES) -> Copied:
    """Copy the database `source` to the new file `target` (a consistent
    state of it, whoever writes meanwhile); `target` is checked (SQLite's
    quick_check) before this returns."""
    started = time.monotonic()
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    copy = sqlite3.connect(target)
    try:
        progress = _Progress()
        try:
            reader.backup(copy, pages=step_pages, progress=progress.step, sleep=PAUSE)
        except _Restarted:
            reader.backup(copy, pages=-1)  # one snapshot: blocks no writer in WAL mode
        one_snapshot = progress.restarts > RESTARTS
        copy.execute("PRAGMA journal_mode=DELETE")  # one self-contained file (WAL again on use)
        checked = copy.execute("PRAGMA quick_check").fetchone()[0]
        if checked != "ok":
            raise sqlite3.DatabaseError(f"the copy of {source} is damaged: {checked}")
        pages = copy.execute("PRAGMA page_count").fetchone()[0]
    finally:
        copy.close()
        reader.close()
    return Copied(
        pages,
        progress.steps,
        progress.restarts,
        one_snapshot,
        time.monotonic() - started,
        progress.longest,
    )


class _Restarted(Exception):
    """Too many restarts of a stepped copy."""


class _Progress:
    """Counts a stepped copy's steps and restarts (the pages left going up),
    and gives up stepping after RESTARTS restarts."""

    def __init__(self) -> None:
        self.steps = 0
        self.restarts = 0
        self.left: int | None = None
        self.last = time.monotonic()
        self.longest = 0.0

    def step(self, status: int, remaining: int, total: int) -> None:
        now = time.monotonic()
        self.longest = max(self.longest, now - self.last)
        self.steps += 1
        if self.left is not None and remaining > self.left:
            self.restarts += 1
            if self.restarts > RESTARTS:
                raise _Restarted
        self.left = remaining
        self.last = time.monotonic()


def moment(database: Path) -> Moment:
    """The last hill change a database holds (tests are no changes), and its
    noted commit; read with plain SQL so that any copy can be asked."""
    connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        kinds = sorted(str(kind) for kind in HILL_CHANGES)
        row = connection.execute(
            f'SELECT id, "commit" FROM events WHERE kind IN ({",".join("?" * len(kinds))}) '
            "ORDER BY id DESC LIMIT 1",
            kinds,
        ).fetchone()
    finally:
        connection.close()
    return Moment(row[0], row[1]) if row else Moment(None, None)
