"""Statistics of skill against luck (docs/statistics.md), for a hill or a ladder.

Pure numpy over a `Record`: the jousts played among n programs, each pair at
most once, as `pairs` (K, 2) and their 42 `outcomes` from the first
program's side.  A full hill is the record of every pair (`Record.full`);
a ladder's programs met different opponents.

Choices where the spec leaves room (all equal to the spec on a full hill):
- the zero datum's "median program by points" orders by points per joust,
  which on a hill is the order of points and on a ladder does not favour
  programs that played more;
- a category whose expected count is 0 (a pool without ties) is left out of
  chi2 and does not call for Yates' correction; a program without jousts has every statistic 0;
- a rank interval is the 2.5% percentile rounded down and the 97.5% one
  rounded up, so it holds whole ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hill import engine
from hill.rules import scoring

BOOTSTRAP_RESAMPLES = 200
BOOTSTRAP_SEED = 0
BOOTSTRAP_CELLS = 1 << 22  # battle-wins matrix cells of the resamples scored at once
# Yates' correction applies when an expected count is below this
YATES_BELOW = 5.0
# a scorer maps battle-wins matrices (B, N, N) (wins[b, a, c]: battles a won
# against c in resample b) to scores (B, N), higher is better
BatchScorer = Callable[[np.ndarray], np.ndarray]
# a draws scorer maps the resamples' draws (B, 42) (how often each
# configuration is drawn, resample_counts) to scores (B, N): for a ranking
# that rescores a resample without forming its battle-wins matrix (the
# ladder's, over thousands of programs)
DrawsScorer = Callable[[np.ndarray], np.ndarray]
# a ranking: program indices, best first (a list, or an array of them)
Ranking = Sequence[int] | np.ndarray


@dataclass(frozen=True)
class Record:
    """Jousts among `size` programs: pairs[k] = (a, b), outcomes[k] the 42
    battles of a against b from a's side (+1 a wins, 0 tie, -1 b wins)."""

    size: int
    pairs: np.ndarray
    outcomes: np.ndarray

    @classmethod
    def full(cls, r: np.ndarray) -> Record:
        """Every pair of an (N, N, 42) hill."""
        a, b = np.triu_indices(r.shape[0], 1)
        return cls(r.shape[0], np.stack([a, b], axis=1), r[a, b])

    @property
    def battles(self) -> int:
        return self.outcomes.shape[1] if self.outcomes.ndim == 2 else engine.BATTLES

    def counts(self) -> np.ndarray:
        """(K, 3): battles won, tied and lost by the first program of each joust."""
        o = self.outcomes
        return np.stack([(o == 1).sum(1), (o == 0).sum(1), (o == -1).sum(1)], axis=1)

    def per_program(self, values: np.ndarray) -> np.ndarray:
        """Sum per-joust values (K, ...) given from the first program's side,
        into per-program totals (N, ...), the second program's side being
        `values` with the first and last entries of axis 1 swapped when 2-D
        (W, T, L -> L, T, W) or negated when 1-D (margins)."""
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        total = np.zeros((self.size, *values.shape[1:]))
        mirrored = values[:, ::-1] if values.ndim == 2 else -values
        np.add.at(total, a, values)
        np.add.at(total, b, mirrored)
        return total

    def jousts(self) -> np.ndarray:
        return np.bincount(self.pairs.ravel(), minlength=self.size)

    def wins_matrix(self, wins: np.ndarray, losses: np.ndarray) -> np.ndarray:
        """Battle-wins matrices (B, N, N) from per-joust (B, K) wins and losses."""
        a, b = self.pairs[:, 0], self.pairs[:, 1]
        matrix = np.zeros((wins.shape[0], self.size, self.size))
        matrix[:, a, b] = wins
        matrix[:, b, a] = losses
        return matrix


