"""Ratings from the jousts played so far: Bradley-Terry over battles.

A joust of a against b is 42 battles; a's score share y = (won + tied / 2)
/ 42 (ties count half).  The model: a battle goes to a with probability
p = sigmoid(s_a - s_b).  Battles of one joust are far from independent (a
joust is often 42 to 0), so the fit is a quasi-likelihood: the binomial
log-likelihood of y with 42 trials, and the covariance of the ratings
scaled by the dispersion phi (Pearson chi2 over the degrees of freedom),
which makes the intervals honest about how lumpy jousts are.  A weak
Gaussian prior (mean 0, or the seeding's prior) keeps a program that won or
lost everything finite.  Newton's method with preconditioned conjugate
gradients does the optimisation (`Posterior.maximise`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit

# prior standard deviation of a rating, in logits (ratings span about -4..4)
PRIOR_SD = 3.0
# exact errors (an O(N^3) inverse of the information) up to this many
# programs (0.4 s at 2,000); beyond, Posterior.approximate_variance
EXACT_ERRORS_UP_TO = 2000
MIN_SPREAD = 0.1  # the empirical prior is never narrower than this
Z95 = 1.959964
NEWTON_STEPS = 100  # at most (a fit takes 5 to 10)
SETTLED = 1e-5  # a fit stops once a Newton step moves no rating by more (logits)
ARMIJO = 1e-4  # a step is kept once the objective falls by this share of its promise
_HALVINGS = 40


@dataclass(frozen=True)
class Games:
    """Jousts as plain arrays: first[k] met second[k]; share[k] is first's
    battle share in [0, 1] (ties half); weight[k] counts the joust (1 for a
    real one; a virtual result of seeding has its own weight) and real[k]
    tells which are real."""

    size: int
    first: np.ndarray
    second: np.ndarray
    share: np.ndarray
    weight: np.ndarray
    real: np.ndarray

    @cached_property
    def opponents(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each program's jousts as a sparse row pattern: (order, opponents,
        starts) such that, for per-joust values v, the (N, N) csr matrix
        (concatenate([v, v])[order], opponents, starts) holds v[k] at
        [first[k], second[k]] and [second[k], first[k]]."""
        sides = np.concatenate([self.first, self.second])
        order = np.argsort(sides, kind="stable")
        opponents = np.concatenate([self.second, self.first])[order]
        return order, opponents, np.searchsorted(sides[order], np.arange(self.size + 1))

    @property
    def played(self) -> np.ndarray:
        """Weighted jousts per program."""
        return np.bincount(self.first, self.weight, self.size) + np.bincount(
            self.second, self.weight, self.size
        )


@dataclass(frozen=True)
class Ratings:
    """Ratings in logits (a battle between a and b goes to a with
    probability sigmoid(rating_a - rating_b)), their standard errors and
    95% intervals, the dispersion of jousts around the model and the
    width of the prior the ratings were shrunk with."""

    rating: np.ndarray
    stderr: np.ndarray
    dispersion: float
    spread: float = PRIOR_SD  # the prior's width, from the ratings' spread
    # the first fit's ratings, under the weak prior (`fit`): where the next
    # fit's first one starts (the two can be 10 logits apart on programs
    # that won or lost everything, a dozen Newton steps)
    weak: np.ndarray | None = None

    def grown(self, size: int) -> Ratings:
        """These ratings as a warm start for a pool grown to `size`
        programs (new ones appended): theirs at 0, the prior's mean."""
        more = size - len(self.rating)
        rating = np.concatenate([self.rating, np.zeros(more)])
        weak = None if self.weak is None else np.concatenate([self.weak, np.zeros(more)])
        stderr = np.concatenate([self.stderr, np.full(more, PRIOR_SD)])
        return replace(self, rating=rating, stderr=stderr, weak=weak)

    @property
    def low(self) -> np.ndarray:
        return self.rating - Z95 * self.stderr

    @property
    def high(self) -> np.ndarray:
        return self.rating + Z95 * self.stderr

    def win_probability(self) -> np.ndarray:
        """(N, N): the expected battle share of a against b."""
        return expit(self.rating[:, None] - self.rating[None, :])


BATTLES = 42


