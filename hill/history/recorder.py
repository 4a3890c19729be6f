"""The git recorder: keeps the hill's repository in line with its database.

A new hill change is committed from what the writer hands over (the new
program's code, who left, the standings): nothing is read back.  At the
writer's start, `catch_up` repairs what a crash left: it notes the commits
the database did not get to (from their `Hill-Event` trailers), and commits
every change after the last one the repository records, reading those
states from the database.  It never starts the history over: a history
that disagrees with the database is kept under a ref and reported.
Both raise git's and the OS's failures as StorageError (hill.errors,
through repository.storage_errors); the database's the store translates.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field

import structlog
from sqlalchemy import select, update

from hill.history.repository import Commit, HillRepository, storage_errors
from hill.rules import contests, names
from hill.rules.changes import commit_message
from hill.rules.events import CONTEST_PUBLICATIONS, EventKind
from hill.rules.reports import text_report
from hill.rules.standings import Standings
from hill.store.contests import published_files
from hill.store.database import Database
from hill.store.queries import HillEvent, HillQueries
from hill.store.tables import Event

log = structlog.get_logger(__name__)

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

    @storage_errors()
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
        self.repository.pack()

    @storage_errors()
    def catch_up(self) -> int:
        """Bring the repository in line with the database; returns how many
        changes were committed.

        The branch keeps its commits as long as they record the database's
        changes, one each, in order: they are published (clones hold them,
        the bot gave out their shas), so they are never made again.  The
        database notes those it did not get to note, and the changes after
        them are committed.  Commits that disagree with the database (one
        made by hand, a database put back from an older backup) are an
        error, said loudly: they are kept under refs/hill/diverged-... of the
        repository beside (HillRepository.diverged, never served), and
        the branch goes back to the last commit that agrees."""
        changes = self.queries.changes()
        history = self.repository.history()
        agree = 0
        while agree < min(len(history), len(changes)) and history[agree].events == (
            changes[agree].id,
        ):
            agree += 1
        if agree < len(history):
            self._set_aside(history, changes, agree)
        self._note(_notes(history[:agree], changes))
        pending = changes[agree:]
        for change in pending:
            sha = self._commit_state(change)
            if change.commit not in (None, sha):
                log.error(
                    f"event {change.id} was recorded as commit {change.commit}, which the "
                    f"repository lost; committed again as {sha}"
                )
            self._note({change.id: sha})
        if pending:
            self.repository.push()
        self.repository.pack()
        return len(pending)

    def _set_aside(self, history: list[Commit], changes: list[HillEvent], agree: int) -> None:
        """Keep the commits from `agree` on under a ref, the branch back before them."""
        last = history[agree - 1].sha if agree else None
        ref = self.repository.keep_and_reset(history[-1].sha, last)
        found = history[agree]
        expected = f"event {changes[agree].id}" if agree < len(changes) else "no more events"
        recorded = ", ".join(f"event {e}" for e in found.events) or "no event"
        log.error(
            f"the hill's git history disagrees with its database: commit {found.sha} records "
            f"{recorded} where the database has {expected}; its {len(history) - agree} commits "
            f"from there on are kept as {ref}, the branch is back at {last or 'its start'} and "
            "the database's changes after it are committed again"
        )

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

    def _note(self, commits: Mapping[int, str]) -> None:
        if not commits:
            return
        with self.db.transaction() as session:
            for event_id, sha in commits.items():
                session.execute(update(Event).where(Event.id == event_id).values(commit=sha))


def _trailers(contest: str | None) -> dict[str, str]:
    """A commit's trailers beside its Hill-Event: a contest's commits name it."""
    return {contests.TRAILER: contest} if contest else {}


def _notes(kept: list[Commit], changes: list[HillEvent]) -> dict[int, str]:
    """The commits of `kept` (each recording the change at its place) that
    the database does not note, or notes as another commit."""
    notes = {}
    for commit, change in zip(kept, changes, strict=False):
        if change.commit != commit.sha:
            if change.commit is not None:
                log.warning(
                    f"event {change.id} was noted as commit {change.commit}; "
                    f"the history records it as {commit.sha}"
                )
            notes[change.id] = commit.sha
    return notes
