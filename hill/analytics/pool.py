"""The analytics of a pool of programs (a hill state, a test's hill, a
tournament's entrants): every program's profile over the jousts it played
in the pool that have statistics, the median length of every pair's
battles, and the strategy map of the programs with a profile.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from hill.analytics.battles import battles
from hill.analytics.profile import Profile, features, profile
from hill.analytics.strategy import StrategyMap, strategy_map

# a pair of programs (a, b), a < b (indexes in the pool), with the
# statistics of their joust (engine.STATS_RECORD) and whether a sat on its left
Figures = Mapping[tuple[int, int], tuple[np.ndarray, bool]]


@dataclass(frozen=True)
class PoolAnalysis:
    """What the statistics say of a pool of programs (see the module)."""

    names: list[str]
    profiles: list[Profile | None]  # None: none of its jousts has statistics yet
    opponents: list[list[int]]  # each program's opponents in its profile's order
    waiting: list[list[int]]  # each program's opponents whose joust has no statistics yet
    duels: np.ndarray  # (n, n) median cycles of each pair's battles (nan: none)
    mapped: list[int]  # the programs in the strategy map (those with a profile)
    strategy: StrategyMap = field(repr=False)

    @property
    def complete(self) -> bool:
        return not any(self.waiting)

    def order(self) -> list[int]:
        """The programs (indexes) in the dendrogram's order."""
        return [self.mapped[i] for i in self.strategy.order]

    def alike(self, index: int, count: int) -> list[tuple[int, float]]:
        """The programs (indexes) that play most like program `index`, with
        their cosine distance; [] if it has no profile."""
        if index not in self.mapped:
            return []
        near = self.strategy.alike(self.mapped.index(index), count)
        return [(self.mapped[j], d) for j, d in near]


def analyse(
    names: Sequence[str], outcomes: np.ndarray, played: np.ndarray, figures: Figures
) -> PoolAnalysis:
    """The pool's analytics: `outcomes[a, b]` the 42 outcomes of a against
    b from a's side where `played[a, b]`, `figures` the statistics of the
    pairs that have them."""
    n = len(names)
    profiles: list[Profile | None] = []
    opponents, waiting = [], []
    duels = np.full((n, n), np.nan)
    for a in range(n):
        mine, lefts, records, rest = [], [], [], []
        for b in range(n):
            if b == a or not played[a, b]:
                continue
            found = figures.get((min(a, b), max(a, b)))
            if found is None:
                rest.append(b)
                continue
            joust, low_left = found
            mine.append(b)
            records.append(joust)
            lefts.append(low_left if a < b else not low_left)
        fought = battles(records, lefts, outcomes[a, mine])
        opponents.append(mine)
        waiting.append(rest)
        profiles.append(profile(fought) if mine else None)
        if mine:
            duels[a, mine] = np.median(fought.cycles, axis=1)
    mapped = [a for a in range(n) if profiles[a] is not None]
    vectors = np.array([features(p) for p in profiles if p is not None])
    if not mapped:
        vectors = np.zeros((0, 1))
    return PoolAnalysis(
        names=list(names),
        profiles=profiles,
        opponents=opponents,
        waiting=waiting,
        duels=duels,
        mapped=mapped,
        strategy=strategy_map(vectors),
    )
