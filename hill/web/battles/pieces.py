"""A battle as the viewer fetches it: pieces of at most PIECE_STATES states,
each compact and self-contained.

A piece holds states [from, from + count) of the battle (state k is the
state after k cycles, 0..cycles):

* `tape`: the cells of state `from` (uint8);
* `changes`: for each later state of the piece, how many cells differ from
  the state before (uint8; at most 2, one per program), then `cells` and
  `values`: which cells and their new values, in state order;
* `left_pointer`, `right_pointer`: int8 cell indices (-1 or tape_length once
  a program has run off the tape);
* `left_source`, `right_source`: little-endian int32 source byte offsets of
  the instruction each program runs in cycle k + 1, for k in the piece
  below `cycles` (-1 once it has run past its end).

Arrays are base64.  The first piece also carries `overview`: up to
OVERVIEW_COLUMNS states sampled evenly over the whole battle, for the picture
of the whole battle that the viewer draws at once.
"""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

import numpy as np

from hill import engine

PIECE_STATES = 10_000
OVERVIEW_COLUMNS = 960  # the width of the viewer's overview canvas; 959 is odd, so no .5 ties


def _base64(array: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode()


def overview_cycles(cycles: int, columns: int = OVERVIEW_COLUMNS) -> np.ndarray:
    """The states the overview samples: every state of a short battle, else
    column x shows state round(x * cycles / (columns - 1))."""
    if cycles + 1 <= columns:
        return np.arange(cycles + 1)
    return np.floor(np.arange(columns) * cycles / (columns - 1) + 0.5).astype(np.int64)


def about(battle: engine.Trace) -> dict[str, Any]:
    """What every piece says about the whole battle."""
    return {
        "tape_length": battle.tape_length,
        "polarity": battle.polarity,
        "outcome": battle.outcome,
        "winner": battle.winner,
        "reason": battle.reason,
        "summary": battle.summary(),
        "cycles": battle.cycles,
        "piece_states": PIECE_STATES,
        "pieces": piece_count(battle.cycles),
        "encoding": "base64",
    }


def piece_count(cycles: int) -> int:
    return -(-(cycles + 1) // PIECE_STATES)


def piece(battle: engine.Trace, index: int, whole: dict[str, Any] | None = None) -> dict[str, Any]:
    """Piece `index` of the battle (see the module's docstring); `whole` is
    about(battle), when already known."""
    start = index * PIECE_STATES
    end = min(start + PIECE_STATES, battle.cycles + 1)
    tapes = battle.tapes[start:end]
    changed = tapes[1:] != tapes[:-1]
    rows, cells = np.nonzero(changed)
    data = {
        **(whole or about(battle)),
        "from": start,
        "count": end - start,
        "tape": _base64(tapes[0], "u1"),
        "changes": _base64(changed.sum(axis=1), "u1"),
        "cells": _base64(cells, "u1"),
        "values": _base64(tapes[1:][rows, cells], "u1"),
        "left_pointer": _base64(battle.left_pointer[start:end], "i1"),
        "right_pointer": _base64(battle.right_pointer[start:end], "i1"),
        "left_source": _base64(battle.left_source[start:end], "<i4"),
        "right_source": _base64(battle.right_source[start:end], "<i4"),
    }
    if index == 0:
        data["overview"] = overview(battle)
    return data


def overview(battle: engine.Trace) -> dict[str, Any]:
    """The sampled states: their cycle numbers, tapes (samples x tape_length)
    and pointers."""
    sampled = overview_cycles(battle.cycles)
    return {
        "cycles": sampled.tolist(),
        "tapes": _base64(battle.tapes[sampled], "u1"),
        "left_pointer": _base64(battle.left_pointer[sampled], "i1"),
        "right_pointer": _base64(battle.right_pointer[sampled], "i1"),
    }


def gzipped_pieces(battle: engine.Trace) -> tuple[bytes, ...]:
    """Every piece as gzipped JSON, ready to send (mtime 0: the same battle
    always gives the same bytes)."""
    whole = about(battle)
    return tuple(
        gzip.compress(
            json.dumps(piece(battle, i, whole), separators=(",", ":")).encode(),
            compresslevel=6,
            mtime=0,
        )
        for i in range(piece_count(battle.cycles))
    )
