"""One-time upload links: how a program too long for an IRC line reaches the
hill.  The bot issues a link bound to the player who asked (owner, name,
where to answer); the web form redeems it once, before it expires, by
recording a request in the request book, which the bot then plays like any
other.  Both sides meet in the database, so the form works whether the web
report runs in the bot's process or in its own.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from dataclasses import dataclass

from sqlalchemy import delete, update

from hill.errors import LinkRefused
from hill.rules.events import utcnow
from hill.rules.requests import RequestKind
from hill.store.database import Database
from hill.store.requests import RequestBook
from hill.store.tables import Request, UploadLink

TOKEN_BYTES = 24  # 192 random bits, URL-safe base64
KEEP_USED = dt.timedelta(days=7)  # a used link shows its result this long


@dataclass(frozen=True)
class LinkState:
    """What a link is now: its binding, and its request once used."""

    link: UploadLink
    request: Request | None
    expired: bool


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class UploadLinks:
    """Issue, look up and redeem upload links; every method blocks."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.book = RequestBook(db)

    def issue(
        self,
        *,
        nick: str,
        channel: str | None,
        owner: str,
        name: str,
        test_only: bool,
        valid_seconds: float,
        contest: bool = False,
    ) -> str:
        """A new link's token (shown once, to the player, never stored);
        `contest`: the link enters contest `name`."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        now = utcnow()
        with self.db.transaction() as session:
            # links long past use are forgotten here, so the table stays small
            session.execute(delete(UploadLink).where(UploadLink.expires_at < now - KEEP_USED))
            session.add(
                UploadLink(
                    token_hash=token_hash(token),
                    nick=nick,
                    channel=channel,
                    owner=owner,
                    name=name,
                    test_only=test_only,
                    contest=contest,
                    created_at=now,
                    expires_at=now + dt.timedelta(seconds=valid_seconds),
                )
            )
        return token

    def state(self, token: str) -> LinkState | None:
        """The link of `token` (None: there is none)."""
        with self.db.session() as session:
            link = session.get(UploadLink, token_hash(token))
            if link is None:
                return None
            request = session.get(Request, link.request_id) if link.request_id else None
            return LinkState(link, request, expired=link.expires_at <= utcnow())

    def redeem(self, token: str, code: bytes, *, limit: int) -> Request:
        """Use the link once: record its request for `code`.  Raises
        LinkRefused (unknown, used, expired) or QueueFull (the link stays
        unused)."""
        digest = token_hash(token)
        now = utcnow()
        with self.db.transaction() as session:
            # the claim comes first: it takes the write lock, so two uploads
            # racing for one link (even from two processes) cannot both win
            claimed = session.execute(
                update(UploadLink)
                .where(
                    UploadLink.token_hash == digest,
                    UploadLink.used_at.is_(None),
                    UploadLink.expires_at > now,
                )
                .values(used_at=now)
            )
            link = session.get(UploadLink, digest)
            if link is None:
                raise LinkRefused("there is no such upload link", 404)
            if claimed.rowcount != 1:  # type: ignore[attr-defined]
                if link.used_at is not None:
                    raise LinkRefused("this link has been used already: each works once", 409)
                raise LinkRefused("this link has expired", 410)
            request = self.book.add_in(
                session,
                limit=limit,
                nick=link.nick,
                channel=link.channel,
                origin="web",
                command=_kind(link),
                owner=link.owner,
                name=link.name,
                code=code,
            )
            link.request_id = request.id
            return request

    def expire(self, token: str) -> None:
        """End an unused link now (too many failed uploads on it)."""
        now = utcnow()
        with self.db.transaction() as session:
            session.execute(
                update(UploadLink)
                .where(
                    UploadLink.token_hash == token_hash(token),
                    UploadLink.used_at.is_(None),
                    UploadLink.expires_at > now,
                )
                .values(expires_at=now)
            )


def _kind(link: UploadLink) -> RequestKind:
    """What a link's upload asks of the hill."""
    if link.contest:
        return RequestKind.CONTEST_ENTER
    return RequestKind.TEST if link.test_only else RequestKind.CHALLENGE
