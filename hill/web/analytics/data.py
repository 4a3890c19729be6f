"""The analytics pages' data, as plain JSON-ready dicts (a page and its
`/api/...` twin are the same dict): a program's profile and a pool's
strategy map, from its analysis (hill.analytics.pool).  Contracts:
docs/analytics.md and the README's API table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from hill import engine
from hill.analytics.pool import PoolAnalysis
from hill.analytics.profile import problems

TAPES = list(engine.TAPE_LENGTHS)
PROBLEMS = 5  # problem opponents shown
ALIKE = 3  # programs that play most alike shown
MAX_MAP = 100  # programs a strategy map shows at most (the first by rank)


def _number(value: float, digits: int = 4) -> float | None:
    """A JSON number (None for NaN)."""
    return None if math.isnan(value) else round(float(value), digits)


def _rows(grid: np.ndarray, digits: int) -> list[list[float | None]]:
    """A (21, 30) map as one row per tape length, of that many cells."""
    return [[_number(v, digits) for v in grid[r, :tape]] for r, tape in enumerate(TAPES)]


def _by_polarity(counts: np.ndarray) -> dict[str, list[int]]:
    rows = np.asarray(counts).reshape(len(engine.POLARITIES), len(TAPES))
    return {p: rows[i].astype(int).tolist() for i, p in enumerate(engine.POLARITIES)}


def profile(
    analysis: PoolAnalysis, index: int, ranks: Sequence[int], codes: Sequence[str]
) -> dict[str, Any]:
    """The profile of program `index` of the pool (`ranks` and `codes`:
    every program's rank and code hash, in the pool's order)."""
    names = analysis.names
    found = analysis.profiles[index]
    opponents = analysis.opponents[index]
    data: dict[str, Any] = {
        "program": names[index],
        "code": codes[index],
        "jousts": len(opponents),
        "waiting": [names[b] for b in analysis.waiting[index]],
        "tapes": TAPES,
        "heat": None,
        "decoys": None,
        "duels": [],
        "losses": None,
        "problems": [],
        "alike": [],
    }
    if found is None:
        return data
    data["heat"] = _rows(found.heat, 4)
    data["decoys"] = {
        "by_tape": _rows(found.decoys_by_tape, 1),
        "cells": [_number(v, 1) for v in found.decoys],
    }
    data["duels"] = [
        {
            "program": names[b],
            "rank": ranks[b],
            "median": _number(found.duels[i, 0], 1),
            "low": int(found.duels[i, 1]),
            "high": int(found.duels[i, 2]),
        }
        for i, b in enumerate(opponents)
    ]
    data["losses"] = {
        "flag": _by_polarity(found.lost_by_flag),
        "off_tape": _by_polarity(found.lost_off_tape),
        "tied_limit": _by_polarity(found.tied_at_limit),
        "total": {
            "flag": int(found.lost_by_flag.sum()),
            "off_tape": int(found.lost_off_tape.sum()),
            "tied_limit": int(found.tied_at_limit.sum()),
        },
    }
    data["problems"] = [
        _problem(analysis, index, i, ranks, codes) for i in problems(found, PROBLEMS)
    ]
    data["alike"] = [
        {"program": names[b], "rank": ranks[b], "distance": round(d, 4)}
        for b, d in analysis.alike(index, ALIKE)
    ]
    return data


def _problem(
    analysis: PoolAnalysis, index: int, i: int, ranks: Sequence[int], codes: Sequence[str]
) -> dict[str, Any]:
    """One problem opponent: how many battles it wins, how, and a sample."""
    found = analysis.profiles[index]
    assert found is not None
    b = analysis.opponents[index][i]
    flag, off = int(found.lost_flag[i]), int(found.lost_off[i])
    tape, polarity = engine.battle_config(int(found.sample[i]))
    return {
        "program": analysis.names[b],
        "rank": ranks[b],
        "code": codes[b],
        "lost": int(found.lost[i]),
        "flag": flag,
        "off_tape": off,
        "reason": "flag" if flag >= off else "off_tape",
        "sample": {"tape": tape, "polarity": polarity},
    }


def strategy(
    analysis: PoolAnalysis, margins: np.ndarray, ranks: Sequence[int], shown: int
) -> dict[str, Any]:
    """The strategy map of a pool whose first `shown` programs (by rank)
    are mapped: programs in the dendrogram's order, their families, the
    linkage (scipy's, over positions in `programs`), the results matrix
    (margins, None where no joust) and the duel lengths (median cycles of
    each pair's battles, None where none), in the same order."""
    order = analysis.order()
    strategy_map = analysis.strategy
    return {
        "size": len(analysis.names),
        "shown": shown,
        "method": {
            "features": ["heat", "decoys", "duels"],
            "linkage": "average",
            "metric": "cosine",
        },
        "programs": [analysis.names[a] for a in order],
        "ranks": [ranks[a] for a in order],
        "families": [strategy_map.families[analysis.mapped.index(a)] for a in order],
        "linkage": [
            [int(row[0]), int(row[1]), round(float(row[2]), 6), int(row[3])]
            for row in strategy_map.linkage
        ],
        # scipy's drawing of it: per link, four x (leaf j at 10 j + 5) and heights
        "dendrogram": {
            "icoord": strategy_map.icoord,
            "dcoord": [[round(y, 6) for y in ys] for ys in strategy_map.dcoord],
            "families": strategy_map.link_families,
        },
        "margins": [[_margin(margins, a, b) for b in order] for a in order],
        "duels": [[_number(analysis.duels[a, b], 1) for b in order] for a in order],
        "waiting": [analysis.names[a] for a in range(len(analysis.names)) if a not in order],
        "complete": analysis.complete,
    }


def _margin(margins: np.ndarray, a: int, b: int) -> int | None:
    value = margins[a, b]
    return None if a == b or np.isnan(value) else int(value)
