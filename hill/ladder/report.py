"""The ladder's results as data (the JSON contract) and as a text table.

A program's `rating` is its estimated markov score in the full round robin
(1000 shared by the pool, as the hill's markov column), the order of the
ranking; `rating_low` and `rating_high` its 95% interval, carried over
from the Bradley-Terry rating's interval (hill.ladder.estimate).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hill.ladder.ladder import Ladder, Standing
from hill.statistics import Statistics


def ladder_json(
    names: Sequence[str], ladder: Ladder, result: Standing, stats: Statistics
) -> dict[str, Any]:
    n = ladder.size
    estimate = result.estimate
    return {
        "pool": n,
        "pairs": n * (n - 1) // 2,
        "jousts_played": ladder.played,
        "played": [
            [names[a], names[b], sum(outcomes)]
            for a, b, outcomes in zip(ladder.first, ladder.second, ladder.outcomes, strict=True)
        ],
        "ranking": [
            {
                "rank": place + 1,
                "name": names[i],
                "rating": round(float(estimate.score[i]), 4),
                "rating_low": round(float(estimate.low[i]), 4),
                "rating_high": round(float(estimate.high[i]), 4),
                "jousts": int(stats.jousts[i]),
                "stats": stats.as_json(i),
            }
            for place, i in enumerate(result.order)
        ],
    }


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
