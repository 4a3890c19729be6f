"""Blocking work under asyncio, stated once: threads of one's own that the
event loop awaits (`Threads`), and a least-recently-used cache those
threads share (`LRU`).

The policy, for all of hill/ and bot/:

- Nothing blocks the event loop: SQLite, git, files, the engine's traces,
  page builds, forms parsed, the ladder's fits run on threads.
- Each kind of work that requests can bring runs on a `Threads` of its
  own, named for it and sized for it: the web's readers of the database,
  its history pages, traced battles and page builds (hill.web.bounded),
  forms, upload links, health checks; the bot's requests being played, the
  request book, its commands' reads, its notices, each background worker
  (bot.worker) and a tournament host's reads.  So a flood of one kind waits for its
  own threads and holds up no other kind, nor the bot in the same process;
  a `Threads` of one thread also keeps its calls in the order asked.
- `asyncio.to_thread` (the loop's default threads, shared with everything
  in the process: the bot, aiohttp's name lookups) is used neither in
  hill/ nor in bot/, but by `Threads.finish`, to wait for a pool's end
  without blocking.
- Threads that asyncio does not await are not this module's: the arena
  plays jousts on every core in threads of its own, from whichever thread
  calls it (the C engine lets go of the GIL; hill.engine.arena), or on a
  Dask cluster (hill.play); the web child watches its stdin in a thread
  of its own (hill.web.process).
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from cachetools import LRUCache

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Threads:
    """`count` threads named `name`: `await threads.run(f, ...)` runs f on
    one of them (in the order asked, with one thread)."""

    def __init__(self, count: int, name: str) -> None:
        self.executor = ThreadPoolExecutor(count, thread_name_prefix=name)
        self._waiting: dict[Hashable, asyncio.Future[Any]] = {}  # shared calls not begun
        self._lock = threading.Lock()  # the loop registers a call, a thread begins it

    async def run(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        call = functools.partial(function, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self.executor, call)

    async def run_shared(self, function: Callable[..., T], *args: Hashable) -> T:
        """`function(*args)`, one call for all who ask for the same one
        before it begins: it begins after each of them asked, so each gets
        what a call of its own would have read (a crowd asking at once waits
        for one read, not a queue of them, and holds up no one else).  A
        call under way is not joined: it may have read too early."""
        key = (function, args)
        with self._lock:  # held until it is registered: no thread begins it before
            waiting = self._waiting.get(key)
            if waiting is None:

                def begin() -> T:
                    with self._lock:
                        del self._waiting[key]
                    return function(*args)

                waiting = asyncio.get_running_loop().run_in_executor(self.executor, begin)
                self._waiting[key] = waiting
        return await asyncio.shield(waiting)

    def close(self) -> None:
        """Stop now: what waits is dropped (the web's readers, on shutdown)."""
        self.executor.shutdown(wait=False, cancel_futures=True)

    async def finish(self) -> None:
        """Stop once the work under way is done (without blocking the loop)."""
        await asyncio.to_thread(self.executor.shutdown, wait=True)


class LRU(Generic[K, V]):
    """A least-recently-used cache, safe across threads: at most `maxsize`
    values, or values whose `size_of` sums to at most `maxsize` (a value
    larger than that is not kept)."""

    def __init__(self, maxsize: int, size_of: Callable[[V], int] | None = None) -> None:
        self._values: LRUCache[K, V] = LRUCache(maxsize, getsizeof=size_of)
        self._size_of = size_of
        self._lock = threading.Lock()

    @property
    def maxsize(self) -> int:
        return int(self._values.maxsize)

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._values.get(key)

    def put(self, key: K, value: V) -> V:
        """Keep `value` (unless it alone is larger than the cache); returns it."""
        if self._size_of is None or self._size_of(value) <= self.maxsize:
            with self._lock:
                self._values[key] = value
        return value
