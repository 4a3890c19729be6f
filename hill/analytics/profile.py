"""A program's profile over its jousts (docs/analytics.md), from its side:

- pointer heat: the share of its cycles its pointer spent on each cell,
  by tape length (both polarities, every opponent);
- decoys: the median `decoy` value it leaves on each cell, by tape length,
  and over all its battles (a cell counts in the battles whose tape has it);
- duel lengths: the median, shortest and longest of its battles against
  each opponent;
- how it loses: per tape length and polarity, the battles it lost by its
  flag, those it lost off the tape, and the ties at the cycle limit
  (hill.analytics.battles says how each is told);
- problem opponents: those it loses most battles to, with how (the
  commoner of its flag falling and running off the tape, its flag on a
  tie), and its first battle against each lost that way, to look at.

And the features the strategy map clusters programs by (`features`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hill import engine
from hill.analytics.battles import CELLS, ON_TAPE, TAPES, Battles

TAPE_ROWS = np.array(list(engine.TAPE_LENGTHS))  # the heat maps' rows: 10..30
ROW_OF = TAPES - engine.MIN_TAPE  # battle i's row
ROW_CELLS = np.arange(CELLS)[None, :] < TAPE_ROWS[:, None]  # (21, 30): on the tape
# the duel-length histogram of the features: log10 of the cycles, 1 to 100000
DUEL_BINS = np.linspace(0.0, np.log10(engine.MAX_CYCLES), 16)


@dataclass(frozen=True)
class Profile:
    """A program's profile over k opponents' jousts (see the module).
    Cells past a tape are NaN in the (21, 30) maps."""

    jousts: int
    heat: np.ndarray  # (21, 30) share of its cycles per cell, by tape length
    decoys_by_tape: np.ndarray  # (21, 30) median decoy per cell, by tape length
    decoys: np.ndarray  # (30,) median decoy per cell over all its battles
    duels: np.ndarray  # (k, 3) median, shortest, longest battle per opponent (cycles)
    lost_by_flag: np.ndarray  # (42,) battles lost by its flag, per tape and polarity
    lost_off_tape: np.ndarray  # (42,)
    tied_at_limit: np.ndarray  # (42,)
    lost: np.ndarray  # (k,) battles lost to each opponent
    lost_flag: np.ndarray  # (k,) of which by its flag
    lost_off: np.ndarray  # (k,) of which off the tape
    sample: np.ndarray  # (k,) its first battle against each lost the commoner way (-1: none)
    duel_histogram: np.ndarray  # (15,) share of its battles by log10(cycles)


def by_row(values: np.ndarray) -> np.ndarray:
    """(k, 42, 30) summed into the heat maps' (21, 30) rows by tape length."""
    rows = np.zeros((len(TAPE_ROWS), CELLS), dtype=np.float64)
    np.add.at(rows, ROW_OF, values.sum(axis=0))
    return rows


def row_medians(decoy: np.ndarray) -> np.ndarray:
    """(k, 42, 30) decoys: the median per cell of each tape length's battles."""
    medians = np.full((len(TAPE_ROWS), CELLS), np.nan)
    for row, tape in enumerate(TAPE_ROWS):
        chosen = decoy[:, np.equal(TAPES, tape), :tape].reshape(-1, tape)
        if chosen.size:
            medians[row, :tape] = np.median(chosen, axis=0)
    return medians


def cell_medians(decoy: np.ndarray) -> np.ndarray:
    """(k, 42, 30) decoys: the median per cell over the battles that have it."""
    medians = np.full(CELLS, np.nan)
    for cell in range(CELLS):
        chosen = decoy[:, ON_TAPE[:, cell], cell]
        if chosen.size:
            medians[cell] = np.median(chosen)
    return medians


def profile(b: Battles) -> Profile:
    """The profile of a program from its battles (hill.analytics.battles)."""
    heat = by_row(b.heat)
    totals = heat.sum(axis=1, keepdims=True)
    shares = np.divide(heat, totals, out=np.zeros_like(heat), where=totals > 0)
    shares[~ROW_CELLS] = np.nan
    lost = b.outcomes < 0
    flag, off = b.lost_by_flag, b.lost_off_tape
    # the sample shows how it loses to each: a battle lost the commoner way
    way = np.where((flag.sum(axis=1) >= off.sum(axis=1))[:, None], flag, off)
    first_lost = np.where(way.any(axis=1), way.argmax(axis=1), -1)
    cycles = b.cycles.astype(np.float64)
    duels = (
        np.stack([np.median(cycles, axis=1), cycles.min(axis=1), cycles.max(axis=1)], axis=1)
        if b.count
        else np.zeros((0, 3))
    )
    histogram, _ = np.histogram(np.log10(np.maximum(cycles, 1)), bins=DUEL_BINS)
    return Profile(
        jousts=b.count,
        heat=shares,
        decoys_by_tape=row_medians(b.decoy),
        decoys=cell_medians(b.decoy),
        duels=duels,
        lost_by_flag=flag.sum(axis=0),
        lost_off_tape=off.sum(axis=0),
        tied_at_limit=b.tied_at_limit.sum(axis=0),
        lost=lost.sum(axis=1),
        lost_flag=flag.sum(axis=1),
        lost_off=off.sum(axis=1),
        sample=first_lost,
        duel_histogram=histogram / max(1, histogram.sum()),
    )


def problems(p: Profile, count: int) -> list[int]:
    """The (at most `count`) opponents it loses most battles to, worst first
    (indexes into its opponents; none it never loses to)."""
    order = sorted(range(p.jousts), key=lambda i: (-int(p.lost[i]), i))
    return [i for i in order[:count] if p.lost[i] > 0]


def features(p: Profile) -> np.ndarray:
    """What the strategy map compares programs by: the pointer heat (its
    shares per cell and tape length), the decoys (median per cell and tape
    length, over 128) and the duel lengths (the shares of its battles by
    log10 of their cycles), each block scaled to unit length so that the
    three weigh alike in a cosine."""
    blocks = [
        np.nan_to_num(p.heat[ROW_CELLS]),
        np.nan_to_num(p.decoys_by_tape[ROW_CELLS]) / 128.0,
        p.duel_histogram,
    ]
    return np.concatenate([block / max(float(np.linalg.norm(block)), 1e-12) for block in blocks])
