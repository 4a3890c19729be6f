"""The hill's writer: the one place that changes the hill.

Every change (challenge, withdrawal, admin removal, rescore; a contest's
entries and publications, hill.writers.contests) runs under an
exclusive lock (across threads and processes: the bot and the command line,
hill.writers.lock), is written to the database as one transaction, and is
then recorded in the git repository from the data in hand
(hill.history.recorder).  A crash between the two is repaired on the next
start; a git that fails after the database committed (the disk full) does
not undo the change nor its answer (hill.writers.git_history: the history
is behind until it catches up).
A player's request (hill.store.requests) is played through `PLAYS` and
marked done, with what it came to, in the transaction of its change.
Reads go through `Hill.queries` (plain data), as the readers that open the
hill without this writer do.
"""

from __future__ import annotations

from collections.abc import Callable

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
from hill.rules.programs import check_program
from hill.rules.requests import RequestKind
from hill.rules.standings import Contestant, Entry, Standings, rank
from hill.store.database import Database
from hill.store.jousts import store_jousts
from hill.store.notices import add_notice
from hill.store.queries import HillQueries, code_by_hash
from hill.store.requests import finish
from hill.store.tables import Event, ProgramRow, Request
from hill.store.trials import open_page
from hill.writers.contests import HillContests
from hill.writers.git_history import GitHistory
from hill.writers.lock import HillLock
from hill.writers.report import Report, add_event


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
        self.db = Database(folder.database)
        self.lock = HillLock(folder.lock, self.db)
        self.queries = HillQueries(self.db, settings.ranking)
        self.arena = Arena(executor, jobs=jobs)
        with self.lock.held():
            self.db.upgrade()
            repository = HillRepository(folder.repository, settings.git_branch, settings.git_remote)
            recorder = HistoryRecorder(repository, self.queries, self.db)
            self.history = GitHistory(recorder, self.lock)
            self.history.catch_up()
        # the contests, which never change the hill (their entries are tried on it)
        self.contests = HillContests(settings, self.lock, self.queries, self.history, self.trial)

    @property
    def repository(self) -> HillRepository:
        return self.history.recorder.repository

    def close(self) -> None:
        self.db.close()

    def challenge(
        self,
        owner: str,
        name: str,
        code: bytes,
        *,
        test_only: bool = False,
        request: int | None = None,
    ) -> Report:
        """Put a program on the hill (or, test_only, see where it would
        rank); `request`, the request it answers, is marked done with it."""
        names.check(owner, name)
        program = check_program(code, self.settings.max_program_bytes)
        program_hash = self.arena.add(program)
        full_name = names.full_name(owner, name)
        with self.lock.held():
            previous_id, current, plan, results, played = self._meet(
                full_name, code, program_hash, test_only
            )
            crash_point("jousted")
            with self.lock.transaction() as session:
                store_jousts(session, played)
                row = _arrive(session, plan, owner, name, code, program_hash)
                standings, summary = _rank_arrival(
                    self.settings.ranking, current, plan, results, _contestant(row)
                )
                displaced = plan.displaced.program.id if plan.displaced else None
                event = add_event(session, plan.kind, owner, summary, standings, row.id, displaced)
                page = None
                if test_only:
                    page = open_page(session, event.id, row.id, self.settings.test_page_hours)
                elif plan.leaving is not None and plan.reason == LeaveReason.PUSHED_OFF:
                    leaving = plan.leaving.program  # its owner is told, unless it was they
                    if leaving.owner != owner:
                        add_notice(session, leaving.owner, leaving.id, event.id, plan.reason)
                report = Report(summary, standings, not test_only, full_name, plan.kind, page)
                _answer(session, request, report)
            crash_point("stored")
            if not test_only:
                left = plan.displaced.program.full_name if plan.displaced else None
                self._record(event, previous_id, standings, (full_name, code), left)
        return report

    def trial(self, label: str, owner: str, code: bytes) -> Report:
        """How `code` would do on the hill now, said as a `-test` says it
        (`label` naming it), leaving no trace but its jousts (kept by
        content): no program, no event.  A contest's entry is tried so, its
        code staying private until the contest closes."""
        program = check_program(code, self.settings.max_program_bytes)
        program_hash = self.arena.add(program)
        with self.lock.held():
            _, current, plan, results, played = self._meet(label, code, program_hash, True)
            with self.lock.transaction() as session:
                store_jousts(session, played)
        tried = Contestant(0, owner, label, utcnow(), program_hash)
        standings, summary = _rank_arrival(self.settings.ranking, current, plan, results, tried)
        return Report(summary, standings, changed=False)

    def _meet(
        self, full_name: str, code: bytes, program_hash: str, test_only: bool
    ) -> tuple[int | None, Standings, changes.Arrival, arena.Results, list[engine.Played]]:
        """The hill now (and the change that made it), the arrival of a
        program there, and its jousts with the programs it meets: those
        stored, read once, and those `played` now (not stored yet)."""
        with self.db.session() as session:
            previous_id, current, results = self.queries.current(session, [program_hash])
            plan = changes.arrival(current, full_name, self.settings.size, test_only=test_only)
            hashes = [e.program.code_hash for e in plan.stay] + [program_hash]
            code_of = _code_of(session, {program_hash: code})
            played = self.arena.complete(results, hashes, code_of)
        return previous_id, current, plan, results, played

    def withdraw(self, owner: str, name: str, *, request: int | None = None) -> Report:
        """An owner takes their own program off the hill."""
        names.check(owner, name)
        full_name = names.full_name(owner, name)
        kind, reason = EventKind.WITHDRAW, LeaveReason.WITHDRAWN
        return self._take_off(full_name, owner, kind, reason, request)

    def remove(self, full_name: str, actor: str, *, request: int | None = None) -> Report:
        """An admin takes any program off the hill."""
        return self._take_off(full_name, actor, EventKind.REMOVE, LeaveReason.REMOVED, request)

    def rescore(self, actor: str, *, rejoust: bool = False, request: int | None = None) -> Report:
        """Recompute the standings from the stored jousts (or replay every joust)."""
        with self.lock.held():
            with self.db.session() as session:
                previous_id, current, _ = self.queries.current(session)
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
            with self.lock.transaction() as session:
                store_jousts(session, played)
                event = add_event(session, EventKind.RESCORE, actor, summary, standings)
                report = Report(summary, standings, changed=True, kind=EventKind.RESCORE)
                _answer(session, request, report)
            self._record(event, previous_id, standings)
        return report

    def _take_off(
        self,
        full_name: str,
        actor: str,
        kind: EventKind,
        reason: LeaveReason,
        request: int | None,
    ) -> Report:
        with self.lock.held():
            with self.lock.transaction() as session:
                previous_id, current, _ = self.queries.current(session)
                leaving = current.find(full_name)
                if leaving is None:
                    raise HillError(f"there is no {full_name} on the hill")
                ranking = self.settings.ranking
                standings, summary = changes.rank_departure(ranking, current, leaving, kind)
                _leave(session, leaving, reason)
                event = add_event(
                    session, kind, actor, summary, standings, displaced_id=leaving.program.id
                )
                if kind == EventKind.REMOVE and actor != leaving.program.owner:
                    add_notice(session, leaving.program.owner, leaving.program.id, event.id, reason)
                report = Report(summary, standings, True, full_name, kind)
                _answer(session, request, report)
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
        self.history.record(change)


