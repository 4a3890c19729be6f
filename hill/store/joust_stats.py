"""The jousts' battle statistics as stored (the `joust_stats` table): one
row a joust, by the same pair of code hashes as its outcomes and from the
same side (hill.engine.arena's orientation rule), packed by
hill.engine.packing.  Written with the outcomes (hill.store.jousts); the
jousts stored before statistics were kept get theirs from a replay
(hill.writers.backfill), which finds them here, the current hill's first.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Select, func, literal_column, select, tuple_
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from hill.engine import Pair
from hill.store.tables import Joust, JoustStats

CHUNK = 400  # pairs per query (SQLite binds at most 32766 values)


def store_stats(session: Session, rows: Iterable[tuple[Pair, bytes]]) -> None:
    """Keep packed statistics by pair (a joust played again replaces them)."""
    values = [{"left_hash": a, "right_hash": b, "figures": packed} for (a, b), packed in rows]
    if values:
        statement = insert(JoustStats)
        session.execute(
            statement.on_conflict_do_update(
                index_elements=[JoustStats.left_hash, JoustStats.right_hash],
                set_={"figures": statement.excluded.figures},
            ),
            values,
        )


def load_stats(session: Session, pairs: Sequence[Pair]) -> dict[Pair, bytes]:
    """The packed statistics of the kept pairs given that have them."""
    return by_pair(session, JoustStats, JoustStats.figures, pairs)


def by_pair(session: Session, table: Any, column: Any, pairs: Sequence[Pair]) -> dict[Pair, Any]:
    """`column` of the rows of `table` (keyed by left_hash, right_hash) of
    the kept pairs given that have one, CHUNK pairs a query."""
    found: dict[Pair, Any] = {}
    wanted = sorted(set(pairs))
    key = tuple_(table.left_hash, table.right_hash)
    for start in range(0, len(wanted), CHUNK):
        query = select(table.left_hash, table.right_hash, column).where(
            key.in_(wanted[start : start + CHUNK])
        )
        found.update({(a, b): value for a, b, value in session.execute(query)})
    return found


def stats_among(session: Session, hashes: Sequence[str]) -> dict[Pair, bytes]:
    """The packed statistics of the stored jousts among the programs `hashes`."""
    wanted = sorted(set(hashes))
    query = select(JoustStats.left_hash, JoustStats.right_hash, JoustStats.figures).where(
        JoustStats.left_hash.in_(wanted), JoustStats.right_hash.in_(wanted)
    )
    return {(a, b): packed for a, b, packed in session.execute(query)}


def stats_mark(session: Session) -> int:
    """What changes when statistics are stored (the highest row id): cheap,
    for readers that cache what they read."""
    return session.scalar(select(func.max(literal_column("rowid"))).select_from(JoustStats)) or 0


def _lacking() -> Select[str, str]:
    """The jousts without statistics."""
    return (
        select(Joust.left_hash, Joust.right_hash)
        .outerjoin(
            JoustStats,
            (JoustStats.left_hash == Joust.left_hash) & (JoustStats.right_hash == Joust.right_hash),
        )
        .where(JoustStats.left_hash.is_(None))
    )


def lacking_stats(session: Session, first: Sequence[str], count: int) -> list[Pair]:
    """Up to `count` stored jousts that have no statistics: those among the
    programs `first` (the current hill's code hashes) before the others."""
    pairs: list[Pair] = []
    if first:
        among = _lacking().where(Joust.left_hash.in_(first), Joust.right_hash.in_(first))
        pairs = [(a, b) for a, b in session.execute(among.limit(count))]
    if len(pairs) < count:
        rest = _lacking().order_by(Joust.left_hash, Joust.right_hash)
        taken = set(pairs)
        for a, b in session.execute(rest.limit(count + len(pairs))):
            if (a, b) not in taken and len(pairs) < count:
                pairs.append((a, b))
    return pairs


def stats_progress(session: Session) -> tuple[int, int]:
    """(jousts with statistics, jousts stored)."""
    stored = session.scalar(select(func.count()).select_from(Joust)) or 0
    kept = session.scalar(
        select(func.count())
        .select_from(JoustStats)
        .join(
            Joust,
            (JoustStats.left_hash == Joust.left_hash) & (JoustStats.right_hash == Joust.right_hash),
        )
    )
    return kept or 0, stored
