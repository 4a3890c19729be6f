"""The six scoring methods of the established hill (see docs/scoring.md).

Input everywhere: `wins`, an (N, N) array of battles won, wins[a, b] the
battles program a wins against b out of the `battles` of each joust (ties are
the rest), zero on the diagonal.  That is all the six methods need: a joust's
score is wins[a, b] - wins[b, a], and the Markov chain reads wins.T; so pools
of thousands need no (N, N, 42) array.  `battle_wins` makes it from one.
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


def battle_wins(outcomes: np.ndarray) -> np.ndarray:
    """The (N, N) battles won of an (N, N, T) array of battle outcomes in
    {-1, 0, +1}, outcomes[a, b, i] from a's side (a on the left)."""
    return (outcomes == 1).sum(axis=2, dtype=np.int64)


def margins(wins: np.ndarray) -> np.ndarray:
    """m[a, b]: the joust score of a against b, in [-T, T]."""
    return wins - wins.T


def points(wins: np.ndarray, battles: int) -> np.ndarray:
    """p[a]: the sum of a's joust scores over T, in [-(N-1), N-1]."""
    return margins(wins).sum(axis=1) / battles


def _linear(m: np.ndarray, t: int) -> np.ndarray:
    return m / t


def _twist(m: np.ndarray, t: int) -> np.ndarray:
    return (m + t) / (2 * t)


def markov(wins: np.ndarray, battles: int) -> np.ndarray:
    """1000 x the stationary distribution of the wager chain."""
    n = wins.shape[0]
    if n == 0:
        return np.zeros(0)
    # a wagers on the battles its opponents win against it (a contiguous
    # copy: row sums in one order, so scores are the same to the last bit)
    chain = np.ascontiguousarray(wins.T) / (n * battles)
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


def _trad(wins: np.ndarray, t: int, f: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    n = wins.shape[0]
    if n < 2:
        return np.zeros(n)
    m = margins(wins)
    worth = (points(wins, t) + n) / (2 * (n - 1))
    beaten = np.where(m > 0, f(m, t), 0.0)
    return 200 * (beaten @ worth) / (n - 1)


def _iter(wins: np.ndarray, t: int, f: Callable[[np.ndarray, int], np.ndarray]) -> np.ndarray:
    n = wins.shape[0]
    if n < 2:
        return np.zeros(n)
    m = margins(wins)
    s = (points(wins, t) + n - 1) / (2 * (n - 1))
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


def score(wins: np.ndarray, battles: int, method: str) -> np.ndarray:
    """One method's scores, as score_all gives them under its name."""
    n = wins.shape[0]
    scorers: dict[str, Callable[[], np.ndarray]] = {
        "markov": lambda: markov(wins, battles),
        "points": lambda: points(wins, battles) + n - 1 if n else np.zeros(0),
        "trad": lambda: _trad(wins, battles, _linear),
        "tradtwist": lambda: _trad(wins, battles, _twist),
        "iter": lambda: _iter(wins, battles, _linear),
        "itertwist": lambda: _iter(wins, battles, _twist),
    }
    return scorers[method]()


def score_all(wins: np.ndarray, battles: int) -> Scores:
    """All six methods, keyed by name, from the (N, N) battles won of jousts
    of `battles` battles each."""
    return {method: score(wins, battles, method) for method in METHODS}


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
