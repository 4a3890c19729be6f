"""Ratings from the jousts played so far: Bradley-Terry over battles.

A joust of a against b is 42 battles; a's score share y = (won + tied / 2)
/ 42 (ties count half).  The model: a battle goes to a with probability
p = sigmoid(s_a - s_b).  Battles of one joust are far from independent (a
joust is often 42 to 0), so the fit is a quasi-likelihood: the binomial
log-likelihood of y with 42 trials, and the covariance of the ratings
scaled by the dispersion phi (Pearson chi2 over the degrees of freedom),
which makes the intervals honest about how lumpy jousts are.  A weak
Gaussian prior (mean 0, or the seeding's prior) keeps a program that won or
lost everything finite.  scipy's L-BFGS does the optimisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit, log_expit

# prior standard deviation of a rating, in logits (ratings span about -4..4)
PRIOR_SD = 3.0
Z95 = 1.959964


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
    95% intervals, and the dispersion of jousts around the model."""

    rating: np.ndarray
    stderr: np.ndarray
    dispersion: float

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


def _objective(s: np.ndarray, games: Games, prior: np.ndarray) -> tuple[float, np.ndarray]:
    d = s[games.first] - s[games.second]
    n = BATTLES * games.weight
    y = games.share
    loss = -(n * (y * log_expit(d) + (1 - y) * log_expit(-d))).sum()
    residual = n * (expit(d) - y)  # d loss / d d
    grad = np.bincount(games.first, residual, len(s)) - np.bincount(
        games.second, residual, len(s)
    ).astype(float)
    loss += 0.5 * ((s - prior) ** 2).sum() / PRIOR_SD**2
    grad += (s - prior) / PRIOR_SD**2
    return float(loss), grad


def _information(s: np.ndarray, games: Games, dispersion: float) -> np.ndarray:
    """The information of the ratings: the jousts' Fisher information over
    the dispersion (quasi-likelihood), plus the prior's."""
    p = expit(s[games.first] - s[games.second])
    information = BATTLES * games.weight * p * (1 - p) / dispersion
    matrix = np.diag(np.full(games.size, 1 / PRIOR_SD**2))
    np.add.at(matrix, (games.first, games.first), information)
    np.add.at(matrix, (games.second, games.second), information)
    np.add.at(matrix, (games.first, games.second), -information)
    np.add.at(matrix, (games.second, games.first), -information)
    return matrix


def centred_variance(covariance: np.ndarray) -> np.ndarray:
    """Var(s_a - mean(s)): ratings only mean something against each other,
    so the uncertainty of their common level is left out."""
    return np.diag(covariance) - 2 * covariance.mean(axis=1) + covariance.mean()


def _hessian_product(s: np.ndarray, v: np.ndarray, games: Games) -> np.ndarray:
    p = expit(s[games.first] - s[games.second])
    flow = BATTLES * games.weight * p * (1 - p) * (v[games.first] - v[games.second])
    product = np.bincount(games.first, flow, len(s)) - np.bincount(games.second, flow, len(s))
    return product + v / PRIOR_SD**2


def fit(
    games: Games,
    prior: np.ndarray | None = None,
    start: np.ndarray | None = None,
    exact_errors: bool = True,
) -> Ratings:
    """The maximum a posteriori ratings and their quasi-likelihood errors
    (`exact_errors=False`: from the diagonal of the information only, which
    ignores the opponents' uncertainty; quick, for steering the pairing)."""
    prior = np.zeros(games.size) if prior is None else prior
    start = prior if start is None else start
    result = minimize(
        _objective, start, args=(games, prior), jac=True, method="Newton-CG",
        hessp=lambda s, v, *_: _hessian_product(s, v, games),
    )  # fmt: skip
    s = result.x
    dispersion = _dispersion(games, expit(s[games.first] - s[games.second]))
    information = _information(s, games, dispersion)
    if exact_errors:
        variance = centred_variance(np.linalg.inv(information))
    else:
        variance = 1 / np.diag(information)
    return Ratings(s, np.sqrt(np.maximum(variance, 0)), dispersion)


def _dispersion(games: Games, p: np.ndarray) -> float:
    """Pearson chi2 of the jousts over their degrees of freedom (at least 1)."""
    real = games.real
    freedom = real.sum() - games.size
    if freedom < 10:
        return 1.0 + BATTLES / 2  # too few jousts to tell: assume very lumpy
    pearson = (BATTLES * (games.share[real] - p[real]) ** 2 / (p[real] * (1 - p[real]))).sum()
    return max(float(pearson / freedom), 1.0)
