"""Benchmark: a refit of the all-time ladder on a dense archive (issue 33.8).

After a 1,000-entrant round robin the hill's archive holds about 1,200
programs with most of their pairs jousted (87%).  This builds such a
ladder and times what the hill's background ladder does with it
(hill.writers.ladder): a refit (the standing and its statistics) and the
planning of a round, with the peak of the memory a refit allocates
(tracemalloc) and the process's resident peak (getrusage); then a refit
after one more round, warm-started from the standing before, as the
writer does it.  It also prints the lowest ranks with their intervals
and how many bounds are not finite or out of 0..1000.

The archive's jousts are synthetic by default: each program has a
strength, two rock-paper-scissors components and a tie rate; a joust's
battles are lumpy (one battle probability per joust, most jousts swept
42 to 0); 2% of the programs win no battle at all (a trivial program),
pairs of two heavy tiers tie every battle, 3% of the programs are new
versions whose seeding (hill.ladder.seeding) is still in force, 1% have
no joust yet.  `--engine` plays the real thing instead: the reference
programs and varied ones (hill/engine/varied.py), their round robin
played once (about 4 minutes on one core) and cached in bench/output/.

    .venv/bin/python bench/ladder_dense.py [--programs 1200] [--density 0.87]
        [--seed 0] [--engine]
"""

from __future__ import annotations

import argparse
import resource
import time
import tracemalloc

import numpy as np
from pools import cached_pool
from scipy.special import expit

from hill import engine
from hill.engine.varied import reference_pool, varied_pool
from hill.ladder import ladder, seeding

BATTLES = engine.BATTLES


def synthetic(n: int, pairs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(K, 42) plausible outcomes of the jousts `pairs` among n programs."""
    strength = rng.normal(0.0, 1.5, n)
    x, z = rng.normal(0.0, 0.8, (2, n, 2))
    tie = rng.beta(0.6, 5.0, n)
    trivial = rng.random(n) < 0.02  # wins no battle
    a, b = pairs[:, 0], pairs[:, 1]
    logit = strength[a] - strength[b] + (x[a] * z[b]).sum(1) - (z[a] * x[b]).sum(1)
    # lumpy jousts: one battle probability per joust, pushed to 0 or 1
    p = expit(3.0 * logit + rng.normal(0.0, 2.0, len(a)))
    p = np.where(trivial[a], 0.0, np.where(trivial[b], 1.0, p))
    tied = np.sqrt(tie[a] * tie[b])
    tied = np.where((tie[a] > 0.45) & (tie[b] > 0.45) | trivial[a] & trivial[b], 1.0, tied)
    draws = rng.random((len(a), BATTLES))
    won = rng.random((len(a), BATTLES)) < p[:, None]
    outcomes = np.where(won, 1, -1).astype(np.int8)
    outcomes[draws < tied[:, None]] = 0
    return outcomes


def played_engine(n: int, pairs: np.ndarray) -> np.ndarray:
    """(K, 42) the real outcomes of `pairs` among the reference and varied programs."""
    pool = cached_pool(f"dense{n}", (reference_pool() + varied_pool(n, 5))[:n], jobs=1)
    return pool.outcomes[pairs[:, 0], pairs[:, 1]]


def archive(n: int, density: float, seed: int, real: bool) -> ladder.Ladder:
    """A ladder of n programs with `density` of their pairs jousted, in
    random order, some new versions seeded and a few programs not jousted yet."""
    rng = np.random.default_rng(seed)
    a, b = np.triu_indices(n, 1)
    kept = rng.random(len(a)) < density
    pairs = np.stack([a[kept], b[kept]], axis=1)[rng.permutation(kept.sum())]
    fresh = rng.choice(n, max(1, n // 100), replace=False)  # no joust yet
    versions = rng.choice(np.setdiff1d(np.arange(n), fresh), n * 3 // 100, replace=False)
    previous = {int(v): int(rng.integers(n)) for v in versions}
    previous = {v: p for v, p in previous.items() if p != v}
    unmet = {tuple(sorted(vp)) for vp in previous.items()}
    keep = ~np.isin(pairs, fresh).any(axis=1)
    keep &= np.array([tuple(sorted(p)) not in unmet for p in pairs.tolist()])
    pairs = pairs[keep]
    outcomes = played_engine(n, pairs) if real else synthetic(n, pairs, rng)
    state = ladder.Ladder(n)
    state.extend(pairs, outcomes, np.full(len(pairs), 1000))
    state.virtual = [seeding.new_version(v, p) for v, p in previous.items()]
    return state


def refit(state: ladder.Ladder, start: ladder.Standing | None = None) -> ladder.Standing:
    """What the writer's refit computes: the standing and its statistics."""
    result = ladder.standing(state, start=start)
    ladder.ladder_statistics(state, result)
    return result


def measure(label: str, state: ladder.Ladder, start: ladder.Standing | None = None) -> None:
    """A refit timed (wall and CPU, the better of two runs), then its peak
    allocation measured in a third."""
    runs = []
    for _ in range(2):
        wall, cpu = time.perf_counter(), time.process_time()
        refit(state, start)
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    tracemalloc.start()
    refit(state, start)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    wall, cpu = min(runs)
    print(
        f"{label}: {wall:.2f} s ({cpu:.2f} s CPU), peak {peak / 2**20:.0f} MB allocated",
        flush=True,
    )


def intervals(result: ladder.Standing) -> None:
    """The lowest ranks as the ladder prints them, and the bounds that are not sane."""
    e = result.estimate
    bounds = np.stack([e.low, e.high])
    bad = ~np.isfinite(bounds) | (bounds < 0) | (bounds > 1000) | (e.low > e.score + 1e-9)
    bad |= e.high < e.score - 1e-9
    print(f"bounds not finite, out of 0..1000 or not around the score: {int(bad.any(0).sum())}")
    for place, i in list(enumerate(result.order))[-5:]:
        print(f"  rank {place + 1}: {e.score[i]:.2f} ({e.low[i]:.2f}-{e.high[i]:.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=1200)
    parser.add_argument("--density", type=float, default=0.87, help="share of the pairs jousted")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--engine", action="store_true", help="real jousts (cached round robin)")
    args = parser.parse_args()
    started = time.perf_counter()
    state = archive(args.programs, args.density, args.seed, args.engine)
    print(
        f"{'engine' if args.engine else 'synthetic'} archive: {state.size} programs, "
        f"{state.played} jousts ({state.played / (state.size * (state.size - 1) / 2):.0%} "
        f"of the pairs), {len(state.virtual)} seeded versions, built in "
        f"{time.perf_counter() - started:.1f} s",
        flush=True,
    )
    rng = np.random.default_rng(args.seed)
    with ladder.single_threaded_blas():
        measure("refit (standing and statistics)", state)
        wall = time.perf_counter()
        pairs, _ = ladder.next_round(state, "markov", rng, ladder.round_size(state.size))
        print(f"planning a round of {len(pairs)}: {time.perf_counter() - wall:.2f} s", flush=True)
        before = ladder.standing(state)
        outcomes = synthetic(state.size, np.array(pairs, dtype=np.int64).reshape(-1, 2), rng)
        state.extend(np.array(pairs).reshape(-1, 2), outcomes, np.full(len(pairs), 1000))
        measure("refit after that round, warm-started", state, before)
        intervals(ladder.standing(state, start=before))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    print(f"resident at most {rss:.0f} MB in this process (the archive included)")


if __name__ == "__main__":
    main()
