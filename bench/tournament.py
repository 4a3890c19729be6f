"""Benchmark: tournaments on local cores and on a local Dask cluster.

1. A round robin of the 98 reference programs plus generated varied ones
   (default 400): jousts per second on every local core, then on a Dask
   cluster of two single-threaded worker processes (each with its nanny)
   on this machine (distributed.LocalCluster); the cluster's overhead is
   the difference (the goal is at most 15 %).
2. A Swiss tournament of 2000 programs: wall time, and the jousts played
   against the N(N-1)/2 a round robin needs.

Both runs must give the same standings (checked). Figures, never assertions.

    .venv/bin/python bench/tournament.py [--generated 400] [--swiss 2000] [--no-dask]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

from hill.engine.arena import Arena
from hill.play.tournament import Tournament
from hill.tournaments.ledger import MemoryStore
from hill.tournaments.plan import TournamentPlan
from hill.tournaments.registry import rules_of
from hill.tournaments.round_robin import ROUND_ROBIN
from hill.tournaments.swiss import SWISS

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference"


def reference_programs() -> dict[str, bytes]:
    names = (REFERENCE / "index.txt").read_text().split()
    return {name: (REFERENCE / "warriors" / name).read_bytes() for name in names}


def generated_program(rng: random.Random) -> bytes:
    """A plausible warrior: decoys, a rush, a clear (or a defence), varied."""
    decoys = "".join(
        f">({rng.choice('+-')})*{rng.randint(1, 40)}" for _ in range(rng.randint(0, 6))
    )
    distance = rng.randint(3, 12)
    sign = rng.choice("+-")
    clears = [
        f"([{sign}]>)*21",
        f"(>[({sign})*{rng.randint(2, 120)}[{sign}]])*21",
        f"([({sign})*{rng.randint(2, 60)}[-]]>)*21",
        f"(>(+)*{rng.randint(1, 9)}[-])*21",
    ]
    defences = [
        f"(+)*{rng.randint(5, 60)}[]",
        f"([](+)*{rng.randint(1, 20)})*{rng.randint(50, 5000)}",
        f"(>)*{rng.randint(1, 5)}(+)*{rng.randint(10, 100)}(<)*{rng.randint(1, 5)}"
        f"([(+)*{rng.randint(2, 30)}])*{rng.randint(100, 1000)}",
    ]
    body = rng.choice(clears) if rng.random() < 0.8 else rng.choice(defences)
    return f"{decoys}{'<' * decoys.count('>')}(>)*{distance}{body}".encode()


def generated_programs(count: int, seed: int = 1) -> dict[str, bytes]:
    rng = random.Random(seed)
    programs: dict[str, bytes] = {}
    while len(programs) < count:
        code = generated_program(rng)
        if code not in programs.values():
            programs[f"generated/{len(programs):04}.bfjoust"] = code
    return programs


def timed_run(
    plan: TournamentPlan, programs: dict[str, bytes], jousts: Arena
) -> tuple[dict, float]:
    started = time.perf_counter()
    tournament = Tournament(plan, programs, MemoryStore(), jousts)
    tournament.run()
    return tournament.to_json(), time.perf_counter() - started


def round_robin(generated: int, dask: bool) -> None:
    programs = reference_programs() | generated_programs(generated)
    plan = TournamentPlan(ROUND_ROBIN, tuple(programs))
    jousts = rules_of(plan).expected_matches(plan)
    print(f"round robin of {len(programs)} programs: {jousts} jousts")
    local, local_wall = timed_run(plan, programs, Arena(stats=False))
    print(f"  local cores:   {local_wall:7.1f} s  {jousts / local_wall:8.0f} jousts/s")
    if not dask:
        return
    from hill.play.cluster import DaskExecutor

    with dask_cluster(workers=2) as address, DaskExecutor(address, stats=False) as executor:
        remote, remote_wall = timed_run(plan, programs, Arena(executor))
    overhead = 100 * (remote_wall / local_wall - 1)
    same = "same standings" if remote == local else "DIFFERENT RESULTS"
    print(
        f"  Dask, 2 workers: {remote_wall:5.1f} s  {jousts / remote_wall:8.0f} jousts/s"
        f"  ({overhead:+.0f} % against local; {same})"
    )


@contextlib.contextmanager
def dask_cluster(workers: int) -> Iterator[str]:
    """A cluster on loopback: worker processes (each with its nanny, one
    thread) and their scheduler, by distributed.LocalCluster; its address."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
    ) as cluster:
        yield cluster.scheduler_address


def swiss(entrants: int) -> None:
    programs = reference_programs() | generated_programs(entrants - 98, seed=2)
    plan = TournamentPlan(SWISS, tuple(programs), seed=1)
    result, wall = timed_run(plan, programs, Arena(stats=False))
    played = sum(len(r["matches"]) for r in result["rounds"])
    full = entrants * (entrants - 1) // 2
    print(
        f"Swiss of {entrants} programs: {len(result['rounds'])} rounds, {played} jousts "
        f"in {wall:.1f} s ({result['ended']}); a round robin needs {full} "
        f"({full / played:.0f} times as many)"
    )


def load() -> str:
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generated", type=int, default=400)
    parser.add_argument("--swiss", type=int, default=2000, help="0: no Swiss run")
    parser.add_argument("--no-dask", dest="dask", action="store_false")
    args = parser.parse_args()
    print(f"load average {load()} (other work on this machine skews the figures)")
    round_robin(args.generated, args.dask)
    if args.swiss:
        swiss(args.swiss)
    print(f"load average {load()}")


if __name__ == "__main__":
    main()