def _arrive(
    session: Session,
    plan: changes.Arrival,
    owner: str,
    name: str,
    code: bytes,
    program_hash: str,
) -> ProgramRow:
    """Store the arriving program, and its leaving one leaving."""
    leaving = None
    if plan.leaving is not None:
        leaving = _leave(session, plan.leaving, plan.reason)
    status = ProgramStatus.TEST if plan.test_only else ProgramStatus.HILL
    row = ProgramRow(owner=owner, name=name, code=code, code_hash=program_hash, status=status)
    session.add(row)
    session.flush()
    if leaving is not None:
        leaving.displaced_by_id = row.id
    return row


def _rank_arrival(
    ranking: str,
    current: Standings,
    plan: changes.Arrival,
    results: arena.Results,
    newcomer: Contestant,
) -> tuple[Standings, str]:
    """The standings after an arrival (the newcomer last among the
    contestants), and its summary (changes.rank_arrival)."""
    hashes = [e.program.code_hash for e in plan.stay] + [newcomer.code_hash]
    return changes.rank_arrival(ranking, current, plan, results.matrix(hashes), newcomer)


def _leave(session: Session, entry: Entry, reason: LeaveReason) -> ProgramRow:
    row = session.get(ProgramRow, entry.program.id)
    assert row is not None
    row.status = ProgramStatus.LEFT
    row.left_at = utcnow()
    row.left_reason = reason
    session.flush()  # before a new version takes the name
    return row


def _answer(session: Session, request: int | None, report: Report) -> None:
    """Mark the request a change answers done, with what it came to, in the
    change's transaction: after a kill it is either done, or still open and
    played again, never both."""
    if request is not None:
        finish(session, request, report.outcome)


# Playing a request of the book: one line a kind (hill.rules.requests).
PLAYS: dict[RequestKind, Callable[[Hill, Request], Report]] = {
    RequestKind.CHALLENGE: lambda hill, r: hill.challenge(
        r.owner, r.name, r.code or b"", request=r.id
    ),
    RequestKind.TEST: lambda hill, r: hill.challenge(
        r.owner, r.name, r.code or b"", test_only=True, request=r.id
    ),
    RequestKind.WITHDRAW: lambda hill, r: hill.withdraw(r.owner, r.name, request=r.id),
    RequestKind.REMOVE: lambda hill, r: hill.remove(r.name, r.owner, request=r.id),
    RequestKind.RESCORE: lambda hill, r: hill.rescore(r.owner, request=r.id),
    RequestKind.CONTEST_ENTER: lambda hill, r: hill.contests.enter(r),
    RequestKind.CONTEST_WITHDRAW: lambda hill, r: hill.contests.withdraw(r),
}


def play_request(hill: Hill, request: Request) -> Report:
    """Play a request of the book on the hill; it is marked done in the
    transaction of the change it makes (HillError: refused, nothing changed)."""
    return PLAYS[request.command](hill, request)


def _contestant(row: ProgramRow) -> Contestant:
    return Contestant(row.id, row.owner, row.name, row.submitted_at, row.code_hash)


def _code_of(session: Session, known: dict[str, bytes]) -> arena.CodeOf:
    """A program's code by hash: one of `known`, or a stored program's."""
    return lambda code_hash: (
        known[code_hash] if code_hash in known else code_by_hash(session, code_hash)
    )
