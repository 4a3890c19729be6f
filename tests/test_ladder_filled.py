"""The ladder's implicit round robin (hill.ladder.filled) and the other
pieces that keep a refit below O(N^3), against their dense definitions."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import check_grad
from scipy.special import expit

from hill.ladder import estimate, filled, ladder, pairing
from hill.ladder.filled import BATTLES, Filled
from hill.ladder.ratings import Games, Posterior, centred_variance
from hill.rules import scoring, statistics

RNG = np.random.default_rng(12)


def random_filled(n: int, jousts: int, rank: int = 6, seed: int = 0) -> Filled:
    """A model with random logit factors and tie rates, and `jousts` random
    distinct pairs played with random wins (ties the rest)."""
    rng = np.random.default_rng(seed)
    pairs = {tuple(sorted(rng.choice(n, 2, replace=False))) for _ in range(4 * jousts)}
    first, second = np.array(sorted(pairs)[:jousts]).T
    won = rng.integers(0, BATTLES + 1, len(first))
    lost = rng.integers(0, BATTLES - won + 1)
    return Filled(
        rng.normal(size=(n, rank)), rng.normal(size=(n, rank)), rng.uniform(0.1, 0.6, n),
        first, second, np.stack([won, lost], axis=1).astype(float),
    )  # fmt: skip


def dense(f: Filled) -> np.ndarray:
    """W formed entry by entry from its definition."""
    n = f.size
    share = expit(f.left @ f.right.T)
    w = BATTLES * np.maximum(share - np.outer(f.tie, f.tie) / 2, 0)
    w[f.first, f.second], w[f.second, f.first] = f.wins[:, 0], f.wins[:, 1]
    w[np.arange(n), np.arange(n)] = 0
    return w


def test_a_product_in_blocks_of_rows_is_the_dense_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filled, "BLOCK_CELLS", 7 * 50)  # 7 rows a block: the last one short
    f = random_filled(50, 200)
    w = dense(f)
    x = RNG.normal(size=(50, 3))
    wins, lost = f.product(x, lost=True)
    assert wins == pytest.approx(w @ x, abs=1e-9)
    assert lost == pytest.approx(w.sum(axis=0), abs=1e-9)


@pytest.mark.parametrize("skeleton", [100, 6])  # the model whole (dense), a skeleton of 6 + 12
def test_markov_of_the_implicit_matrix_is_the_hills(
    monkeypatch: pytest.MonkeyPatch, skeleton: int
) -> None:
    monkeypatch.setattr(filled, "SKELETON", skeleton)
    monkeypatch.setattr(filled, "WHOLE_UP_TO", 0)
    f = random_filled(80, 600, rank=2)
    w = dense(f)
    expected = scoring.markov(w, BATTLES) / 1000
    solution = f.markov(tolerance=1e-12)
    assert solution.p == pytest.approx(expected, abs=1e-12)
    assert solution.lost == pytest.approx(w.sum(axis=0))


def test_a_periodic_pool_has_the_hills_markov(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two programs that beat everyone else and each other in turn (a chain
    that alternates between them) and a third that wins nothing: the
    damped iteration settles where the hill's dense solve does."""
    monkeypatch.setattr(filled, "SKELETON", 1)  # the iterative path, on 3 programs
    monkeypatch.setattr(filled, "WHOLE_UP_TO", 0)
    wins = np.array([[2.0, 0.0], [42.0, 0.0], [40.0, 0.0]])  # 0-1, 0-2, 1-2 from first's side
    f = Filled(
        np.zeros((3, 1)), np.zeros((3, 1)), np.zeros(3), np.array([0, 0, 1]), np.array([1, 2, 2]),
        wins,
    )  # fmt: skip
    w = dense(f)
    expected = scoring.markov(w, BATTLES) / 1000
    assert f.markov(tolerance=1e-13).p == pytest.approx(expected, abs=1e-9)


