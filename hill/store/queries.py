"""The hill's read side: queries that answer with plain frozen data, never a
database row, so the web pages, the bot and the command line hold no
session.  Readers never change the hill: `HillQueries.open` reads a
database that the writer (hill.writers.hill) has made, and git is none of their
business.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.orm import Session, aliased

from hill.engine.arena import Results
from hill.errors import HillError
from hill.layout import DataFolder
from hill.rules import names
from hill.rules.contests import ContestState
from hill.rules.events import ARRIVALS, HILL_CHANGES, EventKind, LeaveReason, ProgramStatus
from hill.rules.standings import Contestant, Entry, Standings
from hill.rules.versions import submission_numbers
from hill.store.database import Database
from hill.store.jousts import load_jousts
from hill.store.tables import SUBMITTED, ContestEntryRow, ContestRow, Event, ProgramRow


@dataclass(frozen=True)
class HillEvent:
    """One hill event as plain data, with the names of the programs it concerns."""

    id: int
    time: dt.datetime
    kind: EventKind
    actor: str
    summary: str
    commit: str | None  # the git commit that records it (None: not yet, or a test)
    program: str | None  # who arrived (or was tested)
    displaced: str | None  # who left
    program_id: int | None
    displaced_id: int | None
    method: str  # the ranking method of the standings after it
    # the stored standings after it: {"id", "name", "rank", "points", "scores", ...}
    entries: tuple[dict[str, Any], ...] = field(repr=False)
    contest: str | None = None  # the contest it publishes (CONTEST_PUBLICATIONS)


@dataclass(frozen=True)
class ProgramVersion:
    """One submitted version of a program (tests are no versions), with the
    hill change it arrived by."""

    id: int
    number: int  # 1, 2 ... in the order submitted
    submitted: dt.datetime
    code_hash: str
    size: int  # bytes
    status: ProgramStatus
    left_at: dt.datetime | None
    left_reason: LeaveReason | None
    arrival: HillEvent | None  # None only while its change is being written


class HillQueries:
    """Reads of the hill: the standings now or after any event, the events,
    a program's code.  Thread-safe: every call has its own session."""

    def __init__(self, db: Database, ranking: str) -> None:
        self.db = db
        self.ranking = ranking  # the method of an empty hill's standings

    @classmethod
    def open(cls, data_dir: Path, ranking: str) -> HillQueries:
        """The hill in `data_dir`, read only; HillError if its database is
        missing or of another schema (the writer makes and upgrades it)."""
        return cls(Database.existing(DataFolder(data_dir).database), ranking)

    def close(self) -> None:
        self.db.close()

    def latest_state(self) -> tuple[int, str | None] | None:
        """The id and git commit of the event that made the current hill
        state (None: no state yet); cheap, for readers that cache by it."""
        with self.db.session() as session:
            query = select(Event.id, Event.commit).where(Event.kind.in_(HILL_CHANGES))
            row = session.execute(query.order_by(Event.id.desc()).limit(1)).first()
            return None if row is None else (row.id, row.commit)

    def standings(self) -> Standings:
        """The hill now."""
        with self.db.session() as session:
            return self.current(session)[1]

    def standings_at(self, event_id: int) -> Standings:
        """The hill right after event `event_id`."""
        with self.db.session() as session:
            event = session.get(Event, event_id)
            if event is None:
                raise HillError(f"no event {event_id}")
            return _standings_of(session, event)

    def events(self, full_name: str | None = None) -> list[HillEvent]:
        """Every event, tests too (or those of one program), oldest first."""
        query = _events()
        if full_name is not None:
            ids = _ids_of(full_name)
            query = query.where(Event.program_id.in_(ids) | Event.displaced_id.in_(ids))
        return self._read(query)

    def event(self, event_id: int) -> HillEvent | None:
        """One event (a test too), None if there is none."""
        found = self._read(_events().where(Event.id == event_id))
        return found[0] if found else None

    def changes(self) -> list[HillEvent]:
        """The events that changed the hill, oldest first."""
        return self._read(_events().where(Event.kind.in_(HILL_CHANGES)))

    def recent_changes(self, count: int, full_name: str | None = None) -> list[HillEvent]:
        """The last `count` hill changes (those that concern a version of
        `full_name`), newest first."""
        query = _events().where(Event.kind.in_(HILL_CHANGES))
        if full_name is not None:
            ids = _ids_of(full_name)
            query = query.where(Event.program_id.in_(ids) | Event.displaced_id.in_(ids))
        return self._read(query.order_by(None).order_by(Event.id.desc()).limit(count))

    def submitted_names(self) -> list[str]:
        """The full name of every program ever submitted (tests aside), sorted."""
        with self.db.session() as session:
            query = select(ProgramRow.owner, ProgramRow.name).where(SUBMITTED)
            return sorted({names.full_name(*row) for row in session.execute(query.distinct())})

    def versions(self, full_name: str) -> list[ProgramVersion]:
        """Every version of `owner.name` ever submitted, oldest first."""
        columns = (
            ProgramRow.id,
            ProgramRow.submitted_at,
            ProgramRow.code_hash,
            func.length(ProgramRow.code).label("size"),  # bytes: the code is a BLOB
            ProgramRow.status,
            ProgramRow.left_at,
            ProgramRow.left_reason,
        )
        query = (
            select(*columns)
            .where(ProgramRow.id.in_(_ids_of(full_name)), SUBMITTED)
            .order_by(ProgramRow.id)
        )
        with self.db.session() as session:
            programs = session.execute(query).all()
        arrivals = _events().where(
            Event.program_id.in_([p.id for p in programs]), Event.kind.in_(ARRIVALS)
        )
        arrived = {e.program_id: e for e in self._read(arrivals)}
        numbers = submission_numbers(full_name for _ in programs)
        return [
            ProgramVersion(
                id=p.id,
                number=number,
                submitted=p.submitted_at,
                code_hash=p.code_hash,
                size=p.size,
                status=p.status,
                left_at=p.left_at,
                left_reason=p.left_reason,
                arrival=arrived.get(p.id),
            )
            for number, p in zip(numbers, programs, strict=True)
        ]

    def code_of_hash(self, code_hash: str) -> bytes:
        """The code whose hash (hill.engine.code_hash) is `code_hash`; HillError if none."""
        with self.db.session() as session:
            return code_by_hash(session, code_hash)

    def change_in_force(self, event_id: int) -> int | None:
        """The id of the hill change in force at event `event_id` (see
        `in_force`); None if there is no such event, or no change up to it."""
        with self.db.session() as session:
            try:
                change = in_force(session, event_id)
            except LookupError:
                return None
            return None if change is None else change.id

    def owners(self) -> set[str]:
        """Every owner that has had a program on the hill, spelt as stored
        (tests aside: anyone may test under any nick)."""
        been = (ProgramStatus.HILL, ProgramStatus.LEFT)
        with self.db.session() as session:
            query = select(ProgramRow.owner).where(ProgramRow.status.in_(been)).distinct()
            return set(session.scalars(query))

    def program_code(self, program_id: int) -> bytes:
        with self.db.session() as session:
            code = session.scalar(select(ProgramRow.code).where(ProgramRow.id == program_id))
            if code is None:
                raise HillError(f"no program {program_id}")
            return code

    def current(
        self, session: Session, newcomers: Sequence[str] = ()
    ) -> tuple[int | None, Standings, Results]:
        """The hill now, the change that made it (None: no change yet), and
        the stored jousts among its programs and `newcomers` (code hashes),
        read once: in the caller's session (the writer's, under its lock)."""
        event = in_force(session)
        if event is None:
            return None, Standings.empty(self.ranking), load_jousts(session, newcomers)
        return event.id, *_standings_and_jousts(session, event, newcomers)

    def _read(self, query: EventRows) -> list[HillEvent]:
        with self.db.session() as session:
            return [_event(*row) for row in session.execute(query)]


