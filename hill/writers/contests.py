"""The contests' writer (docs/contests.md): it creates contests, plays
their entries from the request book, closes them and publishes them, under
the hill's lock, one transaction a step.  A contest never changes the hill.

- An entry (or a withdrawal) is a request of the book (hill.rules.requests,
  CONTEST_ENTER and CONTEST_WITHDRAW), recorded with the time it was heard;
  played, it is tried on the hill as a `-test` (Hill.trial: no trace but its
  jousts) and kept as the owner's entrant row, with that time.  A request
  heard before the row's time (played after it) changes nothing; one heard
  at or after the closing time is refused.
- The close happens once: the requests heard before the closing time that
  still wait are played first, then one transaction, which only an open
  contest passes, freezes the entries, creates the tournament (or makes the
  contest void, with fewer than 2 entries) and adds the hill event that
  publishes the entries; the git commit follows (hill.history.recorder, which
  makes it on the next start if a crash came first).  Killed anywhere
  before that transaction, the contest is still open and is closed again,
  with the same entries; after it, it is closed.
- The tournament is the hill's own (hill.writers.tournaments: stored,
  resumable); once it has ended, `finish` publishes the results the same
  way, once.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable, Mapping

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from hill.config import HillSettings
from hill.engine import code_hash
from hill.errors import HillError, TournamentError
from hill.faults import crash_point
from hill.history.recorder import Change
from hill.rules import contests as rules
from hill.rules.contests import ContestState
from hill.rules.events import EventKind, iso_utc, utcnow
from hill.rules.programs import check_program
from hill.rules.requests import Outcome, RequestKind
from hill.rules.standings import Standings
from hill.store import records
from hill.store.contests import ContestView, entrants, find, published_files, view_of
from hill.store.contests import contest as stored_contest
from hill.store.queries import HillQueries
from hill.store.requests import RequestBook, entries_waiting, finish
from hill.store.tables import ContestEntryRow, ContestRow, Request
from hill.tournaments.plan import TournamentPlan
from hill.tournaments.registry import seed_for, tournament_format
from hill.writers.git_history import GitHistory
from hill.writers.lock import HillLock
from hill.writers.report import Report, add_event

# how code would do on the hill now, as a `-test` says it (label, owner, code)
Trial = Callable[[str, str, bytes], Report]

HOW_TO_ENTER = "!bfjoust-contest lists the open ones"


class _Straggler(Exception):
    """A request heard before the close reached the book as it closed: play it first."""


class HillContests:
    """Create, enter, close and publish the hill's contests."""

    def __init__(
        self,
        settings: HillSettings,
        lock: HillLock,
        queries: HillQueries,
        history: GitHistory,
        trial: Trial,
    ) -> None:
        self.settings = settings
        self.lock = lock
        self.db = lock.db
        self.queries = queries
        self.history = history
        self.trial = trial  # how an entry would do on the hill now (Hill.trial)
        self.book = RequestBook(self.db)

    def view(self, name: str) -> ContestView:
        """Contest `name` as everyone may see it; HillError if there is none."""
        found = stored_contest(self.db, name)
        if found is None:
            raise HillError(f"there is no contest {name[:40]}: {HOW_TO_ENTER}")
        return found

    def create(
        self,
        name: str,
        closes: str,
        *,
        by: str,
        title: str = "",
        format: str = rules.DEFAULT_FORMAT,
        controls: Mapping[str, bytes] | None = None,
        now: dt.datetime | None = None,
    ) -> ContestView:
        """A new open contest closing at `closes` (ISO 8601 UTC or +2h30m),
        with `controls` (name -> code) that play but win nothing."""
        now = now or utcnow()
        rules.check_name(name)
        try:
            tournament_format(format)
        except TournamentError as error:
            raise HillError(str(error)) from None
        title = rules.check_title(title, name)
        closing = rules.parse_closing(closes, now)
        checked = _controls(controls or {}, self.settings.max_program_bytes)
        with self.lock.transaction() as session:
            existing = find(session, name)
            if existing is not None:
                raise HillError(f"there is a contest {existing.name} already: a name is used once")
            row = ContestRow(
                name=name,
                title=title,
                format=format,
                closes=closing,
                created_at=now,
                created_by=by,
                state=ContestState.OPEN,
                told=[],
            )
            session.add(row)
            session.flush()
            for entrant, code in checked.items():
                session.add(_entrant_row(row.id, entrant, code, now, None, control=True))
            session.flush()
            return view_of(session, row)

    # --- entries: played from the request book (hill.writers.hill.PLAYS) ---

    def enter(self, request: Request) -> Report:
        """Play an entry: tried on the hill, it becomes the owner's entry."""
        return self._entry(request, request.code or b"")

    def withdraw(self, request: Request) -> Report:
        """Play a withdrawal: the owner's entry is taken back."""
        return self._entry(request, None)

    def _entry(self, request: Request, code: bytes | None) -> Report:
        empty = Standings.empty(self.settings.ranking)
        with self.lock.held():
            stored = self.book.get(request.id).answer
            if stored is not None:  # played already (by a close), answered once
                return Report(stored.summary, empty, changed=False)
            with self.db.session() as session:
                row = find(session, request.name)
                if row is None:
                    raise HillError(f"there is no contest {request.name[:40]}: {HOW_TO_ENTER}")
                contest = view_of(session, row)
                mine = _entrant(session, row.id, request.owner)
                latest = None if mine is None else (mine.heard_at, mine.code is not None)
                entrant = request.owner if mine is None else mine.entrant  # spelt as it was
            if not rules.counts(request.created_at, contest.closes):
                raise HillError(rules.late(contest.name, contest.closes))
            if not contest.open:
                raise HillError(f"contest {contest.name} was closed before your request was played")
            if latest is not None and latest[0] > request.created_at:
                summary = (
                    f"contest {contest.name}: a later request of yours, heard at "
                    f"{iso_utc(latest[0])}, stands; this one changes nothing"
                )
                return self._answer(request, summary, empty)
            if code is None:
                if latest is None or not latest[1]:
                    raise HillError(f"you have no entry in contest {contest.name}")
                summary = (
                    f"your entry to contest {contest.name} is withdrawn; you may enter "
                    f"again until {iso_utc(contest.closes)}"
                )
                return self._answer(request, summary, empty, (contest.id, entrant), None)
            trial = self.trial("your entry", request.owner, code)
            replaces = " (it replaces your earlier one)" if latest and latest[1] else ""
            summary = (
                f"entry to contest {contest.name} accepted{replaces}; on the hill now, "
                f"as a -test: {trial.summary}. Nobody sees the other entries, nor yours, "
                f"before the close at {iso_utc(contest.closes)}"
            )
            return self._answer(request, summary, trial.standings, (contest.id, entrant), code)

    def _answer(
        self,
        request: Request,
        summary: str,
        standings: Standings,
        entrant: tuple[int, str] | None = None,
        code: bytes | None = None,
    ) -> Report:
        """Store what a request came to (and, with `entrant` (contest id,
        owner), the owner's entrant row: `code`, or None for a withdrawal)
        in one transaction."""
        with self.lock.transaction() as session:
            if entrant is not None:
                contest_id, owner = entrant
                session.merge(_entrant_row(contest_id, owner, code, request.created_at, request.id))
            finish(session, request.id, Outcome(summary))
        return Report(summary, standings, changed=False)

    # --- the close and the publications ------------------------------------

    def close(self, name: str, *, by: str, now: dt.datetime | None = None) -> ContestView:
        """Close contest `name`, once: at its closing time, or at `now` (the
        present by default) if that is earlier.  The requests heard before
        then that still wait are played first.  A closed contest is left
        as it is."""
        with self.lock.held():
            while True:
                contest = self.view(name)
                if not contest.open:
                    return contest
                closing = min(contest.closes, now or utcnow())
                for request in self.book.waiting_entries(contest.name, closing):
                    self._play_waiting(request)
                try:
                    change = self._freeze(contest.id, closing, by)
                except _Straggler:
                    continue
                break
            if change is not None:
                crash_point("contest-closed")  # stored; its commit is the recorder's to make
                self.history.record(change)
            return self.view(name)

    def _play_waiting(self, request: Request) -> None:
        """Play a request of the book now (the runner would have, in turn)."""
        started = self.book.start(request.id)
        try:
            if started.command == RequestKind.CONTEST_ENTER:
                self.enter(started)
            else:
                self.withdraw(started)
        except HillError as error:
            self.book.fail(request.id, str(error))

    def _freeze(self, contest_id: int, closing: dt.datetime, by: str) -> Change | None:
        """The close's one transaction (see the module); None if the contest
        was closed already."""
        with self.lock.transaction() as session:
            taken = session.execute(
                update(ContestRow)
                .where(ContestRow.id == contest_id, ContestRow.state == ContestState.OPEN)
                .values(state=ContestState.CLOSED, closes=closing, closed_at=utcnow(), closed_by=by)
            )
            if taken.rowcount != 1:  # type: ignore[attr-defined]
                return None
            row = session.get(ContestRow, contest_id)
            assert row is not None
            if session.scalars(entries_waiting(row.name, closing).limit(1)).first():
                raise _Straggler  # rolled back
            rows = entrants(session, contest_id)
            players = [e for e in rows if not e.control and e.code is not None]
            controls = [e for e in rows if e.control]
            void = rules.void_reason(len(players))
            if void:
                row.state, row.void_reason = ContestState.VOID, void
            else:
                row.tournament_id = _add_tournament(session, row, players + controls)
            summary = rules.entries_summary(
                row.name, [p.entrant for p in players], [c.entrant for c in controls], void
            )
            return _publication(session, self.queries, row, EventKind.CONTEST_ENTRIES, by, summary)

    def finish(self, name: str) -> ContestView:
        """Publish the results of contest `name` once its tournament has
        ended (once: a played contest is left as it is)."""
        with self.lock.held():
            contest = self.view(name)
            if contest.state != ContestState.CLOSED or contest.tournament_id is None:
                return contest
            played = records.tournament(self.db, contest.tournament_id)
            if played is None or played.summary.ended is None:
                return contest  # still being played
            result = played.result
            shown = dataclasses.replace(contest, result=result).standings() or []
            first = rules.winners(shown)
            winner = first[0] if len(first) == 1 else None
            summary = rules.results_summary(contest.name, shown)
            with self.lock.transaction() as session:
                session.execute(
                    update(ContestRow)
                    .where(ContestRow.id == contest.id)
                    .values(state=ContestState.PLAYED, result=result, winner=winner)
                )  # the lock held since the view was read: it is still closed
                row = session.get(ContestRow, contest.id)
                assert row is not None
                change = _publication(
                    session, self.queries, row, EventKind.CONTEST_RESULTS, "hill", summary
                )
            crash_point("contest-played")
            self.history.record(change)
            return self.view(name)

    def mark_told(self, name: str, news: tuple[str, ...]) -> None:
        """Note that the channels have heard `news` of contest `name`."""
        with self.lock.transaction() as session:
            row = find(session, name)
            if row is not None:
                row.told = sorted({*(row.told or ()), *news})


