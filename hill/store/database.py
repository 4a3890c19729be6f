"""The hill's database: SQLite through SQLAlchemy, its schema managed by Alembic.

SQLite is the truth.  Every change of the hill is one transaction (the new
program, who left, and the event with the standings after it), so a crash
leaves either the old hill or the new one.  Jousts are kept by the contents
of their two programs (hill.arena), once for the hill, tournaments and the
ladder.  The git repository and the reports are derived from it all.

Event kinds and program statuses are enums stored as their plain strings.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import (
    JSON,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    create_engine,
    event,
    exc,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker

from hill import engine
from hill.errors import HillError, NotReady


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def iso_utc(time: dt.datetime) -> str:
    """A stored time (naive UTC, as utcnow gives it) in ISO 8601 to the second, with its Z."""
    return time.isoformat(timespec="seconds") + "Z"


class EventKind(StrEnum):
    """What happened to the hill."""

    JOIN = "join"  # a program arrived on a hill with room
    CHALLENGE = "challenge"  # a program arrived and pushed the last one off
    UPDATE = "update"  # a new version of a program replaced the old one
    TEST = "test"  # a program was only tested: the hill did not change
    WITHDRAW = "withdraw"  # an owner took their program off
    REMOVE = "remove"  # an admin took a program off
    RESCORE = "rescore"  # the standings were recomputed


# the events that change the hill: its states, its history, its git commits
HILL_CHANGES = frozenset(EventKind) - {EventKind.TEST}
# the events a program on the hill survives: a newcomer challenged it
ARRIVALS = frozenset({EventKind.JOIN, EventKind.CHALLENGE, EventKind.UPDATE})


class ProgramStatus(StrEnum):
    """Where a program is."""

    HILL = "hill"  # on the hill now
    LEFT = "left"  # was on the hill
    TEST = "test"  # only tested


class LeaveReason(StrEnum):
    """Why a program left the hill."""

    PUSHED_OFF = "pushed off"
    UPDATED = "updated"
    WITHDRAWN = "withdrawn"
    REMOVED = "removed"


def _strings(enum: type[StrEnum], length: int) -> Enum:
    """A column of an enum's values as plain strings: the schema is a VARCHAR."""
    return Enum(
        enum,
        native_enum=False,
        create_constraint=False,
        length=length,
        values_callable=lambda members: [m.value for m in members],
    )


class Base(DeclarativeBase):
    """The models' base: Python types to SQL types."""

    type_annotation_map: ClassVar = {dt.datetime: DateTime(), dict[str, Any]: JSON}


class Program(Base):
    """Every program ever submitted, on the hill or not."""

    __tablename__ = "programs"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(48))
    code: Mapped[bytes] = mapped_column(LargeBinary)
    # what its jousts are kept by (hill.arena.code_hash)
    code_hash: Mapped[str] = mapped_column(String(64), index=True)
    submitted_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    status: Mapped[ProgramStatus] = mapped_column(_strings(ProgramStatus, 8), index=True)
    left_at: Mapped[dt.datetime | None]
    left_reason: Mapped[LeaveReason | None] = mapped_column(_strings(LeaveReason, 16))
    # the program whose arrival made it leave
    displaced_by_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))

    __table_args__ = (
        # one program of a name on the hill at a time
        Index(
            "one_on_hill_per_name",
            "owner",
            "name",
            unique=True,
            sqlite_where=status == ProgramStatus.HILL,
        ),
    )

    @property
    def full_name(self) -> str:
        return f"{self.owner}.{self.name}"


class Joust(Base):
    """The outcomes of one joust, kept by the contents of its two programs
    (sha256 of their code): a joust is a pure function of the two programs,
    so it is played once and serves the hill, tournaments and the ladder.
    One row per unordered pair, from the side of the lower hash (the
    orientation rule of hill.arena)."""

    __tablename__ = "jousts"

    left_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    right_hash: Mapped[str] = mapped_column(String(64), primary_key=True, index=True)
    # one byte a battle, outcome + 1 (0 right wins, 1 tie, 2 left wins)
    outcomes: Mapped[bytes] = mapped_column(LargeBinary(engine.BATTLES))
    # the cycles its battles lasted, all together: what the joust costs
    # (None: played before the jousts were kept by content)
    game_cycles: Mapped[int | None]


class Event(Base):
    """Every hill event, with the standings right after it."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    time: Mapped[dt.datetime] = mapped_column(default=utcnow)
    kind: Mapped[EventKind] = mapped_column(_strings(EventKind, 16), index=True)
    actor: Mapped[str] = mapped_column(String(64))
    program_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))
    displaced_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))
    summary: Mapped[str]
    # the hill after the event: {"method": ..., "entries": [...]}, the
    # programs in rank order with their ranks, points and scores
    standings: Mapped[dict[str, Any]]
    # the git commit that records it (None until committed, and for tests)
    commit: Mapped[str | None] = mapped_column(String(40))


def _migrations_config(engine: Engine | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(resources.files("migrations")))
    config.attributes["engine"] = engine
    return config


def schema_revision() -> str:
    """The schema this code reads and writes (the newest migration)."""
    head = ScriptDirectory.from_config(_migrations_config()).get_current_head()
    assert head is not None
    return head


def _known(revision: str) -> bool:
    """Whether this code has the migration `revision` (else the database is newer)."""
    revisions = ScriptDirectory.from_config(_migrations_config()).walk_revisions()
    return any(r.revision == revision for r in revisions)


class Database:
    """A hill database file.  The hill's writer upgrades it to the current
    schema; readers open an existing one (`existing`) and never change its
    schema or the hill."""

    def __init__(self, path: Path, *, writer: bool = True) -> None:
        self.path = path
        if writer:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_engine(f"sqlite:///{path}")
        configure = _configure_writer if writer else _configure_reader
        event.listen(self.engine, "connect", configure)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @classmethod
    def existing(cls, path: Path) -> Database:
        """The database at `path` for reading: HillError if there is none
        or its schema is not this code's."""
        if not path.is_file():
            raise NotReady(f"there is no hill database at {path}: `bfjoust hill init` creates it")
        database = cls(path, writer=False)
        try:
            found, needed = database.revision(), schema_revision()
        except exc.DatabaseError as error:
            database.close()
            raise HillError(f"{path} is not a hill database ({error.orig})") from None
        if found != needed:
            database.close()
            older = found is None or _known(found)
            advice = (
                "start the bot or run `bfjoust hill init` to upgrade it"
                if older
                else "it is newer than this version of the hill"
            )
            raise NotReady(
                f"the hill database at {path} has schema {found or 'none'}, this version "
                f"reads {needed}: {advice}",
                upgradable=older,
            )
        return database

    def upgrade(self, revision: str = "head") -> None:
        command.upgrade(_migrations_config(self.engine), revision)

    def downgrade(self, revision: str) -> None:
        """Back to an older schema (to run an older version of the hill)."""
        command.downgrade(_migrations_config(self.engine), revision)

    def revision(self) -> str | None:
        with self.engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose work is committed as one transaction, or not at all."""
        with self._sessions() as session, session.begin():
            yield session

    def session(self) -> Session:
        return self._sessions()

    def close(self) -> None:
        self.engine.dispose()


def _configure_writer(dbapi_connection: Any, _record: Any) -> None:
    # WAL: readers (the web report) never block the writer (the one setting
    # that changes the file, so readers leave it to the writer)
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()
    _configure_reader(dbapi_connection, _record)


def _configure_reader(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # FULL: a commit (a reader's too: the web report's upload requests)
    # survives power loss, not only a crash of the process
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
