"""Bounded blocking work for the web report, stated once: battles traced
(trace_store.py) and pages built (builds.py) go through it.

`BoundedWork.run(key, work, keep)` runs `work()` in one of `workers`
threads of its own (never on the event loop), once however many requests
ask for `key` at the same time (they all wait for the one run), with at
most `workers + queue` keys under way or waiting: beyond that it raises
Busy (a 503 with Retry-After), so a flood costs a bounded amount of CPU and
memory.  The result goes to `keep` (a cache) as it comes, before any
waiter resumes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from hill.errors import Busy
from hill.threads import Threads

T = TypeVar("T")


class BoundedWork:
    """Work in `workers` threads named `name`, `queue` more keys waiting;
    Busy(retry_after, what) beyond."""

    def __init__(
        self, workers: int, queue: int, name: str, what: str, retry_after: int = 1
    ) -> None:
        self._threads = Threads(workers, name)
        self._limit = workers + queue
        self._pending: dict[Hashable, asyncio.Future[Any]] = {}
        self.what = what
        self.retry_after = retry_after

    def close(self) -> None:
        self._threads.close()

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def run(
        self, key: Hashable, work: Callable[[], T], keep: Callable[[T], Any] = lambda _: None
    ) -> T:
        """`work()` in a worker thread, once for all who ask for `key` now."""
        task = self._pending.get(key)
        if task is None:
            if len(self._pending) >= self._limit:
                raise Busy(self.retry_after, self.what)
            task = asyncio.ensure_future(self._threads.run(work))
            self._pending[key] = task
            task.add_done_callback(lambda done: self._finished(key, done, keep))
        return await asyncio.shield(task)

    def _finished(
        self, key: Hashable, task: asyncio.Future[Any], keep: Callable[[Any], Any]
    ) -> None:
        del self._pending[key]
        if not task.cancelled() and task.exception() is None:
            keep(task.result())
