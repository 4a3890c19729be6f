"""What the owners of programs that left the hill are to be told, kept in
the hill's database so that a restart forgets none of it.

The writer adds a notice in the transaction of the change that made a
program leave without its owner's doing (pushed off by a newcomer, removed
by an admin: `add_notice`); the bot sends it as a private NOTICE when the
owner is online, else on their next command, and marks it sent once it is
written to the server (`NoticeBook.mark_sent`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import select, update
from sqlalchemy.orm import Session, aliased

from hill.rules import names
from hill.rules.events import LeaveReason, utcnow
from hill.store.database import Database
from hill.store.tables import Event, Notice, ProgramRow


@dataclass(frozen=True)
class PendingNotice:
    """A notice not sent yet, as plain data."""

    id: int
    owner: str
    program: str  # the full name of the program that left
    reason: LeaveReason
    by: str  # who made it leave: the newcomer's full name, or the admin
    time: dt.datetime  # when it left
    event: int  # the change that made it leave


def add_notice(
    session: Session, owner: str, program_id: int, event_id: int, reason: LeaveReason
) -> None:
    """Tell `owner` that their program left (in the caller's transaction)."""
    session.add(Notice(owner=owner, program_id=program_id, event_id=event_id, reason=reason))


_Left, _Arrived = aliased(ProgramRow), aliased(ProgramRow)


class NoticeBook:
    """The notices in the hill's database; every method blocks."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def pending(self) -> list[PendingNotice]:
        """Every notice not sent yet, oldest first."""
        query = (
            select(Notice, _Left.owner, _Left.name, Event.time, Event.actor, _Arrived)
            .join(_Left, _Left.id == Notice.program_id)
            .join(Event, Event.id == Notice.event_id)
            .outerjoin(_Arrived, _Arrived.id == Event.program_id)
            .where(Notice.sent_at.is_(None))
            .order_by(Notice.id)
        )
        with self.db.session() as session:
            return [
                PendingNotice(
                    id=notice.id,
                    owner=notice.owner,
                    program=names.full_name(owner, name),
                    reason=notice.reason,
                    by=arrived.full_name if arrived is not None else actor,
                    time=time,
                    event=notice.event_id,
                )
                for notice, owner, name, time, actor, arrived in session.execute(query)
            ]

    def mark_sent(self, notice_id: int) -> None:
        with self.db.transaction() as session:
            session.execute(update(Notice).where(Notice.id == notice_id).values(sent_at=utcnow()))
