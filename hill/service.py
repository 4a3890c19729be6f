"""The hill service: the one place that changes the hill.

Every change (challenge, withdrawal, admin removal, rescore) runs under an
exclusive lock, is written to the database as one transaction, and is then
recorded in the git repository.  A crash between the two is repaired on the
next start (`sync_history`).
"""

from __future__ import annotations

import fcntl
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session, load_only

from hill import engine
from hill.config import HillSettings
from hill.faults import crash_point
from hill.history import History
from hill.reports import text_report
from hill.standings import Contestant, Entry, Standings, outcome_matrix, rank
from hill.storage import (
    Database,
    Event,
    Joust,
    Program,
    decode_outcomes,
    encode_outcomes,
    utcnow,
)

NAME = re.compile(r"[A-Za-z0-9_-]{1,48}")
# IRC nick characters (RFC 2812) but `\`, so that owner.name is a safe file name
OWNER = re.compile(r"[A-Za-z0-9_\-\[\]`^{}|]{1,32}")

COMMIT_MESSAGES = {
    "challenge": "Replacing {displaced} by {program}",
    "join": "Adding {program}",
    "update": "Updating {program}",
    "withdraw": "Withdrawing {program}",
    "remove": "Removing {program}",
    "rescore": "Rescoring the hill",
}


class HillError(Exception):
    """A request the hill refuses; the message is meant for the player."""


@dataclass(frozen=True)
class Report:
    """What an operation did: the one-line summary and the standings after it."""

    summary: str
    standings: Standings
    changed: bool
    program: str | None = None
    kind: str = ""  # the event's: "join", "challenge", "update", "test", "withdraw", ...


# Called inside the transaction of a hill change, with its report: what it
# writes in the session commits with the change, or not at all (the bot marks
# the player's request done this way, so that a crash never plays it twice).
Record = Callable[[Session, Report], None]


def check_name(owner: str, name: str) -> None:
    if not OWNER.fullmatch(owner):
        raise HillError(f"bad owner {owner[:40]!r}: 1 to 32 letters, digits or _-[]`^{{}}|")
    if not NAME.fullmatch(name):
        raise HillError(f"bad program name {name[:60]!r}: use 1 to 48 letters, digits, '_' or '-'")


def check_program(code: bytes, max_bytes: int) -> engine.Program:
    """The compiled program; HillError if it is too large or malformed."""
    if len(code) > max_bytes:
        raise HillError(f"program too large: {len(code)} bytes, the limit is {max_bytes}")
    try:
        return engine.compile_program(code)
    except engine.ParseError as error:
        raise HillError(f"parse error at {error}") from None


