"""The ladder's results as data (the JSON contract) and as a text table:
a ladder over files (`ladder_json`), and the hill's all-time ladder as
stored (`board_json`).

A program's `rating` is its estimated markov score in the full round robin
(1000 shared by the pool, as the hill's markov column), the order of the
ranking; `rating_low` and `rating_high` its 95% interval, carried over
from the Bradley-Terry rating's interval (hill.ladder.estimate).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hill.ladder.board import Board
from hill.ladder.ladder import Ladder, Standing, joust_list, ranking
from hill.rules.events import iso_utc
from hill.rules.statistics import Statistics


def ladder_json(
    names: Sequence[str], ladder: Ladder, result: Standing, stats: Statistics
) -> dict[str, Any]:
    n = ladder.size
    return {
        "pool": n,
        "pairs": n * (n - 1) // 2,
        "jousts_played": ladder.played,
        "played": joust_list(ladder, names),
        "ranking": ranking(result, stats, names),
    }


def board_json(board: Board, played: list[list[Any]] | None = None) -> dict[str, Any]:
    """The hill's all-time ladder in the contract of `ladder_json` (names
    are `owner.name@version`; `played`, when given, lists the stored jousts
    among them), plus each version's program, number and whether it is on
    the hill, when the standing was computed, how many of its jousts the
    ladder played itself and the versions still to join it."""
    n = board.pool
    data: dict[str, Any] = {
        "pool": n,
        "pairs": n * (n - 1) // 2,
        "jousts_played": board.jousts if played is None else len(played),
    }
    if played is not None:
        data["played"] = played
    data["ranking"] = [
        {
            "rank": row.rank,
            "name": row.version.label,
            "rating": row.rating,
            "rating_low": row.rating_low,
            "rating_high": row.rating_high,
            "jousts": row.jousts,
            "stats": row.stats,
            "program": row.version.full_name,
            "version": row.version.version,
            "on_hill": row.on_hill,
        }
        for row in board.rows
    ]
    data.update(
        computed_at=iso_utc(board.computed_at),
        standing_jousts=board.jousts,
        ladder_jousts=board.ladder_jousts,
        waiting=[v.label for v in board.waiting],
    )
    return data


def ladder_text(report: dict[str, Any]) -> str:
    """One line per program: rank, its interval, rating with interval, jousts, name."""
    lines = [
        f"{report['jousts_played']} of {report['pairs']} jousts played ({report['pool']} programs)",
        "Rank  (95%)    Rating (95% interval)    Jousts  Program",
    ]
    for row in report["ranking"]:
        s = row["stats"]
        interval = f"({row['rating_low']:7.2f} {row['rating_high']:8.2f})"
        lines.append(
            f"{row['rank']:4d} {s['rank_low']:3d}-{s['rank_high']:<4d} {row['rating']:7.2f} "
            f"{interval}  {row['jousts']:6d}  {row['name']}"
        )
    return "\n".join(lines) + "\n"
