"""A ladder's budget is a maximum: the jousts it buys are rounded down."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hill.engine import JoustResult
from hill.ladder import ladder


def test_a_budget_buys_its_fraction_of_the_pairs_rounded_down() -> None:
    # 98 programs: 98 * 97 / 2 = 4753 pairs; 20% of them is 950.6: 950 jousts, not 951
    assert ladder.budget_jousts(98, 0.2) == 950
    # 11 programs, 55 pairs: 30% is 16.5 -> 16; 40% is 22 exactly
    assert ladder.budget_jousts(11, 0.3) == 16
    assert ladder.budget_jousts(11, 0.4) == 22
    assert ladder.budget_jousts(11, 1) == 55
    # 25 programs, 300 pairs: 57% is 171 exactly, although the binary
    # product 0.57 * 300 falls just short of it (rounding it down naively: 170)
    assert 0.57 * 300 < 171 and math.floor(0.57 * 300) == 170
    assert ladder.budget_jousts(25, 0.57) == 171
    # a budget too small for one joust buys none: 10% of 2 programs' one pair
    assert ladder.budget_jousts(2, 0.1) == 0
    assert ladder.budget_jousts(2, 1) == 1


def test_a_run_never_plays_past_its_budget() -> None:
    """The ladder on 14 programs (91 pairs) at 25% (22.75: 22 jousts); a
    round meets each program once, so at most 7 jousts: 7 + 7 + 7 + 1, never
    a joust more."""
    n = 14
    rng = np.random.default_rng(4)
    strength = rng.normal(size=n)
    calls: list[int] = []

    def play(pairs: list[tuple[int, int]]) -> list[JoustResult]:
        calls.append(len(pairs))
        return [
            JoustResult(
                tuple(1 if strength[a] + rng.normal() > strength[b] else -1 for _ in range(42))
            )
            for a, b in pairs
        ]

    pool = ladder.Ladder(n)
    jousts = ladder.budget_jousts(n, 0.25)
    assert jousts == 22
    result = ladder.run(pool, play, jousts, seed=1)
    assert pool.played == sum(calls) == 22 and calls == [7, 7, 7, 1]
    assert sorted(result.order.tolist()) == list(range(n))


def test_a_budget_of_no_joust_ranks_without_playing() -> None:
    pool = ladder.Ladder(2)
    result = ladder.run(pool, lambda pairs: pytest.fail("played"), ladder.budget_jousts(2, 0.5))
    assert pool.played == 0 and sorted(result.order.tolist()) == [0, 1]