def chi2(observed: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Row-wise chi2 of (N, 3) counts, with Yates' correction (0.5, never
    below zero) in rows where an expected count is below 5; categories
    expected 0 are left out (of the sum and of that condition)."""
    tested = expected > 0
    yates = np.where(((expected < YATES_BELOW) & tested).any(axis=1, keepdims=True), 0.5, 0.0)
    deviation = np.maximum(np.abs(observed - expected) - yates, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(tested, deviation**2 / expected, 0.0)
    return terms.sum(axis=1)


def test_statistic(observed: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """1000 chi2 / sqrt(n) of (N, 3) counts against expected shares (3,)."""
    n = observed.sum(axis=1)
    value = 1000 * chi2(observed, n[:, None] * shares[None, :])
    return np.divide(value, np.sqrt(n), out=np.zeros(len(n)), where=n > 0)


def luck_shares(pool_counts: np.ndarray) -> np.ndarray:
    """(W, T, L) shares of a program without skill: the pool's tie rate tau."""
    tau = pool_counts[1] / max(pool_counts.sum(), 1)
    return np.array([(1 - tau) / 2, tau, (1 - tau) / 2])


def zero_datum(counts: np.ndarray) -> np.ndarray:
    """(W, T, L) shares of the median program by points per joust (the mean
    of the two middle programs' shares for an even count)."""
    played = counts.sum(axis=1) > 0
    if not played.any():
        return np.full(3, 1 / 3)
    shares = counts[played] / counts[played].sum(axis=1, keepdims=True)
    points = shares[:, 0] - shares[:, 2]
    order = np.argsort(points, kind="stable")
    middle = len(order) // 2
    if len(order) % 2:
        return shares[order[middle]]
    return (shares[order[middle - 1]] + shares[order[middle]]) / 2


def opponent_quality(record: Record, rank: np.ndarray) -> np.ndarray:
    """QOOA: the mean percentile q of the opponents a program met (over its
    jousts, a rematch counting again) over the mean q of every program
    other than itself, q = (N - rank + 1) / N (1 for the best, 1/N for the
    worst).  1 on a full hill; above 1 for stronger opponents than chance.

    In whole numbers s = N q, so that equal means give exactly 1:
    QOOA_a = (sum of s over a's jousts) (N - 1) / (g_a (N (N + 1) / 2 - s_a)),
    0 for a program without jousts (or alone in the pool)."""
    n = record.size
    s = n + 1 - np.asarray(rank, dtype=np.int64)
    a, b = record.pairs[:, 0], record.pairs[:, 1]
    met = np.zeros(n, dtype=np.int64)
    np.add.at(met, a, s[b])
    np.add.at(met, b, s[a])
    others = n * (n + 1) // 2 - s  # the sum of s over everyone else
    numerator = met * (n - 1)
    denominator = record.jousts() * others
    return np.divide(numerator, denominator, out=np.zeros(n), where=denominator > 0, dtype=float)


def games_behind(counts: np.ndarray, jousts: np.ndarray, leader: int, battles: int) -> np.ndarray:
    """GB = ((W*_l - W*_a) + (L*_a - L*_l)) / 2 + (g_max - g_a) / 2, where a
    joust is won in part w = (won + tied / 2) / 42 and lost 1 - w, so W*
    sums to (W + T / 2) / 42 over a program's jousts."""
    if not len(jousts):
        return np.zeros(0)
    won = (counts[:, 0] + counts[:, 1] / 2) / battles
    lost = jousts - won
    return ((won[leader] - won) + (lost - lost[leader])) / 2 + (jousts.max() - jousts) / 2


def resample_counts(battles: int, resamples: int, seed: int) -> np.ndarray:
    """(B, 42): how often each configuration is drawn in each resample."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, battles, size=(resamples, battles))
    return np.stack([np.bincount(d, minlength=battles) for d in draws])


def rank_interval(
    record: Record,
    scorer: BatchScorer,
    order: Ranking,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[np.ndarray, np.ndarray]:
    """95% rank interval (low, high) per program from the configuration
    bootstrap: resample the 42 configurations, rescore, rank (equal scores
    keep the current order), take the 2.5% and 97.5% percentiles."""
    draws = resample_counts(record.battles, resamples, seed).T.astype(float)
    wins = (record.outcomes == 1).astype(float) @ draws  # (K, B)
    losses = (record.outcomes == -1).astype(float) @ draws
    # the (B, N, N) matrices a few resamples at a time: a pool of thousands
    # would need gigabytes at once
    chunk = max(1, BOOTSTRAP_CELLS // max(record.size**2, 1))
    scores = np.concatenate(
        [
            scorer(record.wins_matrix(wins.T[at : at + chunk], losses.T[at : at + chunk]))
            for at in range(0, resamples, chunk)
        ]
    ).reshape(resamples, record.size)  # (B, N)
    return rank_percentiles(scores, order)


def rank_percentiles(scores: np.ndarray, order: Ranking) -> tuple[np.ndarray, np.ndarray]:
    """95% rank interval (low, high) per program from (B, N) resampled
    scores: rank each resample (equal scores keep the current order), take
    the 2.5% and 97.5% percentiles."""
    size = scores.shape[1]
    position = np.empty(size, dtype=np.int64)
    position[np.asarray(order, dtype=np.int64)] = np.arange(size)
    # rank order per resample: score descending, then the current position
    sorted_ = np.lexsort((np.broadcast_to(position, scores.shape), -scores), axis=1)
    ranks = np.empty_like(sorted_)
    np.put_along_axis(ranks, sorted_, np.arange(1, size + 1)[None, :], axis=1)
    low = np.floor(np.percentile(ranks, 2.5, axis=0)).astype(int)
    high = np.ceil(np.percentile(ranks, 97.5, axis=0)).astype(int)
    return low, high


def method_scorer(method: str, battles: int = engine.BATTLES) -> BatchScorer:
    """The hill's ranking method as a bootstrap scorer (every pair played)."""
    return lambda wins: np.stack([scoring.score(w, battles, method) for w in wins])