def test_a_moved_strength_is_the_balance_of_the_dense_matrix_with_that_row_and_column_moved(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Filled.moved: for each program, W with its own model entries moved
    (its wins' logits by +shift, its losses' by -shift), the others' p held:
    (W p)_b / column sum b; at shift 0, markov's p (W p = lost * p)."""
    monkeypatch.setattr(filled, "BLOCK_CELLS", 7 * 40)  # blocks of 7 rows
    f = random_filled(40, 300, seed=5)
    p = f.markov(tolerance=1e-13).p
    assert f.moved(p, np.zeros(40)) == pytest.approx(p, abs=1e-9)
    shift = RNG.normal(size=40)
    played = np.zeros((40, 40), dtype=bool)
    played[f.first, f.second] = played[f.second, f.first] = True
    np.fill_diagonal(played, True)
    w = dense(f)
    logit = f.left @ f.right.T
    expected = np.empty(40)
    for b in range(40):
        moved = w.copy()
        row = BATTLES * np.maximum(expit(logit[b] + shift[b]) - f.tie[b] * f.tie / 2, 0)
        column = BATTLES * np.maximum(expit(logit[:, b] - shift[b]) - f.tie * f.tie[b] / 2, 0)
        moved[b, ~played[b]], moved[~played[:, b], b] = row[~played[b]], column[~played[:, b]]
        expected[b] = (moved @ p)[b] / moved[:, b].sum()
    assert f.moved(p, shift) == pytest.approx(expected, rel=1e-9)


def test_the_response_is_the_derivative_of_markov(monkeypatch: pytest.MonkeyPatch) -> None:
    """Move one played joust's wins by a little: p moves by the response to
    the change of W p - lost * p that the move makes (first order)."""
    for skeleton in (100, 8):
        monkeypatch.setattr(filled, "SKELETON", skeleton)
        monkeypatch.setattr(filled, "WHOLE_UP_TO", 0)
        f = random_filled(60, 400, rank=2, seed=3)
        solution = f.markov(tolerance=1e-13)
        k, step = 17, 1e-4
        a, b, p = f.first[k], f.second[k], solution.p
        moved = f.wins.copy()
        moved[k, 0] += step
        change = np.zeros(60)  # W[a, b] grows: a's inflow by p_b, b's battles lost by 1
        change[a], change[b] = step * p[b], -step * p[b]
        after = Filled(f.left, f.right, f.tie, f.first, f.second, moved).markov(tolerance=1e-13)
        predicted = solution.response(change[:, None], tolerance=1e-12)[:, 0]
        assert after.p - p == pytest.approx(predicted, abs=1e-5 * step)


def test_the_bootstrap_rescores_each_resample_to_first_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A ladder of 30 programs: the resampled scores of draws near one
    (every configuration once, then a little more of one) agree with the
    estimate's markov recomputed on those wins, to first order."""
    n, rng = 30, np.random.default_rng(5)
    strength = rng.normal(size=n)
    pool = ladder.Ladder(n)

    def play(pairs: list[tuple[int, int]]) -> list[ladder.JoustResult]:
        return [
            ladder.JoustResult(tuple(rng.choice([-1, 0, 1], 42, p=_odds(a, b)).tolist()))
            for a, b in pairs
        ]

    def _odds(a: int, b: int) -> list[float]:
        win = expit(strength[a] - strength[b])
        return [0.9 * (1 - win), 0.1, 0.9 * win]

    result = ladder.run(pool, play, 180, seed=2)
    record = pool.record()
    draws = np.ones((2, BATTLES))
    draws[1, 5] += 1e-3
    scores = ladder.resampled_scores(result.estimate, record, draws)
    assert scores[0] == pytest.approx(result.estimate.score, abs=1e-9)
    # configuration 5 counted 1.001 times: each played joust's wins move accordingly
    f = result.estimate.filled
    o = record.outcomes[:, 5]
    moved = f.wins + 1e-3 * np.stack([o == 1, o == -1], axis=1)
    again = Filled(f.left, f.right, f.tie, f.first, f.second, moved).markov(tolerance=1e-13)
    assert scores[1] - scores[0] == pytest.approx(
        1000 * (again.p - result.estimate.solution.p), abs=1e-7
    )


def test_draws_scorers_give_the_bootstraps_rank_intervals() -> None:
    """On a full hill, a draws scorer that rescores each resample exactly
    gives the rank intervals of the battle-wins bootstrap."""
    r = np.sign(RNG.normal(size=(6, 6, 42)) + np.linspace(-1, 1, 6)[:, None, None]).astype(int)
    r = np.triu(r.transpose(2, 0, 1), 1).transpose(1, 2, 0)
    r = r - r.transpose(1, 0, 2)
    record = statistics.Record.full(r)
    scorer = statistics.method_scorer("markov")

    def by_draws(draws: np.ndarray) -> np.ndarray:
        wins = (record.outcomes == 1).astype(float) @ draws.T
        losses = (record.outcomes == -1).astype(float) @ draws.T
        return scorer(record.wins_matrix(wins.T, losses.T))

    order = np.argsort(-scoring.markov(scoring.battle_wins(r), 42), kind="stable")
    direct = statistics.compute(record, order, scorer)
    drawn = statistics.compute(record, order, None, draws_scorer=by_draws)
    assert (direct.rank_low == drawn.rank_low).all() and (direct.rank_high == drawn.rank_high).all()


def test_the_model_objective_has_its_gradient() -> None:
    n, k = 9, estimate.COMPONENTS
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if (a + b) % 3]
    first, second = np.array(pairs).T
    games = Games(n, first, second, RNG.uniform(0, 1, len(pairs)), np.ones(len(pairs)), first > -1)
    objective = estimate._Objective(
        games, RNG.normal(size=n), np.full(len(pairs), 3.0), (np.zeros(n), 1.5), 2.0
    )
    theta = RNG.normal(size=n * (2 + 2 * k)) * 0.5
    assert check_grad(lambda t: objective(t)[0], lambda t: objective(t)[1], theta) < 1e-5
    # the loss is the binomial deviance of the logits left . right
    left, right = estimate._Terms.unpack(theta, n).factors(objective.g)
    d = (left[first] * right[second]).sum(axis=1)
    y, t = games.share, estimate._Terms.unpack(theta, n)
    deviance = -3.0 * (y * np.log(expit(d)) + (1 - y) * np.log(expit(-d))).sum()
    prior = 0.5 * (t.s**2).sum() / 1.5**2 + (t.c**2).sum() + (t.x**2).sum() + (t.z**2).sum()
    assert objective(theta)[0] == pytest.approx(deviance + prior)