class _Lock:
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
    def __init__(self, settings: HillSettings, *, jobs: int | None = None) -> None:
        self.settings = settings
        self.jobs = jobs
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.lock = _Lock(settings.data_dir / "hill.lock")
        self.db = Database(settings.data_dir / "hill.sqlite3")
        self._compiled: dict[int, engine.Program] = {}
        with self.lock.held():
            self.db.upgrade()
            self.history = History(
                settings.data_dir / "hill-repo", settings.git_branch, settings.git_remote
            )
            self._sync_history()

    def close(self) -> None:
        self.db.close()

    # --- reading ------------------------------------------------------------

    def standings(self) -> Standings:
        with self.db.session() as session:
            return self._current(session)

    def event_standings(self, event_id: int) -> Standings:
        with self.db.session() as session:
            event = session.get(Event, event_id)
            if event is None:
                raise HillError(f"no event {event_id}")
            return self._standings_of(session, event)

    def events(self, full_name: str | None = None) -> list[Event]:
        with self.db.session() as session:
            query = select(Event).order_by(Event.id)
            if full_name is not None:
                # owners have no '.', so the first one ends the owner
                owner, _, name = full_name.partition(".")
                ids = select(Program.id).where(Program.owner == owner, Program.name == name)
                query = query.where(Event.program_id.in_(ids) | Event.displaced_id.in_(ids))
            return list(session.scalars(query))

    def latest_state(self) -> tuple[int, str | None] | None:
        """The id and git commit of the event that made the current hill
        state (None: no state yet); cheap, for readers that cache by it."""
        with self.db.session() as session:
            event = _latest_change(session, Event.id, Event.commit)
            return None if event is None else (event.id, event.commit)

    def changes(self) -> list[Event]:
        """The hill's changes (every event but tests), oldest first."""
        with self.db.session() as session:
            query = select(Event).where(Event.kind != "test").order_by(Event.id)
            return list(session.scalars(query))

    def program_names(self) -> dict[int, str]:
        """The full name of every program ever submitted, by id (code not loaded)."""
        with self.db.session() as session:
            rows = session.execute(select(Program.id, Program.owner, Program.name))
            return {row.id: f"{row.owner}.{row.name}" for row in rows}

    def owners(self) -> set[str]:
        """Every owner that has had a program on the hill, spelt as stored
        (tests aside: anyone may test under any nick)."""
        with self.db.session() as session:
            query = select(Program.owner).where(Program.status.in_(("hill", "left"))).distinct()
            return set(session.scalars(query))

    def program_code(self, program_id: int) -> bytes:
        with self.db.session() as session:
            code = session.scalar(select(Program.code).where(Program.id == program_id))
            if code is None:
                raise HillError(f"no program {program_id}")
            return code

    def _current(self, session: Session) -> Standings:
        event = _latest_change(session)
        if event is None:
            return Standings(self.settings.ranking, (), np.zeros((0, 0, engine.BATTLES), np.int8))
        return self._standings_of(session, event)

    def _standings_of(self, session: Session, event: Event) -> Standings:
        """The standings stored with an event, with the outcomes of its jousts."""
        records = event.standings["entries"]
        ids = [r["id"] for r in records]
        rows = {p.id: p for p in session.scalars(select(Program).where(Program.id.in_(ids)))}
        jousts = {
            (j.left_id, j.right_id): decode_outcomes(j.outcomes)
            for j in session.scalars(
                select(Joust).where(Joust.left_id.in_(ids), Joust.right_id.in_(ids))
            )
        }
        entries = tuple(
            Entry(
                program=_contestant(rows[r["id"]]),
                rank=r["rank"],
                previous_rank=r["previous_rank"],
                points=r["points"],
                scores=r["scores"],
            )
            for r in records
        )
        return Standings(event.standings["method"], entries, outcome_matrix(ids, jousts))

    def _program(self, session: Session, program_id: int) -> engine.Program:
        if program_id not in self._compiled:
            row = session.get(Program, program_id)
            assert row is not None
            self._compiled[program_id] = engine.compile_program(row.code)
        return self._compiled[program_id]

    # --- changing -------------------------------------------------------------

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
        check_name(owner, name)
        program = check_program(code, self.settings.max_program_bytes)
        full_name = f"{owner}.{name}"
        with self.lock.held():
            with self.db.session() as session:
                current = self._current(session)
                old = current.find(full_name)
                displaced = old or (
                    current.entries[-1] if current.size >= self.settings.size else None
                )
                stay = [e for e in current.entries if e is not displaced]
                opponents = [self._program(session, e.program.id) for e in stay]
            results = engine.joust_many(program, opponents, jobs=self.jobs)
            crash_point("jousted")
            with self.db.transaction() as session:
                leaving = None
                if displaced is not None and not test_only:
                    reason = "updated" if old else "pushed off"
                    leaving = self._leave(session, displaced, reason)
                row = Program(
                    owner=owner, name=name, code=code, status="test" if test_only else "hill"
                )
                session.add(row)
                session.flush()
                if leaving is not None:
                    leaving.displaced_by_id = row.id
                standings = self._rank_with(current, stay, _contestant(row), results, old)
                kind = (
                    "test"
                    if test_only
                    else "update"
                    if old
                    else ("challenge" if displaced else "join")
                )
                summary = self._challenge_summary(
                    standings, row.id, full_name, current, old, displaced, results, test_only
                )
                if not test_only:
                    self._compiled[row.id] = program
                    for entry, result in zip(stay, results, strict=True):
                        session.add(
                            Joust(
                                left_id=entry.program.id,
                                right_id=row.id,
                                outcomes=encode_outcomes(result.swapped().outcomes),
                            )
                        )
                session.add(
                    Event(
                        kind=kind,
                        actor=owner,
                        program_id=row.id,
                        displaced_id=displaced.program.id if displaced else None,
                        summary=summary,
                        standings=_records(standings),
                    )
                )
                report = Report(summary, standings, not test_only, full_name, kind)
                if record is not None:
                    record(session, report)
            crash_point("stored")
            if not test_only:
                self._sync_history()
        return report

    def withdraw(self, owner: str, name: str, *, record: Record | None = None) -> Report:
        """An owner takes their own program off the hill."""
        check_name(owner, name)
        return self._take_off(f"{owner}.{name}", owner, "withdraw", "withdrawn", record)

    def remove(self, full_name: str, actor: str, *, record: Record | None = None) -> Report:
        """An admin takes any program off the hill."""
        return self._take_off(full_name, actor, "remove", "removed", record)

    def rescore(
        self, actor: str, *, rejoust: bool = False, record: Record | None = None
    ) -> Report:
        """Recompute the standings from the stored jousts (or replay every joust)."""
        with self.lock.held():
            with self.db.session() as session:
                current = self._current(session)
                programs = [self._program(session, e.program.id) for e in current.entries]
            outcomes = current.outcomes
            if rejoust:
                outcomes = self._rejoust(current, programs)
            contestants = [e.program for e in current.entries]
            previous = {e.program.id: e.rank for e in current.entries}
            standings = rank(contestants, outcomes, self.settings.ranking, previous)
            summary = f"rescored {standings.size} programs by {standings.method}" + (
                " after replaying every joust" if rejoust else ""
            )
            with self.db.transaction() as session:
                if rejoust:
                    self._store_jousts(session, contestants, outcomes)
                session.add(
                    Event(
                        kind="rescore", actor=actor, summary=summary, standings=_records(standings)
                    )
                )
                report = Report(summary, standings, changed=True, kind="rescore")
                if record is not None:
                    record(session, report)
            self._sync_history()
        return report

    def _rejoust(self, current: Standings, programs: Sequence[engine.Program]) -> np.ndarray:
        n = current.size
        pairs = [(a, b) for a in range(n) for b in range(a + 1, n)]
        results = engine.joust_pairs(((programs[a], programs[b]) for a, b in pairs), jobs=self.jobs)
        outcomes = np.zeros_like(current.outcomes)
        for (a, b), result in zip(pairs, results, strict=True):
            outcomes[a, b] = result.outcomes
            outcomes[b, a] = result.swapped().outcomes
        return outcomes

    def _store_jousts(
        self, session: Session, contestants: Sequence[Contestant], outcomes: np.ndarray
    ) -> None:
        for a, left in enumerate(contestants):
            for b, right in enumerate(contestants):
                if left.id < right.id:
                    session.merge(
                        Joust(
                            left_id=left.id,
                            right_id=right.id,
                            outcomes=encode_outcomes(outcomes[a, b].tolist()),
                        )
                    )

    def _take_off(
        self, full_name: str, actor: str, kind: str, reason: str, record: Record | None
    ) -> Report:
        with self.lock.held():
            with self.db.transaction() as session:
                current = self._current(session)
                leaving = current.find(full_name)
                if leaving is None:
                    raise HillError(f"there is no {full_name} on the hill")
                stay = [e for e in current.entries if e is not leaving]
                keep = [i for i, e in enumerate(current.entries) if e is not leaving]
                standings = rank(
                    [e.program for e in stay],
                    current.outcomes[np.ix_(keep, keep)],
                    self.settings.ranking,
                    {e.program.id: e.rank for e in current.entries},
                )
                self._leave(session, leaving, reason)
                verb = "withdrawn" if kind == "withdraw" else "removed"
                summary = f"{full_name} {verb}; {standings.size} programs left on the hill"
                session.add(
                    Event(
                        kind=kind,
                        actor=actor,
                        displaced_id=leaving.program.id,
                        summary=summary,
                        standings=_records(standings),
                    )
                )
                report = Report(summary, standings, True, full_name, kind)
                if record is not None:
                    record(session, report)
            self._compiled.pop(leaving.program.id, None)
            self._sync_history()
        return report

    def _leave(self, session: Session, entry: Entry, reason: str) -> Program:
        row = session.get(Program, entry.program.id)
        assert row is not None
        row.status = "left"
        row.left_at = utcnow()
        row.left_reason = reason
        session.flush()  # before a new version takes the name
        self._compiled.pop(row.id, None)
        return row

    def _rank_with(
        self,
        current: Standings,
        stay: Sequence[Entry],
        newcomer: Contestant,
        results: Sequence[engine.JoustResult],
        old: Entry | None,
    ) -> Standings:
        keep = [current.entries.index(e) for e in stay]
        n = len(stay) + 1
        outcomes = np.zeros((n, n, engine.BATTLES), dtype=np.int8)
        outcomes[: n - 1, : n - 1] = current.outcomes[np.ix_(keep, keep)]
        for j, result in enumerate(results):
            outcomes[n - 1, j] = result.outcomes
            outcomes[j, n - 1] = result.swapped().outcomes
        previous = {e.program.id: e.rank for e in current.entries}
        if old is not None:
            previous[newcomer.id] = old.rank
        return rank(
            [e.program for e in stay] + [newcomer], outcomes, self.settings.ranking, previous
        )

    def _challenge_summary(
        self,
        standings: Standings,
        newcomer_id: int,
        full_name: str,
        current: Standings,
        old: Entry | None,
        displaced: Entry | None,
        results: Sequence[engine.JoustResult],
        test_only: bool,
    ) -> str:
        entry = next(e for e in standings.entries if e.program.id == newcomer_id)
        line = (
            f"{full_name}: points {entry.points:.2f}, "
            f"score {entry.scores[standings.method]:.2f}, rank {entry.rank}/{standings.size}"
        )
        if entry.change is not None:
            line += " (--)" if entry.change == 0 else f" ({entry.change:+d})"
        notes = []
        if old is not None:
            notes.append(_flips(current, old, results))
        elif displaced is not None:
            verb = "would push off" if test_only else "pushed off"
            notes.append(f"{verb} {displaced.program.full_name}")
        if test_only:
            notes.append("test only, the hill is unchanged")
        return "; ".join([line, *notes])

    # --- the git history ------------------------------------------------------

    def sync_history(self) -> int:
        """Commit every hill event the repository lacks; returns how many."""
        with self.lock.held():
            return self._sync_history()

    def _sync_history(self) -> int:
        with self.db.transaction() as session:
            events = list(
                session.scalars(select(Event).where(Event.kind != "test").order_by(Event.id))
            )
            recorded = self.history.recorded_event()
            known = {e.id for e in events}
            if recorded is not None and recorded not in known:
                # the repository is ahead of (or foreign to) the database
                self.history.start_over()
                recorded = None
            pending = [e for e in events if recorded is None or e.id > recorded]
            for event in pending:
                event.commit = self._commit_event(session, event)
        if pending:
            self.history.push()
        return len(pending)

    def _commit_event(self, session: Session, event: Event) -> str:
        standings = self._standings_of(session, event)
        files = {
            f"{e.program.full_name}.bfjoust": _code(session, e.program.id)
            for e in standings.entries
        }
        files["report.txt"] = text_report(standings).encode()
        names = {
            "program": _full_name(session, event.program_id),
            "displaced": _full_name(session, event.displaced_id),
        }
        message = COMMIT_MESSAGES[event.kind].format(**names)
        if names["program"] is None and names["displaced"] is not None:
            message = COMMIT_MESSAGES[event.kind].format(program=names["displaced"])
        return self.history.commit(
            files, f"{message}\n\n{event.summary}", event.actor, event.time, event.id
        )


