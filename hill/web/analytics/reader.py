"""The battle statistics behind the analytics pages, read in a thread of
their own: a pool's statistics (a hill state, a test's hill, a
tournament's entrants) are read and analysed once (hill.analytics.pool)
and kept (cache.StateCache, with the mark of the statistics stored); an
analysis still waiting for statistics (the background replay of old
jousts: hill.writers.backfill) is read again once more have been stored.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
from aiohttp import web

from hill import engine
from hill.analytics.pool import PoolAnalysis, analyse
from hill.engine import packing
from hill.engine.arena import oriented
from hill.store.database import Database
from hill.store.joust_stats import stats_among, stats_mark
from hill.store.jousts import read_jousts
from hill.web.analytics import data as analytics_pages
from hill.web.cache import StateCache
from hill.web.reader_thread import ThreadedReader
from hill.web.state import Snapshot

KEPT = 8  # pools kept analysed (a pool of 50: about 2 MB)


class AnalyticsReader(ThreadedReader):
    """Pools analysed, by a key that names their programs and results."""

    def __init__(self, db: Database) -> None:
        super().__init__(1, "web-analytics")
        self.db = db
        # by pool, with the mark of the statistics stored when it was analysed
        self._pools: StateCache[Hashable, PoolAnalysis] = StateCache(KEPT)

    async def pool(
        self,
        key: Hashable,
        names: Sequence[str],
        hashes: Sequence[str],
        outcomes: np.ndarray,
        played: np.ndarray,
    ) -> PoolAnalysis:
        """The analysis of a pool: its programs' names and code hashes,
        outcomes[a, b] (42, from a's side) where played[a, b]; `key` names
        the pool as it is (the same key, the same programs and results)."""
        kept = self._pools.last(key)
        if kept is not None and kept[1].complete:  # no more statistics to wait for
            return kept[1]
        mark = await self._shared(self._mark)

        async def analysed() -> PoolAnalysis:
            return await self._run(self._analyse, names, hashes, outcomes, played)

        return await self._pools.get(key, mark, analysed)

    async def state(self, snap: Snapshot, key: Hashable | None = None) -> PoolAnalysis:
        """The analysis of a hill state (or a test's hill: its own `key`)."""
        entries = snap.standings.entries
        n = len(entries)
        played = ~np.eye(n, dtype=bool)
        return await self.pool(
            key if key is not None else ("state", snap.event.id if snap.event else None),
            [e.program.full_name for e in entries],
            [e.program.code_hash for e in entries],
            snap.standings.outcomes,
            played,
        )

    async def profile(
        self, snap: Snapshot, full_name: str, key: Hashable | None = None
    ) -> dict[str, Any]:
        """The profile of a program of a hill state (analytics_pages.profile)."""
        analysis = await self.state(snap, key)
        entries = snap.standings.entries
        return analytics_pages.profile(
            analysis,
            snap.index(full_name),
            [e.rank for e in entries],
            [e.program.code_hash for e in entries],
        )

    async def tournament(
        self, key: Hashable, names: Sequence[str], hashes: Sequence[str]
    ) -> tuple[PoolAnalysis, np.ndarray]:
        """The analysis of a tournament's entrants (the stored jousts among
        them), and their margins (NaN: no joust stored)."""
        outcomes, played = await self._run(self._jousts, hashes)
        analysis = await self.pool(key, names, hashes, outcomes, played)
        margins = np.where(played, outcomes.sum(axis=2, dtype=np.int64), np.nan)
        return analysis, margins

    def _jousts(self, hashes: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        results = read_jousts(self.db, hashes)
        n = len(hashes)
        outcomes = np.zeros((n, n, engine.BATTLES), dtype=np.int8)
        played = np.zeros((n, n), dtype=bool)
        for a in range(n):
            for b in range(n):
                if a != b and oriented(hashes[a], hashes[b])[0] in results:
                    outcomes[a, b] = results.between(hashes[a], hashes[b])
                    played[a, b] = True
        return outcomes, played

    def _mark(self) -> int:
        with self.db.session() as session:
            return stats_mark(session)

    def _analyse(
        self,
        names: Sequence[str],
        hashes: Sequence[str],
        outcomes: np.ndarray,
        played: np.ndarray,
    ) -> PoolAnalysis:
        with self.db.session() as session:
            stored = stats_among(session, hashes)
        figures = {}
        for a in range(len(hashes)):
            for b in range(a + 1, len(hashes)):
                pair, sign = oriented(hashes[a], hashes[b])
                packed = stored.get(pair)
                if packed is not None and played[a, b]:
                    figures[(a, b)] = (packing.unpack(packed), sign > 0)
        return analyse(names, outcomes, played, figures)


ANALYTICS = web.AppKey("analytics", AnalyticsReader)
