"""Battles for the viewer, with bounded work and memory.

A trace of a long battle is megabytes of raw arrays, and the web report may
share its process and event loop with the IRC bot, so /api/trace is bounded
four ways:

* at most `workers` battles are traced at once, in threads of their own
  (tracing, encoding and compressing never run on the event loop), and at
  most `queue` more wait; beyond that a request is refused with `Busy`
  (503 and Retry-After), while requests for a battle already under way wait
  for it instead of tracing it again (cache.BoundedWork);
* a battle is kept only as its gzipped pieces (see pieces.py), cached
  by content (both programs' code, the tape length and the polarity) up to
  `cache_bytes`;
* one response is one piece, at most pieces.PIECE_STATES states;
* compiled programs are cached by content (hill.engine.arena's ProgramCache), a
  few at a time.

`thumbnail()` gives a battle's small picture (thumbnail.py, for the
tournament crosstables) under the same bounds, its PNGs cached by count.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from hill import engine
from hill.engine.arena import CodeOf, ProgramCache
from hill.threads import LRU
from hill.web.battles import pieces as trace_pieces
from hill.web.battles import thumbnail
from hill.web.cache import BoundedWork

COMPILED_PROGRAMS = 32
THUMBNAILS = 4096  # PNGs of a few KB


@dataclass(frozen=True)
class EncodedBattle:
    """A battle's pieces, gzipped JSON."""

    cycles: int
    pieces: tuple[bytes, ...]

    @property
    def size(self) -> int:
        return sum(len(p) for p in self.pieces)


# both programs' code hashes (hill.engine.code_hash), the tape length, the polarity
BattleKey = tuple[str, str, int, str]


class TraceStore:
    """The viewer's battles: `piece()` of the battle of two programs, known
    by their code hashes."""

    def __init__(
        self,
        read_code: CodeOf,
        *,
        workers: int = 2,
        queue: int = 16,
        cache_bytes: int = 32 << 20,
    ) -> None:
        self._read_code = read_code  # a program's code by its hash (blocking)
        self._work = BoundedWork(workers, queue, "trace", "battles are being traced")
        self._battles: LRU[BattleKey, EncodedBattle] = LRU(
            cache_bytes, size_of=lambda battle: battle.size
        )
        self._thumbnails: LRU[BattleKey, bytes] = LRU(THUMBNAILS)
        self._programs = ProgramCache(COMPILED_PROGRAMS)  # used by the workers

    def close(self) -> None:
        self._work.close()

    async def piece(self, left: str, right: str, tape: int, polarity: str, at: int) -> bytes:
        """The gzipped piece holding state `at` of the battle of the programs
        whose code hashes are `left` and `right`; IndexError past its end."""
        key = (left, right, tape, polarity)
        battle = self._battles.get(key) or await self._encoded(key)
        if at > battle.cycles:
            raise IndexError(at)
        return battle.pieces[at // trace_pieces.PIECE_STATES]

    async def thumbnail(self, left: str, right: str, tape: int, polarity: str) -> bytes:
        """The PNG picture of the battle (thumbnail.py) of the programs whose
        code hashes are `left` and `right`."""
        key = (left, right, tape, polarity)
        png = self._thumbnails.get(key)
        if png is None:
            png = await self._work.run(
                ("thumbnail", key),
                lambda: self._picture(key),
                lambda png: self._thumbnails.put(key, png),
            )
        return png

    async def _encoded(self, key: BattleKey) -> EncodedBattle:
        return await self._work.run(
            key, lambda: self._encode(key), lambda b: self._battles.put(key, b)
        )

    def _battle(self, key: BattleKey) -> engine.Trace:
        left = self._programs.get(key[0], self._read_code)
        right = self._programs.get(key[1], self._read_code)
        return engine.trace(left, right, key[2], key[3])  # type: ignore[arg-type]

    def _picture(self, key: BattleKey) -> bytes:
        """In a worker thread: trace the battle and draw it."""
        return thumbnail.thumbnail_png(self._battle(key))

    def _encode(self, key: BattleKey) -> EncodedBattle:
        """In a worker thread: compile, trace, encode and compress."""
        battle = self._battle(key)
        return EncodedBattle(battle.cycles, trace_pieces.gzipped_pieces(battle))


TRACES = web.AppKey("traces", TraceStore)