def _controls(controls: Mapping[str, bytes], max_bytes: int) -> dict[str, bytes]:
    """The controls by their entrants' names (control.NAME); HillError for a bad one."""
    checked = {}
    for control, code in controls.items():
        entrant = rules.control_entrant(control)
        try:
            check_program(code, max_bytes)
        except HillError as error:
            raise HillError(f"control {control}: {error}") from None
        checked[entrant] = code
    return checked


def _entrant_row(
    contest_id: int,
    entrant: str,
    code: bytes | None,
    heard: dt.datetime,
    request_id: int | None,
    *,
    control: bool = False,
) -> ContestEntryRow:
    return ContestEntryRow(
        contest_id=contest_id,
        entrant=entrant,
        control=control,
        code=code,
        code_hash=None if code is None else code_hash(code),
        heard_at=heard,
        request_id=request_id,
    )


def _entrant(session: Session, contest_id: int, owner: str) -> ContestEntryRow | None:
    """The owner's entrant row in the contest, found without case (names
    have none: Alice and alice are one player, with one entry)."""
    query = select(ContestEntryRow).where(
        ContestEntryRow.contest_id == contest_id,
        func.lower(ContestEntryRow.entrant) == owner.lower(),
        ContestEntryRow.control.is_(False),
    )
    return session.scalars(query).first()


def _add_tournament(session: Session, row: ContestRow, playing: list[ContestEntryRow]) -> int:
    """The contest's tournament over its entrants, stored (not played yet)."""
    code = {e.entrant: e.code_hash for e in playing}
    order = rules.entrant_order(
        [e.entrant for e in playing if not e.control], [e.entrant for e in playing if e.control]
    )
    plan = TournamentPlan(format=row.format, entrants=order, seed=seed_for(row.format, None))
    pool = rules.pool_label(row.name)
    return records.add_tournament(session, plan, pool, [str(code[e]) for e in order], pool)


def _publication(
    session: Session,
    queries: HillQueries,
    row: ContestRow,
    kind: EventKind,
    actor: str,
    summary: str,
) -> Change:
    """The hill event that publishes a contest's files, in `session`:
    the hill exactly as it was (its state is the one in force), and its files."""
    previous_id, standings, _ = queries.current(session)
    event = add_event(session, kind, actor, summary, standings, contest_id=row.id)
    return Change(
        event.id,
        previous_id,
        kind,
        actor,
        event.time,
        summary,
        standings,
        files=published_files(session, row.id, kind),
        contest=row.name,
    )
