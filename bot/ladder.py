"""The all-time ladder in the bot, played in the background while the hill
is idle (`!bfjoust-ladder` is bot/commands/ladder.py).

`LadderWorker` plays the ladder (hill.writers.ladder) in small batches, in
a thread of its own and on one core, only while no player's request is open
in the request book: a submission always goes first, and waits at most for
the batch under way (a few jousts).  It keeps to `[ladder] jousts_per_hour`
by resting after each batch.  Stopped, or killed, it loses nothing: what it
played is stored batch by batch, and the next start resumes from there.
"""

from __future__ import annotations

import asyncio
import time

import structlog

from bot.worker import BackgroundWorker
from hill.config import LadderSettings
from hill.store.requests import RequestBook
from hill.writers.hill import Hill
from hill.writers.ladder import ArchiveLadder

log = structlog.get_logger(__name__)

BATCH = 8  # jousts between two looks at the request book
IDLE_POLL_SECONDS = 0.25  # how often a busy hill is looked at again
DONE_POLL_SECONDS = 30.0  # every pair has met: how often to look for new programs
RETRY_SECONDS = 30.0  # after an unexpected failure
REFIT_SECONDS = 60.0  # the standing shown is refitted at most this often (new programs at once)


def rest_after(started: float, finished: float, jousts: int, per_hour: int) -> float:
    """Seconds to rest after `jousts` jousts played from `started` to
    `finished`, so that they take at least their share of the hour."""
    return max(0.0, started + jousts * 3600.0 / per_hour - finished)


class LadderWorker(BackgroundWorker):
    """Plays the all-time ladder while the hill is idle (see the module)."""

    name = "ladder"
    retry_seconds = RETRY_SECONDS

    def __init__(self, hill: Hill, settings: LadderSettings, book: RequestBook) -> None:
        super().__init__()
        self.ladder = ArchiveLadder(hill, jobs=1, refit_seconds=REFIT_SECONDS)
        self.settings = settings
        self.book = book
        self.played = 0  # jousts played since the start

    def start(self) -> None:
        if self.settings.enabled:
            super().start()

    async def step(self) -> None:
        """Play one batch if the hill is idle, then rest as the rate asks."""
        if await self.in_thread(self.book.next_open) is not None:
            await asyncio.sleep(IDLE_POLL_SECONDS)
            return
        started = time.monotonic()
        work = await self.in_thread(self.ladder.work, BATCH)
        self.played += work.played
        if work.played:
            log.debug("ladder batch", jousts=work.played, refitted=work.refitted)
        rest = rest_after(started, time.monotonic(), work.played, self.settings.jousts_per_hour)
        if work.done and not work.played:
            rest = max(rest, DONE_POLL_SECONDS)
        await asyncio.sleep(rest)
