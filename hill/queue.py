"""The submission queue: hill jobs run one at a time, in arrival order, off
the asyncio event loop; a full queue refuses at once instead of blocking."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")


class QueueFull(Exception):
    """The queue holds as many jobs as it may: try again later."""


class JobQueue(Generic[T]):
    """Runs blocking jobs (e.g. `Hill.challenge`) one at a time in a thread."""

    def __init__(self, size: int) -> None:
        self._jobs: asyncio.Queue[tuple[Callable[[], T], asyncio.Future[T]]] = asyncio.Queue(size)
        self._worker: asyncio.Task[None] | None = None

    def submit(self, job: Callable[[], T]) -> asyncio.Future[T]:
        """Queue a job; its future resolves to the job's result or error.
        Raises QueueFull (at once) when the queue is full."""
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        try:
            self._jobs.put_nowait((job, future))
        except asyncio.QueueFull:
            raise QueueFull from None
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._work(), name="hill-queue")
        return future

    async def _work(self) -> None:
        while True:
            job, future = await self._jobs.get()
            try:
                result = await asyncio.to_thread(job)
            except Exception as error:  # the job's error belongs to its caller
                if not future.done():
                    future.set_exception(error)
            else:
                if not future.done():
                    future.set_result(result)
            finally:
                self._jobs.task_done()

    async def join(self) -> None:
        await self._jobs.join()

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
