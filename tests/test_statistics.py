"""The statistics of docs/statistics.md on hand-made records, worked out by hand."""

from __future__ import annotations

from math import sqrt

import numpy as np
import pytest
from support.reference import fixture_matrix, scores_of

from hill.rules import scoring, statistics
from hill.rules.statistics import Record


def joust(won: int, tied: int, lost: int) -> np.ndarray:
    """42 outcomes from the first program's side."""
    assert won + tied + lost == 42
    return np.array([1] * won + [0] * tied + [-1] * lost, dtype=np.int8)


def record(size: int, jousts: dict[tuple[int, int], tuple[int, int, int]]) -> Record:
    pairs = np.array(list(jousts), dtype=np.int64)
    return Record(size, pairs, np.stack([joust(*wtl) for wtl in jousts.values()]))


def points_scorer(wins: np.ndarray) -> np.ndarray:
    """Scores for the bootstrap: battles won minus battles lost."""
    return (wins - wins.transpose(0, 2, 1)).sum(axis=2)


# A full hill of three: A-B 30/12/0, A-C 42/0/0, B-C 21/0/21 (won/tied/lost).
HILL = {(0, 1): (30, 12, 0), (0, 2): (42, 0, 0), (1, 2): (21, 0, 21)}


def test_a_full_hill_without_yates() -> None:
    """Per program (W, T, L) over n = 84 battles:
    A (72, 12, 0), B (0 + 21, 12, 30 + 21) = (21, 12, 51), C (21, 0, 63).
    The pool ties 12 of 126 battles: tau = 2/21, so a lucky program expects
    84 (19/42, 2/21, 19/42) = (38, 8, 38); all >= 5, no Yates.
      chi2_A = 34^2/38 + 4^2/8 + 38^2/38
      chi2_B = 17^2/38 + 4^2/8 + 13^2/38
      chi2_C = 17^2/38 + 8^2/8 + 25^2/38
    and TAPL = 1000 chi2 / sqrt(84).
    Zero datum: points per joust A 72/84, B -30/84, C -42/84: the median is
    B, shares (21, 12, 51)/84, so everyone expects (21, 12, 51), no Yates:
      chi2_A = 51^2/21 + 0 + 51^2/51,  chi2_B = 0,  chi2_C = 0 + 12^2/12 + 12^2/51.
    PPRG: P_A = 72/42, P_B = -30/42, P_C = -42/42, over sqrt(2).
    Games behind A: W* = (W + T/2)/42: A 78/42, B 27/42, C 21/42; L* = 2 - W*:
    A 6/42, B 57/42, C 63/42.  GB_B = (51 + 51)/84, GB_C = (57 + 57)/84.
    QOOA: q = A 1, B 2/3, C 1/3; everyone met everyone else once, so the
    mean q of its opponents is the mean q of all the others: exactly 1."""
    stats = statistics.compute(record(3, HILL), [0, 1, 2], points_scorer)
    assert stats.wins.tolist() == [72, 21, 21]
    assert stats.ties.tolist() == [12, 12, 0]
    assert stats.losses.tolist() == [0, 51, 63]
    assert stats.jousts.tolist() == [2, 2, 2]
    chi2 = [34**2 / 38 + 2 + 38, 17**2 / 38 + 2 + 13**2 / 38, 17**2 / 38 + 8 + 25**2 / 38]
    assert stats.tapl == pytest.approx([1000 * c / sqrt(84) for c in chi2])
    tazd = [51**2 / 21 + 51, 0, 12 + 12**2 / 51]
    assert stats.tazd == pytest.approx([1000 * c / sqrt(84) for c in tazd])
    assert stats.pprg == pytest.approx([72 / 42 / sqrt(2), -30 / 42 / sqrt(2), -1 / sqrt(2)])
    assert stats.games_behind == pytest.approx([0, 102 / 84, 114 / 84])
    assert stats.qooa.tolist() == [1.0, 1.0, 1.0]
    assert stats.tapl_q == pytest.approx(stats.tapl * stats.qooa)


# A ladder of four with unequal games: A-B 40/1/1, A-C 20/0/22, C-D 41/1/0.
LADDER = {(0, 1): (40, 1, 1), (0, 2): (20, 0, 22), (2, 3): (41, 1, 0)}


