"""The reality show as a bump chart: pure geometry for an SVG drawn by a template.

docs/tournaments.md "reality show": stage 1 ranks all N programs; stage k+1 drops
the last of stage k and ranks the rest again on their matches among
themselves, until one is left.  The chart has a column per stage (x) and a
row per rank (y); each program is a polyline through its rank at every
stage it is in, ending with a dot at the stage whose last it is (the stage
that eliminates it; the winner's line runs to the last stage).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hill.web.charts.lines import label_room

STEP_X = 36  # px between two stages
STEP_Y = 20  # px between two ranks
NAMES_WIDTH = 190  # room for the names, left of stage 1, at least (names are whole)
NAME_CHARS, NAME_CHAR_WIDTH = 26, 6.6  # an 11 px label's characters
TOP = 24  # room for the stage numbers
RIGHT = 16
BOTTOM = 10
LABEL_GAP = 8


@dataclass(frozen=True)
class BumpLine:
    """One program: its points (x, y), one per stage it is in, and the stage
    that eliminates it (len(stages) for the winner)."""

    name: str
    first_rank: int
    points: tuple[tuple[int, int], ...]
    eliminated_at: int
    color: str

    @property
    def path(self) -> str:
        """The SVG polyline's `points` attribute."""
        return " ".join(f"{x},{y}" for x, y in self.points)

    @property
    def end(self) -> tuple[int, int]:
        return self.points[-1]


@dataclass(frozen=True)
class BumpChart:
    width: int
    height: int
    name_x: int  # where the names end (text-anchor end)
    stage_ticks: tuple[tuple[int, int], ...]  # (x, stage number)
    rank_ticks: tuple[tuple[int, int], ...]  # (y, rank)
    lines: tuple[BumpLine, ...]


def stage_x(stage: int, names_width: int = NAMES_WIDTH) -> int:
    """The x of stage `stage` (1-based), right of names `names_width` wide."""
    return names_width + (stage - 1) * STEP_X


def rank_y(rank: int) -> int:
    """The y of rank `rank` (1-based)."""
    return TOP + (rank - 1) * STEP_Y


def color(index: int, count: int) -> str:
    """A hue per program, spread round the wheel by its stage-1 rank; every
    other one darker, so that neighbours differ in lightness too."""
    hue = round(360 * index / max(count, 1))
    lightness = 38 if index % 2 else 50
    return f"hsl({hue} 70% {lightness}%)"


def bump_chart(stages: Sequence[Sequence[str]]) -> BumpChart:
    """The chart of a reality show: `stages[k]` is stage k+1's ranking, best first."""
    count = len(stages[0]) if stages else 0
    labels = [f"{rank}. {name}" for rank, name in enumerate(stages[0] if stages else (), 1)]
    names_width = max(NAMES_WIDTH, label_room(labels, NAME_CHARS, NAME_CHAR_WIDTH) + LABEL_GAP + 4)
    lines = []
    for index, name in enumerate(stages[0] if stages else ()):
        points = []
        for number, ranking in enumerate(stages, 1):
            if name not in ranking:
                break
            points.append((stage_x(number, names_width), rank_y(ranking.index(name) + 1)))
        lines.append(BumpLine(name, index + 1, tuple(points), len(points), color(index, count)))
    return BumpChart(
        width=stage_x(max(len(stages), 1), names_width) + RIGHT,
        height=rank_y(max(count, 1)) + BOTTOM,
        name_x=names_width - LABEL_GAP,
        stage_ticks=tuple((stage_x(k, names_width), k) for k in range(1, len(stages) + 1)),
        rank_ticks=tuple((rank_y(r), r) for r in range(1, count + 1)),
        lines=tuple(lines),
    )


def eliminations(stages: Sequence[Sequence[str]]) -> list[dict[str, object]]:
    """Who leaves at each stage (the last of its ranking), then the winner:
    [{"stage": k, "name": ..., "place": N - k + 1}], stage 1 first; the one
    left at stage N (the winner) has place 1."""
    count = len(stages)
    return [
        {"stage": k, "name": ranking[-1], "place": count - k + 1}
        for k, ranking in enumerate(stages, 1)
        if ranking
    ]
