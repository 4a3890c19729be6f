"""The ladder: rank a pool from a fraction of its round robin.

Rounds of jousts chosen by a pairing rule (hill.ladder.pairing), played
through a `Player` (the seam to whatever plays jousts: the arena for files,
the hill's stored jousts and arena in the hill), then the ratings refitted;
at the end the markov ranking of the full round robin is estimated
(hill.ladder.estimate) and every statistic of docs/statistics.md computed over the jousts played.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from hill import engine
from hill.engine import JoustResult
from hill.ladder import pairing, seeding
from hill.ladder.estimate import BATTLES, Estimate, estimate_markov, tie_roots, warm_start
from hill.ladder.filled import Filled
from hill.ladder.ratings import Games, Ratings, fit
from hill.rules import statistics

# plays jousts (first, second) between pool indices; outcomes from first's side
Player = Callable[[Sequence[tuple[int, int]]], Sequence[JoustResult]]
RULES = ("markov", "paulson", "random")


def single_threaded_blas() -> threadpool_limits:
    """The matrices here are small: BLAS threads would only fight the jousts
    (and each other, on a busy machine) for the cores."""
    return threadpool_limits(1, user_api="blas")


# a run plays at most about this many rounds: a refit costs O(jousts + N^2),
# so on big pools more rounds cost more than their jousts (1000 programs at
# 10%: 200 rounds of 250 took 48% of the round robin's time; 100 of 500 ranked
# as well or better, 0.992 against 0.991 over 6 seeds, in half the time)
MAX_ROUNDS = 100
# the scores that steer the pairing need no more than one exact product
# (hill.ladder.filled: a correction of 10^-2 leaves about 10^-5)
QUICK_TOLERANCE = 1e-2


def round_size(pool: int, jousts: int = 0) -> int:
    """Jousts between two refits: a quarter of the pool (at least 8), or
    more when a run of `jousts` would otherwise take over MAX_ROUNDS rounds
    (a round meets each program at most once, so at most half the pool)."""
    return max(pool // 4, 8, -(-jousts // MAX_ROUNDS))


@dataclass
class Ladder:
    """The jousts played so far (`played` of them) among `size` programs,
    and seeding's virtual results."""

    size: int
    virtual: list[seeding.Virtual] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.met = np.eye(self.size, dtype=bool)
        self.played = 0
        # grown by doubling: the record is read several times a round, and
        # rebuilding it from lists cost more than the refits on big pools
        self._pairs = np.zeros((64, 2), dtype=np.int64)
        self._outcomes = np.zeros((64, engine.BATTLES), dtype=np.int8)
        self._cycles = np.zeros(64, dtype=np.int64)

    def add(self, a: int, b: int, result: JoustResult) -> None:
        if self.met[a, b]:
            raise ValueError(f"programs {a} and {b} have already met")
        self._reserve(1)
        k = self.played
        self._pairs[k] = a, b
        self._outcomes[k] = result.outcomes
        self._cycles[k] = result.game_cycles
        self.played += 1
        self.met[a, b] = self.met[b, a] = True

    def extend(self, pairs: np.ndarray, outcomes: np.ndarray, cycles: np.ndarray) -> None:
        """`add` for many jousts at once: pairs (K, 2) never met (nor twice
        among themselves), outcomes (K, 42) from the first's side, game
        cycles (K,)."""
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        a, b = pairs[:, 0], pairs[:, 1]
        keys = np.minimum(a, b) * self.size + np.maximum(a, b)
        if self.met[a, b].any() or len(np.unique(keys)) < len(keys):
            raise ValueError("some of these programs have already met")
        k, more = self.played, len(pairs)
        self._reserve(more)
        self._pairs[k : k + more] = pairs
        self._outcomes[k : k + more] = outcomes
        self._cycles[k : k + more] = cycles
        self.played += more
        self.met[a, b] = self.met[b, a] = True

    def _reserve(self, more: int) -> None:
        """Room for `more` jousts, the arrays doubled as often as needed."""
        while self.played + more > len(self._pairs):
            self._pairs, self._outcomes, self._cycles = (
                np.concatenate([kept, np.zeros_like(kept)])
                for kept in (self._pairs, self._outcomes, self._cycles)
            )

    @property
    def cycles(self) -> np.ndarray:
        """The game cycles of each joust played."""
        return self._cycles[: self.played]

    def record(self) -> statistics.Record:
        """The jousts played (read-only views of the ladder's arrays)."""
        k = self.played
        pairs, outcomes = self._pairs[:k], self._outcomes[:k]
        pairs.flags.writeable = outcomes.flags.writeable = False
        return statistics.Record(self.size, pairs, outcomes)

    def jousts(self) -> np.ndarray:
        return self.record().jousts()

    def games(self) -> Games:
        """Real jousts (weight 1) and the virtual results still in force."""
        record = self.record()
        counts = record.counts()
        share = (counts[:, 0] + counts[:, 1] / 2) / BATTLES
        v_weight = seeding.weights(self.virtual, record.jousts(), self.met)
        keep = v_weight > 0
        kept = [v for v, k in zip(self.virtual, keep, strict=True) if k]
        real = np.ones(len(share), dtype=bool)
        return Games(
            self.size,
            np.concatenate([record.pairs[:, 0], [v.program for v in kept]]).astype(np.int64),
            np.concatenate([record.pairs[:, 1], [v.opponent for v in kept]]).astype(np.int64),
            np.concatenate([share, [v.share for v in kept]]),
            np.concatenate([np.ones(len(share)), v_weight[keep]]),
            np.concatenate([real, np.zeros(len(kept), dtype=bool)]),
        )


