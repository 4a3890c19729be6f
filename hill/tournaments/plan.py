"""A tournament's plan: everything that decides its result besides the
programs (the formats read it: hill.tournaments.formats), and the options
only some formats read, with their defaults.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hill.engine import code_hash
from hill.tournaments.criteria import CRITERIA

# the options of a plan that only some formats read, with their defaults
OPTIONS: dict[str, object] = {"additional_rounds": 0, "allow_repeat": False, "criteria": CRITERIA}


@dataclass(frozen=True)
class TournamentPlan:
    """Everything that decides a tournament's result besides the programs
    (its format's rules: hill.tournaments.registry.tournament_format)."""

    format: str
    entrants: tuple[str, ...]
    seed: int | None = None  # a seeded format's first round; others only report it
    additional_rounds: int = 0
    allow_repeat: bool = False
    criteria: tuple[str, ...] = CRITERIA

    def to_json(self, programs: Mapping[str, bytes]) -> dict[str, object]:
        """The plan as plain data, with each entrant's program by content."""
        return {
            "format": self.format,
            "entrants": list(self.entrants),
            "programs": [code_hash(programs[name]) for name in self.entrants],
            "seed": self.seed,
            "additional_rounds": self.additional_rounds,
            "allow_repeat": self.allow_repeat,
            "criteria": list(self.criteria),
        }
