"""The hill's tournaments, as stored in its database (migration 0006).

A tournament over one of the hill's pools (hill.store.pools)
keeps its plan, its entrants (by name, with their programs by content) and
the ledger of its rounds and matches in four tables, so that the bot picks
it up again on its restart and the web shows it while it runs:

- `tournaments`: the plan (format, pool, seed, settings), who started it,
  when, and how it ended;
- `tournament_entrants`: the entrants in seat order with their code hashes
  (every code is in the programs table);
- `tournament_rounds`, `tournament_matches`: the ledger's changes
  (hill.tournaments.ledger), one row a round and one a match.

Its jousts are the hill's own (hill.store.tables.Joust, kept by content): a
tournament reuses every joust stored and stores each one it plays.

`HillLedgerStore` is the ledger store of one tournament, written by the
tournament's writer (hill.writers.tournaments) under the hill's lock, in
short transactions; the read functions at the bottom give plain data to
the web, the CLI and the bot.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import func, insert, select, update
from sqlalchemy.orm import Session

from hill.engine import Played
from hill.errors import TournamentError
from hill.rules.contests import contest_of_pool
from hill.rules.events import iso_utc, utcnow
from hill.store.database import Database
from hill.store.jousts import JoustRows, joust_rows, store_joust_rows
from hill.store.ledger_rows import slices, stored_changes, write_statements
from hill.store.tables import EntrantRow, MatchRow, RoundRow, TournamentRow
from hill.tournaments.criteria import parse_criteria
from hill.tournaments.ledger import Ledger, LedgerChange, MatchStatus
from hill.tournaments.match import MatchResult, Round
from hill.tournaments.plan import TournamentPlan
from hill.tournaments.registry import result_json, rules_of

CANCELLED = "cancelled"  # how a cancelled tournament's end begins: "cancelled by carol"


def add_tournament(
    session: Session, plan: TournamentPlan, pool: str, hashes: Sequence[str], started_by: str
) -> int:
    """Store a new tournament with its entrants (seat order = the plan's); its id."""
    row = TournamentRow(
        format=plan.format,
        pool=pool,
        seed=plan.seed,
        additional_rounds=plan.additional_rounds,
        allow_repeat=plan.allow_repeat,
        criteria=",".join(plan.criteria),
        started_by=started_by,
    )
    session.add(row)
    session.flush()
    entrants = [
        {"tournament_id": row.id, "seat": seat, "name": name, "code_hash": code_hash}
        for seat, (name, code_hash) in enumerate(zip(plan.entrants, hashes, strict=True))
    ]
    session.execute(insert(EntrantRow), entrants)
    return row.id


def cancel(session: Session, tournament_id: int, by: str) -> None:
    """End an unfinished tournament where it stands, as cancelled by `by`
    (TournamentError if there is none, or it is over already)."""
    row = session.get(TournamentRow, tournament_id)
    if row is None:
        raise TournamentError(f"there is no tournament {tournament_id}")
    if row.ended is not None:
        raise TournamentError(f"tournament {tournament_id} is over already: {row.ended}")
    contest = contest_of_pool(row.pool)
    if contest is not None:  # its results are published whole, or not at all
        raise TournamentError(
            f"tournament {tournament_id} plays contest {contest}: it is not cancelled"
        )
    row.ended = f"{CANCELLED} by {by}"
    row.finished_at = utcnow()


def plan_of(row: TournamentRow, entrants: Sequence[EntrantRow]) -> TournamentPlan:
    return TournamentPlan(
        format=row.format,
        entrants=tuple(e.name for e in entrants),
        seed=row.seed,
        additional_rounds=row.additional_rounds,
        allow_repeat=row.allow_repeat,
        criteria=parse_criteria(row.criteria),
    )


def entrants_of(session: Session, tournament_id: int) -> list[EntrantRow]:
    query = select(EntrantRow).where(EntrantRow.tournament_id == tournament_id)
    return list(session.scalars(query.order_by(EntrantRow.seat)))


def unfinished(session: Session) -> list[int]:
    """The tournaments not over yet, oldest first."""
    return [id for id, _ in unfinished_pools(session)]


def unfinished_pools(session: Session) -> list[tuple[int, str]]:
    """The tournaments not over yet, oldest first, with their pools."""
    query = select(TournamentRow.id, TournamentRow.pool).where(TournamentRow.ended.is_(None))
    return [(row.id, row.pool) for row in session.execute(query.order_by(TournamentRow.id))]


# jousts stored in one piece, with their statistics (about 1 KB each)
JOUSTS_A_PIECE = 250

# a write, in small pieces run in order in short transactions of the
# writer's (hill.writers.lock.HillLock.in_short_transactions): any prefix
# of the pieces committed is a consistent state
ShortWrites = Callable[[Iterable[Callable[[Session], None]]], None]


def _execute(statement: Any, rows: list[dict[str, Any]] | None, session: Session) -> None:
    session.execute(statement, rows)


class HillLedgerStore:
    """The ledger store of tournament `tournament_id` in the hill's database.
    A write (with the jousts played for it) may be half a million rows: it
    goes in pieces through `writes` (the writer's short transactions under
    the hill's lock), the jousts first, then the ledger's changes in an
    order whose every prefix is consistent (hill.store.ledger_rows), so a
    kill at any moment loses nothing committed and leaves nothing half done."""

    def __init__(self, db: Database, writes: ShortWrites, tournament_id: int) -> None:
        self.db = db
        self.writes = writes
        self.id = tournament_id

    def write(self, changes: list[LedgerChange], played: Sequence[Played] = ()) -> None:
        # the jousts' rows are made before any transaction (their statistics are packed)
        jousts = [joust_rows(part) for part in slices(list(played), JOUSTS_A_PIECE)]
        self.writes(self._pieces(changes, jousts))

    def _pieces(
        self, changes: list[LedgerChange], jousts: list[JoustRows]
    ) -> Iterator[Callable[[Session], None]]:
        for piece in jousts:
            yield functools.partial(store_joust_rows, rows=piece)
        key = {"tournament_id": self.id}
        for statement, rows in write_statements(changes, RoundRow, MatchRow, self._end, key):
            yield functools.partial(_execute, statement, rows)

    def read(self) -> list[LedgerChange]:
        with self.db.session() as session:
            return _changes(session, self.id)

    def _end(self, reason: str) -> Any:
        """The end, unless it ended already (an admin cancelled it meanwhile)."""
        return (
            update(TournamentRow)
            .where(TournamentRow.id == self.id, TournamentRow.ended.is_(None))
            .values(ended=reason, finished_at=utcnow())
            .execution_options(synchronize_session=False)
        )


def _changes(session: Session, tournament_id: int) -> list[LedgerChange]:
    """The ledger's changes as stored: rounds, their matches, the end."""
    rounds = select(RoundRow.number, RoundRow.bye).where(RoundRow.tournament_id == tournament_id)
    matches = select(
        MatchRow.round, MatchRow.board, MatchRow.a, MatchRow.b, MatchRow.status, MatchRow.margin
    ).where(MatchRow.tournament_id == tournament_id)
    ended = session.scalar(select(TournamentRow.ended).where(TournamentRow.id == tournament_id))
    return stored_changes(
        session.execute(rounds.order_by(RoundRow.number)),
        # streamed: half a million rows fetched at once would be 100 MB of them
        session.execute(
            matches.order_by(MatchRow.round, MatchRow.board).execution_options(yield_per=10_000)
        ),
        ended,
    )


# Reading: plain data for the web, the CLI and the bot.


@dataclass(frozen=True)
class TournamentSummary:
    """A tournament at a glance."""

    id: int
    format: str  # "swiss" | "round-robin"
    pool: str
    started_by: str
    created_at: dt.datetime
    finished_at: dt.datetime | None
    entrants: int
    rounds_played: int  # rounds opened so far
    rounds_planned: int  # Swiss: ceil(log2 N) + K; round robin: 1
    matches_committed: int
    matches_expected: int
    leader: str | None  # first of the standings so far (None before any result)
    ended: str | None  # None while it runs; "complete" or why it ended early

    @property
    def running(self) -> bool:
        return self.ended is None

    @property
    def cancelled(self) -> bool:
        """An admin cancelled it: its result is what was committed by then."""
        return self.ended is not None and self.ended.startswith(f"{CANCELLED} ")

    def to_json(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["created_at"] = iso_utc(self.created_at)
        data["finished_at"] = self.finished_at and iso_utc(self.finished_at)
        return data


@dataclass(frozen=True)
class TournamentView:
    """A tournament in full: its summary and its result so far in the tool
    contract of docs/tournaments.md, with each entrant's code hash."""

    summary: TournamentSummary
    result: dict[str, Any]
    programs: dict[str, str]  # entrant name -> code hash


def tournaments(db: Database) -> list[TournamentSummary]:
    """Every tournament of the hill, newest first."""
    with db.session() as session:
        ids = session.scalars(select(TournamentRow.id).order_by(TournamentRow.id.desc()))
        return [_view(session, i).summary for i in list(ids)]


# what a tournament's view depends on: matches committed, rounds opened, its end
Mark = tuple[int, int, str | None]


def tournament(db: Database, tournament_id: int) -> TournamentView | None:
    with db.session() as session:
        if session.get(TournamentRow, tournament_id) is None:
            return None
        return _view(session, tournament_id)


def progress_marks(db: Database, tournament_id: int | None = None) -> dict[int, Mark]:
    """What each tournament's view depends on, cheaply (a few counts): its
    matches committed, its rounds opened and how it ended; newest first.
    Only `tournament_id`'s when given."""

    def only(query: Any, column: Any) -> Any:
        return query if tournament_id is None else query.where(column == tournament_id)

    with db.session() as session:
        committed = select(MatchRow.tournament_id, func.count()).where(
            MatchRow.status == MatchStatus.COMMITTED
        )
        committed = only(committed, MatchRow.tournament_id).group_by(MatchRow.tournament_id)
        rounds = select(RoundRow.tournament_id, func.count())
        rounds = only(rounds, RoundRow.tournament_id).group_by(RoundRow.tournament_id)
        ended = only(select(TournamentRow.id, TournamentRow.ended), TournamentRow.id)
        matches = {i: n for i, n in session.execute(committed)}
        opened = {i: n for i, n in session.execute(rounds)}
        rows = session.execute(ended.order_by(TournamentRow.id.desc())).all()
        return {i: (matches.get(i, 0), opened.get(i, 0), end) for i, end in rows}


def progress_mark(db: Database, tournament_id: int) -> Mark | None:
    """`progress_marks` of one tournament (None: there is no such tournament)."""
    return progress_marks(db, tournament_id).get(tournament_id)


def summary(db: Database, tournament_id: int) -> TournamentSummary | None:
    """A tournament at a glance from its counts (`progress_mark`), without
    its standings (no leader): cheap however many matches it has, for an
    answer that must not wait for a replay (an admin's cancel).  None: there
    is no such one."""
    mark = progress_mark(db, tournament_id)
    if mark is None:
        return None
    committed, opened, _ = mark
    with db.session() as session:
        row = session.get(TournamentRow, tournament_id)
        assert row is not None
        plan = plan_of(row, entrants_of(session, tournament_id))
        return _summary(row, plan, opened, committed, [])


def latest(db: Database) -> TournamentView | None:
    """The running tournament (the oldest, if several), else the last one."""
    with db.session() as session:
        running = unfinished(session)
        newest = session.scalar(select(func.max(TournamentRow.id)))
        chosen = running[0] if running else newest
        return None if chosen is None else _view(session, chosen)


def _view(session: Session, tournament_id: int) -> TournamentView:
    row = session.get(TournamentRow, tournament_id)
    assert row is not None
    entrants = entrants_of(session, tournament_id)
    plan = plan_of(row, entrants)
    ledger = Ledger.replay(_changes(session, tournament_id))
    result = result_json(plan, ledger)
    summary = _summary(row, plan, ledger.current_round, ledger.committed, result["standings"])
    return TournamentView(summary, result, {e.name: e.code_hash for e in entrants})


def _summary(
    row: TournamentRow,
    plan: TournamentPlan,
    rounds_opened: int,
    committed: int,
    standings: Sequence[dict[str, Any]],
) -> TournamentSummary:
    return TournamentSummary(
        id=row.id,
        format=row.format,
        pool=row.pool,
        started_by=row.started_by,
        created_at=row.created_at,
        finished_at=row.finished_at,
        entrants=len(plan.entrants),
        rounds_played=rounds_opened,
        rounds_planned=rules_of(plan).planned_rounds(plan),
        matches_committed=committed,
        matches_expected=rules_of(plan).expected_matches(plan),
        leader=standings[0]["name"] if standings and committed else None,
        ended=row.ended,
    )


@dataclass(frozen=True)
class SettledResult:
    """A tournament's result so far, lean, for a big one's pages: its
    summary, its complete rounds as the rules' plain data (no JSON of its
    matches), the rest of its result in the tool contract (`format`,
    `seed`, `entrants`, `ended`, the format's ranking: `standings`, ...)
    and each entrant's code hash."""

    summary: TournamentSummary
    rounds: list[Round]
    result: dict[str, Any]
    programs: dict[str, str]


def settled_result(db: Database, tournament_id: int) -> SettledResult | None:
    """The tournament's result read row by row (no ORM object a match: a
    round robin of 1,024 entrants has 523,776), as `tournament` reads it."""
    with db.session() as session:
        row = session.get(TournamentRow, tournament_id)
        if row is None:
            return None
        entrants = entrants_of(session, tournament_id)
        plan = plan_of(row, entrants)
        byes = dict(
            session.execute(
                select(RoundRow.number, RoundRow.bye)
                .where(RoundRow.tournament_id == tournament_id)
                .order_by(RoundRow.number)
            ).all()
        )
        matches = (
            select(MatchRow.round, MatchRow.a, MatchRow.b, MatchRow.status, MatchRow.margin)
            .where(MatchRow.tournament_id == tournament_id)
            .order_by(MatchRow.round, MatchRow.board)
            .execution_options(yield_per=10_000)  # rows a batch at a time, not all at once
        )
        played: dict[int, list[MatchResult]] = {number: [] for number in byes}
        unsettled: set[int] = set()
        committed = 0
        names = {e.name: e.name for e in entrants}  # one string a name, not two a row
        for number, a, b, status, margin in session.execute(matches):
            if status == MatchStatus.COMMITTED:
                committed += 1
                assert margin is not None  # a committed match has its margin
                if number not in unsettled:
                    played[number].append(MatchResult(names[a], names[b], margin))
            elif number not in unsettled:
                unsettled.add(number)
                played[number] = []
    rounds = []
    for number, bye in byes.items():  # the complete rounds, up to the first that is not
        if number in unsettled:
            break
        rounds.append(Round(number, bye, tuple(played.pop(number))))
    played.clear()
    result: dict[str, Any] = {
        "format": plan.format,
        "seed": plan.seed,
        "entrants": list(plan.entrants),
        "ended": row.ended,
        **rules_of(plan).ranking(plan, rounds),
    }
    summary = _summary(row, plan, max(byes, default=0), committed, result["standings"])
    return SettledResult(summary, rounds, result, {e.name: e.code_hash for e in entrants})


def settled_rounds(db: Database, tournament_id: int) -> int:
    """How many rounds of the tournament have every match committed (what
    its result is made of): a round opens only once the one before is
    complete, so all those opened, less the last while it is under way."""
    with db.session() as session:
        opened = session.scalar(select(func.count()).where(RoundRow.tournament_id == tournament_id))
        unsettled = session.scalar(
            select(func.count()).where(
                MatchRow.tournament_id == tournament_id,
                MatchRow.status != MatchStatus.COMMITTED,
            )
        )
        return int(opened or 0) - (1 if unsettled else 0)


def tournament_size(db: Database, tournament_id: int) -> tuple[int, int] | None:
    """A tournament's entrants and the matches it expects (None: no such
    tournament), without reading its matches."""
    with db.session() as session:
        row = session.get(TournamentRow, tournament_id)
        if row is None:
            return None
        plan = plan_of(row, entrants_of(session, tournament_id))
        return len(plan.entrants), rules_of(plan).expected_matches(plan)
