"""Benchmark: every statistic of docs/statistics.md for the 47-program 2013 hill.

Prints the time of hill.statistics.hill_statistics (TAPL, TAZD, QOOA, PPRG,
games behind and the 200-resample rank bootstrap with markov), best and
median of a few runs; the goal is under half a second.

    .venv/bin/python bench/hill_statistics.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from hill.engine.varied import REFERENCE, reference_outcomes
from hill.rules import scoring, statistics


def hill_2013() -> np.ndarray:
    """The 2013 hill's (47, 47, 42) outcomes in markov rank order."""
    programs = json.loads((REFERENCE / "scores-esohill-20131008.json").read_text())["programs"]
    r = reference_outcomes(programs)
    scores = scoring.score_all(scoring.battle_wins(r), r.shape[2])
    order = scoring.rank_order(scores, "markov", list(range(len(programs))))
    return r[np.ix_(order, order)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    r = hill_2013()
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        stats = statistics.hill_statistics(r, "markov")
        times.append(time.perf_counter() - started)
    print(
        f"statistics of the {r.shape[0]}-program hill: best {min(times) * 1000:.0f} ms, "
        f"median {np.median(times) * 1000:.0f} ms (goal: under 500 ms)"
    )
    print("leader:", stats.as_json(0))


if __name__ == "__main__":
    main()
