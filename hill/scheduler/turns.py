"""Turns at the hill: one piece of work changes the hill at a time, and the
most urgent waiting piece goes next.

The order (`Priority`) is the hill's promise to its players: a player's
request before everything, then a contest's steps (a deadline is public),
then tournaments, then the all-time ladder, then the statistics backfill.
Work that takes long (a tournament, a batch of the ladder) holds its turn
for one piece at a time and, between two pieces, hands it over to anything
more urgent that waits (`between`), so a submission waits at most for the
piece under way: a few jousts.

The state lives on the event loop; work running in a thread reaches it
through `between`, which costs nothing while nobody more urgent waits.
`close()` ends every wait with Stopped, and `between` raises it too: the
work in a thread stops at its next piece.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import heapq
import itertools
import threading
from collections.abc import AsyncIterator

from hill.errors import Stopped


class Priority(enum.IntEnum):
    """Who goes first (the lowest value)."""

    REQUEST = 0  # a player's submission, test, withdrawal, contest entry
    CONTEST = 1  # a contest's close, its tournament and its publication
    TOURNAMENT = 2  # a tournament an admin started
    LADDER = 3  # the all-time ladder's jousts and refits
    BACKFILL = 4  # the battle statistics of old jousts


class Turns:
    """Hands the hill to one piece of work at a time, most urgent first."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.holder: Priority | None = None
        self._waiting: list[tuple[Priority, int, asyncio.Future[None]]] = []
        self._order = itertools.count()  # equal priorities: first come, first served
        self.urgent = len(Priority)  # the most urgent waiting priority (read by threads)
        self.stopped = threading.Event()

    async def take(self, priority: Priority) -> None:
        """Wait for the turn (Stopped once closed)."""
        if self.stopped.is_set():
            raise Stopped
        if self.holder is None and not self._waiting:
            self.holder = priority
            return
        future: asyncio.Future[None] = self.loop.create_future()
        heapq.heappush(self._waiting, (priority, next(self._order), future))
        self._note_urgent()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled() and future.exception() is None:
                self.give_back()  # handed over as we were cancelled: pass it on
            else:
                self._forget(future)
            raise

    def give_back(self) -> None:
        """End the holder's turn: the most urgent waiting piece goes next."""
        self.holder = None
        while self._waiting:
            priority, _, future = heapq.heappop(self._waiting)
            if not future.done():
                self.holder = priority
                future.set_result(None)
                break
        self._note_urgent()

    @contextlib.asynccontextmanager
    async def turn(self, priority: Priority) -> AsyncIterator[None]:
        """`async with turns.turn(Priority.X):` the hill is this work's."""
        await self.take(priority)
        try:
            yield
        finally:
            self.give_back()

    def between(self, priority: Priority) -> None:
        """Between two pieces of work holding the turn at `priority` (in a
        thread): hand it over while anything more urgent waits, then take it
        back; Stopped once closed."""
        if self.stopped.is_set():
            raise Stopped
        if self.urgent >= priority:
            return  # nobody more urgent waits: the common case, no hop to the loop
        asyncio.run_coroutine_threadsafe(self._hand_over(priority), self.loop).result()

    async def _hand_over(self, priority: Priority) -> None:
        self.give_back()
        await self.take(priority)

    def close(self) -> None:
        """Stop: every wait ends with Stopped, and so does the next `between`."""
        self.stopped.set()
        for _, _, future in self._waiting:
            if not future.done():
                future.set_exception(Stopped())
        self._waiting.clear()
        self._note_urgent()

    def _forget(self, future: asyncio.Future[None]) -> None:
        self._waiting = [w for w in self._waiting if w[2] is not future]
        heapq.heapify(self._waiting)
        self._note_urgent()

    def _note_urgent(self) -> None:
        self.urgent = min((p for p, _, f in self._waiting if not f.done()), default=len(Priority))
