"""The analytics' pictures drawn on the server as inline SVG: geometry and
colours here, markup in the templates (_analytics.html).

- `heat_map`: a grid of values by tape length (rows 10..30) and cell
  (columns, the program's flag at the left), coloured on a sequential
  scale (pointer heat, decoys);
- `strategy_chart`: the dendrogram beside a matrix of the programs in its
  order (the results, or the duel lengths on a log scale), names on the
  right, families coloured.

Colours are computed here (the palettes are perceptually even, readable
in light and dark mode alike); sizes are in CSS pixels, drawn 1:1 (the
matrices scroll sideways on a phone rather than shrink).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from hill.web.charts.lines import label_room

# viridis at nine stops (dark purple, blue, green, yellow): a value's colour
VIRIDIS = [
    (68, 1, 84),
    (71, 44, 122),
    (59, 81, 139),
    (44, 113, 142),
    (33, 144, 141),
    (39, 173, 129),
    (92, 200, 99),
    (170, 220, 50),
    (253, 231, 37),
]
# dark red to light yellow, for decoys (how far from zero a cell is left)
INFERNO = [
    (20, 11, 53),
    (87, 16, 110),
    (138, 34, 106),
    (188, 55, 84),
    (228, 90, 49),
    (249, 142, 9),
    (244, 203, 66),
    (252, 255, 164),
]
FAMILIES = [  # the strategy map's families (0: none, above the threshold)
    "#8a8fa3",
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#17becf",
    "#bcbd22",
]


def colour(share: float, palette: Sequence[tuple[int, int, int]] = VIRIDIS) -> str:
    """The palette's colour at `share` (0 to 1, clipped), as #rrggbb."""
    share = min(1.0, max(0.0, share))
    at = share * (len(palette) - 1)
    low = min(int(at), len(palette) - 2)
    t = at - low
    rgb = [round(a + (b - a) * t) for a, b in zip(palette[low], palette[low + 1], strict=True)]
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def family_colour(family: int) -> str:
    return FAMILIES[family % len(FAMILIES)] if family else FAMILIES[0]


@dataclass(frozen=True)
class Cell:
    x: float
    y: float
    fill: str
    tip: str
    css: str = ""  # a class instead of a fill (the results' win/loss shades)
    href: str = ""


@dataclass(frozen=True)
class Legend:
    stops: list[tuple[float, str]]  # offset (0..1), colour
    ticks: list[tuple[float, str]]  # offset (0..1), label


HEAT_CELL, HEAT_LEFT, HEAT_TOP = 12, 30, 16


@dataclass(frozen=True)
class HeatMap:
    width: int
    height: int
    size: int  # a cell's side
    cells: list[Cell]
    rows: list[tuple[float, str]]  # y, the tape length
    columns: list[tuple[float, str]]  # x, the cell number
    legend: Legend


def heat_map(
    rows: Sequence[Sequence[float | None]],
    tapes: Sequence[int],
    *,
    high: float,
    palette: str = "viridis",
    tip: Callable[[int, int, float], str],
    power: float = 1.0,
) -> HeatMap:
    """rows[r][c], the value of cell c on tape length tapes[r] (None: none),
    coloured from 0 to `high` (as (value / high) ** power: a power below 1
    shows the small values apart); `tip(tape, cell, value)` says a cell in
    words."""
    colours = VIRIDIS if palette == "viridis" else INFERNO
    span = max(high, 1e-9)

    def share(value: float) -> float:
        return (max(value, 0.0) / span) ** power

    cells = []
    for r, (tape, row) in enumerate(zip(tapes, rows, strict=True)):
        for c, value in enumerate(row):
            if value is None:
                continue
            x, y = HEAT_LEFT + c * HEAT_CELL, HEAT_TOP + r * HEAT_CELL
            cells.append(Cell(x, y, colour(share(value), colours), tip(tape, c, value)))
    width = HEAT_LEFT + max(tapes, default=0) * HEAT_CELL + 4
    ticks = [0.0, 0.25, 0.5, 0.75, 1.0]
    return HeatMap(
        width=width,
        height=HEAT_TOP + len(tapes) * HEAT_CELL + 4,
        size=HEAT_CELL,
        cells=cells,
        rows=[(HEAT_TOP + r * HEAT_CELL + HEAT_CELL - 2, str(t)) for r, t in enumerate(tapes)],
        columns=[
            (HEAT_LEFT + c * HEAT_CELL + HEAT_CELL / 2, str(c))
            for c in range(0, max(tapes, default=0), 5)
        ],
        legend=Legend(
            stops=[(s, colour(s, colours)) for s in (i / 8 for i in range(9))],
            ticks=[(t, _legend_label(t ** (1 / power) * span, span)) for t in ticks],
        ),
    )


