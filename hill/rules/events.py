"""What happens to the hill, as plain enums: the kinds of events, where a
program is, why it left; and the hill's times (naive UTC, as stored).

The store keeps these enums as their plain strings (hill.store.tables);
the rules, the writers and the readers speak them.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def iso_utc(time: dt.datetime) -> str:
    """A stored time (naive UTC, as utcnow gives it) in ISO 8601 to the second, with its Z."""
    return time.isoformat(timespec="seconds") + "Z"


def epoch_seconds(time: dt.datetime) -> float:
    """A stored time (naive UTC, as utcnow gives it) in seconds since the epoch."""
    return time.replace(tzinfo=dt.UTC).timestamp()


class EventKind(StrEnum):
    """What happened to the hill."""

    JOIN = "join"  # a program arrived on a hill with room
    CHALLENGE = "challenge"  # a program arrived and pushed the last one off
    UPDATE = "update"  # a new version of a program replaced the old one
    TEST = "test"  # a program was only tested: the hill did not change
    WITHDRAW = "withdraw"  # an owner took their program off
    REMOVE = "remove"  # an admin took a program off
    RESCORE = "rescore"  # the standings were recomputed
    # a contest's publications (hill.rules.contests): the hill stays as it was
    CONTEST_ENTRIES = "contest-entries"  # a contest closed: its entries made public
    CONTEST_RESULTS = "contest-results"  # its tournament played: the results made public


# the events of the hill's history: its states and its git commits (a
# contest's publication is a state the same as the one before it)
HILL_CHANGES = frozenset(EventKind) - {EventKind.TEST}
# the events that publish a contest's files and leave the standings as they were
CONTEST_PUBLICATIONS = frozenset({EventKind.CONTEST_ENTRIES, EventKind.CONTEST_RESULTS})
# the events a program on the hill survives: a newcomer challenged it
ARRIVALS = frozenset({EventKind.JOIN, EventKind.CHALLENGE, EventKind.UPDATE})


class ProgramStatus(StrEnum):
    """Where a program is."""

    HILL = "hill"  # on the hill now
    LEFT = "left"  # was on the hill
    TEST = "test"  # only tested


class LeaveReason(StrEnum):
    """Why a program left the hill."""

    PUSHED_OFF = "pushed off"
    UPDATED = "updated"
    WITHDRAWN = "withdrawn"
    REMOVED = "removed"
