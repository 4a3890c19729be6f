"""The all-time ladder's writer: it plays the ladder over the hill's archive
(hill.store.archive) through the hill's arena, and stores what it plays
under the hill's lock, as the hill service does, so that the ladder and a
hill change never write at once.

The work comes in small pieces, so that whoever drives it (the bot between
the players' requests, `bfjoust ladder step`) can stop between any two:
`work(batch)` plays up to `batch` jousts of the current round and stores
them in one transaction; once a round is done, the standing is refitted and
stored (at most every `refit_seconds`, and at once when the pool grows;
on a big pool, where a refit takes seconds, at most a tenth of the time).
Jousts are played outside the lock: a joust is a pure function of its two
programs, so nothing can change under it, and a hill change never waits
for the ladder's jousts.  Killed at any moment, the ladder loses at most
the batch it was playing (never a stored joust) and resumes from the
jousts stored.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hill.engine import arena
from hill.engine.arena import Arena, LocalExecutor
from hill.faults import crash_point
from hill.ladder.board import Version
from hill.ladder.ladder import (
    Ladder,
    Standing,
    ladder_statistics,
    next_round,
    round_size,
    single_threaded_blas,
    standing,
    warm_ratings,
)
from hill.store import archive
from hill.store.jousts import store_jousts
from hill.store.queries import code_by_hash
from hill.writers.hill import Hill

RULE = "markov"  # the pairing rule (hill.ladder.pairing)
# refits take at most about this share of the ladder's time: a refit takes
# seconds on thousands of programs (O(jousts + N^2)), so it would otherwise
# crowd out the jousts
REFIT_SHARE = 0.1


def refit_due(since_last: float, minimum: float, last_took: float) -> bool:
    """Whether the standing may be refitted again `since_last` seconds after
    the last refit, which took `last_took`: after at least `minimum`
    seconds, and after ten times the last refit's own time."""
    return since_last >= max(minimum, last_took / REFIT_SHARE)


@dataclass(frozen=True)
class Work:
    """What one piece of work did."""

    played: int  # jousts played and stored
    refitted: bool  # the standing was refitted and stored
    done: bool  # every pair of the pool has met: nothing is left to play


class ArchiveLadder:
    """The ladder over every program the hill has seen, kept in memory
    between pieces of work and reloaded when the archive changes (a new
    program, or jousts stored by someone else)."""

    def __init__(self, hill: Hill, *, jobs: int | None = None, refit_seconds: float = 0.0) -> None:
        """`refit_seconds`: the least time between two refits at the end of a
        round (a refit of thousands of programs takes seconds); a new
        program is always shown at once."""
        self.hill = hill
        self.refit_seconds = refit_seconds
        self._refitted = -math.inf  # time.monotonic() of the last refit
        self._refit_took = 0.0  # seconds the last refit took
        # its own threads (the hill's compiled programs): the background
        # ladder keeps to one core, leaving the others to the players
        self.arena = hill.arena if jobs is None else Arena(LocalExecutor(hill.arena.programs, jobs))
        self.pool: list[Version] = []
        self.ladder = Ladder(0)
        self._mark = -1  # archive.joust_mark of the jousts in memory
        self._round: list[tuple[int, int]] = []
        self._stale = True  # the stored standing is older than the jousts in memory
        # the last standing fitted: the next fits start from it (a pool only grows)
        self._standing: Standing | None = None

    def work(self, batch: int, *, refit: bool = True) -> Work:
        """Play up to `batch` jousts of the current round; refit and store
        the standing when the round is done (unless not `refit`), or when
        the pool grew."""
        refitted = self._reload() and self.ladder.size >= 2
        if refitted:
            self.refit()  # a newcomer shows at once, from its stored jousts and its seeding
        if not self._round:
            self._round = self._plan()
        played = 0
        if self._round and batch > 0:
            pairs, self._round = self._round[:batch], self._round[batch:]
            played = self._play(pairs)
        due = refit_due(time.monotonic() - self._refitted, self.refit_seconds, self._refit_took)
        if refit and not self._round and self._stale and self.ladder.size >= 2 and due:
            self.refit()
            refitted = True
        return Work(played, refitted, self._complete())

    def step(self, jousts: int | None = None, batch: int = 64) -> int:
        """Play `jousts` jousts (default: one round), then make sure the
        stored standing is up to date; returns the jousts played."""
        self._reload()
        target = round_size(max(self.ladder.size, 1)) if jousts is None else jousts
        played = 0
        while played < target:
            work = self.work(min(batch, target - played), refit=False)
            played += work.played
            if work.done or not work.played:
                break
        if self._stale and self.ladder.size >= 2:
            self.refit()
        return played

    def refit(self) -> None:
        """Fit the standing and its statistics, and store them."""
        started = time.monotonic()
        with single_threaded_blas():
            result = standing(self.ladder, start=self._standing)
            stats = ladder_statistics(self.ladder, result)
        with self.hill.lock.transaction() as session:
            archive.store_snapshot(session, self.pool, self.ladder, result, stats)
        self._stale, self._standing = False, result
        self._refitted = time.monotonic()
        self._refit_took = self._refitted - started

    def _complete(self) -> bool:
        n = self.ladder.size
        return self.ladder.played >= n * (n - 1) // 2

    def _reload(self) -> bool:
        """Read new programs into the pool and reload the jousts when the
        archive changed; whether the pool grew."""
        added = 0
        with self.hill.db.session() as session:
            newer = archive.unread_programs(session)
        if newer:
            with self.hill.lock.transaction() as session:
                added = archive.sync_versions(session)
        with self.hill.db.session() as session:
            mark = archive.joust_mark(session)
            if added or mark != self._mark:
                self.pool = archive.versions(session)
                self.ladder = archive.load_ladder(session, self.pool)
                self._mark, self._round, self._stale = mark, [], True
        return added > 0

    def _plan(self) -> list[tuple[int, int]]:
        """The next round's pairs (hill.ladder.pairing's rule); the draws
        depend on the state only, so a resumed ladder plays as it would have."""
        if self.ladder.size < 2 or self._complete():
            return []
        rng = np.random.default_rng([self.ladder.played, self.ladder.size])
        start = warm_ratings(self._standing, self.ladder.size)
        with single_threaded_blas():
            size = round_size(self.ladder.size)
            pairs, _ = next_round(self.ladder, RULE, rng, size, start=start)
        return pairs

    def _play(self, pairs: Sequence[tuple[int, int]]) -> int:
        """Play the pairs, store them in one transaction, add them here."""
        hashes = [v.code_hash for v in self.pool]
        kept = {arena.oriented(hashes[a], hashes[b])[0] for a, b in pairs}
        with self.hill.db.session() as session:
            played = list(self.arena.play(kept, lambda h: code_by_hash(session, h)))
        crash_point("ladder-jousted")
        with self.hill.lock.transaction() as session:
            before = archive.joust_mark(session)
            store_jousts(session, played)
            archive.count_ladder_jousts(session, len(played))
            after = archive.joust_mark(session)
        crash_point("ladder-stored")
        at = archive.by_code(self.pool)
        for pair, result in played:
            archive.add_joust(self.ladder, at, pair, result)
        # jousts stored meanwhile by someone else: reload them next time
        self._mark = after if before == self._mark else -1
        self._stale = True
        return len(played)