def in_force(session: Session, event_id: int | None = None) -> Event | None:
    """The hill change in force at event `event_id` (None: now): that event
    if it changed the hill, else the last change before it (a test changes
    nothing); None before the first change.  LookupError if there is no
    event `event_id`."""
    query = select(Event).where(Event.kind.in_(HILL_CHANGES))
    if event_id is not None:
        if session.get(Event, event_id) is None:
            raise LookupError(event_id)
        query = query.where(Event.id <= event_id)
    return session.scalars(query.order_by(Event.id.desc()).limit(1)).first()


def hill_hashes(session: Session) -> list[str]:
    """The code hashes of the programs on the hill now (sorted)."""
    event = in_force(session)
    if event is None:
        return []
    ids = [entry["id"] for entry in event.standings["entries"]]
    query = select(ProgramRow.code_hash).where(ProgramRow.id.in_(ids))
    return sorted(set(session.scalars(query)))


def latest_names(db: Database, hashes: Sequence[str]) -> list[str | None]:
    """The full name of the latest program with each code (hill.engine.arena.
    code_hash), or of a closed contest's entrant (`alice in contest spring`);
    None where no program has that code."""
    found: list[str | None] = []
    with db.session() as session:
        for code_hash in hashes:
            query = select(ProgramRow.owner, ProgramRow.name).where(
                ProgramRow.code_hash == code_hash
            )
            row = session.execute(query.order_by(ProgramRow.id.desc()).limit(1)).first()
            if row is not None:
                found.append(names.full_name(row.owner, row.name))
                continue
            entry = session.execute(
                _published_entries(ContestEntryRow.entrant, ContestRow.name, code_hash)
            ).first()
            found.append(None if entry is None else f"{entry[0]} in contest {entry[1]}")
    return found


