"""A program's battles as the statistics tell them, from its own side.

The statistics of a joust are kept from its left program's side (cell 0
its flag, cells numbered as it sees the tape).  For the right program
everything is mirrored: its cell c is the left program's T - 1 - c, its
heat and decoys are the second of each pair, and the outcome changes sign.

How a battle ended for the program, from its statistics:

- lost by its flag: it lost and its flag is 0 at the end (a flag that
  falls stays at 0 for the two cycles that decide the battle);
- lost off the tape: it lost and its flag is not 0 at the end, which only
  running off the tape does.  A program that runs off the tape in the very
  cycle its flag reaches 0 counts as lost by its flag: the statistics
  cannot tell the two apart, and its flag did fall;
- tied at the limit: a tie that lasted MAX_CYCLES cycles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hill import engine

CELLS = engine.MAX_TAPE
TAPES = np.array([engine.battle_config(i)[0] for i in range(engine.BATTLES)])  # (42,)
ON_TAPE = np.arange(CELLS)[None, :] < TAPES[:, None]  # (42, 30): cell c exists in battle i
# cell c of the right program's view is the left's T - 1 - c (cells past the tape stay put)
MIRROR = np.where(ON_TAPE, TAPES[:, None] - 1 - np.arange(CELLS)[None, :], np.arange(CELLS))
BATTLE = np.arange(engine.BATTLES)


@dataclass(frozen=True)
class Battles:
    """One program's battles against k opponents, from its side: arrays of
    (k, 42) or (k, 42, 30) in the joust's order (sieve 10..30, kettle 10..30)."""

    outcomes: np.ndarray  # int8: +1 it won, 0 tie, -1 it lost
    cycles: np.ndarray  # int64
    heat: np.ndarray  # int64 (k, 42, 30): its pointer's heat, cell 0 its flag
    decoy: np.ndarray  # uint8 (k, 42, 30): its decoys, cell 0 its flag
    flag: np.ndarray  # int16: its flag's value at the end (signed)

    @property
    def count(self) -> int:
        return int(self.outcomes.shape[0])

    @property
    def lost_by_flag(self) -> np.ndarray:
        """(k, 42) bool: lost with its flag at 0."""
        return (self.outcomes < 0) & (self.flag == 0)

    @property
    def lost_off_tape(self) -> np.ndarray:
        """(k, 42) bool: lost with its flag standing: it ran off the tape."""
        return (self.outcomes < 0) & (self.flag != 0)

    @property
    def tied_at_limit(self) -> np.ndarray:
        """(k, 42) bool: tied after the full MAX_CYCLES cycles."""
        return (self.outcomes == 0) & (self.cycles >= engine.MAX_CYCLES)


def own_side(records: np.ndarray, left: bool) -> tuple[np.ndarray, ...]:
    """A joust's records (engine.STATS_RECORD, 42) from one program's side:
    (cycles (42,), heat (42, 30), decoy (42, 30), its flag at the end (42,))."""
    cycles = records["cycles"].astype(np.int64)
    if left:
        return cycles, records["heat"][:, 0], records["decoy"][:, 0], records["tape"][:, 0]
    heat = np.take_along_axis(records["heat"][:, 1], MIRROR, axis=1)
    decoy = np.take_along_axis(records["decoy"][:, 1], MIRROR, axis=1)
    return cycles, heat, decoy, records["tape"][BATTLE, TAPES - 1]


def battles(
    joust_records: Sequence[np.ndarray], lefts: Sequence[bool], outcomes: np.ndarray
) -> Battles:
    """A program's battles: each joust's records with whether the program
    sat on the left, and the outcomes (k, 42) from its side."""
    k = len(joust_records)
    sides = [own_side(r, left) for r, left in zip(joust_records, lefts, strict=True)]
    if not k:
        empty = np.zeros((0, engine.BATTLES), dtype=np.int64)
        cells = np.zeros((0, engine.BATTLES, CELLS), dtype=np.int64)
        return Battles(empty.astype(np.int8), empty, cells, cells.astype(np.uint8), empty)
    return Battles(
        outcomes=np.asarray(outcomes, dtype=np.int8).reshape(k, engine.BATTLES),
        cycles=np.stack([s[0] for s in sides]),
        heat=np.stack([s[1] for s in sides]).astype(np.int64),
        decoy=np.stack([s[2] for s in sides]).astype(np.uint8),
        flag=np.stack([s[3] for s in sides]).astype(np.int16),
    )
