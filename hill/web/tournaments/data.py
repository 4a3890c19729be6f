"""The data of the tournament pages, as plain JSON-ready dicts (pure functions).

A tournament is read as hill.store.records gives it: a summary, the
result in the tool contract of docs/tournaments.md (kept unchanged in the page's
JSON twin) and each entrant's code hash.  Added for the pages: the progress,
the crosstable (round robin), the elimination order of the reality show, and
one sample battle per match.

**The sample battle of a match** is the first of the joust's 42 battles, in
the joust's order (sieve 10..30, then kettle 10..30), that went the way the
match went: won by the match's winner, or, for a drawn match, a tie if the
joust has one; otherwise (a draw of wins and losses only) its first battle.
The choice is the same from either side, so both cells of a pair in the
crosstable show the same battle, each with its row's program on the left.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hill import engine
from hill.tournaments.registry import tournament_format
from hill.web.charts.bump import eliminations

THUMBNAILS_MAX = 40  # entrants: above, the crosstable has no pictures
CROSSTABLE_MAX = 120  # entrants: above, no crosstable on the page (the JSON has the rounds)
BUMP_CHART_MAX = 60  # entrants: above, the reality show is only its elimination order

# a joust's outcomes from a's side, by the two programs' code hashes (None if not stored)
Outcomes = Callable[[str, str], "np.ndarray | None"]


def sample_battle(outcomes: Sequence[int] | np.ndarray | None, margin: int) -> int:
    """The index (engine.battle_config) of the match's sample battle (see
    the module's docstring); `outcomes` from the side whose margin it is."""
    if outcomes is None:
        return 0
    return int(sample_battles(np.asarray(outcomes)[None, :], np.array([margin]))[0])


def sample_battles(outcomes: np.ndarray, margins: np.ndarray) -> np.ndarray:
    """sample_battle of many matches at once: `outcomes` (M, battles), each
    row from the side whose margin is in `margins` (M,) (a row of a joust
    not stored holds no -1, 0 or 1: its sample is the first battle)."""
    hits = outcomes == np.sign(margins).astype(outcomes.dtype)[:, None]
    first = hits.argmax(axis=1)
    first[~hits.any(axis=1)] = 0
    return first


def summary(s: Any) -> dict[str, Any]:
    """A tournament at a glance (records.TournamentSummary, as the CLI's
    JSON gives it, and what the pages show of it), for the list and the top
    of its page."""
    return {
        **s.to_json(),
        "running": s.running,
        "complete": s.ended == "complete",
        "winner": s.leader if s.ended is not None else None,
        "percent": progress_percent(s.matches_committed, s.matches_expected),
    }


def progress_percent(committed: int, expected: int) -> float:
    return round(100 * committed / expected, 1) if expected else 100.0


def battle(index: int) -> dict[str, Any]:
    tape, polarity = engine.battle_config(index)
    return {"tape": tape, "polarity": polarity}


def samples(
    rounds: Sequence[dict[str, Any]], programs: dict[str, str], outcomes: Outcomes
) -> list[list[dict[str, Any]]]:
    """The sample battle (tape, polarity) of every match, round by round as
    in the result's rounds."""
    return [
        [
            battle(sample_battle(outcomes(programs[m["a"]], programs[m["b"]]), m["margin"]))
            for m in round_["matches"]
        ]
        for round_ in rounds
    ]


def crosstable(result: dict[str, Any], battles: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """The round robin's margins m[a,b], rows and columns in standings order,
    each played cell with its sample battle: {"names", "rows"}, a row's cell
    {"margin", "tape", "polarity"} or None (the diagonal, or not played yet)."""
    names = [row["name"] for row in result["standings"]]
    index = {name: i for i, name in enumerate(names)}
    rows: list[list[dict[str, Any] | None]] = [[None] * len(names) for _ in names]
    for round_, round_battles in zip(result["rounds"], battles, strict=True):
        for match, sample in zip(round_["matches"], round_battles, strict=True):
            i, j = index[match["a"]], index[match["b"]]
            rows[i][j] = {"margin": match["margin"], **sample}
            rows[j][i] = {"margin": -match["margin"], **sample}
    return {"names": names, "rows": rows}


def detail(view: Any, outcomes: Outcomes) -> dict[str, Any]:
    """A tournament's page (records.TournamentView): its summary's fields,
    the result unchanged, the programs' code hashes, the sample battles,
    and for a round robin the crosstable and the reality show's eliminations."""
    result = view.result
    n = len(result["entrants"])
    every_pair_meets = tournament_format(result["format"]).every_pair_meets
    show_table = every_pair_meets and n <= CROSSTABLE_MAX
    battles = samples(result["rounds"], view.programs, outcomes)
    data: dict[str, Any] = {
        **summary(view.summary),
        "result": result,
        "programs": view.programs,
        "samples": battles,
        "crosstable": crosstable(result, battles) if show_table else None,
        "thumbnails": show_table and n <= THUMBNAILS_MAX,
        "eliminations": None,
        "bump_chart": False,
    }
    if every_pair_meets and result["rounds"]:
        data["eliminations"] = eliminations(result["reality_show"])
        data["bump_chart"] = n <= BUMP_CHART_MAX
    return data
