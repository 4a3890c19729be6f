"""The hill's contests as stored (migration 0008, docs/contests.md): the
`contests` and `contest_entries` tables (hill.store.tables), written by the
contests' writer (hill.writers.contests) under the hill's lock, read here
as plain data for the web, the bot and the command line.

While a contest is open its views show who entered and when, never the
code nor anything made from it: `code_hash` is None until the close
(`ContestView.to_json` is the tool contract of docs/contests.md).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hill.rules import contests as rules
from hill.rules.contests import ContestState
from hill.rules.events import EventKind, iso_utc
from hill.store.database import Database
from hill.store.tables import ContestEntryRow, ContestRow
from hill.tournaments.plan import TournamentPlan
from hill.tournaments.registry import tournament_format


@dataclass(frozen=True)
class EntryView:
    """An entrant: a player (by owner) or a control (control.NAME)."""

    entrant: str
    control: bool
    heard: dt.datetime  # when its request was heard (a control: when named)
    code_hash: str | None  # None while the contest is open
    size: int | None  # bytes; None while the contest is open


@dataclass(frozen=True)
class ContestView:
    """A contest as everyone may see it."""

    id: int
    name: str
    title: str
    format: str
    closes: dt.datetime
    state: ContestState
    created_at: dt.datetime
    created_by: str
    closed_at: dt.datetime | None
    closed_by: str | None
    tournament_id: int | None
    void_reason: str | None
    result: dict[str, Any] | None = field(repr=False)  # the tournament's, once played
    winner: str | None
    told: tuple[str, ...]
    players: tuple[EntryView, ...]  # the entries standing now (withdrawn ones aside)
    controls: tuple[EntryView, ...]

    @property
    def open(self) -> bool:
        return self.state == ContestState.OPEN

    def seconds_left(self, now: dt.datetime) -> float:
        return max(0.0, (self.closes - now).total_seconds()) if self.open else 0.0

    def standings(self) -> list[dict[str, Any]] | None:
        """The contest's standings (hill.rules.contests.standings), once played."""
        if self.result is None:
            return None
        result = self.result
        plan = TournamentPlan(result["format"], tuple(result["entrants"]), result["seed"])
        criteria = tournament_format(result["format"]).tie_criteria(plan)
        return rules.standings(result["standings"], criteria)

    def to_json(self) -> dict[str, Any]:
        """The tool contract of docs/contests.md (`bfjoust contest show --json`)."""
        return {
            "name": self.name,
            "title": self.title,
            "format": self.format,
            "closes": iso_utc(self.closes),
            "state": self.state.value,
            "entries": [
                {"owner": e.entrant, "entered": iso_utc(e.heard), "code_hash": e.code_hash}
                for e in self.players
            ],
            "controls": [rules.control_name(c.entrant) for c in self.controls],
            "tournament": self.result,
            "winner": self.winner,
        }


def contests(db: Database) -> list[ContestView]:
    """Every contest, the newest first."""
    with db.session() as session:
        rows = session.scalars(select(ContestRow).order_by(ContestRow.id.desc()))
        return [view_of(session, row) for row in list(rows)]


def contest(db: Database, name: str) -> ContestView | None:
    """The contest called `name` (in any case), None if there is none."""
    with db.session() as session:
        row = find(session, name)
        return None if row is None else view_of(session, row)


def find(session: Session, name: str) -> ContestRow | None:
    """The contest called `name`, in any case: names are unique without case."""
    query = select(ContestRow).where(func.lower(ContestRow.name) == name.lower())
    return session.scalars(query).first()


def entrants(session: Session, contest_id: int) -> list[ContestEntryRow]:
    """The contest's entrant rows (withdrawals too), by name."""
    query = select(ContestEntryRow).where(ContestEntryRow.contest_id == contest_id)
    return list(session.scalars(query.order_by(ContestEntryRow.entrant)))


def published_files(session: Session, contest_id: int, kind: EventKind) -> dict[str, bytes]:
    """The files a contest's publication event adds to the hill's history:
    every entrant's program at the close, the results once played."""
    row = session.get(ContestRow, contest_id)
    assert row is not None
    if kind == EventKind.CONTEST_RESULTS:
        assert row.result is not None
        return {rules.results_path(row.name): rules.results_file(row.result)}
    return {
        rules.entrant_path(row.name, e.entrant): e.code
        for e in entrants(session, contest_id)
        if e.code is not None
    }


def view_of(session: Session, row: ContestRow) -> ContestView:
    """The contest of `row` as everyone may see it."""
    hidden = row.state == ContestState.OPEN
    shown = [
        EntryView(
            entrant=e.entrant,
            control=e.control,
            heard=e.heard_at,
            code_hash=None if hidden else e.code_hash,
            size=None if hidden else len(e.code),
        )
        for e in entrants(session, row.id)
        if e.code is not None
    ]
    return ContestView(
        id=row.id,
        name=row.name,
        title=row.title,
        format=row.format,
        closes=row.closes,
        state=row.state,
        created_at=row.created_at,
        created_by=row.created_by,
        closed_at=row.closed_at,
        closed_by=row.closed_by,
        tournament_id=row.tournament_id,
        void_reason=row.void_reason,
        result=row.result,
        winner=row.winner,
        told=tuple(row.told or ()),
        players=tuple(e for e in shown if not e.control),
        controls=tuple(e for e in shown if e.control),
    )
