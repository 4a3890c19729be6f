"""The hill service: the one writer, the one place that changes the hill.

Every change (challenge, withdrawal, admin removal, rescore) runs under an
exclusive lock (across threads and processes: the bot and the command line),
is written to the database as one transaction, and is then recorded in the
git repository from the data in hand (hill.recorder).  A crash between the
two is repaired on the next start.  Reads go through `Hill.queries` (plain
data), as the readers that open the hill without this writer do.
"""

from __future__ import annotations

import fcntl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sqlalchemy.orm import Session

from hill import engine
from hill.config import HillSettings
from hill.engine import arena
from hill.engine.arena import Arena, Executor
from hill.errors import HillError
from hill.faults import crash_point
from hill.history.recorder import Change, HistoryRecorder
from hill.history.repository import HillRepository
from hill.layout import DataFolder
from hill.rules import changes, names
from hill.rules.events import EventKind, LeaveReason, ProgramStatus, utcnow
from hill.rules.standings import Contestant, Entry, Standings, rank
from hill.store.database import Database
from hill.store.jousts import load_jousts, store_jousts
from hill.store.queries import HillQueries, code_by_hash
from hill.store.tables import Event, Program

__all__ = ["Hill", "HillError", "Record", "Report", "check_program"]


@dataclass(frozen=True)
class Report:
    """What an operation did: the one-line summary and the standings after it."""

    summary: str
    standings: Standings
    changed: bool
    program: str | None = None
    kind: EventKind | None = None  # the event's


# Called inside the transaction of a hill change, with its report: what it
# writes in the session commits with the change, or not at all (the bot marks
# the player's request done this way, so that a crash never plays it twice).
Record = Callable[[Session, Report], None]


def check_program(code: bytes, max_bytes: int) -> engine.Program:
    """The compiled program; HillError if it is too large or malformed."""
    if len(code) > max_bytes:
        raise HillError(f"program too large: {len(code)} bytes, the limit is {max_bytes}")
    try:
        return engine.compile_program(code)
    except engine.ParseError as error:
        raise HillError(f"parse error at {error}") from None


