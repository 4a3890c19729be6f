"""A tournament's state file read as another process reads it (read-only)."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path


def count_matches(state: Path, status: str) -> int:
    try:
        with closing(sqlite3.connect(f"file:{state}?mode=ro", uri=True)) as db:
            query = "SELECT count(*) FROM matches WHERE status = ?"
            return db.execute(query, (status,)).fetchone()[0]
    except sqlite3.Error:  # not created yet
        return 0
