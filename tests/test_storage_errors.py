"""The storage's failures leave the store and the history as the project's
own StorageError (hill.errors), translated where SQLite and git are called:
a real SQLite file that fills up, a real git that cannot write its index.
(tests/test_storage_trouble.py runs the whole bot on a full disk.)"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text

from hill.config import HillSettings
from hill.errors import DiskFull, HistoryUnavailable, StorageError
from hill.store.database import Database
from hill.writers.hill import Hill

RUSH = b"(>)*9([-]>)*21"
TRAIL = b">(+)*10>(-)*10(>)*6([+]>)*21"


def test_a_full_database_raises_disk_full(tmp_path: Path) -> None:
    db = Database(tmp_path / "full.sqlite3")
    with db.transaction() as session:
        session.execute(text("CREATE TABLE blobs (data BLOB)"))
    with pytest.raises(DiskFull) as raised, db.transaction() as session:
        session.execute(text("PRAGMA max_page_count = 16"))  # this connection's file is full at 16
        for _ in range(64):
            session.execute(text("INSERT INTO blobs VALUES (zeroblob(4096))"))
    assert raised.value.trouble == "the hill's disk is full"
    assert isinstance(raised.value.__cause__, sqlite3.OperationalError)  # SQLite's, kept
    db.close()


def test_other_database_errors_are_left_as_they_are(tmp_path: Path) -> None:
    db = Database(tmp_path / "bug.sqlite3")
    with pytest.raises(Exception) as raised, db.transaction() as session:
        session.execute(text("SELECT * FROM no_such_table"))
    assert not isinstance(raised.value, StorageError)  # a bug, not the storage
    db.close()


def test_git_failing_leaves_the_change_made_and_the_history_behind(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path), jobs=2)
    hill.challenge("ann", "rush", RUSH)
    lock = tmp_path / "hill-repo" / ".git" / "index.lock"  # as a killed git would leave it
    lock.touch()
    report = hill.challenge("bob", "trail", TRAIL)  # the database takes it all the same
    assert report.changed and hill.history.behind
    with pytest.raises(HistoryUnavailable) as raised:  # what the writer met, asked again
        hill.history.recorder.catch_up()
    assert "index.lock" in raised.value.trouble and "\n" not in raised.value.trouble
    assert hill.history.trouble.why == raised.value.trouble  # said so, on one line
    lock.unlink()
    assert hill.history.catch_up()  # in line again
    assert hill.repository.recorded_event() == hill.queries.changes()[-1].id
    hill.close()