@dataclass(frozen=True)
class Statistics:
    """Every statistic of docs/statistics.md, one array entry per program."""

    wins: np.ndarray
    ties: np.ndarray
    losses: np.ndarray
    jousts: np.ndarray
    tapl: np.ndarray
    tazd: np.ndarray
    qooa: np.ndarray
    tapl_q: np.ndarray
    pprg: np.ndarray
    games_behind: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray

    def as_json(self, i: int) -> dict[str, Any]:
        """The `stats` object of program i, as the reports carry it."""
        whole = ("wins", "ties", "losses", "jousts", "rank_low", "rank_high")
        real = ("tapl", "tazd", "qooa", "pprg", "games_behind")
        out: dict[str, Any] = {k: int(getattr(self, k)[i]) for k in whole}
        out.update({k: round(float(getattr(self, k)[i]), 6) for k in real})
        return {k: out[k] for k in STATS_FIELDS}


STATS_FIELDS = (
    "wins", "ties", "losses", "jousts", "tapl", "tazd", "qooa", "pprg",
    "games_behind", "rank_low", "rank_high",
)  # fmt: skip


def compute(
    record: Record,
    order: Ranking,
    scorer: BatchScorer | None,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    draws_scorer: DrawsScorer | None = None,
) -> Statistics:
    """All statistics; `order` is the current ranking (indices, best first)
    and `scorer` the ranking method, rerun on each bootstrap resample (or
    `draws_scorer`, given the resamples' draws)."""
    order = np.asarray(order, dtype=np.int64)
    counts = record.per_program(record.counts().astype(float))
    jousts = record.jousts()
    rank = np.empty(record.size, dtype=np.int64)
    rank[order] = np.arange(1, record.size + 1)
    tapl = test_statistic(counts, luck_shares(counts.sum(axis=0)))
    qooa = opponent_quality(record, rank)
    points = (counts[:, 0] - counts[:, 2]) / record.battles
    if draws_scorer is not None:
        draws = resample_counts(record.battles, resamples, seed)
        low, high = rank_percentiles(draws_scorer(draws), order)
    elif scorer is not None:
        low, high = rank_interval(record, scorer, order, resamples, seed)
    else:
        raise ValueError("the rank interval needs a scorer")
    return Statistics(
        wins=counts[:, 0],
        ties=counts[:, 1],
        losses=counts[:, 2],
        jousts=jousts,
        tapl=tapl,
        tazd=test_statistic(counts, zero_datum(counts)),
        qooa=qooa,
        tapl_q=tapl * qooa,
        pprg=np.divide(points, np.sqrt(jousts), out=np.zeros(record.size), where=jousts > 0),
        games_behind=games_behind(
            counts, jousts, int(order[0]) if len(order) else 0, record.battles
        ),
        rank_low=low,
        rank_high=high,
    )


def hill_statistics(outcomes: np.ndarray, method: str, seed: int = BOOTSTRAP_SEED) -> Statistics:
    """The statistics of a full hill whose (N, N, 42) outcomes are in rank order."""
    n = outcomes.shape[0]
    return compute(
        Record.full(outcomes), range(n), method_scorer(method, outcomes.shape[2]), seed=seed
    )
