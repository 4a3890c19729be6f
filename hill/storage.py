"""The hill's database: SQLite through SQLAlchemy, its schema managed by Alembic.

SQLite is the truth.  Every change of the hill is one transaction (the new
program, its jousts, who left, and the event with the standings after it), so
a crash leaves either the old hill or the new one.  The git repository and the
reports are derived from it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

from alembic import command
from alembic.config import Config
from sqlalchemy import (
    JSON,
    DateTime,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    create_engine,
    event,
    select,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, sessionmaker


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    type_annotation_map: ClassVar = {dt.datetime: DateTime(), dict[str, Any]: JSON}


class Program(Base):
    """Every program ever submitted, on the hill or not."""

    __tablename__ = "programs"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(48))
    code: Mapped[bytes] = mapped_column(LargeBinary)
    submitted_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # "hill": on the hill now; "left": was on it; "test": only tested
    status: Mapped[str] = mapped_column(String(8), index=True)
    left_at: Mapped[dt.datetime | None]
    # "pushed off", "updated", "withdrawn", "removed"
    left_reason: Mapped[str | None] = mapped_column(String(16))
    # the program whose arrival made it leave
    displaced_by_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))

    __table_args__ = (
        # one program of a name on the hill at a time
        Index("one_on_hill_per_name", "owner", "name", unique=True, sqlite_where=status == "hill"),
    )

    @property
    def full_name(self) -> str:
        return f"{self.owner}.{self.name}"


class Joust(Base):
    """The 42 outcomes of one pair that shared the hill: one row per
    unordered pair, from the side of the older program (left_id < right_id)."""

    __tablename__ = "jousts"

    left_id: Mapped[int] = mapped_column(ForeignKey("programs.id"), primary_key=True)
    right_id: Mapped[int] = mapped_column(ForeignKey("programs.id"), primary_key=True, index=True)
    # 42 bytes, outcome + 1 each (0 right wins, 1 tie, 2 left wins)
    outcomes: Mapped[bytes] = mapped_column(LargeBinary(42))


class Event(Base):
    """Every hill event, with the standings right after it."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    time: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # "challenge", "update", "test", "withdraw", "remove", "rescore"
    kind: Mapped[str] = mapped_column(String(16), index=True)
    actor: Mapped[str] = mapped_column(String(64))
    program_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))
    displaced_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))
    summary: Mapped[str]
    # the hill after the event: {"method": ..., "entries": [...]}, the
    # programs in rank order with their ranks, points and scores
    standings: Mapped[dict[str, Any]]
    # the git commit that records it (None until committed, and for tests)
    commit: Mapped[str | None] = mapped_column(String(40))


def encode_outcomes(outcomes: tuple[int, ...] | list[int]) -> bytes:
    return bytes(o + 1 for o in outcomes)


def decode_outcomes(data: bytes) -> tuple[int, ...]:
    return tuple(b - 1 for b in data)


def _migrations_config(engine: Engine) -> Config:
    config = Config()
    config.set_main_option("script_location", str(resources.files("migrations")))
    config.attributes["engine"] = engine
    return config


class Database:
    """A hill database file, upgraded to the current schema on open."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.engine = create_engine(f"sqlite:///{path}")
        event.listen(self.engine, "connect", _configure_connection)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def upgrade(self, revision: str = "head") -> None:
        command.upgrade(_migrations_config(self.engine), revision)

    def revision(self) -> str | None:
        with self.engine.connect() as connection:
            from alembic.runtime.migration import MigrationContext

            return MigrationContext.configure(connection).get_current_revision()

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A session whose work is committed as one transaction, or not at all."""
        with self._sessions() as session, session.begin():
            yield session

    def session(self) -> Session:
        return self._sessions()

    def latest_event(self, session: Session) -> Event | None:
        return session.scalars(select(Event).order_by(Event.id.desc()).limit(1)).first()

    def close(self) -> None:
        self.engine.dispose()


def _configure_connection(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL: readers (the web report) never block the writer; FULL: a commit
    # survives power loss, not only a crash of the process.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()