@dataclass
class Posterior:
    """The quasi-posterior: the jousts' log-likelihood over the dispersion
    plus a Gaussian prior N(prior, sd^2) on each rating."""

    games: Games
    prior: np.ndarray
    sd: float
    dispersion: float
    _last_hessian: tuple[np.ndarray, np.ndarray, csr_matrix] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def objective(self, s: np.ndarray) -> tuple[float, np.ndarray]:
        g = self.games
        d = s[g.first] - s[g.second]
        n = BATTLES * g.weight / self.dispersion
        # -(y log sigmoid(d) + (1 - y) log sigmoid(-d)) = max(d, 0) + log(1 + e^-|d|) - y d
        softplus = np.maximum(d, 0) + np.log1p(np.exp(-np.abs(d)))
        loss = n @ softplus - (n * g.share) @ d
        residual = n * (expit(d) - g.share)  # d loss / d d
        grad = np.bincount(g.first, residual, len(s)) - np.bincount(g.second, residual, len(s))
        loss += 0.5 * ((s - self.prior) ** 2).sum() / self.sd**2
        return float(loss), grad.astype(float) + (s - self.prior) / self.sd**2

    def _flow(self, s: np.ndarray) -> np.ndarray:
        p = expit(s[self.games.first] - s[self.games.second])
        return BATTLES * self.games.weight * p * (1 - p) / self.dispersion

    def _hessian_at(self, s: np.ndarray) -> tuple[np.ndarray, csr_matrix]:
        """The Hessian at s as its diagonal and the jousts' weights (flows)
        between opponents, kept for the last point: conjugate gradients ask
        for many Hessian products at each point."""
        last = self._last_hessian
        if last is None or not np.array_equal(last[0], s):
            flow = self._flow(s)
            order, opponents, starts = self.games.opponents
            n = self.games.size
            flows = np.concatenate([flow, flow])[order]
            flows = csr_matrix((flows, opponents, starts), shape=(n, n))
            last = self._last_hessian = (s.copy(), self._diagonal(flow), flows)
        return last[1], last[2]

    def hessian_product(self, s: np.ndarray, v: np.ndarray) -> np.ndarray:
        diagonal, flows = self._hessian_at(s)
        return diagonal * v - flows @ v

    def _newton_step(self, s: np.ndarray, grad: np.ndarray) -> np.ndarray:
        """The Hessian at s solved against the gradient (`maximise`)."""
        n = len(s)
        diagonal = self._hessian_at(s)[0]
        hessian = LinearOperator((n, n), lambda v: self.hessian_product(s, v), dtype=float)
        jacobi = LinearOperator((n, n), lambda v: v / diagonal, dtype=float)
        size = float(np.abs(grad).max())
        return cg(hessian, grad, rtol=min(0.1, np.sqrt(size)), atol=0.0, M=jacobi)[0]

    def information(self, s: np.ndarray) -> np.ndarray:
        """(N, N) the Hessian of the objective: the Laplacian of the jousts'
        weights plus the prior's 1 / sd^2."""
        g, flow = self.games, self._flow(s)
        matrix = np.diag(np.full(g.size, 1 / self.sd**2))
        np.add.at(matrix, (g.first, g.first), flow)
        np.add.at(matrix, (g.second, g.second), flow)
        np.add.at(matrix, (g.first, g.second), -flow)
        np.add.at(matrix, (g.second, g.first), -flow)
        return matrix

    def information_diagonal(self, s: np.ndarray) -> np.ndarray:
        """The diagonal of `information`, in O(jousts)."""
        return self._diagonal(self._flow(s))

    def _diagonal(self, flow: np.ndarray) -> np.ndarray:
        g = self.games
        played = np.bincount(g.first, flow, g.size) + np.bincount(g.second, flow, g.size)
        return 1 / self.sd**2 + played

    def approximate_variance(self, s: np.ndarray) -> np.ndarray:
        """Var(s_a - mean(s)) to second order, in O(jousts): 1 / I_aa plus
        the opponents' own uncertainty, sum_b I_ab^2 / (I_aa^2 I_bb), as if
        they were independent (on ladders of 1,000 and 3,000 programs the
        errors are then 2.6% and 1.5% rms, 18% and 11% at worst, against
        the exact inverse; they shrink as the pool grows)."""
        g, flow = self.games, self._flow(s)
        diagonal = self.information_diagonal(s)
        a, b = g.first, g.second
        opponents = np.bincount(a, flow**2 / diagonal[b], g.size)
        opponents += np.bincount(b, flow**2 / diagonal[a], g.size)
        return 1 / diagonal + opponents / diagonal**2

    def maximise(self, start: np.ndarray) -> np.ndarray:
        """Newton's method: each step solves the Hessian's system by
        conjugate gradients preconditioned by its diagonal, to a tolerance
        that tightens as the gradient vanishes (as scipy's Newton-CG does),
        then halves until the objective falls enough (Armijo); the
        objective is strictly convex (the prior), so it converges.  Stops
        once a step would move no rating by more than SETTLED.  The
        preconditioner is what matters: a program that won or lost nearly
        everything has a curvature thousands of times smaller than a busy
        one's, and on a dense archive of 1,200 programs the plain
        conjugate gradients of scipy's Newton-CG took 1,800 Hessian
        products per refit; now about 200 cold, 50 warm-started (`fit`)."""
        s = np.array(start, dtype=float)
        loss, grad = self.objective(s)
        for _ in range(NEWTON_STEPS):
            step = self._newton_step(s, grad)
            if np.abs(step).max() <= SETTLED:  # there (the objective's fall is below rounding)
                return s - step
            fall, t = float(grad @ step), 1.0
            for _ in range(_HALVINGS):
                moved = s - t * step
                new_loss, new_grad = self.objective(moved)
                if new_loss <= loss - ARMIJO * t * fall:
                    break
                t /= 2
            s, loss, grad = moved, new_loss, new_grad
            if t * np.abs(step).max() <= SETTLED:
                break
        return s


