"""Seeding: where a newcomer starts before its own jousts say more.

- A new version of `owner.name` starts with virtual results of 2 wins and 1
  loss against its previous version (a battle share of 2/3 over three
  jousts): the ratings put it just above the version it replaces.
- A program that was on the hill starts from its hill record: its stored
  jousts are real results, reused as they are (the ladder is handed them
  as `known` jousts and never plays them again).

Ratings are shrunk toward a prior (hill.ladder.ratings); a new version's
prior is centred on its previous version's rating, so that the shrinking
pulls it toward the version it replaces rather than the middle of the pool.

Virtual results give way to real ones: each virtual joust counts
HALF_LIFE / (HALF_LIFE + g), where g is the real jousts the new version has
played, so after 3 real jousts the virtual ones weigh half, after 30 a
tenth; and once the real joust against the previous version is played the
virtual ones are dropped altogether.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

HALF_LIFE = 3.0  # real jousts after which a virtual result counts half
VIRTUAL_WINS = 2
VIRTUAL_LOSSES = 1


@dataclass(frozen=True)
class Virtual:
    """Virtual jousts of `program` against `opponent`: `jousts` of them with
    a battle share of `share` from the program's side."""

    program: int
    opponent: int
    share: float
    jousts: float


def new_version(program: int, previous: int) -> Virtual:
    """2 wins and 1 loss against the previous version."""
    total = VIRTUAL_WINS + VIRTUAL_LOSSES
    return Virtual(program, previous, VIRTUAL_WINS / total, float(total))


def weights(virtual: Sequence[Virtual], jousts: np.ndarray, met: np.ndarray) -> np.ndarray:
    """The weight each virtual result counts for now (its jousts times the
    decay; 0 once the real joust of the pair is played)."""
    out = np.zeros(len(virtual))
    for i, v in enumerate(virtual):
        if not met[v.program, v.opponent]:
            out[i] = v.jousts * HALF_LIFE / (HALF_LIFE + jousts[v.program])
    return out


def prior_means(virtual: Sequence[Virtual], rating: np.ndarray, met: np.ndarray) -> np.ndarray:
    """Prior means of the ratings: 0, or for a new version whose virtual
    results are still in force, its previous version's rating."""
    prior = np.zeros(len(rating))
    for v in virtual:
        if not met[v.program, v.opponent]:
            prior[v.program] = rating[v.opponent]
    return prior
