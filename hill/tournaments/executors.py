"""Executors: where the jousts of a tournament are played.

An executor takes the programs' code by key and a list of (left, right) key
pairs, and yields each pair's joust as it is played, in any order:
`(pair, outcomes, game_cycles)` with the 42 outcomes from the left side.
`LocalExecutor` plays on this machine's cores; `dask_executor.DaskExecutor`
on a Dask cluster.

ARENA: this is the stopgap for the arena's "play a list of pairs on all local
cores" (issue 11); once `hill/arena.py` lands, the local executor is the
arena's and the jousts are read from and stored in its table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Protocol

from hill import engine

Pair = tuple[str, str]
PlayedJoust = tuple[Pair, tuple[int, ...], int]  # (pair, 42 outcomes, game cycles)


class Executor(Protocol):
    def __call__(
        self, programs: Mapping[str, bytes], pairs: Sequence[Pair]
    ) -> Iterator[PlayedJoust]: ...


def program_key(code: bytes) -> str:
    """A program's identity for jousts: its content (a joust is a pure function of it)."""
    return hashlib.sha256(code).hexdigest()


def batches(pairs: Sequence[Pair], count: int, largest: int = 64) -> list[list[Pair]]:
    """`pairs` cut into about `count` batches of at most `largest` pairs."""
    size = max(1, min(largest, -(-len(pairs) // max(count, 1))))
    return [list(pairs[i : i + size]) for i in range(0, len(pairs), size)]


def play_batch(compiled: Mapping[str, engine.Program], pairs: Sequence[Pair]) -> list[PlayedJoust]:
    played = []
    for left, right in pairs:
        result = engine.joust(compiled[left], compiled[right])
        played.append(((left, right), result.outcomes, result.game_cycles))
    return played


class LocalExecutor:
    """Jousts on this machine's cores (threads: the engine releases the GIL).

    Programs are compiled once per executor and kept by key.
    """

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = jobs or engine.default_jobs()
        self.compiled: dict[str, engine.Program] = {}

    def __call__(
        self, programs: Mapping[str, bytes], pairs: Sequence[Pair]
    ) -> Iterator[PlayedJoust]:
        for key in {key for pair in pairs for key in pair} - self.compiled.keys():
            self.compiled[key] = engine.compile_program(programs[key])
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            # a few batches per thread: results arrive as they are played
            futures = [
                pool.submit(play_batch, self.compiled, batch)
                for batch in batches(pairs, 8 * self.jobs)
            ]
            for future in as_completed(futures):
                yield from future.result()
