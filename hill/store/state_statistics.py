"""The hill's statistics (hill.rules.statistics, docs/statistics.md) per hill state,
computed once for each state and kept until the hill changes: for readers
that ask often, such as the bot's `!bfjoust-rank` (the web report keeps them
with its cached snapshots)."""

from __future__ import annotations

import threading

from hill.rules.standings import Standings
from hill.rules.statistics import Statistics, hill_statistics
from hill.store.queries import HillQueries


class StatisticsByState:
    """The current standings with their statistics, computed once per state."""

    def __init__(self, queries: HillQueries) -> None:
        self.queries = queries
        self._lock = threading.Lock()
        self._cached: tuple[int | None, Standings, Statistics] | None = None

    def current(self) -> tuple[Standings, Statistics]:
        """The hill now and its statistics (blocks: call it off the event loop)."""
        state = self.queries.latest_state()
        event = state[0] if state else None
        with self._lock:
            cached = self._cached
        if cached is not None and cached[0] == event:
            return cached[1], cached[2]
        if event is None:
            standings = Standings.empty(self.queries.ranking)
        else:
            standings = self.queries.standings_at(event)
        stats = hill_statistics(standings.outcomes, standings.method)
        with self._lock:
            self._cached = (event, standings, stats)
        return standings, stats