def _legend_label(value: float, high: float) -> str:
    """A shade's value: a share (high at most 1) as a percentage."""
    return f"{value:.0%}" if high <= 1 else f"{value:.0f}"


# the dendrogram, then each leaf's family mark and its whole name (from the
# left, so that a phone shows where each starts), then the matrix, which
# scrolls sideways on a phone
MATRIX_CELL, TREE_WIDTH, NAMES_WIDTH, MATRIX_TOP = 12, 90, 170, 6
NAME_CHARS, NAME_CHAR_WIDTH = 22, 6.6  # the names' room at least; an 11 px character


@dataclass(frozen=True)
class StrategyChart:
    width: int
    height: int
    size: int
    links: list[tuple[str, str]]  # polyline points, colour
    cells: list[Cell]
    names: list[tuple[float, float, str, str, str]]  # x, y, label, full name, family colour
    marks: list[tuple[float, float, str]]  # x, y, family colour (a square beside each name)
    left: int  # where the matrix starts, across


def strategy_chart(
    names: Sequence[str],
    families: Sequence[int],
    icoord: Sequence[Sequence[float]],
    dcoord: Sequence[Sequence[float]],
    link_families: Sequence[int],
    cell: Callable[[int, int], Cell | None],
) -> StrategyChart:
    """The dendrogram (scipy's icoord and dcoord: leaf j at 10 j + 5) beside
    an n x n matrix whose rows and columns are the leaves in order, the
    names on the right; `cell(row, column)` gives each cell's colour and
    words at (0, 0) (None: no cell)."""
    n = len(names)
    size = MATRIX_CELL
    top = MATRIX_TOP
    # the names whole (two programs may share a long prefix), and the family's mark
    left = TREE_WIDTH + max(NAMES_WIDTH, label_room(names, NAME_CHARS, NAME_CHAR_WIDTH) + 20)
    name_x = TREE_WIDTH + 11  # after the family's mark, at the dendrogram's leaves
    deepest = max((max(ys) for ys in dcoord), default=0.0) or 1.0

    def x_of(height: float) -> float:
        return round(TREE_WIDTH - 4 - (TREE_WIDTH - 10) * height / deepest, 1)

    def y_of(leaf_x: float) -> float:
        return round(top + (leaf_x - 5) / 10 * size + size / 2, 1)

    links = [
        (" ".join(f"{x_of(h)},{y_of(i)}" for i, h in zip(xs, ys, strict=True)), family_colour(f))
        for xs, ys, f in zip(icoord, dcoord, link_families, strict=True)
    ]
    cells = []
    for row in range(n):
        for column in range(n):
            found = cell(row, column)
            if found is not None:
                x, y = left + column * size, top + row * size
                cells.append(Cell(x, y, found.fill, found.tip, found.css, found.href))
    labels: list[tuple[float, float, str, str, str]] = []
    marks: list[tuple[float, float, str]] = []
    for row, (name, family) in enumerate(zip(names, families, strict=True)):
        y, fill = top + row * size, family_colour(family)
        labels.append((name_x, y + size - 2.5, name, name, fill))
        marks.append((TREE_WIDTH - 1, y + 2, fill))
    return StrategyChart(
        width=left + n * size + 6,
        height=top + n * size + 8,
        size=size,
        links=links,
        cells=cells,
        names=labels,
        marks=marks,
        left=left,
    )


def log_cycles_share(cycles: float, limit: int) -> float:
    """Where a number of cycles sits from 1 to the limit, on a log scale."""
    return math.log10(max(cycles, 1.0)) / math.log10(limit)


def duel_legend(limit: int) -> Legend:
    """The duel-length colours: 1 to `limit` cycles, log scale."""
    ticks = [10**k for k in range(round(math.log10(limit)) + 1)]
    return Legend(
        stops=[(s, colour(s)) for s in (i / 8 for i in range(9))],
        ticks=[(log_cycles_share(t, limit), cycles_tick(t)) for t in ticks],
    )


@dataclass(frozen=True)
class Family:
    colour: str
    label: str
    members: list[str]