def test_a_ladder_with_yates_and_unequal_games() -> None:
    """(W, T, L): A (60, 1, 23) in 2 jousts, B (1, 1, 40) in 1,
    C (22 + 41, 1, 20) = (63, 1, 20) in 2, D (0, 1, 41) in 1.
    tau = 2/126 = 1/63: a lucky program expects n (31/63, 1/63, 31/63):
    n = 84: (124/3, 4/3, 124/3); n = 42: (62/3, 2/3, 62/3).  The ties are
    expected below 5: Yates' 0.5 comes off every deviation, never below 0.
      A: |60 - 124/3| - 1/2 = 109/6, |1 - 4/3| - 1/2 < 0 -> 0, |23 - 124/3| - 1/2 = 107/6
      B: |1 - 62/3| - 1/2 = 115/6, |1 - 2/3| - 1/2 < 0 -> 0, |40 - 62/3| - 1/2 = 113/6
    chi2 = sum of squares over the expected; TAPL divides by sqrt(84) and sqrt(42).
    Zero datum: points per joust A 37/84, B -39/42, C 43/84, D -41/42; the
    middle two are B and A, shares ((1/42 + 60/84)/2, (1/42 + 1/84)/2,
    (40/42 + 23/84)/2) = (62, 3, 103)/168.  B expects 42 of those:
    (15.5, 0.75, 25.75), with Yates: 14, 0 (0.25 - 0.5 < 0), 13.75.
    Games behind, leader C (order C, A, B, D), g_max = 2: W* A 60.5/42,
    B 1.5/42, C 63.5/42, D 0.5/42; L* = g - W*.  GB_A = (3 + 3)/84,
    GB_B = (62 + 20)/84 + 1/2, GB_D = (63 + 21)/84 + 1/2.
    QOOA: q = C 1, A 3/4, B 1/2, D 1/4 (sum 5/2).  Mean q of the opponents
    met over the mean q of all the others, (5/2 - q) / 3:
    A met B, C: (1/2 + 1)/2 = 3/4 over (5/2 - 3/4)/3 = 7/12: 9/7;
    B met A: 3/4 over (5/2 - 1/2)/3 = 2/3: 9/8;
    C met A, D: (3/4 + 1/4)/2 = 1/2 over (5/2 - 1)/3 = 1/2: 1;
    D met C: 1 over (5/2 - 1/4)/3 = 3/4: 4/3.
    PPRG: A (37/42)/sqrt(2), B -39/42, C (43/42)/sqrt(2), D -41/42."""
    stats = statistics.compute(record(4, LADDER), [2, 0, 1, 3], points_scorer)
    assert stats.jousts.tolist() == [2, 1, 2, 1]
    chi2_a = ((109 / 6) ** 2 + (107 / 6) ** 2) / (124 / 3)
    chi2_b = ((115 / 6) ** 2 + (113 / 6) ** 2) / (62 / 3)
    assert stats.tapl[:2] == pytest.approx([1000 * chi2_a / sqrt(84), 1000 * chi2_b / sqrt(42)])
    assert stats.tazd[1] == pytest.approx(1000 * (14**2 / 15.5 + 13.75**2 / 25.75) / sqrt(42))
    assert stats.games_behind == pytest.approx([6 / 84, 82 / 84 + 0.5, 0, 84 / 84 + 0.5])
    assert stats.qooa == pytest.approx([9 / 7, 9 / 8, 1, 4 / 3])
    assert stats.pprg == pytest.approx([37 / 42 / sqrt(2), -39 / 42, 43 / 42 / sqrt(2), -41 / 42])


def test_opponent_quality_counts_rematches_and_skips_the_idle() -> None:
    """Four programs ranked A, B, C, D: q = 1, 3/4, 1/2, 1/4 (sum 5/2).
    A met B twice and C; B met A twice; C met A; D met nobody.
      A: mean q met (3/4 + 3/4 + 1/2)/3 = 2/3, of the others (5/2 - 1)/3 = 1/2: 4/3
      B: 1 over (5/2 - 3/4)/3 = 7/12: 12/7
      C: 1 over (5/2 - 1/2)/3 = 2/3: 3/2
      D: no jousts, 0."""
    pairs = np.array([[0, 1], [1, 0], [0, 2]])
    rematches = Record(4, pairs, np.zeros((3, 42), dtype=np.int8))
    qooa = statistics.opponent_quality(rematches, np.array([1, 2, 3, 4]))
    assert qooa == pytest.approx([4 / 3, 12 / 7, 3 / 2, 0])
    alone = Record(1, np.zeros((0, 2), dtype=np.int64), np.zeros((0, 42), dtype=np.int8))
    assert statistics.opponent_quality(alone, np.array([1])).tolist() == [0.0]


