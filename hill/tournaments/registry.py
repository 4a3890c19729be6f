"""The formats by name, and what a format's name decides: a plan's rules,
its seed, the options it reads, and the result in the tool contract of
docs/tournaments.md (field names exactly).
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from hill.errors import TournamentError
from hill.tournaments import round_robin, swiss
from hill.tournaments.formats import TournamentFormat
from hill.tournaments.ledger import Ledger
from hill.tournaments.plan import OPTIONS, TournamentPlan

# every format, by name (a new format: its module, and its class here)
FORMATS: dict[str, TournamentFormat] = {
    fmt.name: fmt for fmt in (swiss.SwissFormat(), round_robin.RoundRobinFormat())
}


def tournament_format(name: str) -> TournamentFormat:
    """The format called `name`; TournamentError if there is none."""
    if name not in FORMATS:
        raise TournamentError(f"unknown format {name[:20]!r}: {' or '.join(FORMATS)}")
    return FORMATS[name]


def rules_of(plan: TournamentPlan) -> TournamentFormat:
    """The rules of the plan's format: its rounds, pairings and ranking."""
    return tournament_format(plan.format)


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
    result.update(rules_of(plan).ranking(plan, rounds))
    return result
