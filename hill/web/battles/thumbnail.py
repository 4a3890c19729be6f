"""A battle as a small picture: the tape (x, one column per cell, the left
flag at x = 0) over time (y, top to bottom, states sampled evenly as the
viewer's overview samples them), a PNG of WIDTH x HEIGHT pixels.

A cell is white at 0 and darker as its value is farther from zero (signed:
128 is the farthest), so a program's decoys and a flag being cleared show;
the left program's pointer is a blue line at its cell's left edge, the right
one's an orange line at its right edge, as in the viewer (when on the tape).
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

from hill import engine
from hill.web.battles.pieces import overview_cycles

WIDTH = 60  # px: each column shows one cell (a cell spans 2 to 6 columns)
HEIGHT = 48  # px: states sampled
LEFT = (31, 119, 180)  # the viewer's blue
RIGHT = (255, 127, 14)  # the viewer's orange


def cell_columns(tape_length: int, width: int = WIDTH) -> np.ndarray:
    """The cell each pixel column shows: column x shows cell floor(x * n / width)."""
    return (np.arange(width) * tape_length) // width


def shades(tapes: np.ndarray) -> np.ndarray:
    """Gray levels (uint8, 255 white) of cell values: 255 at 0, darker as
    |signed value| grows, 55 at 128."""
    magnitude = np.abs(tapes.astype(np.int16) - (tapes > 127) * 256)
    return (255 - magnitude * 200 // 128).astype(np.uint8)


def thumbnail_pixels(battle: engine.Trace, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """(height, width, 3) uint8 RGB: the picture, before encoding."""
    states = overview_cycles(battle.cycles, height)
    rows = np.floor(np.arange(height) * len(states) / height).astype(np.int64)
    states = states[rows]  # a short battle: each state over several rows
    columns = cell_columns(battle.tape_length, width)
    gray = shades(battle.tapes[states][:, columns])
    picture = np.repeat(gray[:, :, None], 3, axis=2)
    edges = {  # each cell's first and last column
        "left": np.searchsorted(columns, np.arange(battle.tape_length), side="left"),
        "right": np.searchsorted(columns, np.arange(battle.tape_length), side="right") - 1,
    }
    for side, pointers, rgb in (
        ("left", battle.left_pointer, LEFT),
        ("right", battle.right_pointer, RIGHT),
    ):
        for y, cell in enumerate(pointers[states].astype(np.int64)):
            if 0 <= cell < battle.tape_length:
                picture[y, edges[side][cell]] = rgb
    return picture


def thumbnail_png(battle: engine.Trace, width: int = WIDTH, height: int = HEIGHT) -> bytes:
    """The picture as PNG bytes."""
    image = Image.fromarray(thumbnail_pixels(battle, width, height), "RGB")
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=True)
    return out.getvalue()
