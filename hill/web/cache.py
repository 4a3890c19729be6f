"""The web report's two helpers for work worth doing once, stated once:
`SingleFlight` and `StateCache`; and `BoundedWork`, the two combined with
threads of their own and a bound.

- `SingleFlight.run(key, start)`: one run of `start()` for all who ask
  for `key` at the same time (a flood of requests waits for one read, one
  build, not in a queue of them).  Every reader's shared reads
  (reader_thread.py), the bounded work below and the state cache go
  through it.
- `StateCache`: values kept with the mark of the state they were made in
  (a hill state, a ladder standing, a tournament's progress or settled
  rounds, the statistics stored): asked with the same mark, the value
  kept; with another, made again (once, through SingleFlight) and kept
  in its place.  At most `maxsize` keys (or bytes, with `size_of`), the
  least recently used dropped; safe across threads.  The hill's
  snapshots and history (state.py), the ladder, the tournaments' pages
  and tables, the analyses and the built pages (builds.py) are kept in
  one.
- `BoundedWork.run(key, work, keep)` runs `work()` in one of `workers`
  threads of its own (never on the event loop), once however many
  requests ask for `key` at the same time, with at most `workers + queue`
  keys under way or waiting: beyond that it raises Busy (a 503 with
  Retry-After), so a flood costs a bounded amount of CPU and memory.  The
  result goes to `keep` (a cache) as it comes, before any waiter resumes.
  Battles traced (battles/store.py) and pages built (builds.py) go through
  it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

from hill.errors import Busy
from hill.threads import LRU, Threads

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SingleFlight:
    """Runs under way, by key: one for all who ask for a key meanwhile."""

    def __init__(self) -> None:
        self._running: dict[Hashable, asyncio.Future[Any]] = {}

    def __len__(self) -> int:
        return len(self._running)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._running

    async def run(
        self,
        key: Hashable,
        start: Callable[[], Awaitable[T]],
        keep: Callable[[T], Any] = lambda _: None,
    ) -> T:
        """`await start()`, or the run of `key` under way; its result goes to
        `keep` as it comes, before any waiter resumes.  A waiter that is
        cancelled (its client left) leaves the run to the others."""
        running = self._running.get(key)
        if running is None:
            running = asyncio.ensure_future(start())
            self._running[key] = running
            running.add_done_callback(lambda done: self._finished(key, done, keep))
        return await asyncio.shield(running)

    def _finished(
        self, key: Hashable, done: asyncio.Future[Any], keep: Callable[[Any], Any]
    ) -> None:
        del self._running[key]
        if not done.cancelled() and done.exception() is None:
            keep(done.result())


class StateCache(Generic[K, V]):
    """Each key's value with the mark of the state it was made in."""

    def __init__(self, maxsize: int, size_of: Callable[[V], int] | None = None) -> None:
        self._values: LRU[K, tuple[Hashable, V]] = LRU(
            maxsize, size_of=None if size_of is None else lambda kept: size_of(kept[1])
        )
        self._making = SingleFlight()

    def __len__(self) -> int:
        return len(self._values)

    def kept(self, key: K, mark: Hashable) -> V | None:
        """The value of `key` made at `mark`, if it is kept."""
        found = self._values.get(key)
        return found[1] if found is not None and found[0] == mark else None

    def last(self, key: K) -> tuple[Hashable, V] | None:
        """The value of `key` kept, with the mark it was made at, whatever it is."""
        return self._values.get(key)

    def keep(self, key: K, mark: Hashable, value: V) -> V:
        """Keep `value` as `key`'s at `mark` (in place of an older one); returns it."""
        self._values.put(key, (mark, value))
        return value

    def get_or_make(self, key: K, mark: Hashable, make: Callable[[], V]) -> V:
        """The value of `key` at `mark`, made by `make()` here if not kept
        (blocking: in a worker thread, under the caller's own lock if two
        threads must not make it at once)."""
        found = self.kept(key, mark)
        return self.keep(key, mark, make()) if found is None else found

    async def get(self, key: K, mark: Hashable, make: Callable[[], Awaitable[V]]) -> V:
        """The value of `key` at `mark`, made by `await make()` if not kept,
        once for all who ask meanwhile."""
        found = self.kept(key, mark)
        if found is not None:
            return found
        return await self._making.run((key, mark), make, lambda v: self.keep(key, mark, v))


class BoundedWork:
    """Work in `workers` threads named `name`, `queue` more keys waiting;
    Busy(retry_after, what) beyond."""

    def __init__(
        self, workers: int, queue: int, name: str, what: str, retry_after: int = 1
    ) -> None:
        self._threads = Threads(workers, name)
        self._limit = workers + queue
        self._flights = SingleFlight()
        self.what = what
        self.retry_after = retry_after

    def close(self) -> None:
        self._threads.close()

    @property
    def pending(self) -> int:
        return len(self._flights)

    async def run(
        self, key: Hashable, work: Callable[[], T], keep: Callable[[T], Any] = lambda _: None
    ) -> T:
        """`work()` in a worker thread, once for all who ask for `key` now."""
        if key not in self._flights and len(self._flights) >= self._limit:
            raise Busy(self.retry_after, self.what)
        return await self._flights.run(key, lambda: self._threads.run(work), keep)
