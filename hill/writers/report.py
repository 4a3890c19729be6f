"""What a change of the hill leaves behind, for every writer of it (the
hill's, hill.writers.hill, and the contests', hill.writers.contests): the
hill event it stores (`add_event`) and the `Report` it answers with.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy.orm import Session

from hill.rules.events import ARRIVALS, EventKind
from hill.rules.requests import Outcome
from hill.rules.standings import Standings
from hill.store.tables import Event


@dataclass(frozen=True)
class Report:
    """What an operation did: the one-line summary and the standings after it."""

    summary: str
    standings: Standings
    changed: bool
    program: str | None = None
    kind: EventKind | None = None  # the event's
    page: str | None = None  # a test's page (hill.store.trials: its token)

    @property
    def outcome(self) -> Outcome:
        """What a request that asked for it came to, as stored."""
        program = self.program if self.kind in ARRIVALS else None
        return Outcome(self.summary, self.kind, program, self.changed, self.page)


def add_event(
    session: Session,
    kind: EventKind,
    actor: str,
    summary: str,
    standings: Standings,
    program_id: int | None = None,
    displaced_id: int | None = None,
    contest_id: int | None = None,
    *,
    recorded: tuple[int, dt.datetime, str] | None = None,
) -> Event:
    """Store a hill event (the standings after it) in `session`, with its id
    and time (`recorded`: its id, time and commit, as a rebuild reads them)."""
    given = dict(zip(("id", "time", "commit"), recorded, strict=True)) if recorded else {}
    event = Event(
        **given,
        kind=kind,
        actor=actor,
        program_id=program_id,
        displaced_id=displaced_id,
        contest_id=contest_id,
        summary=summary,
        standings={"method": standings.method, "entries": standings.records()},
    )
    session.add(event)
    session.flush()  # its id and time
    return event