@dataclass(frozen=True)
class Standing:
    """The ladder's view of the pool: ratings, estimated markov scores and order."""

    ratings: Ratings
    estimate: Estimate

    @property
    def order(self) -> np.ndarray:
        return self.estimate.order()


def rate(ladder: Ladder, start: Ratings | None = None, exact_errors: bool = True) -> Ratings:
    """The ratings; a new version's prior is centred on its previous
    version's rating (seeding.prior_means), so that shrinking it pulls it
    toward the version it replaces, not toward the middle of the pool."""
    games = ladder.games()
    ratings = fit(games, start=start, exact_errors=exact_errors and not ladder.virtual)
    if not ladder.virtual:
        return ratings
    prior = seeding.prior_means(ladder.virtual, ratings.rating, ladder.met)
    return fit(games, prior=prior, start=ratings, exact_errors=exact_errors)


def played(ladder: Ladder) -> tuple[tuple[np.ndarray, np.ndarray, np.ndarray], np.ndarray]:
    """The real jousts as estimate_markov takes them: (first, second, (K, 2)
    battles won by each), and their tied battles."""
    record = ladder.record()
    counts = record.counts()
    wins = counts[:, [0, 2]].astype(float)
    return (record.pairs[:, 0], record.pairs[:, 1], wins), counts[:, 1]


def quick_scores(ladder: Ladder, rating: np.ndarray) -> np.ndarray:
    """markov of the round robin filled in by Bradley-Terry alone (a's
    battle share against b sigmoid(rating_a - rating_b)): the cheap estimate
    that steers pairing between rounds."""
    (first, second, wins), ties = played(ladder)
    one = np.ones(ladder.size)
    filled = Filled(
        np.column_stack([rating, one]), np.column_stack([one, -rating]),
        tie_roots(ladder.size, first, second, ties), first, second, wins,
    )  # fmt: skip
    return 1000 * filled.markov(tolerance=QUICK_TOLERANCE).p


def standing(ladder: Ladder, seed: int = 0, start: Standing | None = None) -> Standing:
    """Fit the ratings and estimate the markov ranking of the round robin;
    `start`: an earlier standing of this ladder (of as many programs or
    fewer: new ones are appended), where the fits start (they end where
    they would have, to their tolerance, sooner)."""
    warm = warm_ratings(start, ladder.size)
    if warm is None:
        start = None  # none, or not this ladder's
    ratings = rate(ladder, warm)
    jousts, ties = played(ladder)
    prior = seeding.prior_means(ladder.virtual, ratings.rating, ladder.met)
    theta = None if start is None else warm_start(start.estimate.theta, ratings.rating)
    estimate = estimate_markov(ladder.games(), ratings, jousts, ties, prior, seed, theta)
    return Standing(ratings, estimate)


def warm_ratings(start: Standing | None, size: int) -> Ratings | None:
    """An earlier standing's ratings for a pool grown to `size` programs
    (Ratings.grown); None without one, or when it had more programs (not
    this pool's)."""
    if start is None or len(start.ratings.rating) > size:
        return None
    return start.ratings.grown(size)


def next_round(
    ladder: Ladder,
    rule: str,
    rng: np.random.Generator,
    size: int,
    by_cost: bool = False,
    start: Ratings | None = None,
) -> tuple[list[tuple[int, int]], Ratings]:
    """The next round's pairs by `rule` (see hill.ladder.pairing)."""
    ratings = rate(ladder, start, exact_errors=False)
    share = pairing.BattleShares(ratings.rating)
    if rule == "random":
        score = ratings.rating
    else:
        score = quick_scores(ladder, ratings.rating) if ladder.played else np.ones(ladder.size)
    state = pairing.PairingState(
        ladder.met, ladder.jousts(), ratings.rating, ratings.stderr, score, share
    )
    cost = None
    if by_cost and ladder.played:
        record = ladder.record()
        cost = pairing.predicted_cost(
            ladder.size, record.pairs[:, 0], record.pairs[:, 1], ladder.cycles
        )
    if rule == "random":
        return pairing.random_round(state, size, rng), ratings
    if rule == "paulson":
        return pairing.paulson_round(state, size, rng, cost), ratings
    return pairing.markov_round(state, size, rng, cost), ratings


