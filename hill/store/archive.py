"""The all-time ladder over the hill's archive, as stored in its database.

Every program ever submitted to the hill (the programs table: on the hill
or gone from it; a `-test` is a trial, not a submission, as on the program
page) is in the ladder once per distinct code of `owner.name`: its
*versions*, numbered as the program page numbers them, every submission
counted in the order they came (`alice.rush@2`).  A code submitted again
under the same name is the version it was; under another name it is a
program of its own that shares its jousts.  The tables (migration 0005):

- `ladder_versions`: the pool, whose row order is the ladder's program
  index.  A version after the first names the one before it
  (`previous_id`): its seeding, 2 virtual wins and 1 loss against it
  (hill.ladder.seeding);
- `ladder_state`: one row: how far the programs table has been read, and
  how many jousts the ladder itself has played;
- `ladder_snapshots`: the latest standing (ratings, their intervals, the
  statistics), which the /ladder page, `!bfjoust-ladder` and `bfjoust
  ladder show` read.

The jousts are the hill's own (hill.store.tables.Joust, kept by content): the ladder
reads every stored joust among its versions, so a program that was on the
hill starts from its hill record, and it stores the jousts it plays there
too.  That is all it needs to resume: killed at any moment, it starts again
from the jousts stored, and none is lost or played twice.

The functions take the caller's session; the writing ones are called by
the ladder's writer (hill.writers.ladder) under the hill's lock.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import (
    Select,
    delete,
    func,
    literal_column,
    select,
)
from sqlalchemy.orm import Session

from hill.engine import JoustResult, Pair, arena
from hill.ladder import seeding
from hill.ladder.board import Board, Row, Version
from hill.ladder.ladder import Ladder, Standing, ranking
from hill.rules import names
from hill.rules.events import ProgramStatus
from hill.rules.statistics import Statistics
from hill.rules.versions import submission_numbers
from hill.store.database import Database
from hill.store.tables import (
    SUBMITTED,
    Event,
    Joust,
    LadderSnapshot,
    LadderState,
    LadderVersion,
    ProgramRow,
)


def _state(session: Session) -> LadderState:
    state = session.get(LadderState, 1)
    if state is None:
        state = LadderState(id=1, programs_read=0, ladder_jousts=0)
        session.add(state)
        session.flush()
    return state


def _submissions() -> Select[int, str, str, str]:
    """The programs submitted to the hill (tests are trials), in order."""
    return select(ProgramRow.id, ProgramRow.owner, ProgramRow.name, ProgramRow.code_hash).where(
        SUBMITTED
    )


def unread_programs(session: Session) -> bool:
    """Whether programs were submitted since the last `sync_versions` (a cheap read)."""
    state = session.get(LadderState, 1)
    newest = session.scalar(select(func.max(_submissions().subquery().c.id))) or 0
    return newest > (state.programs_read if state else 0)


def sync_versions(session: Session) -> int:
    """Add the versions of the programs submitted since the last call (a
    code already in the pool under the same name is no new version);
    returns how many were added."""
    state = _state(session)
    query = _submissions().where(ProgramRow.id > state.programs_read).order_by(ProgramRow.id)
    arrivals = session.execute(query).all()
    if not arrivals:
        return 0
    latest: dict[tuple[str, str], LadderVersion] = {}
    known: set[tuple[str, str, str]] = set()
    for row in session.scalars(select(LadderVersion).order_by(LadderVersion.id)):
        latest[row.owner, row.name] = row
        known.add((row.owner, row.name, row.code_hash))
    # every submission of the arrivals' names, numbered (hill.rules.versions)
    arrived = {(owner, name) for _, owner, name, _ in arrivals}
    of_names = [row for row in session.execute(_submissions().order_by(ProgramRow.id)).all()
                if (row.owner, row.name) in arrived]  # fmt: skip
    numbers = submission_numbers(names.full_name(r.owner, r.name) for r in of_names)
    number = {row.id: n for row, n in zip(of_names, numbers, strict=True)}
    added = 0
    for program_id, owner, name, code_hash in arrivals:
        if (owner, name, code_hash) in known:
            continue
        previous = latest.get((owner, name))
        row = LadderVersion(
            program_id=program_id,
            owner=owner,
            name=name,
            version=number[program_id],
            code_hash=code_hash,
            previous_id=previous.id if previous else None,
        )
        session.add(row)
        session.flush()  # its id, for the next version of the name
        latest[owner, name] = row
        known.add((owner, name, code_hash))
        added += 1
    state.programs_read = arrivals[-1].id
    return added


def count_ladder_jousts(session: Session, played: int) -> int:
    """Count jousts the ladder played (stored in the same transaction); the total."""
    state = _state(session)
    state.ladder_jousts += played
    return state.ladder_jousts


def ladder_jousts(session: Session) -> int:
    state = session.get(LadderState, 1)
    return state.ladder_jousts if state else 0


def versions(session: Session) -> list[Version]:
    """The pool, in the ladder's order."""
    rows = session.scalars(select(LadderVersion).order_by(LadderVersion.id))
    return [
        Version(
            r.id, r.program_id, r.owner, r.name, r.version, r.code_hash, r.previous_id, r.joined_at
        )
        for r in rows
    ]


