"""Round robin: every unordered pair plays once (TOURNAMENTS.md "Round robin").

Standings order: score (wins + draws/2), then battle points (sum of m[a,b]/42),
then name. The reality show re-ranks the same matches as the last program
of each stage leaves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from hill.engine import BATTLES
from hill.tournaments.match import MatchResult


def round_robin_pairs(entrants: Sequence[str]) -> list[tuple[str, str]]:
    """Every unordered pair once, in entrant order (a before b)."""
    return list(combinations(entrants, 2))


@dataclass(frozen=True)
class RoundRobinRow:
    """One entrant's line of the standings."""

    rank: int
    name: str
    wins: int
    draws: int
    losses: int
    margin_sum: int  # sum of m[a,b] over the opponents: points * 42, exact

    @property
    def score(self) -> float:
        return self.wins + self.draws / 2

    @property
    def points(self) -> float:
        return self.margin_sum / BATTLES

    def to_json(self, total_wins: int) -> dict[str, object]:
        return {
            "rank": self.rank,
            "name": self.name,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "score": self.score,
            "points": self.points,
            "win_share": win_share(self.wins, total_wins),
        }


def win_share(wins: int, total_wins: int) -> float:
    """An entrant's share of all match wins, in %."""
    # spec leaves open a tournament without a single win (all draws): nobody has a share, 0 %
    return 100 * wins / total_wins if total_wins else 0.0


def standings(entrants: Iterable[str], matches: Iterable[MatchResult]) -> list[RoundRobinRow]:
    """The standings of `entrants`, counting only the matches among them."""
    names = set(entrants)
    tally = {name: [0, 0, 0, 0] for name in names}  # wins, draws, losses, margin sum
    for match in matches:
        if match.a not in names or match.b not in names:
            continue
        for name in (match.a, match.b):
            margin = match.margin_of(name)
            tally[name][0 if margin > 0 else 1 if margin == 0 else 2] += 1
            tally[name][3] += margin
    # score, then points (the margin sum orders exactly as points do), then name
    order = sorted(names, key=lambda n: (-(2 * tally[n][0] + tally[n][1]), -tally[n][3], n))
    return [RoundRobinRow(rank, name, *tally[name]) for rank, name in enumerate(order, 1)]


def total_wins(rows: Iterable[RoundRobinRow]) -> int:
    return sum(row.wins for row in rows)


def crosstable(entrants: Sequence[str], matches: Iterable[MatchResult]) -> list[list[int | None]]:
    """m[a,b] for every ordered pair, rows and columns in `entrants` order;
    None where a pair did not play (the diagonal)."""
    index = {name: i for i, name in enumerate(entrants)}
    table: list[list[int | None]] = [[None] * len(entrants) for _ in entrants]
    for match in matches:
        i, j = index[match.a], index[match.b]
        table[i][j], table[j][i] = match.margin, -match.margin
    return table


def reality_show(entrants: Iterable[str], matches: Sequence[MatchResult]) -> list[list[str]]:
    """The ranking at each stage: stage 1 ranks all N; stage k+1 drops the last
    of stage k and ranks the rest on their matches among themselves (N stages)."""
    remaining = list(entrants)
    stages = []
    while remaining:
        ranking = [row.name for row in standings(remaining, matches)]
        stages.append(ranking)
        remaining = ranking[:-1]
    return stages