def budget_jousts(size: int, fraction: float) -> int:
    """The jousts a budget buys: the fraction of the N (N - 1) / 2 pairs,
    rounded down, since a budget is a maximum (20% of 4753 pairs buys 950
    jousts, not 951; a budget too small for one joust buys none).  The
    fraction counts as written: 0.57 of 300 pairs is 171, though 0.57 * 300
    is 170.99999999999997 in binary floating point."""
    if not 0 < fraction <= 1:
        raise ValueError(f"the budget must be within (0, 1], not {fraction}")
    return math.floor(Fraction(repr(fraction)) * (size * (size - 1) // 2))


def run(
    ladder: Ladder,
    play: Player,
    jousts: int,
    seed: int = 0,
    rule: str = "markov",
    by_cost: bool = False,
) -> Standing:
    """Play rounds until `jousts` more jousts are played (or every pair has
    met), then estimate the standing."""
    if rule not in RULES:
        raise ValueError(f"unknown pairing rule {rule!r}")
    rng = np.random.default_rng(seed)
    target = min(ladder.played + jousts, ladder.size * (ladder.size - 1) // 2)
    per_round = round_size(ladder.size, target - ladder.played)
    start = None
    with single_threaded_blas():
        while ladder.played < target:
            size = min(per_round, target - ladder.played)
            pairs, ratings = next_round(ladder, rule, rng, size, by_cost, start)
            start = ratings
            if not pairs:
                break
            for (a, b), result in zip(pairs, play(pairs), strict=True):
                ladder.add(a, b, result)
        return standing(ladder, seed)


def ladder_statistics(ladder: Ladder, result: Standing) -> statistics.Statistics:
    """docs/statistics.md over the jousts played; the bootstrap rescores
    each resample by how the estimate's markov moves with the played wins,
    to first order (`resampled_scores`)."""
    record = ladder.record()

    def scorer(draws: np.ndarray) -> np.ndarray:
        return resampled_scores(result.estimate, record, draws)

    with single_threaded_blas():
        return statistics.compute(record, result.order, None, draws_scorer=scorer)


def resampled_scores(
    estimate: Estimate, record: statistics.Record, draws: np.ndarray
) -> np.ndarray:
    """(B, N) the estimated markov scores of the bootstrap's resamples:
    configuration c drawn draws[r, c] times (statistics.resample_counts),
    the model's expected wins kept for the unplayed pairs.  A resample
    moves the played wins by sum_c (draws[r, c] - 1) S_c (S_c: the battles
    won in configuration c); markov moves, to first order, by the same sum
    of each configuration's response (hill.ladder.filled.Solution.response):
    42 solves for any number of resamples."""
    p, n = estimate.solution.p, record.size
    first, second = record.pairs[:, 0], record.pairs[:, 1]
    change = np.zeros((n, record.battles))
    for c, outcome in enumerate(record.outcomes.T):
        won, lost = (outcome == 1).astype(float), (outcome == -1).astype(float)
        # S_c p less S_c's column sums times p: how W p - lost p moves with S_c
        inflow = np.bincount(first, won * p[second], n) + np.bincount(second, lost * p[first], n)
        losses = np.bincount(second, won, n) + np.bincount(first, lost, n)
        change[:, c] = inflow - losses * p
    response = estimate.solution.response(change)
    return 1000 * (p[None, :] + (draws - 1) @ response.T)


def joust_list(ladder: Ladder, names: Sequence[Any]) -> list[list[Any]]:
    """The jousts played, as the ladder's JSON lists them: [A, B, margin of A against B]."""
    record = ladder.record()
    margins = record.outcomes.sum(axis=1, dtype=np.int64).tolist()
    return [
        [names[a], names[b], margin]
        for (a, b), margin in zip(record.pairs.tolist(), margins, strict=True)
    ]


def ranking(
    result: Standing, stats: statistics.Statistics, names: Sequence[Any], key: str = "name"
) -> list[dict[str, Any]]:
    """The standing best first, as the ladder's JSON lists it: each
    program's rank, `key` (its entry of `names`), rating (the estimated
    markov score) with its 95% interval, jousts and statistics."""
    estimate = result.estimate
    return [
        {
            "rank": place + 1,
            key: names[i],
            "rating": round(float(estimate.score[i]), 4),
            "rating_low": round(float(estimate.low[i]), 4),
            "rating_high": round(float(estimate.high[i]), 4),
            "jousts": int(stats.jousts[i]),
            "stats": stats.as_json(i),
        }
        for place, i in enumerate(result.order)
    ]
