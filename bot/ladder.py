"""The all-time ladder in the bot: played in the background while the hill
is idle, and `!bfjoust-ladder`.

`LadderWorker` plays the ladder (hill.ladder_service) in small batches, in
a thread of its own and on one core, only while no player's request is open
in the request book: a submission always goes first, and waits at most for
the batch under way (a few jousts).  It keeps to `[ladder] jousts_per_hour`
by resting after each batch.  Stopped, or killed, it loses nothing: what it
played is stored batch by batch, and the next start resumes from there.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import structlog

from bot.client import Incoming
from hill.config import LadderSettings
from hill.errors import HillError
from hill.ladder.board import Board, Row
from hill.store.ladder import read_board
from hill.store.requests import RequestBook
from hill.writers.hill import Hill
from hill.writers.ladder import ArchiveLadder

log = structlog.get_logger(__name__)

BATCH = 8  # jousts between two looks at the request book
IDLE_POLL_SECONDS = 0.25  # how often a busy hill is looked at again
DONE_POLL_SECONDS = 30.0  # every pair has met: how often to look for new programs
RETRY_SECONDS = 30.0  # after an unexpected failure
REFIT_SECONDS = 60.0  # the standing shown is refitted at most this often (new programs at once)
TOP = 5  # programs named by `!bfjoust-ladder`
VERSIONS = 3  # versions named by `!bfjoust-ladder NAME`
T = TypeVar("T")


def rest_after(started: float, finished: float, jousts: int, per_hour: int) -> float:
    """Seconds to rest after `jousts` jousts played from `started` to
    `finished`, so that they take at least their share of the hour."""
    return max(0.0, started + jousts * 3600.0 / per_hour - finished)


class LadderWorker:
    """Plays the all-time ladder while the hill is idle (see the module)."""

    def __init__(self, hill: Hill, settings: LadderSettings, book: RequestBook) -> None:
        self.ladder = ArchiveLadder(hill, jobs=1, refit_seconds=REFIT_SECONDS)
        self.settings = settings
        self.book = book
        self.played = 0  # jousts played since the start
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="ladder")
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self.settings.enabled:
            self._task = asyncio.create_task(self._run(), name="ladder")

    async def close(self) -> None:
        """Stop after the batch under way (its jousts are stored)."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await asyncio.to_thread(self._thread.shutdown, wait=True)

    async def _in_thread(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._thread, function, *args)

    async def _run(self) -> None:
        while True:
            try:
                await self._next()
            except Exception:  # e.g. the disk is full: keep the bot up, try later
                log.exception("the ladder failed; trying again later")
                await asyncio.sleep(RETRY_SECONDS)

    async def _next(self) -> None:
        """Play one batch if the hill is idle, then rest as the rate asks."""
        if await self._in_thread(self.book.next_open) is not None:
            await asyncio.sleep(IDLE_POLL_SECONDS)
            return
        started = time.monotonic()
        work = await self._in_thread(self.ladder.work, BATCH)
        self.played += work.played
        if work.played:
            log.debug("ladder batch", jousts=work.played, refitted=work.refitted)
        rest = rest_after(started, time.monotonic(), work.played, self.settings.jousts_per_hour)
        if work.done and not work.played:
            rest = max(rest, DONE_POLL_SECONDS)
        await asyncio.sleep(rest)


def rating_text(row: Row) -> str:
    return f"{row.rating:.2f} ({row.rating_low:.2f}-{row.rating_high:.2f})"


def top_text(board: Board | None, url: str) -> str:
    """`!bfjoust-ladder`: the top of the all-time ladder."""
    if board is None:
        return f"The all-time ladder has no standing yet. {url}ladder"
    top = ", ".join(f"{r.rank}. {r.version.label} {rating_text(r)}" for r in board.rows[:TOP])
    return (
        f"All-time ladder ({board.pool} programs, {board.jousts} of {board.pairs} pairs "
        f"jousted): {top}. Full ladder: {url}ladder"
    )


def version_text(board: Board | None, words: str, identity: str) -> str:
    """`!bfjoust-ladder NAME`: where each version of the program stands."""
    if board is None:
        raise HillError("the all-time ladder has no standing yet")
    rows = board.find(words, identity)
    if not rows:
        raise HillError(f"there is no {words[:60]} in the all-time ladder")
    parts = [
        f"{r.version.label}: ladder rank {r.rank}/{board.pool} "
        f"(95%: {r.stats['rank_low']}-{r.stats['rank_high']}), rating {rating_text(r)}, "
        f"{r.jousts} jousts{', on the hill' if r.on_hill else ''}"
        for r in rows[:VERSIONS]
    ]
    more = f"; and {len(rows) - VERSIONS} older versions" if len(rows) > VERSIONS else ""
    return "; ".join(parts) + more


class LadderCommand:
    """`!bfjoust-ladder [NAME]` (a Command's `run`)."""

    def __init__(self, hill: Hill, url: str, reply: Callable[[Incoming, str], None]) -> None:
        self.db = hill.db
        self.url = url
        self.reply = reply

    async def __call__(self, message: Incoming, args: str) -> None:
        board = await asyncio.to_thread(read_board, self.db)
        if not args:
            self.reply(message, top_text(board, self.url))
        elif " " in args:
            raise HillError("give one program's name, OWNER.NAME or OWNER.NAME@VERSION")
        else:
            self.reply(message, version_text(board, args, message.sender.identity))
