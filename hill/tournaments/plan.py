"""A tournament's plan and its result: everything that decides the result
besides the programs, the formats by name, and the result as the tool
contract of docs/tournaments.md (field names exactly).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hill.engine.arena import code_hash
from hill.errors import TournamentError
from hill.tournaments import round_robin, swiss
from hill.tournaments.criteria import CRITERIA
from hill.tournaments.formats import TournamentFormat
from hill.tournaments.ledger import Ledger

# every format, by name (a new format: its module, and its class here)
FORMATS: dict[str, TournamentFormat] = {
    fmt.name: fmt for fmt in (swiss.SwissFormat(), round_robin.RoundRobinFormat())
}
# the options of a plan that only some formats read, with their defaults
OPTIONS: dict[str, object] = {"additional_rounds": 0, "allow_repeat": False, "criteria": CRITERIA}


def tournament_format(name: str) -> TournamentFormat:
    """The format called `name`; TournamentError if there is none."""
    if name not in FORMATS:
        raise TournamentError(f"unknown format {name[:20]!r}: {' or '.join(FORMATS)}")
    return FORMATS[name]


def seed_for(name: str, seed: int | None) -> int | None:
    """The seed to keep with a tournament of format `name`: the one given,
    else a fresh one for a seeded format (kept, and printed: a resumed run
    draws the same rounds, and the run can be repeated)."""
    if seed is None and tournament_format(name).seeded:
        return secrets.randbelow(2**31)
    return seed


def unread_options(name: str, given: Mapping[str, object]) -> list[str]:
    """Notes on the options `given` away from their defaults that format
    `name` does not read: `--criteria applies to swiss only`."""
    rules = tournament_format(name)
    notes = []
    for option, default in OPTIONS.items():
        if option not in rules.options and given.get(option, default) != default:
            readers = " or ".join(f.name for f in FORMATS.values() if option in f.options)
            notes.append(f"--{option.replace('_', '-')} applies to {readers} only")
    return notes


@dataclass(frozen=True)
class TournamentPlan:
    """Everything that decides a tournament's result besides the programs."""

    format: str
    entrants: tuple[str, ...]
    seed: int | None = None  # a seeded format's first round; others only report it
    additional_rounds: int = 0
    allow_repeat: bool = False
    criteria: tuple[str, ...] = CRITERIA

    @property
    def rules(self) -> TournamentFormat:
        return tournament_format(self.format)

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

    def planned_rounds(self) -> int:
        return self.rules.planned_rounds(self)

    def expected_matches(self) -> int:
        return self.rules.expected_matches(self)


def result_json(plan: TournamentPlan, ledger: Ledger) -> dict[str, Any]:
    """The result so far (its committed rounds; once it is over, cancelled
    mid-round say, every committed match) in the tool contract of
    docs/tournaments.md (field names exactly)."""
    rounds = ledger.played_rounds(partial=ledger.ended is not None)
    result: dict[str, Any] = {
        "format": plan.format,
        "seed": plan.seed,
        "entrants": list(plan.entrants),
        "ended": ledger.ended,
        "rounds": [round_.to_json() for round_ in rounds],
    }
    result.update(plan.rules.ranking(plan, rounds))
    return result
