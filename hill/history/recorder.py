"""The git recorder: keeps the hill's repository in line with its database.

A new hill change is committed from what the writer hands over (the new
program's code, who left, the standings): nothing is read back.  At the
writer's start, `catch_up` repairs what a crash left: it notes the commits
the database did not get to (from their `Hill-Event` trailers), and commits
every change the repository lacks, reading those states from the database.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlalchemy import select, update

from hill.history.repository import HillRepository
from hill.rules import contests, names
from hill.rules.changes import commit_message
from hill.rules.events import CONTEST_PUBLICATIONS, HILL_CHANGES, EventKind
from hill.rules.reports import text_report
from hill.rules.standings import Standings
from hill.store.contests import published_files
from hill.store.database import Database
from hill.store.queries import HillEvent, HillQueries
from hill.store.tables import Event

REPORT = "report.txt"


@dataclass(frozen=True)
class Change:
    """A hill change as the writer stored it, all the repository needs."""

    event_id: int
    previous_id: int | None  # the change before it (None: the first)
    kind: EventKind
    actor: str
    time: dt.datetime
    summary: str
    standings: Standings  # after it
    arrived: tuple[str, bytes] | None = None  # the new program's name and code
    left: str | None = None  # the program that left
    # a contest's publication: its name, and the files it adds (contests/NAME/...)
    contest: str | None = None
    files: Mapping[str, bytes] = field(default_factory=dict)


class HistoryRecorder:
    """Commits hill changes to the repository and notes each commit in the
    database; used by the writer alone, under the hill's lock."""

    def __init__(self, repository: HillRepository, queries: HillQueries, db: Database) -> None:
        self.repository = repository
        self.queries = queries
        self.db = db

    def record(self, change: Change) -> None:
        """Commit a change just stored: only the files it touches, when the
        repository holds the change before it (else catch up from the database)."""
        if self.repository.recorded_event() != change.previous_id:
            self.catch_up()
            return
        write = {REPORT: text_report(change.standings).encode(), **change.files}
        if change.arrived is not None:
            write[names.file_name(change.arrived[0])] = change.arrived[1]
        delete = [names.file_name(change.left)] if change.left else []
        program = change.arrived[0] if change.arrived else None
        sha = self.repository.commit(
            write,
            [name for name in delete if name not in write],
            commit_message(change.kind, program, change.left, change.summary, change.contest),
            change.actor,
            change.time,
            change.event_id,
            _trailers(change.contest),
        )
        self._note({change.event_id: sha})
        self.repository.push()

    def catch_up(self) -> int:
        """Note the commits the database lacks, then commit every change the
        repository lacks; returns how many were committed."""
        self._note_found_commits()
        changes = self.queries.changes()
        recorded = self.repository.recorded_event()
        if recorded is not None and recorded not in {c.id for c in changes}:
            # the repository is ahead of (or foreign to) the database
            self.repository.start_over()
            recorded = None
        pending = [c for c in changes if recorded is None or c.id > recorded]
        for change in pending:
            self._note({change.id: self._commit_state(change)})
        if pending:
            self.repository.push()
        return len(pending)

    def _commit_state(self, change: HillEvent) -> str:
        """Commit the whole state after an event, read from the database."""
        standings = self.queries.standings_at(change.id)
        write = {
            names.file_name(e.program.full_name): self.queries.program_code(e.program.id)
            for e in standings.entries
        }
        write[REPORT] = text_report(standings).encode()
        delete = self.repository.files() - set(write)
        write.update(self._published(change))
        message = commit_message(
            change.kind, change.program, change.displaced, change.summary, change.contest
        )
        return self.repository.commit(
            write,
            sorted(delete),
            message,
            change.actor,
            change.time,
            change.id,
            _trailers(change.contest),
        )

    def _published(self, change: HillEvent) -> dict[str, bytes]:
        """The files a contest's publication adds (none for other changes)."""
        if change.kind not in CONTEST_PUBLICATIONS:
            return {}
        with self.db.session() as session:
            contest_id = session.scalar(select(Event.contest_id).where(Event.id == change.id))
            assert contest_id is not None
            return published_files(session, contest_id, change.kind)

    def _note_found_commits(self) -> None:
        """A kill between a commit and its note in the database leaves the
        event without its commit: find it by the trailer."""
        with self.db.session() as session:
            query = select(Event.id).where(Event.kind.in_(HILL_CHANGES), Event.commit.is_(None))
            unnoted = set(session.scalars(query))
        found: dict[int, str] = {}
        for event_id, sha in self.repository.event_commits() if unnoted else ():
            if event_id in unnoted:
                found.setdefault(event_id, sha)
                if len(found) == len(unnoted):
                    break
        self._note(found)

    def _note(self, commits: Mapping[int, str]) -> None:
        if not commits:
            return
        with self.db.transaction() as session:
            for event_id, sha in commits.items():
                session.execute(update(Event).where(Event.id == event_id).values(commit=sha))


def _trailers(contest: str | None) -> dict[str, str]:
    """A commit's trailers beside its Hill-Event: a contest's commits name it."""
    return {contests.TRAILER: contest} if contest else {}
