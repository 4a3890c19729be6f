"""hill/engine/varied.py, the generator of varied programs the benchmarks use."""

from __future__ import annotations

from collections import Counter

from hill import engine
from hill.engine import varied


def test_varied_programs_are_valid_distinct_seeded_and_of_every_kind() -> None:
    pool = varied.varied_pool(60, seed=5)
    assert len(pool) == 60 and len({name for name, _ in pool}) == 60
    assert len({source for _, source in pool}) == 60
    for _, source in pool:
        engine.compile_program(source)  # raises on a malformed one
    kinds = Counter(name.split("-")[0] for name, _ in pool)
    assert {"mut", "cross", "noise"} <= set(kinds)
    assert {"rush", "decoy", "defend", "poke"} & set(kinds)
    assert varied.varied_pool(60, seed=5) == pool
    assert varied.varied_pool(60, seed=6) != pool
    references = {source for _, source in varied.reference_pool()}
    assert not references & {source for _, source in pool}
