"""Work the bot does in the background, stated once: a task on the event
loop that takes steps, its blocking work on a thread of its own and in its
turn at the hill (hill.scheduler.turns, at the worker's priority), until the
bot stops; between steps it sleeps on `wake` (set by whoever gives it work,
and by the hill's bell: hill.scheduler) or on a timer it sets itself; a
step that fails is logged and tried again later, so that a
full disk or a lost cluster never brings the bot down (a trouble of the
storage's, such as the full disk, is one log line per interval, not a
traceback a try: hill.logs.Trouble).  The all-time
ladder (bot/ladder.py) and the tournaments (bot/tournament.py) are two.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import structlog

from hill.errors import Stopped, StorageError
from hill.logs import Trouble
from hill.scheduler import Priority, Turns
from hill.threads import Threads

log = structlog.get_logger(__name__)

T = TypeVar("T")


class RetryTimer:
    """`action()` again after a while, once: while a retry is set, another
    failure sets no second one; `cancel()` when the owner stops.  (The
    runner's storage retries, the notices' failed look, a contest's journey
    that stopped.)"""

    def __init__(self, action: Callable[[], None]) -> None:
        self.action = action
        self._handle: asyncio.TimerHandle | None = None

    def after(self, seconds: float) -> None:
        """Try again in `seconds`, unless a retry is set already."""
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(seconds, self._fire)

    def _fire(self) -> None:
        self._handle = None
        self.action()

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class BackgroundWorker:
    """Takes `step()` after step from `start()` to `close()`; blocking work
    goes to `in_thread`, the work that changes the hill to `in_turn`.  A
    step may raise Stopped once `stopping` is set."""

    name = "worker"
    priority = Priority.BACKFILL  # its place in the hill's order
    retry_seconds = 30.0  # after a step that failed

    def __init__(self, turns: Turns) -> None:
        self.turns = turns
        self.wake = asyncio.Event()  # work for it (set by whoever made it)
        self.stopping = threading.Event()  # read by the work in the thread
        self._thread = Threads(1, self.name)
        self._task: asyncio.Task[None] | None = None
        self.trouble = Trouble(f"the {self.name}")

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name=self.name)

    async def close(self) -> None:
        """Stop after the work under way in the thread (it finishes first)."""
        self.stopping.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._thread.finish()

    async def in_thread(self, function: Callable[..., T], *args: Any) -> T:
        return await self._thread.run(function, *args)

    async def in_turn(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` on the worker's thread, in its turn at the hill."""
        async with self.turns.turn(self.priority):
            return await self._thread.run(function, *args)

    def between(self, priority: Priority | None = None) -> None:
        """Between two pieces of work done in the turn (in the thread), held
        at `priority` (default the worker's): more urgent work goes first;
        Stopped once the bot stops."""
        if self.stopping.is_set():
            raise Stopped
        self.turns.between(self.priority if priority is None else priority)

    async def step(self) -> None:
        raise NotImplementedError

    def failed(self, error: Exception) -> None:
        """A step failed (logged already; tried again after retry_seconds)."""

    async def _run(self) -> None:
        while True:
            try:
                await self.step()
            except Stopped:
                return
            except Exception as error:  # e.g. the disk is full: keep the bot up, try later
                if isinstance(error, StorageError):
                    self.trouble.struck(error.trouble)
                else:
                    log.exception(f"the {self.name} failed; trying again later")
                self.failed(error)
                await asyncio.sleep(self.retry_seconds)
            else:
                self.trouble.cleared()