def joust_mark(session: Session) -> int:
    """Grows whenever a joust is stored (its rowid: jousts are never deleted),
    so a reader knows cheaply whether its jousts are still all there are."""
    return session.scalar(select(func.max(literal_column("rowid"))).select_from(Joust)) or 0


def by_code(pool: Sequence[Version]) -> dict[str, list[int]]:
    """The ladder's indices of the versions of each code (versions of
    different names may share a code)."""
    at: dict[str, list[int]] = defaultdict(list)
    for index, version in enumerate(pool):
        at[version.code_hash].append(index)
    return at


def add_joust(ladder: Ladder, at: dict[str, list[int]], pair: Pair, result: JoustResult) -> None:
    """A joust of a kept pair (hill.engine.arena), from its left's side, for every
    pair of versions with those codes that has not met yet."""
    for a in at[pair[0]]:
        for b in at[pair[1]]:
            if a != b and not ladder.met[a, b]:
                ladder.add(a, b, result)


def load_ladder(session: Session, pool: Sequence[Version]) -> Ladder:
    """The ladder over `pool`: every stored joust among its versions (two
    versions of the same code share theirs) and each version's seeding."""
    ladder = Ladder(len(pool))
    at = by_code(pool)
    query = select(Joust.left_hash, Joust.right_hash, Joust.outcomes, Joust.game_cycles)
    for left, right, stored, cycles in session.execute(query):
        if left in at and right in at:
            outcomes = tuple(int(o) for o in arena.decode(stored))
            add_joust(ladder, at, (left, right), JoustResult(outcomes, 0, cycles or 0))
    index = {v.id: i for i, v in enumerate(pool)}
    ladder.virtual = [
        seeding.new_version(index[v.id], index[v.previous_id])
        for v in pool
        if v.previous_id is not None and v.previous_id in index
    ]
    return ladder


def store_snapshot(
    session: Session,
    pool: Sequence[Version],
    ladder: Ladder,
    standing: Standing,
    stats: Statistics,
) -> LadderSnapshot:
    """Keep the standing as the latest (the older ones go)."""
    rows = ranking(standing, stats, [v.id for v in pool], key="version")
    row = LadderSnapshot(jousts=ladder.played, ladder_jousts=ladder_jousts(session), ranking=rows)
    session.add(row)
    session.flush()  # its id, above all before it: readers cache by it
    session.execute(delete(LadderSnapshot).where(LadderSnapshot.id < row.id))
    return row


def board(session: Session) -> Board | None:
    """The latest standing (None: the ladder has none yet)."""
    snapshot = session.scalars(select(LadderSnapshot).order_by(LadderSnapshot.id.desc())).first()
    if snapshot is None:
        return None
    pool = {v.id: v for v in versions(session)}
    query = select(ProgramRow.owner, ProgramRow.name, ProgramRow.code_hash).where(
        ProgramRow.status == ProgramStatus.HILL
    )
    on_hill = {tuple(row) for row in session.execute(query)}

    def row(ranked: dict[str, Any]) -> Row:
        version = pool[ranked["version"]]
        fields = ("rank", "rating", "rating_low", "rating_high", "jousts", "stats")
        return Row(
            version=version,
            on_hill=(version.owner, version.name, version.code_hash) in on_hill,
            **{key: ranked[key] for key in fields},
        )

    rows = tuple(row(ranked) for ranked in snapshot.ranking)
    ranked = {r.version.id for r in rows}
    waiting = tuple(v for v in pool.values() if v.id not in ranked)
    return Board(
        snapshot.id, snapshot.computed_at, snapshot.jousts, snapshot.ladder_jousts, rows, waiting
    )


def latest_snapshot_id(session: Session) -> int | None:
    """Cheap: for readers that cache the board by it."""
    return session.scalar(select(func.max(LadderSnapshot.id)))


def read_board(db: Database) -> Board | None:
    """The latest standing, read in a session of its own."""
    with db.session() as session:
        return board(session)


def board_mark(db: Database) -> tuple[int | None, int | None, int | None]:
    """What the ladder's page depends on, cheaply: the latest standing, the
    newest version in the pool, the newest hill event (who is on the hill)."""
    with db.session() as session:
        return (
            latest_snapshot_id(session),
            session.scalar(select(func.max(LadderVersion.id))),
            session.scalar(select(func.max(Event.id))),
        )
