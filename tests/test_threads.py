"""hill.threads on its own: a shared call is shared by those who ask before
it begins, and by no one who asks once it has begun."""

from __future__ import annotations

import asyncio
import threading

from hill.threads import Threads


def test_reads_asked_before_one_begins_share_it_and_later_ones_do_not() -> None:
    """A crowd's reads queued behind a busy thread become one read; a read
    asked while that one runs is a read of its own (it may see a newer
    state), and a different read is never shared."""
    calls: list[int] = []
    release, running = threading.Event(), threading.Event()

    def block() -> None:
        running.set()
        release.wait(10)

    def read(value: int) -> int:
        calls.append(value)
        running.set()
        release.wait(10)
        return len(calls)

    async def scenario() -> None:
        threads = Threads(1, "test-shared")
        busy = asyncio.ensure_future(threads.run(block))
        await asyncio.get_running_loop().run_in_executor(None, running.wait, 10)
        running.clear()
        crowd = [asyncio.ensure_future(threads.run_shared(read, 1)) for _ in range(50)]
        other = asyncio.ensure_future(threads.run_shared(read, 2))
        await asyncio.sleep(0)
        release.set()  # the thread is free: the crowd's read begins
        first = await asyncio.gather(*crowd)
        assert first == [1] * 50  # one call for the 50
        release.clear()
        await other
        assert calls == [1, 2]
        # a read that has begun is not joined by one asked meanwhile
        running.clear()
        begun = asyncio.ensure_future(threads.run_shared(read, 1))
        await asyncio.get_running_loop().run_in_executor(None, running.wait, 10)
        later = asyncio.ensure_future(threads.run_shared(read, 1))
        release.set()
        assert (await begun, await later) == (3, 4)
        assert calls == [1, 2, 1, 1]
        await busy
        threads.close()

    asyncio.run(scenario())


def test_a_shared_call_that_fails_fails_for_each_and_the_next_is_fresh() -> None:
    attempts: list[str] = []

    def fails() -> None:
        attempts.append("x")
        raise ValueError("broken")

    release = threading.Event()

    async def scenario() -> None:
        threads = Threads(1, "test-shared-fail")
        busy = asyncio.ensure_future(threads.run(release.wait, 10))  # the thread taken
        waiting = [asyncio.ensure_future(threads.run_shared(fails)) for _ in range(3)]
        await asyncio.sleep(0)
        release.set()
        await busy
        results = await asyncio.gather(*waiting, return_exceptions=True)
        assert all(isinstance(r, ValueError) for r in results)
        assert len(attempts) == 1
        again = await asyncio.gather(threads.run_shared(fails), return_exceptions=True)
        assert isinstance(again[0], ValueError) and len(attempts) == 2
        threads.close()

    asyncio.run(scenario())