def family_legend(names: Sequence[str], families: Sequence[int]) -> list[Family]:
    """What each colour of a strategy map's dendrogram and marks stands for:
    a family of programs that play alike, then (grey) those in none."""
    found: dict[int, list[str]] = {}
    for name, family in zip(names, families, strict=True):
        found.setdefault(family, []).append(name)
    numbered = sorted(f for f in found if f)
    legend = [Family(family_colour(f), f"family {i}", found[f]) for i, f in enumerate(numbered, 1)]
    if 0 in found:
        legend.append(Family(family_colour(0), "in no family", found[0]))
    return legend


# --- what the templates call --------------------------------------------


def heat_high(rows: Sequence[Sequence[float | None]]) -> float:
    """The largest value of a heat map's rows (its colour scale's top)."""
    return max((v for row in rows for v in row if v is not None), default=0.0)


def heat_tip(tape: int, cell: int, share: float) -> str:
    return f"tape {tape}, cell {cell}: {share:.1%} of its cycles"


def decoy_tip(tape: int, cell: int, value: float) -> str:
    return f"tape {tape}, cell {cell}: it leaves {value:g} (median)"


def duel_tip(row: Mapping[str, Any]) -> str:
    return (
        f"{row['rank']}. {row['program']}: median {row['median']:,.0f} cycles "
        f"({row['low']:,} to {row['high']:,})"
    )


def results_chart(
    data: Mapping[str, Any], shade: Callable[[int], str], href: Callable[[str, str], str] | None
) -> StrategyChart:
    """A strategy map's results matrix (data: analytics_pages.strategy):
    each cell shaded as the hill's matrix, a link to the pair (`href`)."""
    names, margins = data["programs"], data["margins"]

    def cell(row: int, column: int) -> Cell | None:
        margin = margins[row][column]
        if margin is None:
            return None
        tip = f"{names[row]} vs {names[column]}: {margin:+d}"
        link = href(names[row], names[column]) if href else ""
        return Cell(0, 0, "", tip, shade(margin), link)

    return _chart(data, cell)


def duels_chart(data: Mapping[str, Any], limit: int) -> StrategyChart:
    """A strategy map's duel-length matrix: each pair's median cycles,
    coloured on a log scale from 1 to `limit`."""
    names, duels = data["programs"], data["duels"]

    def cell(row: int, column: int) -> Cell | None:
        cycles = duels[row][column]
        if cycles is None:
            return None
        tip = f"{names[row]} vs {names[column]}: median {cycles:,.0f} cycles"
        return Cell(0, 0, colour(log_cycles_share(cycles, limit)), tip)

    return _chart(data, cell)


def _chart(data: Mapping[str, Any], cell: Callable[[int, int], Cell | None]) -> StrategyChart:
    tree = data["dendrogram"]
    return strategy_chart(
        data["programs"], data["families"], tree["icoord"], tree["dcoord"], tree["families"], cell
    )


def cycles_tick(cycles: float) -> str:
    """An axis label of cycles: 1, 10, 100, 1k, 10k, 100k."""
    return f"{cycles / 1000:g}k" if cycles >= 1000 else f"{cycles:g}"


def cells_markup(chart: StrategyChart) -> Markup:
    """The matrix's cells as SVG markup (thousands of them: written here
    rather than by a template loop, 20 times faster), every text escaped."""
    size = chart.size
    parts = []
    for c in chart.cells:
        paint = f'class="{escape(c.css)}"' if c.css else f'fill="{escape(c.fill)}"'
        rect = (
            f'<rect x="{c.x}" y="{c.y}" width="{size}" height="{size}" {paint}>'
            f"<title>{escape(c.tip)}</title></rect>"
        )
        parts.append(f'<a href="{escape(c.href)}">{rect}</a>' if c.href else rect)
    return Markup("\n".join(parts))


DECOY_CELLS = 12  # the decoys' first cells, in words


def decoy_words(decoys: Sequence[float | None]) -> str:
    """The typical decoys in words: `cells 1-8: 64; cell 9: 32` (the first
    cells past its flag; runs of the same value joined)."""
    runs: list[tuple[int, int, int]] = []  # first cell, last cell, value
    for cell, value in enumerate(decoys[1 : DECOY_CELLS + 1], start=1):
        if value is None or round(value) == 0:
            continue
        if runs and runs[-1][1] == cell - 1 and runs[-1][2] == round(value):
            runs[-1] = (runs[-1][0], cell, runs[-1][2])
        else:
            runs.append((cell, cell, round(value)))
    if not runs:
        return "none: it leaves the cells it passes as it found them"
    return "; ".join(f"cell {a}: {v}" if a == b else f"cells {a}-{b}: {v}" for a, b, v in runs)
