"""Benchmark: the full 98 x 98 reference matrix (9604 jousts, 403,368 battles).

Prints wall time, jousts/s and battle-cycles/s, single-threaded and on every
core.  Battle-cycles are the lengths of the games played (a tie found early
counts as running to the cycle limit), so the figure compares with an
interpreter that simulates every cycle; the cycles this engine actually
simulated are printed too.  Every result is checked against results.txt.

    .venv/bin/python bench/matrix.py [--jobs N] [--repeat K]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from hill import engine

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference"


def load() -> tuple[list[engine.Program], list[str], float]:
    names = (REFERENCE / "index.txt").read_text().split()
    started = time.perf_counter()
    programs = [
        engine.compile_program((REFERENCE / "warriors" / name).read_bytes()) for name in names
    ]
    elapsed = time.perf_counter() - started
    return programs, (REFERENCE / "results.txt").read_text().splitlines(), elapsed


def run(programs: list[engine.Program], expected: list[str], jobs: int) -> None:
    pairs = [(a, b) for a in programs for b in programs]
    started = time.perf_counter()
    results = engine.joust_pairs(pairs, jobs=jobs)
    wall = time.perf_counter() - started
    wrong = sum(str(r) != e for r, e in zip(results, expected, strict=True))
    games = sum(r.game_cycles for r in results)
    simulated = sum(r.cycles for r in results)
    print(
        f"jobs={jobs}: {wall:6.2f} s wall, {len(pairs) / wall:7.0f} jousts/s, "
        f"{games / wall / 1e6:7.1f} M battle-cycles/s "
        f"({games / 1e9:.2f} G played, {simulated / 1e9:.2f} G simulated: "
        f"{wall / games * 1e9:.2f} ns per battle-cycle), "
        f"{'all results match' if not wrong else f'{wrong} RESULTS DIFFER'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=engine.default_jobs(), help="all cores")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    programs, expected, compile_time = load()
    print(f"compiled {len(programs)} programs in {compile_time:.2f} s")
    for _ in range(args.repeat):
        run(programs, expected, 1)
        if args.jobs > 1:
            run(programs, expected, args.jobs)


if __name__ == "__main__":
    main()