@pytest.mark.parametrize("size", [2, 3, 10, 47, 500])
def test_opponent_quality_is_exactly_one_on_a_full_hill(size: int) -> None:
    """Whatever the ranking, everyone met everyone else once: exactly 1."""
    rank = np.random.default_rng(size).permutation(size) + 1
    a, b = np.triu_indices(size, 1)
    hill = Record(size, np.stack([a, b], axis=1), np.zeros((len(a), 42), dtype=np.int8))
    assert statistics.opponent_quality(hill, rank).tolist() == [1.0] * size


def test_yates_only_below_five() -> None:
    """Expected (5, 5, 5) is not below 5: no correction, chi2 = (4^2 + 0 + 4^2)/5.
    Expected (4.9, ...) is: |obs - exp| - 0.5 each."""
    observed = np.array([[9.0, 5.0, 1.0], [9.0, 5.0, 1.0]])
    expected = np.array([[5.0, 5.0, 5.0], [4.9, 5.2, 4.9]])
    corrected = (4.1 - 0.5) ** 2 / 4.9 + 0 + (3.9 - 0.5) ** 2 / 4.9
    assert statistics.chi2(observed, expected) == pytest.approx([32 / 5, corrected])


def test_bootstrap_is_reproducible_and_resamples_configurations() -> None:
    """Two programs that split the configurations 21 to 21: resampling
    them decides the winner either way, so both intervals are 1 to 2;
    a third that loses every battle is last in every resample."""
    jousts = {(0, 1): (21, 0, 21), (0, 2): (42, 0, 0), (1, 2): (42, 0, 0)}
    hill = record(3, jousts)
    first = statistics.rank_interval(hill, points_scorer, [0, 1, 2], seed=7)
    again = statistics.rank_interval(hill, points_scorer, [0, 1, 2], seed=7)
    assert [x.tolist() for x in first] == [x.tolist() for x in again]
    assert first[0].tolist() == [1, 1, 3] and first[1].tolist() == [2, 2, 3]
    draws = statistics.resample_counts(42, 200, seed=7)
    assert draws.shape == (200, 42) and (draws.sum(axis=1) == 42).all()
    assert not (draws == 1).all()  # with replacement


def test_a_clear_order_has_exact_rank_intervals() -> None:
    jousts = {(0, 1): (42, 0, 0), (0, 2): (42, 0, 0), (1, 2): (40, 2, 0)}
    low, high = statistics.rank_interval(record(3, jousts), points_scorer, [0, 1, 2])
    assert low.tolist() == [1, 2, 3] and high.tolist() == [1, 2, 3]


def test_the_2013_hill() -> None:
    """On the full reference hill: every program met 46 others, the leader
    is 0 games behind, everyone's QOOA is exactly 1, rank intervals hold
    the markov rank, and the JSON object has the spec's keys."""
    r, _ = fixture_matrix()
    order = scoring.rank_order(scores_of(r), "markov", list(range(47)))
    r = r[np.ix_(order, order)]
    stats = statistics.hill_statistics(r, "markov")
    assert (stats.wins + stats.ties + stats.losses == 46 * 42).all()
    assert stats.games_behind[0] == 0 and (stats.games_behind[1:] > 0).all()
    assert stats.qooa.tolist() == [1.0] * 47
    ranks = np.arange(1, 48)
    assert ((stats.rank_low <= ranks) & (ranks <= stats.rank_high)).mean() > 0.9
    assert list(stats.as_json(0)) == list(statistics.STATS_FIELDS)
    assert statistics.STATS_FIELDS == (
        "wins", "ties", "losses", "jousts", "tapl", "tazd", "qooa", "pprg",
        "games_behind", "rank_low", "rank_high",
    )  # fmt: skip
