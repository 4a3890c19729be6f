"""The six scoring methods of the established hill (see SCORING.md).

Input everywhere: `r`, an (N, N, T) array of battle outcomes in {-1, 0, +1},
r[a, b, i] from a's side (a on the left), antisymmetric, zero on the diagonal.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

METHODS = ("markov", "points", "trad", "tradtwist", "iter", "itertwist")

Scores = dict[str, np.ndarray]
_ITERATION_LIMIT = 10_000
_TOLERANCE = 1e-13
# scores closer than this (relative) are equal when ranking
_EQUAL = 1e-9


def margins(r: np.ndarray) -> np.ndarray:
    """m[a, b]: the joust score of a against b, in [-T, T]."""
    return r.sum(axis=2, dtype=np.int64)


def points(r: np.ndarray) -> np.ndarray:
    """p[a]: the sum of a's joust scores over T, in [-(N-1), N-1]."""
    return margins(r).sum(axis=1) / max(r.shape[2], 1)


def _linear(m: np.ndarray, t: int) -> np.ndarray:
    return m / t


def _twist(m: np.ndarray, t: int) -> np.ndarray:
    return (m + t) / (2 * t)


def markov(r: np.ndarray) -> np.ndarray:
    """1000 x the stationary distribution of the wager chain."""
    return markov_of_wins((r == 1).sum(axis=2), r.shape[2])


def markov_of_wins(wins: np.ndarray, battles: int) -> np.ndarray:
    """markov from the (N, N) battles won, wins[a, b] by a against b (counts
    may be fractional: expected wins, as the ladder's estimate has)."""
    n = wins.shape[0]
    if n == 0:
        return np.zeros(0)
    # the chain moves from a to b with the battles b wins against a
    chain = wins.T / (n * battles)
    np.fill_diagonal(chain, 0)
    np.fill_diagonal(chain, 1 - chain.sum(axis=1))
    # p = p chain with sum(p) = 1: (chain^T - I) p = 0, one equation swapped for the sum
    system = chain.T - np.eye(n)
    system[-1] = 1
    rhs = np.zeros(n)
    rhs[-1] = 1
    try:
        stationary = np.linalg.solve(system, rhs)
    except np.linalg.LinAlgError:
        # not unique (e.g. nobody ever wins a battle): no program is preferred
        stationary = np.full(n, 1 / n)
    return 1000 * stationary


def _worth(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, int]:
    n, t = r.shape[0], r.shape[2]
    return margins(r), points(r), n, t


def _trad(r: np.ndarray, f: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    m, p, n, t = _worth(r)
    if n < 2:
        return np.zeros(n)
    worth = (p + n) / (2 * (n - 1))
    beaten = np.where(m > 0, f(m, t), 0.0)
    return 200 * (beaten @ worth) / (n - 1)


def _iter(r: np.ndarray, f: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    m, p, n, t = _worth(r)
    if n < 2:
        return np.zeros(n)
    s = (p + n - 1) / (2 * (n - 1))
    beaten = np.where(m > 0, f(m, t), 0.0)
    for _ in range(_ITERATION_LIMIT):
        u = beaten @ s
        total = np.abs(u).sum()
        if total == 0:
            # D s vanished (e.g. a strictly transitive hill, where D is
            # nilpotent): keep the last vector, which weighs the unbeaten
            break
        following = n * u / (2 * total)
        if np.allclose(following, s, rtol=0, atol=_TOLERANCE):
            s = following
            break
        s = following
    return 100 * s


def _points_score(r: np.ndarray) -> np.ndarray:
    n = r.shape[0]
    return points(r) + n - 1 if n else np.zeros(0)


_SCORERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "markov": markov,
    "points": _points_score,
    "trad": lambda r: _trad(r, _linear),
    "tradtwist": lambda r: _trad(r, _twist),
    "iter": lambda r: _iter(r, _linear),
    "itertwist": lambda r: _iter(r, _twist),
}


def score(r: np.ndarray, method: str) -> np.ndarray:
    """One method's scores."""
    return _SCORERS[method](r)


def score_all(r: np.ndarray) -> Scores:
    """All six methods, keyed by name."""
    return {method: score(r, method) for method in METHODS}


def maximum(method: str, n: int) -> float:
    """The highest score a method can give on a hill of n programs (the
    established report's `max`)."""
    return {"points": 2.0 * (n - 1), "markov": 1000.0}.get(method, 100.0)


def rank_order(scores: Mapping[str, np.ndarray], method: str, ages: Sequence[Any]) -> list[int]:
    """Indices best first: the method's score, then points, then the older
    program (smaller age) first.  Scores equal up to rounding noise tie."""
    if method not in METHODS:
        raise ValueError(f"unknown ranking method {method!r}")
    main, tiebreak = scores[method], scores["points"]

    def rounded(values: np.ndarray, i: int) -> float:
        scale = max(float(np.abs(values).max()), 1.0)
        return round(float(values[i]) / scale / _EQUAL)

    return sorted(
        range(len(ages)),
        key=lambda i: (-rounded(main, i), -rounded(tiebreak, i), ages[i]),
    )
