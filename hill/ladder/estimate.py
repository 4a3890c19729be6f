"""Estimate the markov ranking of the full round robin from some of its jousts.

markov (hill.scoring) is the stationary distribution of a chain that moves
from a to b with the battles b wins against a: it weighs wins against
strong programs most.  The estimate fills the round robin's battle-wins
matrix with the jousts played and, for the pairs not played, the expected
wins of a model of the matchups, then takes markov of that matrix.

The matchup model: a's expected battle share against b is

    sigmoid(s_a - s_b + c_a g_b - c_b g_a + sum_k (x_ak y_bk - y_ak x_bk))

Bradley-Terry strengths s plus skew-symmetric terms that learn the
rock-paper-scissors of BF Joust (rushes, defenders, clears...).  The first
is each program's slope c against its opponents' strength g (the
Bradley-Terry ratings, standardised): some programs beat the strong and
lose to the weak, others the reverse, which is exactly what markov weighs
and Bradley-Terry alone misses.  The others are free low-rank components:
on the reference programs two of them explain a quarter of what
Bradley-Terry leaves unexplained.  Each joust counts 42 / dispersion
battles (hill.ladder.ratings), and an L2 penalty on c, x and y (on x and y
a nuclear-norm penalty) keeps the terms at zero unless the jousts show
them.  Expected ties come from each program's own tie rate, shrunk toward
the pool's.

The model's logits are a rank-10 product (`_Terms.factors`), so the filled
matrix is never formed: hill.ladder.filled multiplies it a block of rows at
a time and solves markov by defect correction, O(N^2) work and O(N) memory
per row where a dense solve was O(N^3) (10,000 programs: 10^8 entries).

The slope raised the Spearman correlation with the full round robin's
markov ranking by 0.003 on the 98 reference programs at 20% of the pairs
(200 fresh seeds, paired: the pairing is the same) and by 0.004 on the
reference programs plus 120 random ones at 10%.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.sparse import csc_matrix, csr_matrix
from scipy.special import expit

from hill.ladder.filled import LOST_NOTHING, Filled, Solution
from hill.ladder.ratings import BATTLES, Z95, Games, Ratings

COMPONENTS = 3  # free skew-symmetric pairs (x_k, y_k)
# L2 penalty on the slopes and components, per effective battle of a joust
COMPONENT_PENALTY = 3.0 / (BATTLES / 15)
# a program's tie rate is shrunk toward the pool's with this many jousts' weight
TIE_PRIOR_JOUSTS = 2.0
_CHUNK = 1 << 15  # jousts whose parameters are gathered at once (2 MB each side)
COMPONENT_SQUARE = 0.3  # the components' typical square, for scaling the fit (matchup_model)


@dataclass(frozen=True)
class _Terms:
    """The matchup model's parameters for N programs (see the module):
    strengths s (N,), slopes c (N,) and components x, z (N, COMPONENTS)."""

    s: np.ndarray
    c: np.ndarray
    x: np.ndarray
    z: np.ndarray

    @classmethod
    def unpack(cls, theta: np.ndarray, n: int) -> _Terms:
        k = COMPONENTS
        x, z = theta[2 * n :].reshape(2, n, k)
        return cls(theta[:n], theta[n : 2 * n], x, z)

    def factors(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(left, right), (N, 4 + 2 COMPONENTS) each: the model's logit of a's
        share against b is left[a] . right[b] (hill.ladder.filled)."""
        one = np.ones(len(self.s))
        left = np.column_stack([self.s, one, self.c, -g, self.x, -self.z])
        right = np.column_stack([one, -self.s, g, self.c, self.z, self.x])
        return left, right


