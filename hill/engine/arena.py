"""The one home for jousts: compiled programs, playing them on every core (or
on any executor), and the results, kept once by the programs' contents.

A joust is a pure function of the two programs' code, so a program is known
here by `code_hash(code)` and each pair is played at most once: the hill,
tournaments and the ladder read the same stored results (hill.store.tables.Joust).

The orientation rule, stated here once: a joust is kept from the side of the
program with the lower hash, which sits on the left; seen from the other
side, every outcome flips its sign (`oriented`).  Swapping the sides of a
joust negates it exactly (the rules are symmetric: mirror the tape and
negate its values), so nothing is lost.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

import numpy as np

from hill import engine
from hill.engine import MAX_CYCLES, JoustResult, Pair, Played, Program, batches, code_hash, joust
from hill.threads import LRU

CodeOf = Callable[[str], bytes]  # a program's code by its hash
CHUNK = 64  # jousts a thread plays per task at most
CHUNKS_PER_THREAD = 16  # ... and about this many tasks a thread, where there are enough jousts


def oriented(a: str, b: str) -> tuple[Pair, int]:
    """The kept pair of programs `a` and `b`, and the sign that turns its
    outcomes into a's side (+1: a sits on the left)."""
    return ((a, b), 1) if a <= b else ((b, a), -1)


def pairs_among(hashes: Iterable[str]) -> list[Pair]:
    """Every kept pair of programs among `hashes`, once each (a program
    given twice meets itself)."""
    ordered = sorted(hashes)
    return sorted({(a, b) for i, a in enumerate(ordered) for b in ordered[i + 1 :]})


class Executor(Protocol):
    """Where jousts are played: `LocalExecutor` on this machine's cores; a
    cluster can stand in (e.g. one that sends each program's code to its
    workers once and plays batches there)."""

    def __call__(self, pairs: Sequence[Pair], code_of: CodeOf) -> Iterator[Played]:
        """Play each pair (left hash, right hash), the programs' code given
        by `code_of`; yield each with its result as it is done, in any order."""
        ...


class ProgramCache:
    """Compiled programs by hash; the least recently used go first (thread-safe)."""

    def __init__(self, size: int = 2048) -> None:
        self._programs: LRU[str, engine.Program] = LRU(size)

    def get(self, program_hash: str, code_of: CodeOf) -> engine.Program:
        """The compiled program (engine.ParseError if its code is malformed);
        `code_of` gives its code when it is not here."""
        program = self._programs.get(program_hash)
        if program is None:
            program = self.put(program_hash, engine.compile_program(code_of(program_hash)))
        return program

    def put(self, program_hash: str, program: engine.Program) -> engine.Program:
        return self._programs.put(program_hash, program)


class LocalExecutor:
    """Every local core: threads, which the engine runs in parallel (it
    releases the GIL); results come in the order of the pairs, with their
    battle statistics unless `stats` is False."""

    def __init__(
        self, programs: ProgramCache, jobs: int | None = None, *, stats: bool = True
    ) -> None:
        self.programs = programs
        self.jobs = jobs
        self.stats = stats

    def __call__(self, pairs: Sequence[Pair], code_of: CodeOf) -> Iterator[Played]:
        compiled = {h: self.programs.get(h, code_of) for pair in pairs for h in pair}
        battles = ((compiled[left], compiled[right]) for left, right in pairs)
        results = play_pairs(battles, jobs=self.jobs, stats=self.stats)
        return (Played(pair, result) for pair, result in zip(pairs, results, strict=True))


class Results:
    """Joust outcomes by kept pair, as stored (one byte a battle, outcome + 1),
    read from either side; and the matrices the scoring needs."""

    def __init__(self) -> None:
        self._outcomes: dict[Pair, bytes] = {}

    def __len__(self) -> int:
        return len(self._outcomes)

    def __contains__(self, pair: Pair) -> bool:
        """Whether the joust of this kept pair is here."""
        return pair in self._outcomes

    def add(self, played: Iterable[Played]) -> None:
        for pair, result in played:
            self._outcomes[pair] = encode(result.outcomes)

    def keep(self, pair: Pair, stored: bytes) -> None:
        self._outcomes[pair] = stored

    def missing(self, hashes: Iterable[str]) -> list[Pair]:
        """The pairs among `hashes` whose joust is not here."""
        return [pair for pair in pairs_among(hashes) if pair not in self._outcomes]

    def between(self, a: str, b: str) -> np.ndarray:
        """The outcomes of a against b, from a's side."""
        pair, sign = oriented(a, b)
        return sign * decode(self._outcomes[pair])

    def matrix(self, hashes: Sequence[str]) -> np.ndarray:
        """(N, N, battles) int8: matrix[a, b] the joust of program a (left)
        against program b, from a's side; ties on the diagonal."""
        n = len(hashes)
        matrix = np.zeros((n, n, engine.BATTLES), dtype=np.int8)
        for a in range(n):
            for b in range(a + 1, n):
                matrix[a, b] = self.between(hashes[a], hashes[b])
                matrix[b, a] = -matrix[a, b]
        return matrix

    def wins(self, hashes: Sequence[str]) -> np.ndarray:
        """(N, N) battles won: wins[a, b] the battles program a wins against
        b, all the scoring needs (scoring.score_all), without the (N, N, 42)
        array of `matrix` (pools of thousands)."""
        n = len(hashes)
        wins = np.zeros((n, n), dtype=np.int64)
        upper = np.triu_indices(n, 1)
        if not upper[0].size:
            return wins
        pairs = zip(upper[0].tolist(), upper[1].tolist(), strict=True)
        kept = [oriented(hashes[a], hashes[b]) for a, b in pairs]
        stored = np.frombuffer(b"".join(self._outcomes[pair] for pair, _ in kept), np.uint8)
        stored = stored.reshape(len(kept), -1)
        left_wins, right_wins = (stored == 2).sum(axis=1), (stored == 0).sum(axis=1)
        a_is_left = np.array([sign > 0 for _, sign in kept])
        wins[upper] = np.where(a_is_left, left_wins, right_wins)
        wins[upper[1], upper[0]] = np.where(a_is_left, right_wins, left_wins)
        return wins


