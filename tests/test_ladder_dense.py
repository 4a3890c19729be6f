"""The ladder on a dense, degenerate archive (issue 33, finding 8 and build
item 6): programs that win or lose every battle, pairs that tie every
battle, programs with no joust yet and new versions still seeded, with most
pairs played or every one.  The whole refit (ratings, the matchup model,
markov of the filled matrix, the intervals, the statistics) and a round's
planning run with numpy's floating-point errors raised and every warning an
error: "Probabilities contain NaN" and the NaN warnings of
hill/ladder/filled.py once came from such an archive.  Underflow is left
alone (numpy ignores it by default): e^-800 is 0, as it should be."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from hill.engine import BATTLES
from hill.ladder import filled, ladder, seeding

N = 120


def degenerate_archive(density: float, isolated: bool = True, seed: int = 0) -> ladder.Ladder:
    """N programs of random strengths, of which: 0 wins every battle, 1 and
    2 lose every battle, 3 and 4 tie every battle with each other and with
    5; if `isolated`, 6 and 7 have no joust and 8 is a new version of 9
    whose joust against it is not played; `density` of the other pairs
    played."""
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 2, N)
    a, b = np.triu_indices(N, 1)
    kept = (rng.random(len(a)) < density) | (a < 6)  # the degenerate ones meet everyone
    if isolated:
        kept &= ~np.isin(a, [6, 7]) & ~np.isin(b, [6, 7]) & ~((a == 8) & (b == 9))
    a, b = a[kept], b[kept]
    p = 1 / (1 + np.exp(-(strength[a] - strength[b])))
    outcomes = np.where(rng.random((len(a), BATTLES)) < p[:, None], 1, -1).astype(np.int8)
    outcomes[a == 0] = 1
    outcomes[np.isin(a, [1, 2])] = -1
    outcomes[np.isin(b, [1, 2]) & (a != 0)] = 1
    outcomes[np.isin(a, [3, 4]) & np.isin(b, [4, 5])] = 0
    state = ladder.Ladder(N)
    state.extend(np.stack([a, b], axis=1), outcomes, np.full(len(a), 100))
    state.virtual = [seeding.new_version(8, 9)] if isolated else []
    return state


@pytest.mark.parametrize("skeleton", [None, 10, 40])  # W whole (dense markov), or a skeleton
@pytest.mark.parametrize("density", [0.87, 1.0])
def test_a_dense_degenerate_archive_refits_without_a_floating_point_error(
    monkeypatch: pytest.MonkeyPatch, density: float, skeleton: int | None
) -> None:
    """On the skeleton's path (`filled.WHOLE_UP_TO` 0) the skeleton is too
    poor for this pool: its iterations grew until they overflowed; now they
    stop, markov falls back on the chain's own power iteration, and the
    scores are W's, as on the dense path."""
    state = degenerate_archive(density)
    whole = ladder.standing(state).estimate.score  # markov of W itself
    if skeleton is not None:
        monkeypatch.setattr(filled, "SKELETON", skeleton)
        monkeypatch.setattr(filled, "WHOLE_UP_TO", 0)
    with warnings.catch_warnings(), np.errstate(divide="raise", over="raise", invalid="raise"):
        warnings.simplefilter("error")
        result = ladder.standing(state)
        stats = ladder.ladder_statistics(state, result)
        again = ladder.standing(state, start=result)  # warm, as the hill's ladder refits
        pairs, _ = ladder.next_round(state, "markov", np.random.default_rng(0), 20)
    ratings, estimate = result.ratings, result.estimate
    for values in (ratings.rating, ratings.stderr, estimate.score, estimate.low, estimate.high):
        assert np.isfinite(values).all()
    assert (ratings.stderr > 0).all()
    assert (estimate.low >= 0).all() and (estimate.high <= 1000).all()
    assert (estimate.low <= estimate.score).all() and (estimate.score <= estimate.high).all()
    assert estimate.score.sum() == pytest.approx(1000)
    assert estimate.score == pytest.approx(whole, abs=1e-3)
    assert (stats.rank_low >= 1).all() and (stats.rank_low <= stats.rank_high).all()
    assert (stats.rank_high <= N).all()
    assert np.isfinite(again.estimate.score).all()
    # the one that wins everything leads; those that win nothing trail
    assert result.order[0] == 0 and set(result.order[-2:]) == {1, 2}
    assert pairs and all(not state.met[a, b] for a, b in pairs)


def test_an_unbeaten_program_in_a_full_round_robin_takes_everything() -> None:
    """Every pair played and 0 lost no battle: markov's degenerate answer
    (hill.rules.scoring), everything on 0, and no spread."""
    state = degenerate_archive(1.0, isolated=False)
    with warnings.catch_warnings(), np.errstate(divide="raise", over="raise", invalid="raise"):
        warnings.simplefilter("error")
        result = ladder.standing(state)
        stats = ladder.ladder_statistics(state, result)
    estimate = result.estimate
    assert estimate.score[0] == 1000 and (estimate.low == estimate.high).all()
    assert estimate.score.sum() == 1000 and np.isfinite(result.ratings.stderr).all()
    assert stats.rank_low[0] == 1
