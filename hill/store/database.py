"""The hill's database: SQLite through SQLAlchemy, its schema managed by Alembic.

SQLite is the truth.  Every change of the hill is one transaction (the new
program, who left, and the event with the standings after it), so a crash
leaves either the old hill or the new one.  Jousts are kept by the contents
of their two programs (hill.store.jousts), once for the hill, tournaments
and the ladder.  The git repository and the reports are derived from it all.

The tables are hill.store.tables; this module opens the file, upgrades its
schema (Alembic, migrations/) and hands out sessions.

SQLite's failures that are the storage's, not the statement's (the disk
full, the database locked longer than a write waits, an I/O error) leave
the store as the project's StorageError (hill.errors), translated once by
`translate_errors`, a SQLAlchemy event on every engine the store makes:
callers catch StorageError alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import (
    create_engine,
    event,
    exc,
)
from sqlalchemy.engine import Engine, ExceptionContext
from sqlalchemy.orm import Session, sessionmaker

from hill.errors import HillError, NotReady, StorageError, as_storage_error
from hill.store.bell import Bell


def migrations_config(engine: Engine | None = None) -> Config:
    """Alembic's configuration: the scripts of migrations/, run on `engine`."""
    config = Config()
    config.set_main_option("script_location", str(resources.files("migrations")))
    config.attributes["engine"] = engine
    return config


def schema_revision() -> str:
    """The schema this code reads and writes (the newest migration)."""
    head = ScriptDirectory.from_config(migrations_config()).get_current_head()
    assert head is not None
    return head


def _known(revision: str) -> bool:
    """Whether this code has the migration `revision` (else the database is newer)."""
    revisions = ScriptDirectory.from_config(migrations_config()).walk_revisions()
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
        translate_errors(self.engine)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)
        # every commit rings the hill's bell: the bot serving it wakes (hill/store/bell.py)
        self.bell = Bell(path)
        event.listen(self._sessions, "after_commit", lambda _session: self.bell.ring())

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
        command.upgrade(migrations_config(self.engine), revision)

    def downgrade(self, revision: str) -> None:
        """Back to an older schema (to run an older version of the hill)."""
        command.downgrade(migrations_config(self.engine), revision)

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
        self.bell.close()


def translate_errors(engine: Engine) -> None:
    """Have `engine` raise the storage's failures as StorageError (sqlite3's
    error its cause); other errors as SQLAlchemy raises them."""
    event.listen(engine, "handle_error", _storage_error)


def _storage_error(context: ExceptionContext) -> StorageError | None:
    return as_storage_error(context.original_exception)


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
