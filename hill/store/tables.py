"""Every table of the hill's database, as SQLAlchemy models: one home for the
schema that the migrations (migrations/versions/) build, which a guard test
compares with them (tests/test_migrations.py).

- `programs`, `jousts`, `events`: the hill (every program ever submitted,
  every joust kept by the contents of its two programs, every event with the
  standings after it);
- `requests`, `upload_links`: the players' hill jobs and their answers, and
  the one-time upload links (hill.store.requests, hill.store.uploads);
- `ladder_versions`, `ladder_state`, `ladder_snapshots`: the all-time ladder
  (hill.store.archive);
- `tournaments`, `tournament_entrants`, `tournament_rounds`,
  `tournament_matches`: the hill's tournaments (hill.store.records);
- `joust_stats`: each joust's battle statistics, packed, beside its outcomes
  (hill.store.joust_stats); `test_pages`: the pages of `-test` trials, kept
  for a while (hill.store.trials); `notices`: what the owners of programs
  that left are to be told (hill.store.notices).
- `contests`, `contest_entries`: the contests and their entrants
  (hill.store.contests).

Event kinds and program statuses are the enums of hill.rules.events, stored
as their plain strings.
"""

from __future__ import annotations

import datetime as dt
from enum import StrEnum
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    DateTime,
    Enum,
    ForeignKey,
    Index,
    LargeBinary,
    String,
    Text,
    UniqueConstraint,
    false,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from hill import engine
from hill.rules.contests import ContestState
from hill.rules.events import EventKind, LeaveReason, ProgramStatus, utcnow
from hill.rules.requests import Outcome, RequestKind, RequestState


def _strings(enum: type[StrEnum], length: int) -> Enum:
    """A column of an enum's values as plain strings: the schema is a VARCHAR."""
    return Enum(
        enum,
        native_enum=False,
        create_constraint=False,
        length=length,
        values_callable=lambda members: [m.value for m in members],
    )


class Base(DeclarativeBase):
    """The models' base: Python types to SQL types."""

    type_annotation_map: ClassVar = {dt.datetime: DateTime(), dict[str, Any]: JSON}


class ProgramRow(Base):
    """Every program ever submitted, on the hill or not."""

    __tablename__ = "programs"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(48))
    code: Mapped[bytes] = mapped_column(LargeBinary)
    # what its jousts are kept by (hill.engine.code_hash)
    code_hash: Mapped[str] = mapped_column(String(64), index=True)
    submitted_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    status: Mapped[ProgramStatus] = mapped_column(_strings(ProgramStatus, 8), index=True)
    left_at: Mapped[dt.datetime | None]
    left_reason: Mapped[LeaveReason | None] = mapped_column(_strings(LeaveReason, 16))
    # the program whose arrival made it leave
    displaced_by_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))

    __table_args__ = (
        # one program of a name on the hill at a time
        Index(
            "one_on_hill_per_name",
            "owner",
            "name",
            unique=True,
            sqlite_where=status == ProgramStatus.HILL,
        ),
    )

    @property
    def full_name(self) -> str:
        return f"{self.owner}.{self.name}"


# a submission: any program but a test's (a `-test` is a trial, not a submission)
SUBMITTED = ProgramRow.status != ProgramStatus.TEST


class Joust(Base):
    """The outcomes of one joust, kept by the contents of its two programs
    (sha256 of their code): a joust is a pure function of the two programs,
    so it is played once and serves the hill, tournaments and the ladder.
    One row per unordered pair, from the side of the lower hash (the
    orientation rule of hill.engine.arena)."""

    __tablename__ = "jousts"

    left_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    right_hash: Mapped[str] = mapped_column(String(64), primary_key=True, index=True)
    # one byte a battle, outcome + 1 (0 right wins, 1 tie, 2 left wins)
    outcomes: Mapped[bytes] = mapped_column(LargeBinary(engine.BATTLES))
    # the cycles its battles lasted, all together: what the joust costs
    # (None: played before the jousts were kept by content)
    game_cycles: Mapped[int | None]


class JoustStats(Base):
    """The battle statistics of a joust (docs/analytics.md), kept beside its
    outcomes by the same pair and from the same side (the lower hash on
    the left): packed by hill.engine.packing, about 1.1 KB a joust.  A row
    of its own, so that reading outcomes to score the hill never reads them."""

    __tablename__ = "joust_stats"

    left_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    right_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    figures: Mapped[bytes] = mapped_column(LargeBinary)


