"""Benchmark pools and their full round robins, cached on disk.

    from pools import Pool, reference_only, reference_plus_varied
    pool = reference_plus_varied(120, seed=1)   # 98 reference + 120 varied
    pool.outcomes      # (N, N, 42) int8, every pair jousted once
    pool.game_cycles   # (N, N) the cycles each joust's 42 games lasted

A round robin is computed once (hill.engine.arena.joust_pairs) and kept in
`bench/output/` (ignored by git), keyed by the hash of the sources.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hill import engine
from hill.engine import arena
from hill.engine.varied import Named, reference_pool, varied_pool

CACHE = Path(__file__).resolve().parent / "output"


@dataclass(frozen=True)
class Pool:
    """Programs and the outcomes of every joust between them."""

    label: str
    names: list[str]
    outcomes: np.ndarray
    game_cycles: np.ndarray


def round_robin(programs: list[Named], jobs: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(outcomes, game_cycles) of every pair, each unordered pair jousted once."""
    compiled = [engine.compile_program(source) for _, source in programs]
    n = len(compiled)
    upper = np.triu_indices(n, 1)
    results = arena.joust_pairs(
        ((compiled[i], compiled[j]) for i, j in zip(*upper, strict=True)), jobs=jobs
    )
    outcomes = np.zeros((n, n, engine.BATTLES), dtype=np.int8)
    cycles = np.zeros((n, n), dtype=np.int64)
    outcomes[upper] = np.array([r.outcomes for r in results], dtype=np.int8)
    cycles[upper] = [r.game_cycles for r in results]
    outcomes -= outcomes.transpose(1, 0, 2)
    return outcomes, cycles + cycles.T


def cached_pool(label: str, programs: list[Named], jobs: int | None = None) -> Pool:
    digest = hashlib.sha256(b"\0".join(s for _, s in programs)).hexdigest()[:16]
    path = CACHE / f"{label}-{digest}.npz"
    if path.exists():
        data = np.load(path)
        return Pool(label, [n for n, _ in programs], data["outcomes"], data["game_cycles"])
    started = time.perf_counter()
    outcomes, cycles = round_robin(programs, jobs)
    print(
        f"round robin of {label}: {len(programs)} programs in {time.perf_counter() - started:.1f} s"
    )
    CACHE.mkdir(exist_ok=True)
    np.savez_compressed(path, outcomes=outcomes, game_cycles=cycles)
    return Pool(label, [n for n, _ in programs], outcomes, cycles)


def reference_only() -> Pool:
    return cached_pool("reference", reference_pool())


def reference_plus_varied(count: int, seed: int) -> Pool:
    return cached_pool(f"mixed{seed}", reference_pool() + varied_pool(count, seed))


def reference_plus_random(count: int, seed: int) -> Pool:
    """The reference programs and `count` structured or random ones (no mutants)."""
    fresh = varied_pool(count, seed, shares={"structured": 0.6, "noise": 0.4})
    return cached_pool(f"random{seed}", reference_pool() + fresh)


def varied_only(count: int, seed: int) -> Pool:
    """Generated programs alone: a pool unlike the reference one."""
    return cached_pool(f"varied{seed}", varied_pool(count, seed))
