"""What a tournament format is (docs/tournaments.md): the protocol each format
module (round_robin.py, swiss.py) implements, and what its pairing decides.

A new format is one module with a class of this protocol, named in
hill.tournaments.registry.FORMATS; the runner, the store, the command line, the
bot and the web read formats only through it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hill.tournaments.match import Round
from hill.tournaments.plan import TournamentPlan

COMPLETE = "complete"


@dataclass(frozen=True)
class Pairing:
    """A round to play: its pairs (better placed first, board order) and its bye."""

    number: int
    bye: str | None
    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Ended:
    """The tournament is over: `reason` is COMPLETE or why it ended early."""

    reason: str


class TournamentFormat(Protocol):
    """A format: how rounds are paired and how the result is ranked."""

    name: str  # as given (`--format`) and stored
    seeded: bool  # its pairing draws from a seed (stored: a resumed run draws the same)
    options: frozenset[str]  # the plan's options it reads (hill.tournaments.plan.OPTIONS)
    every_pair_meets: bool  # each pair meets once: a crosstable and the reality show

    def planned_rounds(self, plan: TournamentPlan) -> int: ...

    def expected_matches(self, plan: TournamentPlan) -> int: ...

    def next_round(self, plan: TournamentPlan, rounds: Sequence[Round]) -> Pairing | Ended:
        """The pairing of round len(rounds) + 1 (every earlier round committed),
        or why the tournament is over."""
        ...

    def ranking(self, plan: TournamentPlan, rounds: Sequence[Round]) -> dict[str, Any]:
        """The result's fields after `rounds` that the format adds to the
        tool contract: its `standings` (and a round robin's `reality_show`)."""
        ...

    def tie_criteria(self, plan: TournamentPlan) -> tuple[str, ...]:
        """The standings' fields that order them, in turn, before the name:
        entrants equal in all of them are level."""
        ...