class Event(Base):
    """Every hill event, with the standings right after it."""

    __tablename__ = "events"

    id: Mapped[int] = mapped_column(primary_key=True)
    time: Mapped[dt.datetime] = mapped_column(default=utcnow)
    kind: Mapped[EventKind] = mapped_column(_strings(EventKind, 16), index=True)
    actor: Mapped[str] = mapped_column(String(64))
    program_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))
    displaced_id: Mapped[int | None] = mapped_column(ForeignKey("programs.id"))
    summary: Mapped[str]
    # the hill after the event: {"method": ..., "entries": [...]}, the
    # programs in rank order with their ranks, points and scores
    standings: Mapped[dict[str, Any]]
    # the git commit that records it (None until committed, and for tests)
    commit: Mapped[str | None] = mapped_column(String(40))
    # the contest it publishes (its kind is one of CONTEST_PUBLICATIONS)
    contest_id: Mapped[int | None] = mapped_column(ForeignKey("contests.id"))


class TrialPage(Base):
    """The page of a `-test` trial: the breakdown of the tested program
    against the hill it met (its event's standings), at an unguessable
    address, until it expires."""

    __tablename__ = "test_pages"

    token: Mapped[str] = mapped_column(String(32), primary_key=True)
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"), unique=True)
    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id"))
    expires_at: Mapped[dt.datetime] = mapped_column(index=True)


class Notice(Base):
    """Something a program's owner is to be told: their program left the
    hill without their doing (pushed off, removed).  Sent by the bot as a
    private NOTICE when the owner is online, else on their next command."""

    __tablename__ = "notices"

    id: Mapped[int] = mapped_column(primary_key=True)
    owner: Mapped[str] = mapped_column(String(64), index=True)
    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id"))
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id"))  # the change that did it
    reason: Mapped[LeaveReason] = mapped_column(_strings(LeaveReason, 16))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    sent_at: Mapped[dt.datetime | None]


class Request(Base):
    """One hill job someone asked for, and what it came to."""

    __tablename__ = "requests"

    id: Mapped[int] = mapped_column(primary_key=True)
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    # who asked, and where the answer goes: a channel, or None for a private notice
    nick: Mapped[str] = mapped_column(String(64))
    channel: Mapped[str | None] = mapped_column(String(64))
    origin: Mapped[str] = mapped_column(String(8))  # "irc", or "web" for an upload
    command: Mapped[RequestKind] = mapped_column(_strings(RequestKind, 16))
    # the program's owner (or the admin acting), its name (a full name for
    # remove, "" for rescore) and code (challenge and test)
    owner: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(128))
    code: Mapped[bytes | None] = mapped_column(LargeBinary)
    state: Mapped[RequestState] = mapped_column(_strings(RequestState, 8), index=True)
    attempts: Mapped[int] = mapped_column(default=0)  # times it started running
    # what it came to (hill.rules.requests.Outcome), once finished
    outcome: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    delivered: Mapped[bool] = mapped_column(default=False, index=True)
    finished_at: Mapped[dt.datetime | None]

    @property
    def full_name(self) -> str:
        """What it names: a program's full name, or a contest's name."""
        plain = self.command == RequestKind.REMOVE or self.command.contest
        return self.name if plain else f"{self.owner}.{self.name}"

    @property
    def answer(self) -> Outcome | None:
        """What it came to, as data (None while it is open)."""
        return None if self.outcome is None else Outcome.from_json(self.outcome)


class UploadLink(Base):
    """A one-time link to the upload form, bound to who asked for it (the
    token itself is never stored, only its SHA-256)."""

    __tablename__ = "upload_links"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    nick: Mapped[str] = mapped_column(String(64))
    channel: Mapped[str | None] = mapped_column(String(64))
    owner: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(48))
    test_only: Mapped[bool]
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    expires_at: Mapped[dt.datetime] = mapped_column(index=True)
    used_at: Mapped[dt.datetime | None]
    request_id: Mapped[int | None] = mapped_column(ForeignKey("requests.id"))
    # an entry to the contest `name` (not a program of that name)
    contest: Mapped[bool] = mapped_column(default=False, server_default=false())

    @property
    def full_name(self) -> str:
        return f"{self.owner}.{self.name}"