def centred_variance(covariance: np.ndarray) -> np.ndarray:
    """Var(s_a - mean(s)): ratings only mean something against each other,
    so the uncertainty of their common level is left out."""
    return np.diag(covariance) - 2 * covariance.mean(axis=1) + covariance.mean()


def fit(
    games: Games,
    prior: np.ndarray | None = None,
    start: Ratings | None = None,
    exact_errors: bool = True,
) -> Ratings:
    """The maximum a posteriori ratings and their quasi-likelihood errors
    (`exact_errors=False`: from the diagonal of the information only, which
    ignores the opponents' uncertainty; quick, for steering the pairing;
    exact up to EXACT_ERRORS_UP_TO programs, then to second order).

    Empirical Bayes: a first fit under a weak prior measures the dispersion
    and how far the ratings spread beyond their own noise; that spread is
    the prior's width in the second, final fit.  Shrinking each rating
    toward its prior by its own uncertainty ranks programs with few jousts
    better than taking their noisy ratings at face value.

    `start`: earlier ratings of these programs; each fit starts from its
    own answer there (they end where they would have, to SETTLED)."""
    prior = np.zeros(games.size) if prior is None else prior
    weak = Posterior(games, prior, PRIOR_SD, 1.0)
    s = weak.maximise(prior if start is None or start.weak is None else start.weak)
    weak_s = s
    dispersion = _dispersion(games, expit(s[games.first] - s[games.second]))
    first = replace(weak, dispersion=dispersion)
    noise = 1 / first.information_diagonal(s)
    spread = np.sqrt(max(np.var(s - prior) - noise.mean(), MIN_SPREAD**2))
    final = replace(first, sd=min(spread, PRIOR_SD))
    s = final.maximise(s if start is None else start.rating)
    if not exact_errors:
        variance = 1 / final.information_diagonal(s)
    elif games.size <= EXACT_ERRORS_UP_TO:
        variance = centred_variance(np.linalg.inv(final.information(s)))
    else:
        variance = final.approximate_variance(s)
    return Ratings(s, np.sqrt(np.maximum(variance, 0)), dispersion, final.sd, weak_s)


def _dispersion(games: Games, p: np.ndarray) -> float:
    """Pearson chi2 of the jousts over their degrees of freedom (at least 1)."""
    real = games.real
    freedom = real.sum() - games.size
    if freedom < 10:
        return 1.0 + BATTLES / 2  # too few jousts to tell: assume very lumpy
    pearson = (BATTLES * (games.share[real] - p[real]) ** 2 / (p[real] * (1 - p[real]))).sum()
    return max(float(pearson / freedom), 1.0)
