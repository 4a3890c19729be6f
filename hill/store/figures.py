"""What an operator watches, read from the database (for `/healthz` and
`/metrics`, hill.web.operations.health): the request book's open requests and its
oldest, how long the answered ones took, how many jousts were ever stored.
Each is one cheap query; any process may ask, beside a running bot.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import case, func, literal_column, select

from hill.rules.requests import OPEN
from hill.store.database import Database
from hill.store.tables import Joust, Request


@dataclass(frozen=True)
class Book:
    """The request book now: how many requests are open, since when the oldest."""

    open: int
    oldest: dt.datetime | None  # heard (naive UTC)


@dataclass(frozen=True)
class Latencies:
    """How long one command's answered requests took, heard to played, as a
    cumulative histogram: `counts[i]` took at most `buckets[i]` seconds."""

    buckets: tuple[float, ...]
    counts: tuple[int, ...]
    count: int
    total: float

    def __add__(self, other: Latencies) -> Latencies:
        assert self.buckets == other.buckets
        counts = tuple(a + b for a, b in zip(self.counts, other.counts, strict=True))
        return Latencies(self.buckets, counts, self.count + other.count, self.total + other.total)


def book(db: Database) -> Book:
    with db.session() as session:
        row = session.execute(
            select(func.count(), func.min(Request.created_at)).where(Request.state.in_(OPEN))
        ).one()
    return Book(row[0], row[1])


def latencies(
    db: Database, buckets: Sequence[float], after: int = 0, upto: int | None = None
) -> dict[str, Latencies]:
    """Each command's answered requests, heard to played: those with an id
    above `after` (and at most `upto`)."""
    took = (func.julianday(Request.finished_at) - func.julianday(Request.created_at)) * 86400.0
    columns = [func.sum(case((took <= bound, 1), else_=0)) for bound in buckets]
    query = (
        select(Request.command, func.count(), func.sum(took), *columns)
        .where(Request.finished_at.is_not(None), Request.id > after)
        .group_by(Request.command)
    )
    if upto is not None:
        query = query.where(Request.id <= upto)
    with db.session() as session:
        rows = session.execute(query).all()
    return {
        str(row[0]): Latencies(tuple(buckets), tuple(int(c) for c in row[3:]), row[1], row[2])
        for row in rows
    }


def settled(db: Database) -> int:
    """The last request id up to which every request is finished (they never
    change again): below the first open one, else the last one."""
    with db.session() as session:
        first_open = session.scalar(select(func.min(Request.id)).where(Request.state.in_(OPEN)))
        if first_open is not None:
            return int(first_open) - 1
        return int(session.scalar(select(func.max(Request.id))) or 0)


def jousts_stored(db: Database) -> int:
    """How many jousts were ever stored (a joust played again counts again):
    the jousts table's last row id, which costs nothing to read."""
    with db.session() as session:
        last = session.scalar(select(func.max(literal_column("rowid"))).select_from(Joust))
    return int(last or 0)
