"""The jousts as stored: kept once per pair of program contents (the
`jousts` table), read into the arena's Results and written from what it
played (hill.engine.arena: the orientation rule, the encoding), with
their battle statistics where they were played with them
(hill.store.joust_stats).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.sqlite import insert
from sqlalchemy.orm import Session

from hill.engine import Pair, Played, packing
from hill.engine.arena import Results, encode
from hill.store.database import Database
from hill.store.joust_stats import by_pair, store_stats
from hill.store.tables import Joust


def load_jousts(session: Session, hashes: Iterable[str], results: Results | None = None) -> Results:
    """The stored jousts among the programs `hashes` (into `results`)."""
    results = results if results is not None else Results()
    for left, right, stored in each_joust(session, hashes):
        results.keep((left, right), stored)
    return results


def each_joust(session: Session, hashes: Iterable[str]) -> Iterator[tuple[str, str, bytes]]:
    """The stored jousts among the programs `hashes`, one at a time, as kept
    (left hash, right hash, encoded outcomes: hill.engine.arena)."""
    wanted = sorted(set(hashes))
    query = select(Joust.left_hash, Joust.right_hash, Joust.outcomes).where(
        Joust.left_hash.in_(wanted), Joust.right_hash.in_(wanted)
    )
    yield from map(tuple, session.execute(query.execution_options(yield_per=4096)))


def stored_outcomes(session: Session, pairs: Sequence[Pair]) -> dict[Pair, bytes]:
    """The stored outcomes (as kept: hill.engine.arena.encode) of kept pairs."""
    return by_pair(session, Joust, Joust.outcomes, pairs)


@dataclass(frozen=True)
class JoustRows:
    """Jousts just played as the rows that keep them: made before a
    transaction (packing the statistics costs about 0.1 ms a joust), written
    in it (`store_joust_rows`)."""

    jousts: list[dict[str, Any]]
    stats: list[tuple[Pair, bytes]]


def joust_rows(played: Iterable[Played]) -> JoustRows:
    played = list(played)
    return JoustRows(
        [
            {
                "left_hash": pair[0],
                "right_hash": pair[1],
                "outcomes": encode(result.outcomes),
                "game_cycles": result.game_cycles,
            }
            for pair, result in played
        ],
        packed_stats(played),
    )


def packed_stats(played: Iterable[Played]) -> list[tuple[Pair, bytes]]:
    """The statistics of jousts just played with them, packed to be kept
    (hill.store.joust_stats.store_stats)."""
    return [(pair, packing.pack(r.records)) for pair, r in played if r.records is not None]


def store_joust_rows(session: Session, rows: JoustRows) -> None:
    """Keep jousts (a joust played again replaces its rows)."""
    store_stats(session, rows.stats)
    if rows.jousts:
        statement = insert(Joust)
        session.execute(
            statement.on_conflict_do_update(
                index_elements=[Joust.left_hash, Joust.right_hash],
                set_={
                    "outcomes": statement.excluded.outcomes,
                    "game_cycles": statement.excluded.game_cycles,
                },
            ),
            rows.jousts,
        )


def store_jousts(session: Session, played: Iterable[Played]) -> None:
    """Keep jousts just played, with their statistics if they were played
    with them (a joust played again replaces its rows)."""
    store_joust_rows(session, joust_rows(played))


def read_jousts(db: Database, hashes: Iterable[str]) -> Results:
    """The stored jousts among the programs `hashes`, read in a session of its own."""
    with db.session() as session:
        return load_jousts(session, hashes)


def stream_jousts(db: Database, hashes: Iterable[str]) -> Iterator[tuple[str, str, bytes]]:
    """`each_joust` in a session of its own (a big tournament's pages read
    half a million jousts without keeping them)."""
    with db.session() as session:
        yield from each_joust(session, hashes)
