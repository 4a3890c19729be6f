"""The statistics of the jousts stored before they were kept: each is played
again, once, with its battle statistics (docs/analytics.md), and they are
stored beside its outcomes (hill.store.joust_stats).

The work comes in small pieces, as the ladder's does, so that whoever
drives it (the bot while no player's request waits, `bfjoust hill stats`
with a progress bar) can stop between any two: `work(batch)` replays up
to `batch` jousts and stores their statistics in one transaction under the
hill's lock.  The current hill's jousts come first (its pages show them),
then every other.  Jousts are played outside the lock; killed at any
moment, the backfill loses at most the batch it was playing.

A replayed joust's outcomes are compared with the stored ones: they agree
unless the engine changed the rules' results since (then
`bfjoust hill rescore --rejoust` plays the hill again); a disagreement is
logged and counted, and the statistics are kept all the same (they are
what the engine says now).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import structlog

from hill.engine.arena import Arena, LocalExecutor, decode
from hill.store.joust_stats import lacking_stats, stats_progress, store_stats
from hill.store.jousts import packed_stats, stored_outcomes
from hill.store.queries import code_by_hash, hill_hashes
from hill.writers.hill import Hill

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Backfilled:
    """What one piece of work did."""

    played: int  # jousts replayed and their statistics stored
    disagreed: int  # of which the outcomes differed from the stored ones
    done: bool  # every stored joust has its statistics


class StatsBackfill:
    """Replays the stored jousts that lack statistics (see the module);
    `jobs` threads of its own (default: the hill's arena, every core)."""

    def __init__(self, hill: Hill, *, jobs: int | None = None) -> None:
        self.hill = hill
        executor = LocalExecutor(hill.arena.programs, jobs, stats=True)
        self.arena = hill.arena if jobs is None else Arena(executor)

    def progress(self) -> tuple[int, int]:
        """(jousts with statistics, jousts stored)."""
        with self.hill.db.session() as session:
            return stats_progress(session)

    def work(self, batch: int) -> Backfilled:
        """Replay up to `batch` jousts that lack statistics; store theirs."""
        with self.hill.db.session() as session:
            pairs = lacking_stats(session, hill_hashes(session), batch)
            if not pairs:
                return Backfilled(0, 0, True)
            played = list(self.arena.play(pairs, lambda h: code_by_hash(session, h)))
            stored = stored_outcomes(session, [p.pair for p in played])
        disagreed = 0
        for pair, result in played:
            if not np.array_equal(decode(stored[pair]), result.outcomes):
                disagreed += 1
                log.error("a replayed joust disagrees with its stored outcomes", pair=pair)
        packed = packed_stats(played)  # before the transaction: it keeps others waiting
        with self.hill.lock.transaction() as session:
            store_stats(session, packed)
        return Backfilled(len(played), disagreed, len(pairs) < batch)
