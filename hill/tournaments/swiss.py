"""Swiss pairing (docs/tournaments.md "Swiss"): who meets whom in the next round.

`next_round` is a pure function of the entrants, the settings and the rounds
played so far: it returns the next round's pairing or why the tournament
has ended. Round 1 is random from the seed; later rounds are a maximum
weight matching (networkx) that first avoids rematches, then keeps pairs as
close in the current standings as possible (in blocks of BLOCK places, so
that thousands of entrants pair in a second; the whole list decides that no
pairing exists).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hill.tournaments.criteria import CRITERIA, swiss_standings
from hill.tournaments.formats import COMPLETE, Ended, Pairing
from hill.tournaments.match import Round
from hill.tournaments.plan import TournamentPlan

SWISS = "swiss"
# Later rounds are paired in blocks of this many places of the standings (even):
# a matching over every pair of thousands of entrants is slow, one of 32 is not
BLOCK = 32


@dataclass(frozen=True)
class SwissSettings:
    """What decides a Swiss tournament besides its entrants."""

    seed: int
    additional_rounds: int = 0
    allow_repeat: bool = False
    criteria: tuple[str, ...] = CRITERIA


class SwissFormat:
    """The Swiss format (hill.tournaments.formats.TournamentFormat)."""

    name = SWISS
    seeded = True
    options = frozenset({"additional_rounds", "allow_repeat", "criteria"})
    every_pair_meets = False

    def planned_rounds(self, plan: TournamentPlan) -> int:
        return planned_rounds(len(plan.entrants), plan.additional_rounds)

    def expected_matches(self, plan: TournamentPlan) -> int:
        return self.planned_rounds(plan) * (len(plan.entrants) // 2)

    def next_round(self, plan: TournamentPlan, rounds: Sequence[Round]) -> Pairing | Ended:
        if plan.seed is None:
            raise ValueError("a Swiss tournament needs a seed")
        settings = SwissSettings(
            plan.seed, plan.additional_rounds, plan.allow_repeat, plan.criteria
        )
        return next_round(plan.entrants, rounds, settings)

    def ranking(self, plan: TournamentPlan, rounds: Sequence[Round]) -> dict[str, Any]:
        rows = swiss_standings(plan.entrants, rounds, plan.criteria)
        return {"standings": [row.to_json() for row in rows]}

    def tie_criteria(self, plan: TournamentPlan) -> tuple[str, ...]:
        return plan.criteria


def planned_rounds(entrants: int, additional_rounds: int = 0) -> int:
    """R = ceil(log2 N) + additional_rounds."""
    return (entrants - 1).bit_length() + additional_rounds


def next_round(
    entrants: Sequence[str], rounds: Sequence[Round], settings: SwissSettings
) -> Pairing | Ended:
    """The pairing of round len(rounds) + 1, every earlier round being complete."""
    number = len(rounds) + 1
    if number > planned_rounds(len(entrants), settings.additional_rounds):
        return Ended(COMPLETE)
    order = [row.name for row in swiss_standings(entrants, rounds, settings.criteria)]
    bye = None
    if len(order) % 2:
        had_bye = {round_.bye for round_ in rounds}
        # spec: the lowest-placed entrant without a bye sits out; before round 1
        # everyone is tied, so "lowest placed" is the last by name
        candidates = [name for name in reversed(order) if name not in had_bye]
        if not candidates:
            return Ended(
                f"byes ran out: every entrant has had a bye, so round {number} "
                f"of {len(entrants)} (odd) entrants cannot be paired"
            )
        bye = candidates[0]
        order.remove(bye)
    if number == 1:
        return Pairing(number, bye, random_pairs(order, settings.seed))
    meetings = Counter(frozenset((m.a, m.b)) for r in rounds for m in r.matches)
    pairs = closest_pairs(order, meetings, max_meetings=1)
    if pairs is None and not settings.allow_repeat:
        return Ended(
            f"deadlock: every pairing of round {number} repeats a match (allow_repeat is off)"
        )
    if pairs is None:
        # spec: with allow_repeat "a rematch is allowed, each pair at most once more"
        pairs = closest_pairs(order, meetings, max_meetings=2)
    if pairs is None:
        return Ended(
            f"deadlock: every pairing of round {number} has a pair meeting a third time "
            "(allow_repeat lets a pair meet at most once more)"
        )
    return Pairing(number, bye, pairs)


def random_pairs(players: Sequence[str], seed: int) -> tuple[tuple[str, str], ...]:
    """Round 1: the players shuffled by the seed, paired off in that order.

    They are sorted first so that only the pool, not the order it was given
    in, decides the tournament.
    """
    shuffled = sorted(players)
    random.Random(seed).shuffle(shuffled)
    return tuple(zip(shuffled[::2], shuffled[1::2], strict=True))


def closest_pairs(
    order: Sequence[str], meetings: Counter[frozenset[str]], *, max_meetings: int
) -> tuple[tuple[str, str], ...] | None:
    """Pair everyone in `order` (best first) with pairs that have met fewer
    than `max_meetings` times, or None when no such pairing exists.

    The standings are paired in blocks of BLOCK places, a block that cannot
    be paired alone joined with the next; when even the rest of the list
    cannot, the whole list is paired at once, which alone decides that no
    pairing exists.
    """
    pairs: list[tuple[str, str]] = []
    start = 0
    while start < len(order):
        end = start + BLOCK
        while (found := _closest_pairs(order[start:end], meetings, max_meetings)) is None:
            if end >= len(order):
                return _closest_pairs(order, meetings, max_meetings)
            end += BLOCK
        pairs += found
        start = end
    return tuple(pairs)


def _closest_pairs(
    order: Sequence[str], meetings: Counter[frozenset[str]], max_meetings: int
) -> tuple[tuple[str, str], ...] | None:
    """A maximum weight matching among the perfect ones: its cost is, first,
    the number of rematches, then the sum of the squared standing distances
    of the pairs (squares prefer two close pairs to one closer and one far)."""
    import networkx as nx  # loaded when a round is paired: it takes a while to import

    n = len(order)
    rematch_cost = n**3  # more than any sum of squared distances (n/2 pairs, each < n^2)
    most = rematch_cost * n  # above any pair's cost: every weight is positive
    graph: nx.Graph[int] = nx.Graph()
    graph.add_nodes_from(range(n))
    for i in range(n):
        for j in range(i + 1, n):
            met = meetings[frozenset((order[i], order[j]))]
            if met < max_meetings:
                cost = (j - i) ** 2 + (rematch_cost if met else 0)
                graph.add_edge(i, j, weight=most - cost)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    if 2 * len(matching) != n:
        return None
    boards = sorted(tuple(sorted(pair)) for pair in matching)
    return tuple((order[i], order[j]) for i, j in boards)
