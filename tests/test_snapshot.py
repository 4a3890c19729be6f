"""The online copy of a live SQLite database (hill.store.snapshot) on real
files, while another connection writes as fast as it can: the copy is one
consistent state, in short steps when it can, in one WAL snapshot when the
writes keep starting it over."""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from hill.store.snapshot import copy_database


class Writer:
    """Transactions that each add a row to `ledger` and keep `total` equal to
    their sum: any state but a consistent one breaks the equality."""

    def __init__(self, path: Path, journal: str) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
        self.db.execute(f"PRAGMA journal_mode={journal}")
        self.db.execute("CREATE TABLE ledger (id INTEGER PRIMARY KEY, amount INTEGER, pad BLOB)")
        self.db.execute("CREATE TABLE total (value INTEGER)")
        self.db.execute("INSERT INTO total VALUES (0)")
        self.stop = threading.Event()
        self.commits = 0
        self.longest = 0.0
        for _ in range(200):  # some MB, so that a copy takes many steps
            self.write(4096)
        self.thread = threading.Thread(target=self._run)

    def write(self, pad: int = 64) -> None:
        asked = time.monotonic()
        self.db.execute("BEGIN IMMEDIATE")
        self.longest = max(self.longest, time.monotonic() - asked)
        insert = "INSERT INTO ledger (amount, pad) VALUES (?, zeroblob(?))"
        for amount in (1, 2, 3):
            self.db.execute(insert, (amount, pad))
        self.db.execute("UPDATE total SET value = value + 6")
        self.db.execute("COMMIT")
        self.commits += 1

    def _run(self) -> None:
        while not self.stop.is_set():
            self.write()

    def __enter__(self) -> Writer:
        self.longest = 0.0
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.db.close()


def consistent(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as copy:
        (total,) = copy.execute("SELECT value FROM total").fetchone()
        (summed,) = copy.execute("SELECT sum(amount) FROM ledger").fetchone()
        assert copy.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    assert total == summed
    return total


@pytest.mark.parametrize("journal", ["wal", "delete"])
def test_a_copy_beside_a_busy_writer_is_one_state(tmp_path: Path, journal: str) -> None:
    source = tmp_path / "live.sqlite3"
    writer = Writer(source, journal)
    with writer:
        while writer.commits < 250:
            time.sleep(0.001)
        copied = copy_database(source, tmp_path / "copy.sqlite3", step_pages=8)
        more = writer.commits
        time.sleep(0.05)
    total = consistent(tmp_path / "copy.sqlite3")
    print(f"{journal}: {copied}, writer's longest wait {writer.longest * 1000:.1f} ms")
    assert total > 0 and writer.commits > more  # the writer went on during and after
    assert copied.steps > 1 and copied.pages > 8
    assert copied.one_snapshot == (copied.restarts > 3)  # the writes kept starting it over