class HillLock:
    """Exclusive across threads and processes (the bot and the command line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.thread_lock = threading.Lock()

    @contextmanager
    def held(self) -> Iterator[None]:
        with self.thread_lock, open(self.path, "a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


class Hill:
    """The hill's one writer.  Opening it takes the lock, upgrades the
    database, repairs the git repository (stale locks of a killed git, commits
    a crash kept from it or from the database) and catches it up."""

    def __init__(
        self,
        settings: HillSettings,
        *,
        jobs: int | None = None,
        executor: Executor | None = None,
    ) -> None:
        self.settings = settings
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        folder = DataFolder(settings.data_dir)
        self.lock = HillLock(folder.lock)
        self.db = Database(folder.database)
        self.queries = HillQueries(self.db, settings.ranking)
        self.arena = Arena(executor, jobs=jobs)
        with self.lock.held():
            self.db.upgrade()
            repository = HillRepository(
                folder.repository, settings.git_branch, settings.git_remote
            )
            self.recorder = HistoryRecorder(repository, self.queries, self.db)
            self.recorder.catch_up()

    @property
    def repository(self) -> HillRepository:
        return self.recorder.repository

    def close(self) -> None:
        self.db.close()

    def challenge(
        self,
        owner: str,
        name: str,
        code: bytes,
        *,
        test_only: bool = False,
        record: Record | None = None,
    ) -> Report:
        """Put a program on the hill (or, test_only, see where it would rank)."""
        names.check(owner, name)
        program = check_program(code, self.settings.max_program_bytes)
        program_hash = self.arena.add(program)
        full_name = names.full_name(owner, name)
        with self.lock.held():
            with self.db.session() as session:
                previous_id, current = self.queries.current(session)
                plan = changes.arrival(current, full_name, self.settings.size, test_only=test_only)
                hashes = [e.program.code_hash for e in plan.stay] + [program_hash]
                results = load_jousts(session, hashes)
                code_of = _code_of(session, {program_hash: code})
                played = self.arena.complete(results, hashes, code_of)
            crash_point("jousted")
            with self.db.transaction() as session:
                store_jousts(session, played)
                row = self._arrive(session, plan, owner, name, code, program_hash)
                standings, summary = self._rank_arrival(current, plan, results, row)
                displaced = plan.displaced.program.id if plan.displaced else None
                event = self._add_event(
                    session, plan.kind, owner, summary, standings, row.id, displaced
                )
                report = Report(summary, standings, not test_only, full_name, plan.kind)
                _hand_over(session, report, record)
            crash_point("stored")
            if not test_only:
                left = plan.displaced.program.full_name if plan.displaced else None
                self._record(event, previous_id, standings, (full_name, code), left)
        return report

    def withdraw(self, owner: str, name: str, *, record: Record | None = None) -> Report:
        """An owner takes their own program off the hill."""
        names.check(owner, name)
        full_name = names.full_name(owner, name)
        kind, reason = EventKind.WITHDRAW, LeaveReason.WITHDRAWN
        return self._take_off(full_name, owner, kind, reason, record)

    def remove(self, full_name: str, actor: str, *, record: Record | None = None) -> Report:
        """An admin takes any program off the hill."""
        return self._take_off(full_name, actor, EventKind.REMOVE, LeaveReason.REMOVED, record)

    def rescore(self, actor: str, *, rejoust: bool = False, record: Record | None = None) -> Report:
        """Recompute the standings from the stored jousts (or replay every joust)."""
        with self.lock.held():
            with self.db.session() as session:
                previous_id, current = self.queries.current(session)
                contestants = [e.program for e in current.entries]
                hashes = [c.code_hash for c in contestants]
                outcomes, played = current.outcomes, []
                if rejoust:
                    pairs = arena.pairs_among(hashes)
                    played = list(self.arena.play(pairs, _code_of(session, {})))
                    replayed = arena.Results()
                    replayed.add(played)
                    outcomes = replayed.matrix(hashes)
            previous = {e.program.id: e.rank for e in current.entries}
            standings = rank(contestants, outcomes, self.settings.ranking, previous)
            summary = changes.rescore_summary(standings, rejoust)
            with self.db.transaction() as session:
                store_jousts(session, played)
                event = self._add_event(session, EventKind.RESCORE, actor, summary, standings)
                report = Report(summary, standings, changed=True, kind=EventKind.RESCORE)
                _hand_over(session, report, record)
            self._record(event, previous_id, standings)
        return report

    def _arrive(
        self,
        session: Session,
        plan: changes.Arrival,
        owner: str,
        name: str,
        code: bytes,
        program_hash: str,
    ) -> Program:
        """Store the arriving program, and its leaving one leaving."""
        leaving = None
        if plan.leaving is not None:
            leaving = self._leave(session, plan.leaving, plan.reason)
        status = ProgramStatus.TEST if plan.test_only else ProgramStatus.HILL
        row = Program(owner=owner, name=name, code=code, code_hash=program_hash, status=status)
        session.add(row)
        session.flush()
        if leaving is not None:
            leaving.displaced_by_id = row.id
        return row

    def _rank_arrival(
        self, current: Standings, plan: changes.Arrival, results: arena.Results, row: Program
    ) -> tuple[Standings, str]:
        """The standings after an arrival (the newcomer last among the
        contestants), and its summary."""
        contestants = [e.program for e in plan.stay] + [_contestant(row)]
        outcomes = results.matrix([c.code_hash for c in contestants])
        previous = changes.previous_ranks(current, plan, row.id)
        standings = rank(contestants, outcomes, self.settings.ranking, previous)
        changed = _battles_changed(current, plan, outcomes[-1, :-1])
        return standings, changes.arrival_summary(plan, standings, row.id, changed)

    def _take_off(
        self,
        full_name: str,
        actor: str,
        kind: EventKind,
        reason: LeaveReason,
        record: Record | None,
    ) -> Report:
        with self.lock.held():
            with self.db.transaction() as session:
                previous_id, current = self.queries.current(session)
                leaving = current.find(full_name)
                if leaving is None:
                    raise HillError(f"there is no {full_name} on the hill")
                keep = [i for i, e in enumerate(current.entries) if e is not leaving]
                standings = rank(
                    [current.entries[i].program for i in keep],
                    current.outcomes[np.ix_(keep, keep)],
                    self.settings.ranking,
                    {e.program.id: e.rank for e in current.entries},
                )
                self._leave(session, leaving, reason)
                summary = changes.departure_summary(full_name, kind, standings.size)
                event = self._add_event(
                    session, kind, actor, summary, standings, displaced_id=leaving.program.id
                )
                report = Report(summary, standings, True, full_name, kind)
                _hand_over(session, report, record)
            self._record(event, previous_id, standings, left=full_name)
        return report

    def _record(
        self,
        event: Event,
        previous_id: int | None,
        standings: Standings,
        arrived: tuple[str, bytes] | None = None,
        left: str | None = None,
    ) -> None:
        """Hand a stored change to the git recorder."""
        change = Change(
            event.id,
            previous_id,
            event.kind,
            event.actor,
            event.time,
            event.summary,
            standings,
            arrived,
            left,
        )
        self.recorder.record(change)

    def _leave(self, session: Session, entry: Entry, reason: LeaveReason) -> Program:
        row = session.get(Program, entry.program.id)
        assert row is not None
        row.status = ProgramStatus.LEFT
        row.left_at = utcnow()
        row.left_reason = reason
        session.flush()  # before a new version takes the name
        return row

    def _add_event(
        self,
        session: Session,
        kind: EventKind,
        actor: str,
        summary: str,
        standings: Standings,
        program_id: int | None = None,
        displaced_id: int | None = None,
    ) -> Event:
        event = Event(
            kind=kind,
            actor=actor,
            program_id=program_id,
            displaced_id=displaced_id,
            summary=summary,
            standings={"method": standings.method, "entries": standings.records()},
        )
        session.add(event)
        session.flush()  # its id and time
        return event


def _hand_over(session: Session, report: Report, record: Record | None) -> None:
    """Give `record` the change's report inside its transaction."""
    if record is not None:
        record(session, report)


def _contestant(row: Program) -> Contestant:
    return Contestant(row.id, row.owner, row.name, row.submitted_at, row.code_hash)


def _code_of(session: Session, known: dict[str, bytes]) -> arena.CodeOf:
    """A program's code by hash: one of `known`, or a stored program's."""
    return lambda code_hash: (
        known[code_hash] if code_hash in known else code_by_hash(session, code_hash)
    )


def _battles_changed(current: Standings, plan: changes.Arrival, after: np.ndarray) -> str | None:
    """How an update's battles changed against the programs that stay."""
    if plan.old is None:
        return None
    old = current.entries.index(plan.old)
    others = [i for i in range(current.size) if i != old]
    return changes.battles_changed(current.outcomes[old, others], after)
