"""The request book: hill jobs players asked for, and their answers, kept in
the hill's database so that a crash forgets none of them.

A request is recorded `queued` when asked (on IRC, or through the web upload
form, perhaps in another process), with the time it was heard (a contest's
entry counts if heard before the close), becomes `running` while played, and ends
`done` or `failed` with what it came to, as data (hill.rules.requests.
Outcome), which the bot puts in words; `delivered` is set once the answer
has been written to the IRC server.  A request that changes the hill is
marked done by the writer in the same transaction as the change (`finish`,
called by hill.writers.hill): after a kill it is either done, or still open
and played again, never both.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import Select, func, select, update
from sqlalchemy.orm import Session

from hill.errors import QueueFull
from hill.rules.events import utcnow
from hill.rules.requests import FINISHED, OPEN, Outcome, RequestKind, RequestState
from hill.store.database import Database
from hill.store.tables import Request


class RequestBook:
    """The requests in the hill's database; every method is one transaction
    and blocks (call it off the event loop)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, *, limit: int, **fields: Any) -> Request:
        """Record a queued request (fields: nick, channel, origin, command,
        owner, name, code, and created_at, when it was heard, if not now);
        raises QueueFull when `limit` already wait."""
        with self.db.transaction() as session:
            return self.add_in(session, limit=limit, **fields)

    def add_in(self, session: Session, *, limit: int, **fields: Any) -> Request:
        if fields["command"] not in set(RequestKind):
            raise ValueError(f"no command {fields['command']!r}")
        row = Request(state=RequestState.QUEUED, **fields)
        session.add(row)
        # the insert holds SQLite's write lock: the count is exact across processes
        session.flush()
        if "created_at" not in fields and RequestKind(fields["command"]).contest:
            # heard now, under the write lock: a close (which takes it too) sees
            # every request heard before its closing time, or none is before it
            row.created_at = utcnow()
            session.flush()
        waiting = session.scalar(
            select(func.count()).select_from(Request).where(Request.state == RequestState.QUEUED)
        )
        if waiting is not None and waiting > limit:
            raise QueueFull  # and the transaction is rolled back
        return row

    def get(self, request_id: int) -> Request:
        with self.db.session() as session:
            row = session.get(Request, request_id)
            if row is None:
                raise LookupError(f"no request {request_id}")
            return row

    def last_id(self) -> int:
        with self.db.session() as session:
            return session.scalar(select(func.max(Request.id))) or 0

    def next_open(self) -> Request | None:
        """The oldest request still to play (one left running by a crash first)."""
        with self.db.session() as session:
            query = select(Request).where(Request.state.in_(OPEN)).order_by(Request.id).limit(1)
            return session.scalars(query).first()

    def waiting_entries(self, contest: str, heard_before: dt.datetime) -> list[Request]:
        """The open requests about contest `contest`'s entries heard before
        `heard_before` (its closing time), in order."""
        with self.db.session() as session:
            return list(session.scalars(entries_waiting(contest, heard_before)))

    def waiting_before(self, request_id: int) -> int:
        with self.db.session() as session:
            query = select(func.count()).where(Request.state.in_(OPEN), Request.id < request_id)
            return session.scalar(query) or 0

    def start(self, request_id: int) -> Request:
        """Mark an open request running (one finished meanwhile, say by a
        contest's close that played it, is left as it is)."""
        with self.db.transaction() as session:
            row = session.get(Request, request_id)
            assert row is not None
            if row.state in OPEN:
                row.state = RequestState.RUNNING
                row.attempts += 1
            return row

    def requeue(self, request_id: int) -> None:
        """A started request the storage could not take (the disk full)
        waits again, its start not counted (it is no sign of a crash)."""
        with self.db.transaction() as session:
            session.execute(
                update(Request)
                .where(Request.id == request_id, Request.state == RequestState.RUNNING)
                .values(state=RequestState.QUEUED, attempts=Request.attempts - 1)
            )

    def fail(self, request_id: int, refusal: str) -> Outcome:
        """Mark a request refused (nothing on the hill changed); its outcome."""
        outcome = Outcome(refusal)
        with self.db.transaction() as session:
            finish(session, request_id, outcome, RequestState.FAILED)
        return outcome

    def undelivered(self) -> list[Request]:
        """Finished requests whose answer has not been written to IRC, oldest first."""
        with self.db.session() as session:
            query = (
                select(Request)
                .where(Request.delivered.is_(False), Request.state.in_(FINISHED))
                .order_by(Request.id)
            )
            return list(session.scalars(query))

    def mark_delivered(self, request_id: int) -> None:
        with self.db.transaction() as session:
            session.execute(update(Request).where(Request.id == request_id).values(delivered=True))


def finish(
    session: Session,
    request_id: int,
    outcome: Outcome,
    state: RequestState = RequestState.DONE,
) -> None:
    """Mark a request done (or failed) with its outcome, in `session`: the
    writer's, the transaction of the change it made."""
    session.execute(
        update(Request)
        .where(Request.id == request_id)
        .values(state=state, outcome=outcome.to_json(), finished_at=utcnow())
    )


def entries_waiting(contest: str, heard_before: dt.datetime) -> Select[Request]:
    """The query of the open requests about contest `contest`'s entries
    heard before `heard_before`, in order."""
    return (
        select(Request)
        .where(
            Request.state.in_(OPEN),
            Request.command.in_([k for k in RequestKind if k.contest]),
            func.lower(Request.name) == contest.lower(),
            Request.created_at < heard_before,
        )
        .order_by(Request.id)
    )
