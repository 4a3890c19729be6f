"""Charts drawn server-side as inline SVG: geometry here, markup in the
templates (line charts in series.html, the error bars in ladder.html)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

WIDTH, HEIGHT = 720, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 28


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    left: int  # where the plot starts and ends, across
    right: int
    line: str  # the polyline's points
    dots: list[tuple[float, float, str]]  # x, y, tooltip
    y_ticks: list[tuple[float, str]]
    x_ticks: list[tuple[float, str]]


def _ticks(low: float, high: float, count: int = 5) -> list[float]:
    if high == low:
        return [low]
    step = (high - low) / (count - 1)
    return [low + i * step for i in range(count)]


def line_chart(
    points: Sequence[Mapping[str, Any]],
    key: str,
    *,
    inverted: bool = False,
    low: float | None = None,
    high: float | None = None,
) -> Chart:
    """points[i][key] over the states, on an axis from low to high (default:
    the values' range); inverted puts small values on top (ranks)."""
    values = [float(p[key]) for p in points]
    low = min(values) if low is None else low
    high = max(values) if high is None else high
    if high == low:
        high = low + 1
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(i: int) -> float:
        return LEFT + (plot_w * i / (len(points) - 1) if len(points) > 1 else plot_w / 2)

    def y(v: float) -> float:
        share = (v - low) / (high - low)
        return TOP + plot_h * (share if inverted else 1 - share)

    coords = [(round(x(i), 1), round(y(v), 1)) for i, v in enumerate(values)]
    dots = [
        (cx, cy, f"state #{p['event']} ({p['time']}): {key} {float(p[key]):g}")
        for (cx, cy), p in zip(coords, points, strict=True)
    ]
    last = len(points) - 1
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        left=LEFT,
        right=WIDTH - RIGHT,
        line=" ".join(f"{cx},{cy}" for cx, cy in coords),
        dots=dots,
        y_ticks=[
            (round(y(v), 1), f"{v:.0f}" if high - low >= 10 else f"{v:.1f}")
            for v in _ticks(low, high)
        ],
        x_ticks=[(round(x(i), 1), f"#{points[i]['event']}") for i in sorted({0, last // 2, last})],
    )


# the error-bar chart of the ladder: a row per program, its rank and name on
# the left, ratings on a log scale (shares of 1000, from far below 1 up).
# Drawn at its own size (12 px labels): names are never cut, so that two
# programs sharing a prefix ("old_david.werecat_...") stay apart.  Short
# names sit left of their bars; when one would not fit there, every name
# goes on a line of its own above its bar, so that the bars still fit a
# phone (a name longer than the chart scrolls sideways in the chart's box).
BAR_PLOT, BAR_ROW, BAR_TOP, BAR_BOTTOM, BAR_RIGHT = 188, 17, 6, 26, 10
BAR_RANK, BAR_NAME = 24, 30  # where the rank ends and the name starts, across
BAR_SIDE = 124  # the names' room left of the bars (16 characters)
BAR_STACKED = 288  # the plot's width when the names are above the bars
LABEL_CHARS = 19  # the names' room at least, in characters
CHAR_WIDTH = 7.5  # a 12 px character at most, but for the widest few (m, w, W, M)


def label_room(names: Sequence[str], chars: int = LABEL_CHARS, width: float = CHAR_WIDTH) -> int:
    """The width that holds the longest of `names` whole, in px."""
    longest = max((len(n) + sum(c in "mwMW" for c in n) // 2 for n in names), default=0)
    return math.ceil(max(chars, longest) * width)


@dataclass(frozen=True)
class Bar:
    name_y: float  # the baseline of its rank and name
    y: float
    x: float  # the rating
    low: float  # and its interval
    high: float
    rank: int
    label: str  # the whole name
    tooltip: str
    highlight: bool


@dataclass(frozen=True)
class ErrorBars:
    width: int
    height: int
    rank_x: int  # where ranks end and names start, across
    name_x: int
    left: int  # where the plot starts and ends, across
    right: int
    bars: list[Bar]
    x_ticks: list[tuple[float, str]]


def _log_ticks(low: float, high: float) -> list[float]:
    """1, 2 and 5 times powers of ten within [low, high] (at most 6: the 2s
    go first, then the 5s; the ends when fewer than 2)."""
    ticks = [
        m * 10.0**k
        for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
        for m in (1, 2, 5)
    ]
    inside = [t for t in ticks if low <= t <= high]
    for keep in ("125", "15", "1"):  # fewer, while they would crowd
        if len(inside) > 6:
            inside = [t for t in inside if f"{t:e}"[0] in keep]
    return inside if len(inside) >= 2 else [low, high]


def error_bars(
    rows: Sequence[Mapping[str, Any]],
    highlight: str = "on_hill",
    *,
    keys: tuple[str, str, str] = ("rating", "rating_low", "rating_high"),
    name: str = "name",
    tooltip: Callable[[Mapping[str, Any]], str] | None = None,
    span: tuple[float, float] | None = None,
    tick: Callable[[float], str] = "{:g}".format,
) -> ErrorBars:
    """rows[i]: "rank", its `name`, the value and its interval (`keys`: by
    default "rating", "rating_low", "rating_high") and `highlight`, a flag
    drawn in the accent colour; `tooltip` says a row in words (default: a
    rating's); `span`, the axis (default: the values'), and `tick` its labels."""
    value, low_key, high_key = keys
    values = [v for r in rows for v in (r[low_key], r[high_key], r[value])]
    positive = [v for v in values if v > 0] or [1.0]
    low, high = span or (min(positive) / 1.2, max(positive) * 1.2)
    room = label_room([str(r[name]) for r in rows], chars=1)
    stacked = room > BAR_SIDE
    left = BAR_NAME if stacked else BAR_NAME + BAR_SIDE + 8
    right = left + (BAR_STACKED if stacked else BAR_PLOT)
    row = 2 * BAR_ROW - 2 if stacked else BAR_ROW

    def x(value: float) -> float:
        share = (math.log(max(value, low)) - math.log(low)) / (math.log(high) - math.log(low))
        return round(left + (right - left) * share, 1)

    def rating(r: Mapping[str, Any]) -> str:
        return (
            f"{r['rank']}. {r['name']}: rating {r['rating']:.2f} "
            f"(95% interval {r['rating_low']:.2f} to {r['rating_high']:.2f})"
        )

    bars = [
        Bar(
            name_y=BAR_TOP + row * i + 12 if stacked else BAR_TOP + row * (i + 0.5) + 4,
            y=BAR_TOP + row * (i + 0.5) + (7 if stacked else 0),
            x=x(r[value]),
            low=x(r[low_key]),
            high=x(r[high_key]),
            rank=r["rank"],
            label=str(r[name]),
            tooltip=(tooltip or rating)(r),
            highlight=bool(r.get(highlight)),
        )
        for i, r in enumerate(rows)
    ]
    return ErrorBars(
        width=max(right, BAR_NAME + room) + BAR_RIGHT,
        height=BAR_TOP + row * len(rows) + BAR_BOTTOM,
        rank_x=BAR_RANK,
        name_x=BAR_NAME,
        left=left,
        right=right,
        bars=bars,
        x_ticks=[(x(t), tick(t)) for t in _log_ticks(low, high)],
    )
