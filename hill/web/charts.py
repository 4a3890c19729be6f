"""Line charts drawn server-side as inline SVG: geometry here, markup in series.html."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
