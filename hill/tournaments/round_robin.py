"""Round robin: every unordered pair plays once (docs/tournaments.md "Round robin").

Standings order: score (wins + draws/2), then battle points (sum of m[a,b]/42),
then name. The reality show re-ranks the same matches as the last program
of each stage leaves.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from hill.engine import BATTLES
from hill.tournaments.formats import COMPLETE, Ended, Pairing
from hill.tournaments.match import MatchResult, Round
from hill.tournaments.plan import TournamentPlan

ROUND_ROBIN = "round-robin"


class RoundRobinFormat:
    """The round robin (hill.tournaments.formats.TournamentFormat): one
    round in which every pair meets once."""

    name = ROUND_ROBIN
    seeded = False
    options: frozenset[str] = frozenset()
    every_pair_meets = True

    def planned_rounds(self, plan: TournamentPlan) -> int:
        return 1

    def expected_matches(self, plan: TournamentPlan) -> int:
        n = len(plan.entrants)
        return n * (n - 1) // 2

    def next_round(self, plan: TournamentPlan, rounds: Sequence[Round]) -> Pairing | Ended:
        if rounds:
            return Ended(COMPLETE)
        return Pairing(1, None, tuple(round_robin_pairs(plan.entrants)))

    def ranking(self, plan: TournamentPlan, rounds: Sequence[Round]) -> dict[str, Any]:
        matches = [match for round_ in rounds for match in round_.matches]
        table = standings(plan.entrants, matches)
        wins = total_wins(table)
        return {
            "standings": [row.to_json(wins) for row in table],
            "reality_show": reality_show(plan.entrants, matches),
        }

    def tie_criteria(self, plan: TournamentPlan) -> tuple[str, ...]:
        return ("score", "points")  # as _ranked orders them


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
    return _ranked(_Tally(entrants, matches))


class _Tally:
    """Each entrant's wins, draws, losses and margin sum over the matches
    among the entrants; an entrant can leave, taking its matches with it."""

    def __init__(self, entrants: Iterable[str], matches: Iterable[MatchResult]) -> None:
        self.counts = {name: [0, 0, 0, 0] for name in entrants}  # wins, draws, losses, margins
        # each entrant's matches: (opponent, margin from the entrant's side)
        self.played: dict[str, list[tuple[str, int]]] = {name: [] for name in self.counts}
        for match in matches:
            if match.a in self.counts and match.b in self.counts:
                for name in (match.a, match.b):
                    margin = match.margin_of(name)
                    self.played[name].append((match.opponent_of(name), margin))
                    self._count(name, margin, 1)

    def _count(self, name: str, margin: int, sign: int) -> None:
        counts = self.counts[name]
        counts[0 if margin > 0 else 1 if margin == 0 else 2] += sign
        counts[3] += sign * margin

    def leave(self, name: str) -> None:
        """`name` leaves: its matches no longer count for anyone."""
        del self.counts[name]
        for opponent, margin in self.played.pop(name):
            if opponent in self.counts:
                self._count(opponent, -margin, -1)


def _ranked(tally: _Tally) -> list[RoundRobinRow]:
    # score, then points (the margin sum orders exactly as points do), then name
    counts = tally.counts
    order = sorted(counts, key=lambda n: (-(2 * counts[n][0] + counts[n][1]), -counts[n][3], n))
    return [RoundRobinRow(rank, name, *counts[name]) for rank, name in enumerate(order, 1)]


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
    of stage k and ranks the rest on their matches among themselves (N stages).
    The leaver's matches are taken out of the tally rather than every stage
    counted afresh: N stages of N^2 / 2 matches took seconds for a few hundred."""
    tally = _Tally(entrants, matches)
    stages = []
    while tally.counts:
        ranking = [row.name for row in _ranked(tally)]
        stages.append(ranking)
        tally.leave(ranking[-1])
    return stages
