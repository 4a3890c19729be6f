"""Which jousts to play next: pure functions over the ladder's state.

A joust whose predicted battle share is p is worth H(p) bits.  Each rule
returns a round: pairs that have not met, each program at most once (the
round's jousts run in parallel and the ratings are refitted after it).

- `paulson_round`: the issue's rule.  Take the program that most needs
  games (fewest jousts, then the widest interval) and an opponent R ranks
  away, R ~ Normal(0, 3) rounded, drawn again while no program stands
  there, the pair has met or the opponent is busy (so the top program only
  looks down); when every program near its rank has met it, the nearest
  one that has not.
- `markov_round`: the ladder's rule.  Every program first gets `WARM_UP`
  jousts against random opponents; then the programs whose rank is least
  certain (the most others within their rating interval) go first, and
  each meets an opponent drawn with probability proportional to the square
  root of its estimated markov score (markov weighs wins against strong
  programs most, so those jousts carry the most of it) and to the square
  root of the opponent's own need (a joust informs both programs).
- Both take `cost` (the predicted cycles of each pair, `predicted_cost`)
  to buy bits per unit of cost instead: Paulson's rule draws a few
  candidates and keeps the most bits per cycle, the markov rule divides
  the opponent weights by the cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from scipy.special import expit

SIGMA = 3.0  # spread of the rank distance R in Paulson's rule
WARM_UP = 4  # random jousts each program plays before the markov rule steers
STRENGTH_POWER = 0.5  # opponents drawn in proportion to score ** this
NEED_POWER = 0.5  # ... and to their own crowd, relative to the pool's, ** this
BITS_POWER = 1.0  # ... and to the bits H(p) the joust is worth ** this
COST_CANDIDATES = 4  # Paulson's rule by cost: candidates drawn per program
_DRAWS = 200  # give up on a program after this many rejected draws


def information(p: np.ndarray | float) -> np.ndarray:
    """H(p) = -p log2 p - (1-p) log2 (1-p): the bits a joust is worth."""
    p = np.clip(np.asarray(p, dtype=float), 1e-12, 1 - 1e-12)
    return -(p * np.log2(p) + (1 - p) * np.log2(1 - p))


@dataclass(frozen=True)
class BattleShares:
    """Bradley-Terry's predicted battle shares sigmoid(rating_a - rating_b),
    as share[a] (a's row) and share[a, columns], computed as the rules ask:
    a round reads a row per pair, and all N^2 of them are 800 MB at 10,000
    programs."""

    rating: np.ndarray

    def __getitem__(self, key: int | tuple[int, Any]) -> np.ndarray:
        a, columns = key if isinstance(key, tuple) else (key, slice(None))
        return expit(self.rating[a] - self.rating[columns])


@dataclass(frozen=True)
class PairingState:
    """What the rules look at: who met whom (met[a, b], symmetric, True on
    the diagonal), jousts played, the ratings with their standard errors,
    the estimated scores (higher is better) and the predicted battle share
    share[a, b] (an array, or BattleShares), read a row at a time."""

    met: np.ndarray
    jousts: np.ndarray
    rating: np.ndarray
    stderr: np.ndarray
    score: np.ndarray
    share: np.ndarray | BattleShares

    @property
    def size(self) -> int:
        return len(self.jousts)

    @cached_property
    def crowd(self) -> np.ndarray:
        """The number of programs b whose rating lies within each one's
        standard error, |rating_a - rating_b| < stderr_a (itself included):
        its likely rank error.  Rounding is monotone, so those b are a run
        of the sorted ratings around rating_a: its ends are found by
        bisection, in O(N log N), with that very comparison."""
        n = self.size
        values = np.sort(self.rating)
        place = np.searchsorted(values, self.rating)  # values[place] == rating

        def close(at: np.ndarray) -> np.ndarray:
            return np.abs(self.rating - values[np.minimum(at, n - 1)]) < self.stderr

        # the first close one at or below place, and the first not close above it
        low, high = np.zeros(n, dtype=np.int64), place.copy()
        while (low < high).any():
            middle = (low + high) // 2
            near = close(middle)
            high, low = np.where(near, middle, high), np.where(near, low, middle + 1)
        start = low
        low, high = place.copy(), np.full(n, n)
        while (low < high).any():
            middle = (low + high) // 2
            near = close(middle) & (middle < n)
            low, high = np.where(near, middle + 1, low), np.where(near, high, middle)
        return np.where(close(place), low - start, 0).astype(float)


def rank_distance(rng: np.random.Generator, sigma: float = SIGMA) -> int:
    """R ~ Normal(0, sigma) rounded, never 0."""
    while True:
        r = int(np.rint(rng.normal(0, sigma)))
        if r:
            return r


def paulson_round(
    state: PairingState, size: int, rng: np.random.Generator, cost: np.ndarray | None = None
) -> list[tuple[int, int]]:
    """Up to `size` pairs by the fewest-jousts / rank-distance rule."""
    n = state.size
    order = np.argsort(-state.rating, kind="stable")
    place = np.empty(n, dtype=np.int64)
    place[order] = np.arange(n)
    busy = np.zeros(n, dtype=bool)
    pairs: list[tuple[int, int]] = []
    for a in np.lexsort((-state.stderr, state.jousts)):
        if len(pairs) >= size:
            break
        if busy[a]:
            continue
        candidates = _rank_candidates(state, a, order, place, busy, rng, cost is not None)
        if not candidates:
            continue
        if cost is None:
            b = candidates[0]
        else:
            bits = information(state.share[a, candidates]) / cost[a, candidates]
            b = candidates[int(np.argmax(bits))]
        pairs.append((int(a), int(b)))
        busy[a] = busy[b] = True
    return pairs


def _rank_candidates(
    state: PairingState,
    a: int,
    order: np.ndarray,
    place: np.ndarray,
    busy: np.ndarray,
    rng: np.random.Generator,
    several: bool,
) -> list[int]:
    wanted = COST_CANDIDATES if several else 1
    found: list[int] = []
    for _ in range(_DRAWS):
        at = place[a] + rank_distance(rng)
        if not 0 <= at < state.size:
            continue
        b = int(order[at])
        if state.met[a, b] or busy[b] or b in found:
            continue
        found.append(b)
        if len(found) == wanted:
            break
    if not found:
        # every program near a's rank has met it: the nearest one that has not
        open_ = np.flatnonzero(~state.met[a] & ~busy)
        if len(open_):
            found.append(int(open_[np.argmin(np.abs(place[open_] - place[a]))]))
    return found


def markov_round(
    state: PairingState, size: int, rng: np.random.Generator, cost: np.ndarray | None = None
) -> list[tuple[int, int]]:
    """Up to `size` pairs by the ladder's rule (see the module)."""
    n = state.size
    weight = np.maximum(state.score, 0) ** STRENGTH_POWER * relative_crowd(state) ** NEED_POWER
    weight = weight + 1e-12
    busy = np.zeros(n, dtype=bool)
    pairs: list[tuple[int, int]] = []
    for a in np.lexsort((rng.random(n), -need(state))):
        if len(pairs) >= size:
            break
        if busy[a]:
            continue
        open_ = ~state.met[a] & ~busy
        if not open_.any():
            continue
        if state.jousts[a] < WARM_UP:
            b = int(rng.choice(np.flatnonzero(open_)))
        else:
            p = weight * open_ * information(state.share[a]) ** BITS_POWER
            p = p / (1.0 if cost is None else cost[a])
            b = int(rng.choice(n, p=p / p.sum()))
        pairs.append((int(a), b))
        busy[a] = busy[b] = True
    return pairs


def need(state: PairingState) -> np.ndarray:
    """How much each program needs games: those still warming up first
    (fewest jousts first), then by their crowd."""
    warming = state.jousts < WARM_UP
    return np.where(warming, 1e9 - state.jousts, state.crowd)


def relative_crowd(state: PairingState) -> np.ndarray:
    """Each program's crowd over the mean crowd of those past the warm-up
    (those still warming up count as the mean, 1)."""
    counts = state.crowd
    warmed = state.jousts >= WARM_UP
    mean = counts[warmed].mean() if warmed.any() else 1.0
    return np.where(warmed, np.maximum(counts / mean, 1e-3), 1.0)


def random_round(state: PairingState, size: int, rng: np.random.Generator) -> list[tuple[int, int]]:
    """Up to `size` pairs drawn uniformly among those that have not met."""
    a, b = np.nonzero(np.triu(~state.met, 1))
    chosen = rng.choice(len(a), min(size, len(a)), replace=False)
    return [(int(a[i]), int(b[i])) for i in chosen]


def predicted_cost(
    size: int, first: np.ndarray, second: np.ndarray, cycles: np.ndarray
) -> np.ndarray:
    """(N, N) predicted game cycles of each pair: log cycles = mu + c_a + c_b
    fitted by ridge least squares to the jousts played (a program that runs
    long games makes long games)."""
    y = np.log1p(np.asarray(cycles, dtype=float))
    mu = y.mean() if len(y) else 0.0
    normal = np.eye(size)
    for i, j in ((first, first), (second, second), (first, second), (second, first)):
        np.add.at(normal, (i, j), 1.0)
    rhs = np.bincount(first, y - mu, size) + np.bincount(second, y - mu, size)
    c = np.linalg.solve(normal, rhs)
    return np.expm1(mu + c[:, None] + c[None, :]) + 1.0
