"""The round robin's battle-wins matrix filled in by a model, never formed.

The markov estimate (hill.ladder.estimate) and its quick version between
rounds (hill.ladder.ladder) fill the round robin's battle-wins matrix W
with the jousts played and, for every other pair, the battles a model of
the matchups expects a to win against b:

    BATTLES * max(sigmoid(left[a] . right[b]) - tie[a] * tie[b] / 2, 0)

a logistic model whose logits are a low-rank product (Bradley-Terry's
s_a - s_b is (s_a, 1) . (1, -s_b)), less half the expected ties (tie[a]^2
is a's tie rate).  On 10,000 programs W has 10^8 entries (800 MB); here it
is only multiplied, a block of rows at a time: a product costs O(N^2)
arithmetic and O(N) memory per row of a block, and nothing costs O(N^3).

- `Filled.markov`: markov's stationary distribution (hill.scoring.markov:
  W p = lost * p, lost the column sums of W, sum p = 1) by defect
  correction.  An approximate W~ keeps the played entries and the
  diagonal exact and replaces the model by its skeleton (CUR: SKELETON
  sampled columns and twice as many rows): a W~ product costs
  O(N SKELETON + jousts).  Each exact product measures the residual
  W p - lost * p, and a solve with W~ corrects p by it; each round divides
  the error by about |W - W~| over the chain's spectral gap (10^-3 on
  ladders of 1,000 to 10,000 programs), so two exact products reach 10^-8
  and three 10^-11, where one dense solve cost O(N^3).  A pool of at most
  WHOLE_UP_TO programs (or 2 SKELETON) has its model held whole: W is
  formed, and solved by the hill's own markov, exactly (1,200 programs: 11
  MB and a tenth of a second, where the skeleton's solves took seconds).
  Where W~ is too far from W (a degenerate pool: programs that win or lose
  everything, pairs all ties), a W~ iteration grows instead of settling:
  it stops where it was, before any overflow, and the exact products go on
  correcting p (a dense, degenerate archive once gave NaN probabilities).
- `Solution.response`: how p moves when the played wins move (first order,
  through W~), for the bootstrap of the rank intervals
  (hill.ladder.ladder.resampled_scores).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.sparse import csr_matrix

from hill.rules import scoring

Index = slice | np.ndarray

BATTLES = 42
SKELETON = 300  # columns of the model's skeleton (and twice as many rows)
# markov stops after a correction that moves p by less (sum of |change|):
# what is left is a thousandth of that on the ladder's pools
TOLERANCE = 1e-5
BLOCK_CELLS = 1 << 21  # entries of W computed at once (16 MB)
_PASSES = 12  # exact products at most (each divides the error by ~1000)
_INNER = 2000  # iterations of a W~ solve at most (each divides the error by ~7)
_SETTLED = 1e-7  # a W~ solve stops when a step moves its answer by less (relative)
_DAMPING = 0.9  # a W~ iteration's step: less than 1, so that a periodic chain converges
# a W~ iteration whose step grows past this many times its first is diverging
_GROWN = 10.0
# W is held whole (formed, N^2 entries: 32 MB at 2,000) up to this many programs
WHOLE_UP_TO = 2000
# battles lost below this are none: a column sum of W on the played pairs is
# the model's values less themselves, 1e-14 where nothing was lost
LOST_NOTHING = 1e-9


@dataclass(frozen=True)
class Filled:
    """W: the played jousts' battles won (first[k] against second[k]:
    wins[k, 0] to wins[k, 1], each pair at most once) and elsewhere the
    model's expected wins (see the module), 0 on the diagonal."""

    left: np.ndarray  # (N, R): the model's logit of a against b is left[a] . right[b]
    right: np.ndarray  # (N, R)
    tie: np.ndarray  # (N,) square roots of the tie rates
    first: np.ndarray  # (K,)
    second: np.ndarray  # (K,)
    wins: np.ndarray  # (K, 2)

    @property
    def size(self) -> int:
        return len(self.tie)

    def _shares(
        self, rows: Index, columns: Index = slice(None), out: np.ndarray | None = None
    ) -> np.ndarray:
        """The model's battle shares of programs `rows` against `columns`."""
        return _sigmoid(np.matmul(self.left[rows], self.right[columns].T, out=out))

    def _expected(
        self,
        share: np.ndarray,
        rows: Index,
        columns: Index = slice(None),
        work: np.ndarray | None = None,
    ) -> np.ndarray:
        """The model's expected battles won, over BATTLES, from its shares (in place)."""
        share -= np.multiply.outer(self.tie[rows] / 2, self.tie[columns], out=work)
        return np.maximum(share, 0, out=share)

    @cached_property
    def _exact(self) -> csr_matrix:
        """The sparse correction that makes the model's matrix exact on the
        played pairs and the diagonal: W is the model's expected wins plus
        it (an entry for each, even where it is 0)."""
        n = self.size
        diagonal = np.arange(n)
        rows = np.concatenate([self.first, self.second, diagonal])
        columns = np.concatenate([self.second, self.first, diagonal])
        logit = np.empty(len(rows))
        step = max(1, BLOCK_CELLS // self.left.shape[1])  # the factors' rows gathered at once
        for at in range(0, len(rows), step):
            part = slice(at, at + step)
            logit[part] = np.einsum("kr,kr->k", self.left[rows[part]], self.right[columns[part]])
        model = _sigmoid(logit)
        model -= self.tie[rows] * self.tie[columns] / 2
        np.maximum(model, 0, out=model)
        model *= -BATTLES
        model[: len(self.first)] += self.wins[:, 0]
        model[len(self.first) : 2 * len(self.first)] += self.wins[:, 1]
        return csr_matrix((model, (rows, columns)), shape=(n, n))  # played - model

    def _blocks(self) -> list[slice]:
        n = self.size
        step = max(1, BLOCK_CELLS // max(n, 1))
        return [slice(at, min(at + step, n)) for at in range(0, n, step)]

    def product(self, x: np.ndarray, lost: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
        """W x; with `lost`, the column sums of W (the battles each program
        lost).  One pass over W, a block of rows at a time in two buffers
        kept for the pass."""
        blocks = self._blocks()
        height = blocks[0].stop if blocks else 0
        share_rows, work_rows = np.empty((height, self.size)), np.empty((height, self.size))
        wins, columns = np.zeros_like(x), np.zeros(self.size)
        for rows in blocks:
            count = rows.stop - rows.start
            share = self._shares(rows, out=share_rows[:count])
            block = self._expected(share, rows, work=work_rows[:count])
            wins[rows] = block @ x
            if lost:
                columns += block.sum(axis=0)
        exact = self._exact
        wins = BATTLES * wins + exact @ x
        columns = BATTLES * columns + np.asarray(exact.sum(axis=0)).ravel()
        return wins, columns if lost else None

    def moved(self, p: np.ndarray, shift: np.ndarray) -> np.ndarray:
        """Each program b's markov balance with its own strength moved by
        shift[b], the others' p held: (W_b p) / (column sum of W at b),
        where b's model entries (the pairs it has not played) have their
        logits moved by +shift[b] (its wins) and -shift[b] (its losses).
        At shift 0 this is p itself (markov: W p = lost * p); it is what a
        program's score would be if its rating alone were elsewhere, exact
        in its own matchups where a first-order slope is not (a program
        that wins nothing had e^50).  One pass over W."""
        n, first, second, wins = self.size, self.first, self.second, self.wins
        inflow, lost = np.zeros(n), np.zeros(n)  # float even without a joust
        inflow += np.bincount(first, wins[:, 0] * p[second], n)
        inflow += np.bincount(second, wins[:, 1] * p[first], n)
        lost += np.bincount(second, wins[:, 0], n) + np.bincount(first, wins[:, 1], n)
        # the played pairs and the diagonal: where `_exact` holds its corrections
        pattern = self._exact
        blocks = self._blocks()
        height = blocks[0].stop if blocks else 0
        block_rows, work_rows = np.empty((height, n)), np.empty((height, n))
        for rows in blocks:
            count = rows.stop - rows.start
            part = pattern[rows]
            mask = (np.repeat(np.arange(count), np.diff(part.indptr)), part.indices)
            # b against each a (b's wins), then each a against b (b's losses)
            for factors, sign in (((self.left, self.right), 1.0), ((self.right, self.left), -1.0)):
                logit = np.matmul(factors[0][rows], factors[1].T, out=block_rows[:count])
                logit += sign * shift[rows, None]
                model = self._expected(_sigmoid(logit), rows, work=work_rows[:count])
                model[mask] = 0  # played, or the program itself
                if sign > 0:
                    inflow[rows] += BATTLES * (model @ p)
                else:
                    lost[rows] += BATTLES * model.sum(axis=1)
        return inflow / np.where(lost > 0, lost, 1.0)

    def skeleton(self, size: int | None = None) -> Skeleton:
        """W~ (see the module): the model's skeleton from the columns of
        `size` (SKELETON) sampled programs and the rows of twice as many
        (the model itself on a pool no larger).  The rows oversample the
        columns and the core's pseudo-inverse drops what is below 10^-4 of
        its largest singular value: a square, untruncated core amplifies
        the skeleton's error a hundredfold."""
        n = self.size
        size = SKELETON if size is None else size
        if 2 * size >= n or n <= WHOLE_UP_TO:
            model = [self._expected(self._shares(rows), rows) for rows in self._blocks()]
            return Skeleton(self._exact, BATTLES * np.vstack(model), None)
        rng = np.random.default_rng(0)
        drawn = rng.choice(n, 2 * size, replace=False)
        columns, rows = np.sort(drawn[:size]), np.sort(drawn)
        left = self._expected(self._shares(slice(None), columns), slice(None), columns)
        right = self._expected(self._shares(rows), rows)
        core = np.linalg.pinv(left[rows], rcond=1e-4)
        return Skeleton(self._exact, BATTLES * left, core @ right)

    def markov(self, tolerance: float = TOLERANCE) -> Solution:
        """markov's stationary distribution of W (see the module)."""
        approx = self.skeleton()
        if approx.rows is None:  # W fits in memory: the hill's own markov
            p = scoring.markov(approx.dense(), BATTLES) / 1000
            return Solution(p, np.asarray(approx.column_sums()), approx)
        p = approx.stationary(approx.column_sums())
        wins, lost = self.product(p, lost=True)  # the first pass's, with the battles lost
        assert lost is not None  # asked for
        if (lost <= LOST_NOTHING).any():
            return Solution(_degenerate(lost), lost, approx)
        mode = approx.stationary(lost, p)  # W~'s own, with the exact battles lost
        moved = np.inf
        for done in range(_PASSES):
            if done > 0:
                wins = self.product(p)[0]
            step = approx.solve(lost, (wins - lost * p)[:, None], mode, _SETTLED)[:, 0]
            if not np.abs(step).sum() < moved:  # W~ too far from W: the corrections grow
                p = stationary(lambda x: self.product(x)[0], lost, mode)
                return Solution(p, lost, approx)
            p, moved = p + step, np.abs(step).sum()
            if moved <= tolerance:
                break
        return Solution(p, lost, approx)


def _sigmoid(block: np.ndarray) -> np.ndarray:
    """sigmoid of the logits, in place."""
    np.negative(block, out=block)
    with np.errstate(over="ignore"):  # exp(710) is inf: a share of 0, as it should be
        np.exp(block, out=block)
    block += 1
    return np.reciprocal(block, out=block)


def stationary(
    product: Callable[[np.ndarray], np.ndarray], lost: np.ndarray, start: np.ndarray | None = None
) -> np.ndarray:
    """p with W p = lost p and sum p = 1 (W x = product(x)), by the damped
    power iteration of the chain (its second eigenvalue is about 0.15 on
    the ladder's pools: each step gains nearly a digit; the damping keeps a
    periodic part of a pool from oscillating).  With W~, markov's first
    guess; with W itself, its answer where W~ is too far from W to correct
    it (a degenerate pool)."""
    n = len(lost)
    p = np.full(n, 1 / n) if start is None else start
    lost = np.where(lost > 0, lost, 1.0)
    for _ in range(_INNER):
        following = np.maximum(product(p) / lost, 0)
        following = (1 - _DAMPING) * p + _DAMPING * following / max(following.sum(), 1e-300)
        change = np.abs(following - p).sum()
        p = following
        if change <= _SETTLED:
            break
    return p


def _degenerate(lost: np.ndarray) -> np.ndarray:
    """markov where some program lost no battle (hill.scoring.markov's
    answer): alone, it keeps everything; with others, no one is preferred."""
    unbeaten = lost <= LOST_NOTHING
    if unbeaten.sum() == 1:
        return unbeaten.astype(float)
    return np.full(len(lost), 1 / len(lost))


@dataclass(frozen=True)
class Skeleton:
    """W~ = columns @ rows + exact (rows None: columns is the model itself,
    and W~ is W)."""

    exact: csr_matrix
    columns: np.ndarray
    rows: np.ndarray | None

    def dense(self) -> np.ndarray:
        """W itself, on a pool small enough for its model to be held whole."""
        assert self.rows is None
        return self.columns + self.exact.toarray()

    def product(self, x: np.ndarray) -> np.ndarray:
        model = self.columns @ x if self.rows is None else self.columns @ (self.rows @ x)
        return model + self.exact @ x

    def column_sums(self) -> np.ndarray:
        ones = np.ones(len(self.columns))
        model = ones @ self.columns if self.rows is None else (ones @ self.columns) @ self.rows
        return model + np.asarray(self.exact.sum(axis=0)).ravel()

    def stationary(self, lost: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
        """p with W~ p = lost p and sum p = 1 (the module's `stationary`)."""
        return stationary(self.product, lost, start)

    def solve(
        self, lost: np.ndarray, change: np.ndarray, mode: np.ndarray, tolerance: float
    ) -> np.ndarray:
        """x with (W~ - diag(lost)) x = -change, the columns of x summing to
        0.  Dense (hill.scoring.markov's system) when W~ is W; otherwise the
        damped iteration x <- (W~ x + change) / lost, the chain's own
        direction `mode` (its stationary p) taken out at each step."""
        if self.rows is None:
            system = self.dense() - np.diag(lost)
            system[-1] = 1
            rhs = -change
            rhs[-1] = 0
            try:
                return np.linalg.solve(system, rhs)
            except np.linalg.LinAlgError:  # not unique (see _degenerate): no response
                return np.zeros_like(change)
        x = np.zeros_like(change)
        scale = np.abs(change / lost[:, None]).sum(axis=0)
        for _ in range(_INNER):
            following = (self.product(x) + change) / lost[:, None]
            following = (1 - _DAMPING) * x + _DAMPING * following
            following -= np.multiply.outer(mode, following.sum(axis=0))
            moved = np.abs(following - x).sum(axis=0)
            if not np.isfinite(moved).all() or (moved > _GROWN * scale).any():
                break  # W~ too far from W for this pool: the iteration grows (see the module)
            x = following
            if (moved <= tolerance * np.maximum(scale, 1e-300)).all():
                break
        return x


@dataclass(frozen=True)
class Solution:
    """markov of a filled matrix: p (summing to 1), the battles each program
    lost (column sums of W) and the W~ it was solved with."""

    p: np.ndarray
    lost: np.ndarray
    skeleton: Skeleton

    def response(self, change: np.ndarray, tolerance: float = 1e-4) -> np.ndarray:
        """(N, C): to first order, how p moves for each column of `change`
        (N, C), the change of W p - lost * p at p when the played wins move."""
        return self.skeleton.solve(self.lost, change, self.p, tolerance)