class _Objective:
    """The matchup model's penalised loss and its gradient: the binomial
    log-likelihood of the jousts' shares (each joust `weight` battles) and
    the prior and penalties (see the module).

    An evaluation reads each joust once, in arrays kept from one evaluation
    to the next (fresh ones of hundreds of thousands of jousts cost as much
    again in page faults); the jousts are sorted by their first program, so
    that the per-program sums of the gradient are two sparse products with
    the joust residuals (a's side, then b's)."""

    def __init__(
        self,
        games: Games,
        g: np.ndarray,
        weight: np.ndarray,
        prior: tuple[np.ndarray, float],
        penalty: float,
    ) -> None:
        n, jousts = games.size, len(games.first)
        order = np.argsort(games.first, kind="stable")
        self.size, self.g, self.prior, self.penalty = n, g, prior, penalty
        self.first, self.second = games.first[order], games.second[order]
        self.weight = weight[order]
        self.won_weight = self.weight * games.share[order]
        self.g_first, self.g_second = g[self.first], g[self.second]
        # the two programs' parameters, gathered a chunk of jousts at a time
        # (all at once: 80 MB on a dense archive of 1,200 programs)
        chunk = max(min(jousts, _CHUNK), 1)
        self.a, self.b = (
            np.empty((2 + 2 * COMPONENTS, chunk)),
            np.empty((2 + 2 * COMPONENTS, chunk)),
        )
        self.d, self.work = np.empty(jousts), np.empty(jousts)
        # the residual of each joust at [a, b]: shared data, csr by a and its transpose (csc) by b
        starts = np.searchsorted(self.first, np.arange(n + 1))
        self.residual = np.zeros(jousts)
        self.by_first = csr_matrix((self.residual, self.second, starts), shape=(n, n))
        self.by_second = csc_matrix((self.residual, self.second, starts), shape=(n, n))

    def __call__(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        t = _Terms.unpack(theta, self.size)
        k, d, work = COMPONENTS, self.d, self.work
        params = np.vstack([t.s, t.c, t.x.T, t.z.T])  # (2 + 2k, N): s, c, x, z
        for at in range(0, len(d), self.a.shape[1]):
            part = slice(at, at + self.a.shape[1])
            size = len(d[part])
            a, b, out = self.a[:, :size], self.b[:, :size], d[part]
            np.take(params, self.first[part], axis=1, out=a, mode="clip")  # "raise" copies `out`
            np.take(params, self.second[part], axis=1, out=b, mode="clip")
            # d = s_a - s_b + c_a g_b - c_b g_a + x_a . z_b - z_a . x_b
            np.subtract(a[0], b[0], out=out)
            out += a[1] * self.g_second[part]
            out -= b[1] * self.g_first[part]
            out += np.einsum("jk,jk->k", a[2 : 2 + k], b[2 + k :])
            out -= np.einsum("jk,jk->k", a[2 + k :], b[2 : 2 + k])
        # e = exp(-|d|): sigmoid(d) = 1 / (1 + e) for d >= 0, 1 - that below
        # -(y log sigmoid(d) + (1 - y) log sigmoid(-d)) = max(d, 0) + log(1 + e) - y d
        residual = self.residual
        np.abs(d, out=work)
        np.negative(work, out=work)
        np.exp(work, out=work)
        np.add(work, 1, out=residual)
        np.reciprocal(residual, out=residual)
        residual -= 0.5
        np.copysign(residual, d, out=residual)
        residual += 0.5  # sigmoid(d)
        residual *= self.weight
        residual -= self.won_weight
        np.log1p(work, out=work)
        loss = self.weight @ work + self.weight @ np.maximum(d, 0, out=work) - self.won_weight @ d
        # d/d a's parameters: (1, g_b, z_b, -x_b); d/d b's: minus (1, g_a, z_a, -x_a)
        towards = np.column_stack([np.ones(self.size), self.g, t.z, -t.x])
        grad = self.by_first @ towards - self.by_second @ towards
        mean, sd = self.prior
        loss += 0.5 * ((t.s - mean) ** 2).sum() / sd**2
        loss += 0.5 * self.penalty * ((t.c**2).sum() + (t.x**2).sum() + (t.z**2).sum())
        grad[:, 0] += (t.s - mean) / sd**2
        grad[:, 1:] += self.penalty * params[1:].T
        x_grad, z_grad = grad[:, 2 : 2 + k], grad[:, 2 + k :]
        return float(loss), np.concatenate([grad[:, 0], grad[:, 1], x_grad.ravel(), z_grad.ravel()])


def opponent_strength(rating: np.ndarray) -> np.ndarray:
    """g: the ratings standardised (mean 0, deviation 1), what the slopes multiply."""
    centred = rating - rating.mean()
    return centred / max(float(centred.std()), 1e-9)


def matchup_model(
    games: Games, ratings: Ratings, prior: np.ndarray, seed: int, start: np.ndarray | None = None
) -> np.ndarray:
    """The matchup model fitted to the jousts, as its parameters theta
    (`factors` turns them into the logits' factors).  `start`: the
    parameters of an earlier fit (`warm_start`); the fit starts there
    instead of at the ratings with small random components, and ends where
    it would have, to L-BFGS's tolerance, in fewer evaluations.

    L-BFGS works on the parameters scaled by the square roots of their
    curvatures (`_curvature`): on a ladder of 10,000 programs it then needs
    about 270 evaluations instead of 500, and ends at least as low."""
    n = games.size
    weight = BATTLES / ratings.dispersion * games.weight
    penalty = COMPONENT_PENALTY * BATTLES / ratings.dispersion
    g = opponent_strength(ratings.rating)
    if start is None:
        rng = np.random.default_rng(seed)
        start = np.concatenate(
            [ratings.rating, np.zeros(n), 0.1 * rng.standard_normal(2 * n * COMPONENTS)]
        )
    objective = _Objective(games, g, weight, (prior, ratings.spread), penalty)
    scale = np.sqrt(_curvature(games, ratings, g, weight, penalty))

    def scaled(phi: np.ndarray) -> tuple[float, np.ndarray]:
        loss, grad = objective(phi / scale)
        return loss, grad / scale

    return minimize(scaled, start * scale, jac=True, method="L-BFGS-B").x / scale


def factors(theta: np.ndarray, rating: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The logit factors (left, right) of the matchup model's parameters:
    a's expected battle share against b is sigmoid(left[a] . right[b])."""
    return _Terms.unpack(theta, len(rating)).factors(opponent_strength(rating))


def warm_start(theta: np.ndarray, rating: np.ndarray) -> np.ndarray:
    """An earlier fit's parameters for a pool grown to len(rating) programs
    (new programs are appended): theirs start at their ratings, with no
    slope nor component."""
    n, old = len(rating), len(theta) // (2 + 2 * COMPONENTS)
    t = _Terms.unpack(theta, old)
    s = np.concatenate([t.s, rating[old:]])
    c, x, z = (np.concatenate([v, np.zeros((n - old, *v.shape[1:]))]) for v in (t.c, t.x, t.z))
    return np.concatenate([s, c, x.ravel(), z.ravel()])


def _curvature(
    games: Games, ratings: Ratings, g: np.ndarray, weight: np.ndarray, penalty: float
) -> np.ndarray:
    """The diagonal of the loss's Gauss-Newton Hessian at the Bradley-Terry
    ratings, in the order of theta: sum_b q_ab (1, g_b^2, z_b^2, x_b^2) plus
    the prior's and penalties' own, q_ab = weight p (1 - p) for each joust;
    the components' squares are taken as COMPONENT_SQUARE, about what they
    reach (0.12 to 0.39 on average on the goal pools and on ladders of 3,000
    and 10,000 programs)."""
    n, a, b, s = games.size, games.first, games.second, ratings.rating
    p = expit(s[a] - s[b])
    q = weight * p * (1 - p)
    met = np.bincount(a, q, n) + np.bincount(b, q, n)
    slopes = np.bincount(a, q * g[b] ** 2, n) + np.bincount(b, q * g[a] ** 2, n)
    components = np.repeat(met * COMPONENT_SQUARE + penalty, COMPONENTS)
    return np.concatenate([met + 1 / ratings.spread**2, slopes + penalty, components, components])


def matchup_shares(games: Games, ratings: Ratings, prior: np.ndarray, seed: int) -> np.ndarray:
    """(N, N) expected battle shares of the matchup model (a small pool's:
    the ladder itself keeps the model as `matchup_model`'s factors)."""
    left, right = factors(matchup_model(games, ratings, prior, seed), ratings.rating)
    return expit(left @ right.T)


def tie_roots(size: int, first: np.ndarray, second: np.ndarray, ties: np.ndarray) -> np.ndarray:
    """The square root of each program's tie rate, shrunk toward the pool's:
    the expected tie share of a pair is the product of the two (the
    geometric mean of the programs' rates)."""
    pool = ties.sum() / max(BATTLES * len(ties), 1)
    tied = np.bincount(first, ties, size) + np.bincount(second, ties, size)
    battles = BATTLES * (np.bincount(first, minlength=size) + np.bincount(second, minlength=size))
    prior = BATTLES * TIE_PRIOR_JOUSTS
    return np.sqrt((tied + prior * pool) / (battles + prior))


@dataclass(frozen=True)
class Estimate:
    """The estimated markov scores of the full round robin (1000 in all),
    their 95% intervals from the ratings' intervals, and the round robin's
    battle-wins matrix they were computed from (`filled`, never formed) with
    its markov solution; `theta`, the matchup model's parameters (a warm
    start for the next fit)."""

    score: np.ndarray
    low: np.ndarray
    high: np.ndarray
    filled: Filled
    solution: Solution
    theta: np.ndarray

    def order(self) -> np.ndarray:
        """Indices best first (equal scores: the lower index first)."""
        return np.lexsort((np.arange(len(self.score)), -self.score))


def estimate_markov(
    games: Games,
    ratings: Ratings,
    played: tuple[np.ndarray, np.ndarray, np.ndarray],
    ties: np.ndarray,
    prior: np.ndarray | None = None,
    seed: int = 0,
    start: np.ndarray | None = None,
) -> Estimate:
    """markov of the round robin filled in by the matchup model.  `played`:
    the real jousts as (first, second, (K, 2) battles won by each); `ties`:
    their tied battles; `start`: an earlier estimate's theta (`warm_start`)."""
    n = games.size
    prior = np.zeros(n) if prior is None else prior
    theta = matchup_model(games, ratings, prior, seed, start)
    left, right = factors(theta, ratings.rating)
    first, second, wins = played
    filled = Filled(left, right, tie_roots(n, first, second, ties), first, second, wins)
    solution = filled.markov()
    # a stationary distribution is within 0..1: -1e-16 is the solver's rounding
    score = 1000 * np.clip(solution.p, 0.0, 1.0)
    low, high = _interval(score, filled, solution, ratings)
    return Estimate(score, low, high, filled, solution, theta)


def _interval(
    score: np.ndarray, filled: Filled, solution: Solution, ratings: Ratings
) -> tuple[np.ndarray, np.ndarray]:
    """95% interval of each score: the score it would have if its rating
    alone stood at either end of its 95% interval (rating +- Z95 stderr),
    its matchups in the model moved with it and everyone else's score held
    (hill.ladder.filled.Filled.moved: markov's balance for that program,
    exact in its own matchups).  A pool where someone lost no battle has no
    spread (markov's degenerate answer)."""
    if (solution.lost <= LOST_NOTHING).any():
        return score, score
    shift = Z95 * np.nan_to_num(ratings.stderr, nan=0.0, posinf=0.0)
    low = 1000 * filled.moved(solution.p, -shift)
    high = 1000 * filled.moved(solution.p, shift)
    return bounded_interval(score, low, high)


def bounded_interval(
    score: np.ndarray, low: np.ndarray, high: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """low .. high around the score, within what a markov score can be (0
    to 1000: the scores add up to 1000).  A program whose rating is known
    poorly, with a score near 0, printed `-0.00 (-0.00 -3308123146576.84)`
    from a first-order spread of e^50."""
    score = np.clip(score, 0.0, 1000.0)
    low = np.clip(np.nan_to_num(low, nan=0.0), 0.0, score)
    high = np.clip(np.nan_to_num(high, nan=1000.0), score, 1000.0)
    return low, high
