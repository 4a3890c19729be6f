"""Battles for the viewer, with bounded work and memory.

A trace of a long battle is megabytes of raw arrays, and the web report may
share its process and event loop with the IRC bot, so /api/trace is bounded
four ways:

* at most `workers` battles are traced at once, in threads of their own
  (tracing, encoding and compressing never run on the event loop), and at
  most `queue` more wait; beyond that a request is refused with `Busy`
  (503 and Retry-After), while requests for a battle already under way wait
  for it instead of tracing it again;
* a battle is kept only as its gzipped pieces (see trace_pieces.py), cached
  by content (both programs' code, the tape length and the polarity) up to
  `cache_bytes`;
* one response is one piece, at most trace_pieces.PIECE_STATES states;
* compiled programs are cached by content (hill.arena's ProgramCache), a
  few at a time.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from cachetools import LRUCache

from hill import engine
from hill.arena import CodeOf, ProgramCache
from hill.web import trace_pieces

COMPILED_PROGRAMS = 32


class Busy(Exception):
    """Too many battles are being traced; try again in `retry_after` seconds."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many battles are being traced; try again in {retry_after} s")
        self.retry_after = retry_after


@dataclass(frozen=True)
class EncodedBattle:
    """A battle's pieces, gzipped JSON."""

    cycles: int
    pieces: tuple[bytes, ...]

    @property
    def size(self) -> int:
        return sum(len(p) for p in self.pieces)


# both programs' code hashes (hill.arena.code_hash), the tape length, the polarity
BattleKey = tuple[str, str, int, str]


class TraceStore:
    """The viewer's battles: `piece()` of the battle of two programs, known
    by their code hashes."""

    retry_after = 1  # seconds

    def __init__(
        self,
        read_code: CodeOf,
        *,
        workers: int = 2,
        queue: int = 16,
        cache_bytes: int = 32 << 20,
    ) -> None:
        self._read_code = read_code  # a program's code by its hash (blocking)
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="trace")
        self._limit = workers + queue
        self._pending: dict[BattleKey, asyncio.Task[EncodedBattle]] = {}
        self._battles: LRUCache[BattleKey, EncodedBattle] = LRUCache(
            cache_bytes, getsizeof=lambda battle: battle.size
        )
        self._programs = ProgramCache(COMPILED_PROGRAMS)  # used by the workers

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def piece(self, left: str, right: str, tape: int, polarity: str, at: int) -> bytes:
        """The gzipped piece holding state `at` of the battle of the programs
        whose code hashes are `left` and `right`; IndexError past its end."""
        key = (left, right, tape, polarity)
        battle = self._battles.get(key) or await self._encoded(key)
        if at > battle.cycles:
            raise IndexError(at)
        return battle.pieces[at // trace_pieces.PIECE_STATES]

    async def _encoded(self, key: BattleKey) -> EncodedBattle:
        """The battle, traced once however many ask for it at the same time."""
        task = self._pending.get(key)
        if task is None:
            if len(self._pending) >= self._limit:
                raise Busy(self.retry_after)
            task = asyncio.ensure_future(self._trace(key))
            self._pending[key] = task
            task.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(task)

    def _finished(self, key: BattleKey, task: asyncio.Task[EncodedBattle]) -> None:
        del self._pending[key]
        if not task.cancelled() and task.exception() is None:
            battle = task.result()
            if battle.size <= self._battles.maxsize:
                self._battles[key] = battle

    async def _trace(self, key: BattleKey) -> EncodedBattle:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._encode, key)

    def _encode(self, key: BattleKey) -> EncodedBattle:
        """In a worker thread: compile, trace, encode and compress."""
        left = self._programs.get(key[0], self._read_code)
        right = self._programs.get(key[1], self._read_code)
        battle = engine.trace(left, right, key[2], key[3])  # type: ignore[arg-type]
        return EncodedBattle(battle.cycles, trace_pieces.gzipped_pieces(battle))
