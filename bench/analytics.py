"""Benchmark: the analytics on the 47 programs of the 2013 hill.

- what the statistics cost to keep: packed bytes a joust (hill.engine.packing),
  and so for a hill of 50 and an archive of 5000 programs;
- what they cost a player: a `-test` and a challenge against the full hill,
  played with and without the statistics (interleaved; the minimum of
  --repeat runs, each a new program so that every joust is played);
- the backfill: jousts replayed a second on one thread;
- the web: analysing the hill (every profile and the strategy map), which
  it does once per hill state.

    .venv/bin/python bench/analytics.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from sqlalchemy import delete

from hill import engine
from hill.config import HillSettings
from hill.engine.arena import Arena
from hill.rules.names import from_file
from hill.store.joust_stats import stats_among
from hill.store.tables import JoustStats
from hill.web.analytics.reader import AnalyticsReader
from hill.writers.backfill import StatsBackfill
from hill.writers.hill import Hill

WARRIORS = Path(__file__).resolve().parents[1] / "tests/data/reference/warriors"
LADDER_BUDGET = 0.2  # the ladder's default share of the pairs


def seconds(action: Callable[[], object]) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    programs = sorted((WARRIORS / "esohill-20131008").glob("*.bfjoust"))
    newcomer = (WARRIORS / "esohill-20241026/Lymia.lugh.bfjoust").read_bytes()
    with tempfile.TemporaryDirectory() as folder:
        hill = Hill(HillSettings(data_dir=Path(folder)))
        for path in programs:
            hill.challenge("esohill", from_file(path), path.read_bytes())
        hashes = [e.program.code_hash for e in hill.queries.standings().entries]
        with hill.db.session() as session:
            sizes = [len(p) for p in stats_among(session, hashes).values()]
        mean = statistics.mean(sizes)
        print(
            f"packed statistics: {len(sizes)} jousts, {mean:.0f} bytes a joust on average "
            f"(median {statistics.median(sizes):.0f}, 90% {np.percentile(sizes, 90):.0f}, "
            f"max {max(sizes)}); the engine's records: "
            f"{engine.BATTLES * engine.STATS_RECORD.itemsize} bytes"
        )
        hill_50 = 50 * 49 // 2
        archive = round(5000 * 4999 // 2 * LADDER_BUDGET)
        print(f"  a hill of 50: {hill_50} jousts, {hill_50 * mean / 1e6:.1f} MB")
        print(
            f"  an archive of 5000 with the ladder's {LADDER_BUDGET:.0%} of its pairs: "
            f"{archive:,} jousts, {archive * mean / 1e9:.1f} GB "
            f"(every pair: {5000 * 4999 // 2 * mean / 1e9:.1f} GB)"
        )

        with_stats, without = hill.arena, Arena(stats=False)
        runs: dict[str, list[float]] = {}
        for i in range(args.repeat):
            for label, arena in (("with statistics", with_stats), ("without", without)):
                hill.arena = arena
                code = newcomer + b"+" * (2 * i + (label == "without"))  # new: every joust played
                took = seconds(lambda c=code: hill.challenge("t", "b", c, test_only=True))
                runs.setdefault(f"-test, {label}", []).append(took)
        hill.arena = with_stats
        for label, times in runs.items():
            print(f"{label}: {min(times):.3f} s (min of {len(times)})")

        with hill.lock.transaction() as session:
            session.execute(delete(JoustStats))
        backfill = StatsBackfill(hill, jobs=1)
        total = backfill.progress()[1]
        took = seconds(lambda: [None for _ in iter(lambda: backfill.work(64).done, True)])
        print(f"backfill, one thread: {total} jousts in {took:.1f} s ({total / took:.0f} a second)")

        snap_standings = hill.queries.standings()
        reader = AnalyticsReader(hill.db)
        n = snap_standings.size
        played = ~np.eye(n, dtype=bool)
        args_ = (
            [e.program.full_name for e in snap_standings.entries],
            hashes,
            snap_standings.outcomes,
            played,
        )
        took = seconds(lambda: reader._analyse(*args_))
        print(f"analyse the hill ({n} profiles and the map): {took:.2f} s")
        reader.close()
        hill.close()


if __name__ == "__main__":
    main()
