"""A standalone tournament's state in a SQLite file (`--state FILE`).

The file holds the plan (format, entrants and their programs' content keys,
settings, seed) and the ledger: rounds and matches with their status and
result. Each ledger write is one transaction, so a SIGKILL at any moment
leaves the file as it was after some write; running the same command again
picks up from there (checked-out matches go back to the queue).

The hill's own tournaments keep the same rows in the hill's database
(hill/store/records.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sqlalchemy import Column, Integer, MetaData, String, Table, Text, create_engine, event, select
from sqlalchemy.exc import DatabaseError

from hill.engine import Played
from hill.errors import TournamentError
from hill.store.database import translate_errors
from hill.store.ledger_rows import stored_changes, write_statements
from hill.tournaments.ledger import LedgerChange

metadata = MetaData()
plan_table = Table(
    "tournament",
    metadata,
    Column("id", Integer, primary_key=True),
    Column("plan", Text, nullable=False),  # JSON
    Column("ended", Text),
)
rounds_table = Table(
    "rounds",
    metadata,
    Column("number", Integer, primary_key=True),
    Column("bye", Text),
)
matches_table = Table(
    "matches",
    metadata,
    Column("round", Integer, primary_key=True),
    Column("board", Integer, primary_key=True),
    Column("a", Text, nullable=False),
    Column("b", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("margin", Integer),
)


def _configure(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL with NORMAL sync: a killed process loses no commit; a power cut may
    # lose the last few, and those matches are simply played again
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


class StateFile:
    """The ledger store of one tournament, in the SQLite file at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.engine = create_engine(f"sqlite:///{path}")
        event.listen(self.engine, "connect", _configure)
        translate_errors(self.engine)
        try:
            metadata.create_all(self.engine)
        except DatabaseError as error:
            raise TournamentError(f"{path}: not a tournament state file ({error.orig})") from None

    def stored_plan(self) -> dict[str, Any] | None:
        """The plan this file was made for, or None for a new file."""
        with self.engine.connect() as connection:
            text = connection.scalar(select(plan_table.c.plan).where(plan_table.c.id == 1))
        return None if text is None else json.loads(text)

    def claim(self, plan: dict[str, Any]) -> None:
        """Make the file this plan's, or check that it already is."""
        stored = self.stored_plan()
        if stored is None:
            with self.engine.begin() as connection:
                connection.execute(plan_table.insert().values(id=1, plan=json.dumps(plan)))
        elif stored != plan:
            differ = sorted(key for key in plan if plan[key] != stored.get(key))
            raise TournamentError(
                f"{self.path} holds another tournament (its {', '.join(differ)} differ): "
                "give the same files and options, or a new --state file"
            )

    def write(self, changes: list[LedgerChange], played: Sequence[Played] = ()) -> None:
        """The changes in one transaction (jousts are not kept here)."""
        with self.engine.begin() as connection:
            for statement, rows in write_statements(changes, rounds_table, matches_table, _end):
                connection.execute(statement, rows)

    def read(self) -> list[LedgerChange]:
        with self.engine.connect() as connection:
            rounds = connection.execute(select(rounds_table).order_by(rounds_table.c.number))
            matches = connection.execute(
                select(matches_table).order_by(matches_table.c.round, matches_table.c.board)
            )
            ended = connection.scalar(select(plan_table.c.ended).where(plan_table.c.id == 1))
            return stored_changes(rounds, matches, ended)

    def close(self) -> None:
        self.engine.dispose()


def _end(reason: str) -> Any:
    return plan_table.update().where(plan_table.c.id == 1).values(ended=reason)
