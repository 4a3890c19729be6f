"""The submission queue: one job at a time, in order, never blocking the loop."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from hill.queue import JobQueue, QueueFull


def test_jobs_run_one_at_a_time_in_arrival_order() -> None:
    async def scenario() -> list[int]:
        queue: JobQueue[int] = JobQueue(size=10)
        running, order = [], []
        lock = threading.Lock()

        def job(n: int) -> int:
            with lock:
                running.append(n)
                assert len(running) == 1  # never two at once
            time.sleep(0.01)
            order.append(n)
            with lock:
                running.remove(n)
            return n * n

        futures = [queue.submit(lambda n=n: job(n)) for n in range(5)]
        results = await asyncio.gather(*futures)
        assert results == [0, 1, 4, 9, 16]
        await queue.close()
        return order

    assert asyncio.run(scenario()) == [0, 1, 2, 3, 4]


def test_a_full_queue_answers_busy_at_once() -> None:
    async def scenario() -> None:
        queue: JobQueue[None] = JobQueue(size=2)
        gate = threading.Event()
        first = queue.submit(gate.wait)  # taken by the worker
        await asyncio.sleep(0.05)
        queue.submit(lambda: None)
        queue.submit(lambda: None)
        started = time.monotonic()
        with pytest.raises(QueueFull):
            queue.submit(lambda: None)
        assert time.monotonic() - started < 0.5
        gate.set()
        await first
        await queue.join()
        await queue.close()

    asyncio.run(scenario())


def test_the_event_loop_keeps_running_during_a_job() -> None:
    async def scenario() -> int:
        queue: JobQueue[None] = JobQueue(size=1)
        job = queue.submit(lambda: time.sleep(0.5))
        ticks = 0
        while not job.done():
            await asyncio.sleep(0.01)
            ticks += 1
        await queue.close()
        return ticks

    assert asyncio.run(scenario()) > 10


def test_a_failing_job_reaches_its_caller_and_the_queue_goes_on() -> None:
    async def scenario() -> None:
        queue: JobQueue[int] = JobQueue(size=3)

        def fail() -> int:
            raise ValueError("bad program")

        bad = queue.submit(fail)
        good = queue.submit(lambda: 7)
        with pytest.raises(ValueError, match="bad program"):
            await bad
        assert await good == 7
        await queue.close()

    asyncio.run(scenario())
