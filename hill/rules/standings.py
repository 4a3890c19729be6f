"""Standings: the hill ranked, from its programs and the outcomes of their jousts.

Plain frozen data: what the reports, the web pages and the bot read.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hill import engine
from hill.rules import scoring


@dataclass(frozen=True)
class Contestant:
    """A program on the hill, as far as ranking is concerned."""

    id: int
    owner: str
    name: str
    submitted_at: dt.datetime
    code_hash: str  # what its jousts are kept by (hill.engine.arena)

    @property
    def full_name(self) -> str:
        return f"{self.owner}.{self.name}"


@dataclass(frozen=True)
class Entry:
    """One program's line in the standings."""

    program: Contestant
    rank: int  # 1 is best
    previous_rank: int | None  # None: not on the previous hill
    points: float  # sum of joust scores / 42, in [-(N-1), N-1]
    scores: Mapping[str, float]

    @property
    def change(self) -> int | None:
        """Places gained since the previous hill state (None: new)."""
        return None if self.previous_rank is None else self.previous_rank - self.rank


@dataclass(frozen=True)
class Standings:
    """The ranked hill: entries best first; outcomes[a, b] is the joust of
    entry a (left) against entry b (right), 42 values from a's side."""

    method: str
    entries: tuple[Entry, ...]
    outcomes: np.ndarray

    @classmethod
    def empty(cls, method: str) -> Standings:
        return cls(method, (), np.zeros((0, 0, engine.BATTLES), dtype=np.int8))

    @property
    def size(self) -> int:
        return len(self.entries)

    def index(self, full_name: str) -> int | None:
        """The rank-order index of the program `owner.name` (None: not here)."""
        return next(
            (i for i, e in enumerate(self.entries) if e.program.full_name == full_name), None
        )

    def find(self, full_name: str) -> Entry | None:
        index = self.index(full_name)
        return None if index is None else self.entries[index]

    def margin(self, a: int, b: int) -> int:
        """The joust score of entry a against entry b."""
        return int(self.outcomes[a, b].sum())

    def margins(self) -> np.ndarray:
        """Every joust score: margins[a, b] of entry a against entry b."""
        return self.outcomes.sum(axis=2, dtype=np.int64)

    def records(self) -> list[dict[str, Any]]:
        """The standings as plain data, for storing with an event."""
        return [
            {
                "id": e.program.id,
                "name": e.program.full_name,
                "rank": e.rank,
                "previous_rank": e.previous_rank,
                "points": e.points,
                "scores": dict(e.scores),
            }
            for e in self.entries
        ]


def worst_opponents(standings: Standings, index: int, count: int) -> list[tuple[str, int]]:
    """The (at most `count`) opponents entry `index` loses to by the most,
    worst first: (full name, joust score, below zero)."""
    margins = sorted(
        (standings.margin(index, j), standings.entries[j].program.full_name)
        for j in range(standings.size)
        if j != index
    )
    return [(name, margin) for margin, name in margins[:count] if margin < 0]


def rank(
    programs: Sequence[Contestant],
    outcomes: np.ndarray,
    method: str,
    previous_ranks: Mapping[int, int],
) -> Standings:
    """Score and rank the hill; `previous_ranks` maps program id to its rank
    in the previous hill state (an updated program inherits its old rank)."""
    wins, battles = scoring.battle_wins(outcomes), outcomes.shape[2]
    scores = scoring.score_all(wins, battles)
    points = scoring.points(wins, battles)
    order = scoring.rank_order(scores, method, [(p.submitted_at, p.id) for p in programs])
    entries = tuple(
        Entry(
            program=programs[i],
            rank=place + 1,
            previous_rank=previous_ranks.get(programs[i].id),
            points=float(points[i]),
            scores={m: float(scores[m][i]) for m in scoring.METHODS},
        )
        for place, i in enumerate(order)
    )
    return Standings(method, entries, outcomes[np.ix_(order, order)])
