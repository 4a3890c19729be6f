"""The reference data kept in tests/data (see its README): 98 real hill
programs, the outcome of all 9604 of their jousts, and the established
hill's scores of one of its states."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hill import engine
from hill.rules import scoring

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"


def warrior_path(name: str) -> Path:
    return REFERENCE / "warriors" / name


def fixture_matrix() -> tuple[np.ndarray, dict[str, list[float]]]:
    fixture = json.loads((REFERENCE / "scores-esohill-20131008.json").read_text())
    names = (REFERENCE / "index.txt").read_text().split()
    lines = (REFERENCE / "results.txt").read_text().splitlines()
    index = [names.index(p) for p in fixture["programs"]]
    n = len(index)
    r = np.zeros((n, n, engine.BATTLES), dtype=np.int8)
    for a, i in enumerate(index):
        for b, j in enumerate(index):
            r[a, b] = engine.parse_classic_line(lines[i * len(names) + j])
    return r, fixture


def scores_of(r: np.ndarray) -> scoring.Scores:
    return scoring.score_all(scoring.battle_wins(r), r.shape[2])
