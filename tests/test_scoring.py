"""The six scoring methods against the established hill's scores, and their laws."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.reference import fixture_matrix, scores_of

from hill import engine
from hill.rules import scoring


def test_all_six_methods_match_the_established_hill() -> None:
    r, fixture = fixture_matrix()
    scores = scores_of(r)
    for method in scoring.METHODS:
        # the fixture keeps six decimals
        assert np.abs(scores[method] - np.array(fixture[method])).max() < 1e-6, method


def test_battles_won_are_all_the_methods_need() -> None:
    """wins[a, b] alone: a joust's score is wins[a, b] - wins[b, a]."""
    r, _ = fixture_matrix()
    wins = scoring.battle_wins(r)
    assert wins.shape == (47, 47) and (np.diag(wins) == 0).all()
    assert (scoring.margins(wins) == r.sum(axis=2)).all()
    # by hand: a wins 30 battles against b and loses 2 (10 ties); c ties all
    hand = np.array([[0, 30, 0], [2, 0, 0], [0, 0, 0]])
    assert scoring.margins(hand).tolist() == [[0, 28, 0], [-28, 0, 0], [0, 0, 0]]
    assert scoring.points(hand, 42).tolist() == [28 / 42, -28 / 42, 0]


def antisymmetric(seed: int, n: int, tie_share: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    r = rng.choice(
        np.array([-1, 0, 1], dtype=np.int8),
        size=(n, n, engine.BATTLES),
        p=[(1 - tie_share) / 2, tie_share, (1 - tie_share) / 2],
    )
    upper = np.triu(np.ones((n, n), dtype=bool), 1)[:, :, None]
    r = np.where(upper, r, 0).astype(np.int8)
    return (r - r.transpose(1, 0, 2)).astype(np.int8)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 25))
def test_ranges_of_the_methods(seed: int, n: int) -> None:
    scores = scores_of(antisymmetric(seed, n))
    assert scores["markov"].sum() == pytest.approx(1000)
    assert (scores["markov"] >= -1e-9).all()
    assert ((scores["points"] >= -1e-9) & (scores["points"] <= 2 * (n - 1) + 1e-9)).all()
    # trad's 0..100 is nominal: a program's worth reaches (2N-1)/(2(N-1)) > 1/2
    bound = 100 * (2 * n - 1) / (n - 1)
    for method in ("trad", "tradtwist"):
        assert ((scores[method] >= -1e-9) & (scores[method] <= bound + 1e-9)).all()
    for method in ("iter", "itertwist"):
        assert np.isfinite(scores[method]).all() and (scores[method] >= -1e-9).all()


def test_one_program_beating_everyone_leads_every_method() -> None:
    r = antisymmetric(3, 8)
    r[0, 1:] = 1
    r[1:, 0] = -1
    scores = scores_of(r)
    for method in scoring.METHODS:
        assert int(np.argmax(scores[method])) == 0, method


def test_all_ties_and_tiny_hills() -> None:
    ties = scores_of(np.zeros((4, 4, 42), dtype=np.int8))
    assert ties["markov"] == pytest.approx([250] * 4)
    assert ties["points"] == pytest.approx([3] * 4)
    assert ties["trad"] == pytest.approx([0] * 4)
    assert ties["iter"] == pytest.approx([50] * 4)
    one = scores_of(np.zeros((1, 1, 42), dtype=np.int8))
    assert one["markov"] == pytest.approx([1000]) and one["points"] == pytest.approx([0])
    empty = scoring.score_all(np.zeros((0, 0), dtype=np.int64), 42)
    assert all(len(v) == 0 for v in empty.values())


def test_rank_order_breaks_ties_by_points_then_age() -> None:
    scores = {
        "markov": np.array([10.0, 10.0 + 1e-12, 10.0, 20.0]),
        "points": np.array([1.0, 2.0, 2.0, 0.0]),
    }
    assert scoring.rank_order(scores, "markov", [3, 1, 2, 4]) == [3, 1, 2, 0]
    with pytest.raises(ValueError):
        scoring.rank_order(scores, "elo", [1, 2, 3, 4])