def encode(outcomes: Sequence[int]) -> bytes:
    """Outcomes as stored: one byte a battle, outcome + 1."""
    return bytes(o + 1 for o in outcomes)


def decode(stored: bytes) -> np.ndarray:
    return np.frombuffer(stored, dtype=np.uint8).astype(np.int8) - 1


class Arena:
    """Plays jousts for the hill, tournaments and the ladder: programs
    compiled once (by hash), jousts played on the executor (default: every
    local core), each pair once and from its kept side.  A joust is played
    with its battle statistics (docs/analytics.md), so that it is played
    once for the scores and the analytics alike; `stats=False` is for the
    tools that keep nothing (`bfjoust matrix`, the ladder over files)."""

    def __init__(
        self, executor: Executor | None = None, *, jobs: int | None = None, stats: bool = True
    ) -> None:
        self.programs = ProgramCache()
        self.executor = executor or LocalExecutor(self.programs, jobs, stats=stats)

    def compile(self, code: bytes) -> str:
        """Compile a program (engine.ParseError if it is malformed) and keep
        it for its jousts; returns its hash."""
        return self.add(engine.compile_program(code))

    def add(self, program: engine.Program) -> str:
        """Keep a compiled program for its jousts; returns its hash."""
        program_hash = code_hash(program.source)
        self.programs.put(program_hash, program)
        return program_hash

    def play(self, pairs: Iterable[Pair], code_of: CodeOf) -> Iterator[Played]:
        """Play the kept pairs given, each once; results as they come."""
        unique = sorted(set(pairs))
        return self.executor(unique, code_of) if unique else iter(())

    def complete(self, results: Results, hashes: Sequence[str], code_of: CodeOf) -> list[Played]:
        """Play the jousts among `hashes` that `results` lacks and add them;
        returns them (for `store`)."""
        played = list(self.play(results.missing(hashes), code_of))
        results.add(played)
        return played


def default_jobs() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def play_pairs(
    pairs: Iterable[tuple[Program, Program]],
    *,
    jobs: int | None = None,
    max_cycles: int = MAX_CYCLES,
    stats: bool = False,
) -> Iterator[JoustResult]:
    """Joust many (left, right) pairs on `jobs` threads (default: every
    core); the results come in the order of the pairs, each as soon as it
    and those before it are done."""
    pairs = list(pairs)
    jobs = jobs or default_jobs()
    if jobs <= 1 or len(pairs) <= 1:
        yield from (joust(a, b, max_cycles=max_cycles, stats=stats) for a, b in pairs)
        return

    def play(chunk: Sequence[tuple[Program, Program]]) -> list[JoustResult]:
        return [joust(a, b, max_cycles=max_cycles, stats=stats) for a, b in chunk]

    # a task per chunk of jousts: a task per joust cost the caller's thread
    # about as much as a short joust; many chunks a thread keep the load even
    chunks = batches(pairs, CHUNKS_PER_THREAD * jobs, CHUNK)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for results in pool.map(play, chunks):
            yield from results


def joust_pairs(
    pairs: Iterable[tuple[Program, Program]],
    *,
    jobs: int | None = None,
    max_cycles: int = MAX_CYCLES,
    stats: bool = False,
) -> list[JoustResult]:
    """Joust many (left, right) pairs on `jobs` threads (default: every core)."""
    return list(play_pairs(pairs, jobs=jobs, max_cycles=max_cycles, stats=stats))


def joust_many(
    left: Program,
    opponents: Sequence[Program],
    *,
    jobs: int | None = None,
    max_cycles: int = MAX_CYCLES,
) -> list[JoustResult]:
    """Joust one program (on the left) against each opponent, on every core."""
    return joust_pairs(((left, o) for o in opponents), jobs=jobs, max_cycles=max_cycles)
