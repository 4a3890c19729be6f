"""The pages of `-test` trials: a trial's full result (the breakdown of the
tested program against the hill it met, from its event's standings) at an
unguessable address, for `[hill] test_page_hours`.

The writer opens a page in the trial's own transaction (`open_page`), so
the answer that links it and the page come together or not at all; the
web report finds it by its token (`TrialPages.find`).  The token is a read
capability: the trial's code is its owner's, so the address is not a
guessable number.  Expired pages answer "expired" (410) until they are
cleared, a day after they expire: as each new page is opened, and as the
web report starts (`TrialPages.clear_expired`), so a hill where nobody
tests any more keeps none for long.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from hill.rules import names
from hill.rules.events import utcnow
from hill.store.database import Database
from hill.store.tables import ProgramRow, TrialPage

TOKEN_BYTES = 16  # 128 random bits, 22 characters of URL-safe base64
TOKEN = re.compile(r"[A-Za-z0-9_-]{22}")
CLEARED_AFTER = dt.timedelta(days=1)  # an expired page says so this long, then is forgotten


@dataclass(frozen=True)
class Trial:
    """A trial's page: the event whose standings it shows, and whom."""

    token: str
    event: int
    program: str  # the tested program's full name
    expires_at: dt.datetime
    expired: bool


def open_page(session: Session, event_id: int, program_id: int, hours: int) -> str:
    """A page for the trial of event `event_id`, in the caller's transaction;
    its token.  Pages long expired are cleared on the way."""
    now = utcnow()
    _clear_expired(session, now)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    expires = now + dt.timedelta(hours=hours)
    page = TrialPage(token=token, event_id=event_id, program_id=program_id, expires_at=expires)
    session.add(page)
    return token


def _clear_expired(session: Session, now: dt.datetime) -> int:
    """Forget the pages expired more than CLEARED_AFTER before `now`; how many."""
    cleared = session.execute(delete(TrialPage).where(TrialPage.expires_at < now - CLEARED_AFTER))
    return int(getattr(cleared, "rowcount", 0) or 0)


class TrialPages:
    """Trials' pages by token, for the web report (reads, and the clearing
    of those long expired; blocks)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def clear_expired(self) -> int:
        """Forget the pages expired more than CLEARED_AFTER ago, in one short
        transaction (the web report, as it starts); how many."""
        with self.db.transaction() as session:
            return _clear_expired(session, utcnow())

    def find(self, token: str) -> Trial | None:
        """The trial of `token` (expired or not), None if there is none."""
        if not TOKEN.fullmatch(token):
            return None
        query = (
            select(TrialPage, ProgramRow.owner, ProgramRow.name)
            .join(ProgramRow, ProgramRow.id == TrialPage.program_id)
            .where(TrialPage.token == token)
        )
        with self.db.session() as session:
            row = session.execute(query).first()
        if row is None:
            return None
        page, owner, name = row
        return Trial(
            token=page.token,
            event=page.event_id,
            program=names.full_name(owner, name),
            expires_at=page.expires_at,
            expired=page.expires_at <= utcnow(),
        )