def code_by_hash(session: Session, code_hash: str) -> bytes:
    """The code of a stored program with this hash, or of a closed contest's
    entrant (an open contest's code is nobody's business but its owner's)."""
    query = select(ProgramRow.code).where(ProgramRow.code_hash == code_hash).limit(1)
    code = session.scalar(query)
    if code is None:
        code = session.scalar(_published_entries(ContestEntryRow.code, None, code_hash))
    if code is None:
        raise HillError(f"no program with code {code_hash}")
    return code


def _published_entries(column: Any, other: Any, code_hash: str) -> Select[Any]:
    """The entrants of closed contests with this code (their code is public)."""
    columns = (column,) if other is None else (column, other)
    return (
        select(*columns)
        .join(ContestRow, ContestRow.id == ContestEntryRow.contest_id)
        .where(ContestEntryRow.code_hash == code_hash, ContestRow.state != ContestState.OPEN)
        .order_by(ContestRow.id.desc())
        .limit(1)
    )


def _ids_of(full_name: str) -> Select[Any]:
    """The ids of every program named `full_name`, tests included."""
    owner, name = names.split(full_name)
    return select(ProgramRow.id).where(ProgramRow.owner == owner, ProgramRow.name == name)


_Arrived, _Left = aliased(ProgramRow), aliased(ProgramRow)
# an event, its program's owner and name, its displaced one's, its contest's name
EventRows = Select[Event, str, str, str, str, str]


def _events() -> EventRows:
    """Events with the names of their programs (and contest), oldest first."""
    return (
        select(Event, _Arrived.owner, _Arrived.name, _Left.owner, _Left.name, ContestRow.name)
        .outerjoin(_Arrived, Event.program_id == _Arrived.id)
        .outerjoin(_Left, Event.displaced_id == _Left.id)
        .outerjoin(ContestRow, Event.contest_id == ContestRow.id)
        .order_by(Event.id)
    )


def _event(
    row: Event,
    owner: str | None,
    name: str | None,
    left_owner: str | None,
    left: str | None,
    contest: str | None = None,
) -> HillEvent:
    return HillEvent(
        id=row.id,
        time=row.time,
        kind=row.kind,
        actor=row.actor,
        summary=row.summary,
        commit=row.commit,
        program=names.full_name(owner, name) if owner and name else None,
        displaced=names.full_name(left_owner, left) if left_owner and left else None,
        program_id=row.program_id,
        displaced_id=row.displaced_id,
        method=row.standings["method"],
        entries=tuple(row.standings["entries"]),
        contest=contest,
    )


def _standings_of(session: Session, event: Event) -> Standings:
    """The standings stored with an event, with the outcomes of its jousts."""
    return _standings_and_jousts(session, event)[0]


def _standings_and_jousts(
    session: Session, event: Event, newcomers: Sequence[str] = ()
) -> tuple[Standings, Results]:
    """The standings stored with an event, with the outcomes of its jousts,
    and the stored jousts among its programs and `newcomers`."""
    records = event.standings["entries"]
    ids = [r["id"] for r in records]
    query = select(
        ProgramRow.id,
        ProgramRow.owner,
        ProgramRow.name,
        ProgramRow.submitted_at,
        ProgramRow.code_hash,
    ).where(ProgramRow.id.in_(ids))
    programs = {row.id: Contestant(**row._mapping) for row in session.execute(query)}
    contestants = [programs[i] for i in ids]
    hashes = [c.code_hash for c in contestants]
    results = load_jousts(session, [*hashes, *newcomers])
    outcomes = results.matrix(hashes)
    entries = tuple(
        Entry(
            program=contestant,
            rank=r["rank"],
            previous_rank=r["previous_rank"],
            points=r["points"],
            scores=r["scores"],
        )
        for contestant, r in zip(contestants, records, strict=True)
    )
    return Standings(event.standings["method"], entries, outcomes), results
