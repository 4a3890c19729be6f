"""Benchmark: the all-time ladder over a hill's archive (hill.ladder_service).

Builds a hill of 47 that has seen N programs (the 98 reference programs,
then varied ones from hill/engine/varied.py), one submission at a time, so that
those pushed off met only the hill of their day; then times what the
background ladder does: loading the archive, a batch of 8 jousts on one
core (the bot's), a refit of the standing with its statistics, and the
jousts a second it plays flat out.

    .venv/bin/python bench/ladder_hill.py [--programs 300]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from submit import timed

from bot.ladder import BATCH, REFIT_SECONDS
from hill.config import HillSettings
from hill.engine.varied import reference_pool, varied_pool
from hill.rules.names import from_file
from hill.writers.hill import Hill
from hill.writers.ladder import ArchiveLadder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=300)
    args = parser.parse_args()
    pool = reference_pool() + varied_pool(max(args.programs - 98, 0), seed=1)
    pool = pool[: args.programs]
    with tempfile.TemporaryDirectory() as folder:
        hill = Hill(HillSettings(data_dir=Path(folder)))

        def build() -> None:
            for name, code in pool:
                hill.challenge("bench", from_file(name)[-48:], code)

        timed(f"build a hill of 47 that has seen {len(pool)} programs", build)
        ladder = ArchiveLadder(hill, jobs=1, refit_seconds=REFIT_SECONDS)  # as the bot
        timed(
            "load the archive and refit (the first piece of work, no joust)", lambda: ladder.work(0)
        )
        n = ladder.ladder.size
        pairs = n * (n - 1) // 2
        print(f"  {n} programs, {ladder.ladder.played} of {pairs} pairs jousted on the hill")
        for _ in range(3):  # warm up: the compiled programs
            ladder.work(BATCH)
        started = time.perf_counter()
        for _ in range(20):
            ladder.work(BATCH)
        batch = (time.perf_counter() - started) / 20
        print(f"a batch of {BATCH} jousts on one core, planning included: {batch * 1000:.0f} ms")
        timed("refit the standing and its statistics, and store it", ladder.refit)
        started = time.perf_counter()
        played = ladder.step(n * 2, batch=BATCH)
        elapsed = time.perf_counter() - started
        print(
            f"flat out on one core: {played} jousts in {elapsed:.1f} s ({played / elapsed:.0f}/s)"
        )
        hill.close()


if __name__ == "__main__":
    main()
