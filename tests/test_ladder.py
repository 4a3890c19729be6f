"""The ladder's rules (ratings, pairing, seeding, estimate) on hand-made data,
and the ladder over real programs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import expit, logit
from scipy.stats import norm, spearmanr
from support.reference import REFERENCE

from hill import engine
from hill.engine import JoustResult, arena
from hill.engine.varied import reference_outcomes
from hill.ladder import estimate, ladder, pairing, seeding
from hill.ladder.ratings import MIN_SPREAD, Games, Posterior, fit
from hill.play.ladder import arena_player
from hill.rules import scoring


def games(size: int, rows: list[tuple[int, int, float]], weight: float = 1.0) -> Games:
    first, second, share = (np.array(x) for x in zip(*rows, strict=True))
    ones = np.ones(len(rows))
    return Games(size, first, second, share.astype(float), weight * ones, ones > 0)


def test_two_programs_rate_their_log_odds_less_the_prior_pull() -> None:
    """One joust, A takes 3/4 of the battles.  Without a prior s_A - s_B =
    logit(3/4) = ln 3.  With the prior N(0, 3^2), dispersion 1 and
    s_A = -s_B = d/2 by symmetry, the MAP solves
    42 (sigmoid(d) - 3/4) + (d/2) / 9 = 0."""
    one = games(2, [(0, 1, 0.75)])
    s = Posterior(one, np.zeros(2), 3.0, 1.0).maximise(np.zeros(2))
    expected = brentq(lambda d: 42 * (expit(d) - 0.75) + d / 2 / 3**2, 0, 5)
    assert s[0] - s[1] == pytest.approx(expected, abs=1e-6) and expected < logit(0.75)
    # with dispersion 2 the joust counts half: 21 (sigmoid(d) - 3/4) + (d/2) / 9 = 0
    s = Posterior(one, np.zeros(2), 3.0, 2.0).maximise(np.zeros(2))
    half = brentq(lambda d: 21 * (expit(d) - 0.75) + d / 2 / 3**2, 0, 5)
    assert s[0] - s[1] == pytest.approx(half, abs=1e-6) and half < expected
    ratings = fit(one)
    assert 0 < ratings.rating[0] - ratings.rating[1] < expected
    assert ratings.rating.sum() == pytest.approx(0, abs=1e-9)


def test_a_cycle_rates_everyone_equal_and_intervals_hold_the_rating() -> None:
    """A beats B, B beats C, C beats A, each 3/4: by symmetry all equal."""
    ratings = fit(games(3, [(0, 1, 0.75), (1, 2, 0.75), (2, 0, 0.75)] * 4))
    assert ratings.rating == pytest.approx([0, 0, 0], abs=1e-6)
    assert (ratings.low < ratings.rating).all() and (ratings.rating < ratings.high).all()


PAIRS = [(a, b) for a in range(12) for b in range(a + 1, 12)]


def test_lumpy_jousts_are_overdispersed_and_count_less() -> None:
    """Mean share 1/2 both ways: jousts all-or-nothing (0 or 1) are
    overdispersed, jousts of about 1/2 are not; the information of the
    ratings (the quasi-likelihood's) is the binomial one over the dispersion."""
    rng = np.random.default_rng(1)
    lumpy = games(12, [(a, b, float(rng.integers(0, 2))) for a, b in PAIRS])
    smooth = games(12, [(a, b, 0.5 + rng.uniform(-0.05, 0.05)) for a, b in PAIRS])
    assert fit(lumpy).dispersion > 10 * fit(smooth).dispersion
    s = np.zeros(12)
    binomial = Posterior(lumpy, s, 1e9, 1.0).information(s)
    assert Posterior(lumpy, s, 1e9, 7.0).information(s) == pytest.approx(binomial / 7)


def test_the_prior_is_as_wide_as_the_ratings_spread() -> None:
    """Shares from true ratings spread 1.5 apart give a prior about that
    wide; shares that say nothing (1/2 everywhere) give the narrowest."""
    truth = np.linspace(-1.5, 1.5, 12)
    spread = games(12, [(a, b, expit(truth[a] - truth[b])) for a, b in PAIRS])
    assert fit(spread).spread == pytest.approx(np.std(truth), rel=0.1)
    flat = games(12, [(a, b, 0.5) for a, b in PAIRS])
    assert fit(flat).spread == MIN_SPREAD


def state(n: int, met: list[tuple[int, int]] = (), jousts: list[int] | None = None):
    is_met = np.eye(n, dtype=bool)
    for a, b in met:
        is_met[a, b] = is_met[b, a] = True
    rating = np.linspace(2, -2, n)  # program 0 is the best
    return pairing.PairingState(
        is_met,
        np.array(jousts if jousts is not None else [10] * n),
        rating,
        np.full(n, 0.3),
        np.linspace(30, 1, n),
        expit(rating[:, None] - rating[None, :]),
    )


def test_paulson_rank_distance_is_normal_with_sigma_3_never_zero() -> None:
    rng = np.random.default_rng(0)
    draws = np.array([pairing.rank_distance(rng) for _ in range(20000)])
    assert (draws != 0).all()
    assert abs(draws.mean()) < 0.06
    # a rounded N(0, 3) without its zeros: sd sqrt(E[R^2] / P(R != 0))
    r = np.arange(-30, 31)
    p = norm.cdf(r + 0.5, scale=3) - norm.cdf(r - 0.5, scale=3)
    expected = (((r**2) * p).sum() / (1 - p[r == 0].sum())) ** 0.5
    assert draws.std() == pytest.approx(expected, rel=0.03)
    counts = Counter(np.abs(draws).tolist())
    assert counts[1] > counts[3] > counts[6] > counts[9]


def test_paulson_pairs_the_neediest_first_and_the_top_only_looks_down() -> None:
    rng = np.random.default_rng(2)
    jousts = [0] + [5] * 19
    for _ in range(200):
        pairs = pairing.paulson_round(state(20, jousts=jousts), 1, rng)
        assert len(pairs) == 1 and pairs[0][0] == 0 and pairs[0][1] > 0
    # a round: each program once, never a pair that met
    met = [(0, 1), (0, 2), (3, 4)]
    for _ in range(50):
        pairs = pairing.paulson_round(state(20, met=met), 10, rng)
        flat = [p for pair in pairs for p in pair]
        assert len(flat) == len(set(flat))
        assert not {tuple(sorted(p)) for p in pairs} & set(met)


def test_paulson_by_cost_keeps_the_cheap_candidate() -> None:
    """Every candidate but program 19 costs 1000 times more cycles."""
    rng = np.random.default_rng(3)
    cost = np.full((20, 20), 1000.0)
    cost[:, 19] = cost[19, :] = 1.0
    picked = Counter()
    for _ in range(300):
        (a, b), *_ = pairing.paulson_round(
            state(20, jousts=[0 if i == 16 else 5 for i in range(20)]), 1, rng, cost
        )
        assert a == 16  # the one that needs games
        picked[b] += 1
    assert picked.most_common(1)[0][0] == 19


def test_markov_round_draws_strong_opponents_more() -> None:
    """After the warm-up, opponents come in proportion to sqrt(score) H(p);
    with equal ratings (H = 1 bit everywhere) to sqrt(score)."""
    rng = np.random.default_rng(4)
    flat = state(10)
    flat = pairing.PairingState(
        flat.met, flat.jousts, np.zeros(10), flat.stderr, np.array([100.0] + [1.0] * 9),
        np.full((10, 10), 0.5),
    )  # fmt: skip
    opponents = Counter()
    for _ in range(3000):
        (a, b), *_ = pairing.markov_round(flat, 1, rng)
        if a != 0:
            opponents[b] += 1
    # sqrt(100) = 10 against 1 for each of the 8 others: 10/18 of the draws
    assert opponents[0] / sum(opponents.values()) == pytest.approx(10 / 18, abs=0.04)


def test_markov_round_warms_up_with_random_opponents_once_each() -> None:
    rng = np.random.default_rng(5)
    pairs = pairing.markov_round(state(12, jousts=[0] * 12), 6, rng)
    flat = [p for pair in pairs for p in pair]
    assert len(pairs) == 6 and sorted(flat) == list(range(12))


def test_a_new_version_starts_just_above_its_previous_one() -> None:
    """Program 0 (the old version) has a record against 2..7; program 1, its
    new version, has only the virtual 2 wins and 1 loss against it: it
    rates above 0, by less than logit(2/3) (its prior is centred on 0's rating)."""
    pool = ladder.Ladder(8, virtual=[seeding.new_version(1, 0)])
    truth = {0: 1.5, 2: 1.0, 3: 0.5, 4: 0.0, 5: -0.5, 6: -1.0, 7: -1.5}
    for a in truth:
        for b in truth:
            if a < b:
                won = round(42 * expit(truth[a] - truth[b]))
                pool.add(a, b, JoustResult((1,) * won + (-1,) * (42 - won)))
    ratings = ladder.rate(pool)
    assert ratings.rating[0] > 0.3  # a strong old version...
    gap = ratings.rating[1] - ratings.rating[0]
    assert 0.1 < gap < logit(2 / 3)  # ...and its new version just above it


def test_virtual_results_fade_and_go_when_the_real_joust_is_played() -> None:
    """Weight 3 x 3 / (3 + g) after g real jousts; 0 once the pair met."""
    virtual = [seeding.new_version(1, 0)]
    met = np.eye(4, dtype=bool)
    assert seeding.weights(virtual, np.array([0, 0, 0, 0]), met) == pytest.approx([3])
    assert seeding.weights(virtual, np.array([0, 3, 0, 0]), met) == pytest.approx([1.5])
    assert seeding.weights(virtual, np.array([0, 30, 0, 0]), met) == pytest.approx([9 / 33])
    met[0, 1] = met[1, 0] = True
    assert seeding.weights(virtual, np.array([1, 1, 0, 0]), met) == pytest.approx([0])


def reference_pool(names: list[str]) -> tuple[np.ndarray, list[engine.Program]]:
    """The round robin of some reference programs from results.txt, and the programs."""
    programs = [engine.compile_program((REFERENCE / "warriors" / n).read_bytes()) for n in names]
    return reference_outcomes(names), programs


WIKI = [n for n in (REFERENCE / "index.txt").read_text().split() if n.startswith("wiki/")]


def test_a_giant_killer_is_expected_to_beat_the_strong_program_it_has_not_met(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Six programs in a strict order (each takes 0.9 of the battles from
    every weaker one) and a seventh that beats the top three and loses to
    the bottom three, but has not met the second.  Bradley-Terry alone sees
    three wins and three losses and calls that joust even or worse; the
    matchup model's slope against opponent strength expects the seventh to
    win it: with the free components off, the slope alone does."""
    monkeypatch.setattr(estimate, "COMPONENTS", 0)
    rows = [(i, j, 0.9) for i in range(6) for j in range(i + 1, 6)]
    rows += [(6, j, 0.9 if j < 3 else 0.1) for j in (0, 2, 3, 4, 5)]
    pool = games(7, rows)
    ratings = fit(pool)
    share = estimate.matchup_shares(pool, ratings, np.zeros(7), seed=0)
    assert ratings.win_probability()[6, 1] <= 0.5
    assert share[6, 1] > 0.6
    assert share[1, 6] == pytest.approx(1 - share[6, 1])


def test_with_every_pair_played_the_estimate_is_markov() -> None:
    r, programs = reference_pool(WIKI)
    pool = ladder.Ladder(len(WIKI))
    result = ladder.run(pool, arena_player(arena.Arena(), programs), 10_000, seed=1)
    assert pool.played == len(WIKI) * (len(WIKI) - 1) // 2
    # the jousts played are the reference ones, and markov is the round robin's
    record = pool.record()
    assert (record.outcomes == r[record.pairs[:, 0], record.pairs[:, 1]]).all()
    markov = scoring.markov(scoring.battle_wins(r), engine.BATTLES)
    assert result.estimate.score == pytest.approx(markov, abs=1e-9)
    assert (result.estimate.low <= result.estimate.score + 1e-9).all()


def test_a_budget_plays_that_many_distinct_pairs() -> None:
    _, programs = reference_pool(WIKI)
    pool = ladder.Ladder(len(WIKI))
    ladder.run(pool, arena_player(arena.Arena(), programs), ladder.budget_jousts(11, 0.3), seed=2)
    assert pool.played == 16  # 30% of 55 pairs, rounded down
    assert len({frozenset(p) for p in pool.record().pairs.tolist()}) == pool.played
    with pytest.raises(ValueError, match="within"):
        ladder.budget_jousts(11, 0)


def test_the_ladder_ranks_the_2013_hill_close_to_its_markov_ranking() -> None:
    """40% of the pairs of the 47-program hill: Spearman above 0.75 (the
    bench measures it properly; this only catches a ladder gone wrong)."""
    names = [n for n in (REFERENCE / "index.txt").read_text().split() if "20131008" in n]
    r, _ = reference_pool(names)

    def replay(pairs: list[tuple[int, int]]) -> list[JoustResult]:
        return [JoustResult(tuple(r[a, b].tolist())) for a, b in pairs]

    pool = ladder.Ladder(len(names))
    result = ladder.run(pool, replay, ladder.budget_jousts(len(names), 0.4), seed=3)
    rho = spearmanr(result.estimate.score, scoring.markov(scoring.battle_wins(r), 42))[0]
    print(f"Spearman at 40% of the 2013 hill: {rho:.3f}")
    assert rho > 0.75


def test_predicted_cost_learns_which_programs_make_long_games() -> None:
    """log cycles = 10 + c_a + c_b with c = (2, 0, 0, 0, -1): the ridge fit
    ranks the unplayed pair (0, 1) above (2, 4), and both near the truth."""
    c = np.array([2.0, 0, 0, 0, -1])
    pairs = [(a, b) for a in range(5) for b in range(a + 1, 5) if (a, b) not in {(0, 1), (2, 4)}]
    first, second = (np.array(x) for x in zip(*pairs, strict=True))
    cycles = np.exp(10 + c[first] + c[second])
    cost = pairing.predicted_cost(5, first, second, cycles)
    assert cost[0, 1] > cost[2, 4]
    assert np.log(cost[0, 1]) == pytest.approx(12, abs=0.8)
    assert np.log(cost[2, 4]) == pytest.approx(9, abs=0.8)


def test_paulson_takes_the_nearest_unmet_program_when_its_neighbours_are_used_up() -> None:
    """Program 0 has met everyone down to rank 13: R ~ Normal(0, 3) cannot
    reach further in 200 draws, so it meets the nearest one left, 13."""
    rng = np.random.default_rng(6)
    jousts = [0] + [5] * 19
    used_up = state(20, met=[(0, b) for b in range(1, 13)], jousts=jousts)
    assert pairing.paulson_round(used_up, 1, rng) == [(0, 13)]


def test_relative_crowd_counts_the_warming_up_as_the_mean() -> None:
    """Ratings 0, 0, 0, 5 (standard error 0.3): crowds 3, 3, 3, 1, mean 2.5;
    a fifth program still warming up counts as the mean whatever its crowd."""
    ratings = np.array([0.0, 0.0, 0.0, 5.0, 5.0])
    warm = pairing.PairingState(
        np.eye(5, dtype=bool), np.array([10, 10, 10, 10, 0]), ratings, np.full(5, 0.3),
        np.ones(5), np.full((5, 5), 0.5),
    )  # fmt: skip
    assert warm.crowd.tolist() == [3, 3, 3, 2, 2]
    # the mean is over the four warmed up: (3 + 3 + 3 + 2) / 4 = 2.75
    assert pairing.relative_crowd(warm) == pytest.approx([3 / 2.75] * 3 + [2 / 2.75, 1.0])


def test_markov_round_draws_opponents_that_need_games_more() -> None:
    """Equal scores and 1 bit everywhere: programs 0-3 stand together
    (crowd 4), program 4 alone (crowd 1).  One of 0-3 goes first and draws
    among the other three (weight sqrt(4 / 3.4) each) and program 4
    (sqrt(1 / 3.4)): program 4 in 1 draw of 7."""
    rng = np.random.default_rng(6)
    ratings = np.array([0.0, 0.0, 0.0, 0.0, 5.0])
    crowded = pairing.PairingState(
        np.eye(5, dtype=bool), np.full(5, 10), ratings, np.full(5, 0.3), np.ones(5),
        np.full((5, 5), 0.5),
    )  # fmt: skip
    opponents = Counter()
    for _ in range(3500):
        (a, b), *_ = pairing.markov_round(crowded, 1, rng)
        assert a != 4
        opponents[b] += 1
    assert opponents[4] / 3500 == pytest.approx(1 / 7, abs=0.02)


def test_rounds_are_a_quarter_of_the_pool_unless_a_run_would_take_over_100() -> None:
    assert ladder.round_size(10) == 8  # at least 8
    assert ladder.round_size(98, 950) == 24  # 98 programs at 20%: 40 rounds of 24
    assert ladder.round_size(1000, 49_950) == 500  # 1000 at 10%: 100 rounds, not 200
    assert ladder.round_size(1000, 24_975) == 250


def test_score_intervals_stay_within_what_a_score_can_be() -> None:
    """A poorly known program near 0 printed `-0.00 (-0.00 -3308123146576.84)`
    on a dense archive (issue 33.8): the solver's -1e-16 times a spread of
    e^50.  Scores are 0..1000 (they add up to 1000), and so are their
    bounds, which hold the score."""
    from hill.ladder.estimate import bounded_interval

    score = np.array([-1e-13, 1e-9, 2.5, 500.0, 3.0])
    low, high = bounded_interval(
        score, np.array([-1e-10, np.nan, 2.0, 480.0, 3.5]),
        np.array([3.3e12, np.inf, 2.7, 1e30, np.nan]),
    )  # fmt: skip
    assert np.all(low >= 0) and np.all(high <= 1000) and np.all(low <= high)
    assert low[0] == 0.0 and high[0] == 1000.0 and low[1] == 0.0
    assert (low[2], high[2]) == (2.0, 2.7) and high[3] == 1000.0
    assert low[4] == 3.0 and high[4] == 1000.0