class LadderVersion(Base):
    """One version of a program in the ladder's pool."""

    __tablename__ = "ladder_versions"

    id: Mapped[int] = mapped_column(primary_key=True)
    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id"))  # its first submission
    owner: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(48))
    version: Mapped[int]  # its submission's number among owner.name's (the program page's)
    code_hash: Mapped[str] = mapped_column(String(64))
    # the version before it, against which it is seeded (None: the first)
    previous_id: Mapped[int | None] = mapped_column(ForeignKey("ladder_versions.id"))
    joined_at: Mapped[dt.datetime] = mapped_column(default=utcnow)

    __table_args__ = (UniqueConstraint("owner", "name", "code_hash", name="one_version_per_code"),)


class LadderState(Base):
    """The ladder's counters (one row)."""

    __tablename__ = "ladder_state"

    id: Mapped[int] = mapped_column(primary_key=True)
    programs_read: Mapped[int]  # the programs table is read up to this id
    ladder_jousts: Mapped[int]  # jousts the ladder has played and stored


class LadderSnapshot(Base):
    """The ladder's latest standing."""

    __tablename__ = "ladder_snapshots"

    id: Mapped[int] = mapped_column(primary_key=True)
    computed_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    jousts: Mapped[int]  # stored jousts among its versions
    ladder_jousts: Mapped[int]  # of which the ladder played
    # best first: {"version" (its id), "rank", "rating", "rating_low",
    # "rating_high", "jousts", "stats"}
    ranking: Mapped[list[dict[str, Any]]] = mapped_column(JSON)


class TournamentRow(Base):
    """A tournament of the hill: its plan and how it ended."""

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(primary_key=True)
    format: Mapped[str] = mapped_column(String(16))
    pool: Mapped[str] = mapped_column(String(64))  # e.g. "hill", "hill@12", "archive"
    seed: Mapped[int | None]
    additional_rounds: Mapped[int]
    allow_repeat: Mapped[bool]
    criteria: Mapped[str] = mapped_column(String(128))  # comma-separated, in order
    started_by: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[dt.datetime | None]
    ended: Mapped[str | None] = mapped_column(Text)  # "complete" or why it ended early


class EntrantRow(Base):
    __tablename__ = "tournament_entrants"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    seat: Mapped[int] = mapped_column(primary_key=True)  # the plan's order
    name: Mapped[str] = mapped_column(String(128))
    code_hash: Mapped[str] = mapped_column(String(64))


class RoundRow(Base):
    __tablename__ = "tournament_rounds"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    number: Mapped[int] = mapped_column(primary_key=True)
    bye: Mapped[str | None] = mapped_column(String(128))


class MatchRow(Base):
    __tablename__ = "tournament_matches"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    round: Mapped[int] = mapped_column(primary_key=True)
    board: Mapped[int] = mapped_column(primary_key=True)
    a: Mapped[str] = mapped_column(String(128))
    b: Mapped[str] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16))
    margin: Mapped[int | None]


class ContestRow(Base):
    """A contest: a tournament with a deadline (docs/contests.md)."""

    __tablename__ = "contests"

    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    title: Mapped[str] = mapped_column(String(200))
    format: Mapped[str] = mapped_column(String(16))
    # entries heard before it count; an admin's close ahead of it moves it there
    closes: Mapped[dt.datetime]
    created_at: Mapped[dt.datetime] = mapped_column(default=utcnow)
    created_by: Mapped[str] = mapped_column(String(64))
    state: Mapped[ContestState] = mapped_column(_strings(ContestState, 8), index=True)
    closed_at: Mapped[dt.datetime | None]  # when the close was made
    closed_by: Mapped[str | None] = mapped_column(String(64))
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"))
    void_reason: Mapped[str | None] = mapped_column(Text)  # why it had no tournament
    # once played: the tournament's result (the tool contract) and its winner
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    winner: Mapped[str | None] = mapped_column(String(64))
    # the news the channels have heard of it (hill.rules.contests.News)
    told: Mapped[list[str]] = mapped_column(JSON, default=list)


class ContestEntryRow(Base):
    """A contest's entrant: a player's latest entry, or withdrawal, or a
    control the admin named.  A row keeps the time its request was heard, so
    a request heard before it (played after it) changes nothing."""

    __tablename__ = "contest_entries"

    contest_id: Mapped[int] = mapped_column(ForeignKey("contests.id"), primary_key=True)
    entrant: Mapped[str] = mapped_column(String(64), primary_key=True)  # OWNER or control.NAME
    control: Mapped[bool]
    code: Mapped[bytes | None] = mapped_column(LargeBinary)  # None: withdrawn
    code_hash: Mapped[str | None] = mapped_column(String(64), index=True)
    heard_at: Mapped[dt.datetime]
    request_id: Mapped[int | None] = mapped_column(ForeignKey("requests.id"))
