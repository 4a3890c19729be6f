"""Reports of the hill in the established hill's formats: text, breakdown, JSON."""

from __future__ import annotations

from typing import Any

from hill import engine
from hill.rules import scoring, statistics
from hill.rules.standings import Entry, Standings


def rank_change(entry: Entry) -> str:
    """` +3`, ` --` or `new`: three characters, as the established report."""
    change = entry.change
    if change is None:
        return "new"
    return " --" if change == 0 else f"{change:+3d}"


def _symbol(margin: int) -> str:
    return "+" if margin > 0 else "-" if margin < 0 else "0"


def text_report(standings: Standings) -> str:
    """The classic report: the ranking, then the +/-/0 matrix of joust results."""
    method = standings.method
    lines = ["Rank/chg   Score  Points  Program"]
    for e in standings.entries:
        lines.append(
            f"{e.rank:4d} {rank_change(e)} {e.scores[method]:7.2f} {e.points:7.2f}  "
            f"{e.program.full_name}"
        )
    lines.append("")
    n = standings.size
    tens = " ".join(str(i // 10) if i >= 10 else " " for i in range(1, n + 1))
    units = " ".join(str(i % 10) for i in range(1, n + 1))
    lines.append(f"   | {tens} |")
    lines.append(f"   | {units} | score | pts   | program")
    for a, e in enumerate(standings.entries):
        row = " ".join(" " if a == b else _symbol(standings.margin(a, b)) for b in range(n))
        lines.append(
            f"{e.rank:2d} | {row} |{e.scores[method]:6.1f} |{e.points:6.1f} | {e.program.full_name}"
        )
    return "\n".join(lines) + "\n"


def breakdown(standings: Standings, full_name: str) -> str:
    """One program against each opponent (in name order): the two 21-battle
    rows and the sum, then who wins."""
    index = standings.index(full_name)
    if index is None:
        raise KeyError(full_name)
    opponents = sorted(
        (i for i in range(standings.size) if i != index),
        key=lambda i: standings.entries[i].program.full_name,
    )
    blocks = []
    for b in opponents:
        other = standings.entries[b].program.full_name
        outcomes = tuple(int(o) for o in standings.outcomes[index, b])
        total = sum(outcomes)
        verdict = "Tie." if total == 0 else f"{full_name if total > 0 else other} wins."
        blocks.append(f"{full_name} vs {other}\n{engine.classic_line(outcomes)}\n{verdict}\n")
    return "\n".join(blocks)


def json_report(
    standings: Standings, commit: str | None, stats: statistics.Statistics | None = None
) -> dict[str, Any]:
    """The hill as data.  `results[a][k]` is the joust of the program ranked
    a+1 against the one ranked a+k+2 (the upper triangle, as the established
    report.js), 42 outcomes from the first one's side.

    The established hill's own fields are there too (`progs`, `prevrank`
    0-based, `scores` per method with its `max`, `scoringMethod`), so that
    tools written for its report.json read this one unchanged.  Each program
    also has its `stats` (hill.rules.statistics, docs/statistics.md; pass them when
    they are at hand, computed once for the state)."""
    n = standings.size
    entries = standings.entries
    if stats is None:
        stats = statistics.hill_statistics(standings.outcomes, standings.method)
    return {
        "ranking_method": standings.method,
        "commit": commit,
        "size": n,
        "methods": list(scoring.METHODS),
        "programs": [
            {
                "name": e.program.name,
                "owner": e.program.owner,
                "full_name": e.program.full_name,
                "rank": e.rank,
                "previous_rank": e.previous_rank,
                "points": e.points,
                "scores": dict(e.scores),
                "submitted": e.program.submitted_at.isoformat() + "Z",
                "stats": stats.as_json(i),
            }
            for i, e in enumerate(entries)
        ],
        "results": [
            [standings.outcomes[a, b].tolist() for b in range(a + 1, n)] for a in range(n - 1)
        ],
        "progs": [e.program.full_name for e in entries],
        "prevrank": [None if e.previous_rank is None else e.previous_rank - 1 for e in entries],
        "scores": {
            method: {
                "max": scoring.maximum(method, n),
                "score": [e.scores[method] for e in entries],
            }
            for method in scoring.METHODS
        },
        "scoringMethod": standings.method,
    }