def test_the_ratings_hessian_and_its_diagonal() -> None:
    n = 12
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if (a * b) % 4 != 1]
    first, second = np.array(pairs).T
    games = Games(n, first, second, RNG.uniform(0, 1, len(pairs)), np.ones(len(pairs)), first > -1)
    posterior = Posterior(games, np.zeros(n), 1.3, 2.0)
    s, v = RNG.normal(size=n), RNG.normal(size=n)
    information = posterior.information(s)
    assert posterior.hessian_product(s, v) == pytest.approx(information @ v)
    assert posterior.information_diagonal(s) == pytest.approx(np.diag(information))


def test_the_second_order_variance_is_close_on_a_big_sparse_pool() -> None:
    """400 programs, 20 random opponents each, ratings spread as on a hill:
    the second-order variance of each rating (which a pool beyond
    EXACT_ERRORS_UP_TO gets) is within a few percent of the exact one, and
    closer than the diagonal's."""
    n, rng = 400, np.random.default_rng(8)
    pairs = {tuple(sorted(rng.choice(n, 2, replace=False))) for _ in range(n * 12)}
    first, second = np.array(sorted(pairs)[: n * 10]).T
    s = rng.normal(size=n) * 1.5
    share = expit(s[first] - s[second])
    games = Games(n, first, second, share, np.ones(len(first)), first > -1)
    posterior = Posterior(games, np.zeros(n), 1.5, 10.0)
    exact = centred_variance(np.linalg.inv(posterior.information(s)))
    error = np.sqrt(posterior.approximate_variance(s) / exact) - 1
    diagonal = np.sqrt(1 / posterior.information_diagonal(s) / exact) - 1
    assert np.sqrt((error**2).mean()) < 0.03 and np.abs(error).max() < 0.1
    assert np.sqrt((error**2).mean()) < np.sqrt((diagonal**2).mean())


def test_battle_shares_are_bradley_terrys_rows() -> None:
    rating = RNG.normal(size=7)
    shares = pairing.BattleShares(rating)
    full = expit(rating[:, None] - rating[None, :])
    assert (shares[3] == full[3]).all()
    assert (shares[3, np.array([0, 5])] == full[3, [0, 5]]).all()


def test_the_crowd_counts_as_the_pairwise_comparison_does() -> None:
    """Ties, zero errors and ratings rounded to a few values included."""
    rng = np.random.default_rng(1)
    for trial in range(200):
        n = int(rng.integers(1, 40))
        rating = np.round(rng.normal(size=n), int(rng.integers(0, 3)))
        stderr = np.abs(rng.normal(size=n)) * rng.choice([0, 0.5, 1, 3])
        state = pairing.PairingState(
            np.eye(n, dtype=bool), np.zeros(n), rating, stderr, np.ones(n), np.zeros((n, n))
        )
        pairwise = np.abs(rating[:, None] - rating[None, :]) < stderr[:, None]
        assert (state.crowd == pairwise.sum(axis=1)).all(), trial