def _latest_change(session: Session, *only: Any) -> Event | None:
    """The event that made the current hill state (tests change nothing);
    `only` the given columns when they are all the caller reads."""
    query = select(Event).where(Event.kind != "test").order_by(Event.id.desc()).limit(1)
    if only:
        query = query.options(load_only(*only))
    return session.scalars(query).first()


def _contestant(row: Program) -> Contestant:
    return Contestant(row.id, row.owner, row.name, row.submitted_at)


def _records(standings: Standings) -> dict[str, object]:
    return {"method": standings.method, "entries": standings.records()}


def _code(session: Session, program_id: int) -> bytes:
    row = session.get(Program, program_id)
    assert row is not None
    return row.code


def _full_name(session: Session, program_id: int | None) -> str | None:
    if program_id is None:
        return None
    row = session.get(Program, program_id)
    return row.full_name if row else None


def _flips(current: Standings, old: Entry, results: Sequence[engine.JoustResult]) -> str:
    """How the new version's battles differ from the old one's, opponent by opponent."""
    old_index = current.entries.index(old)
    others = [i for i in range(current.size) if i != old_index]
    before = current.outcomes[old_index, others]
    after = np.array([r.outcomes for r in results], dtype=np.int8).reshape(before.shape)
    better = int((after > before).sum())
    worse = int((after < before).sum())
    total = before.size
    return f"{better + worse} of {total} battles changed ({better} better, {worse} worse)"
