"""The battle statistics of the jousts stored before they were kept,
replayed by the bot in the background (hill.writers.backfill): in small
batches, in a thread of its own and on one core, only while no player's
request is open in the request book (a submission always goes first, and
waits at most for the batch under way), the current hill's jousts first.
Its progress is logged; once every joust has its statistics it looks again
now and then (a joust stored by an older version of the hill meanwhile).
Stopped, or killed, it loses nothing: what it played is stored batch by
batch.
"""

from __future__ import annotations

import asyncio
import time

import structlog

from bot.worker import BackgroundWorker
from hill.store.requests import RequestBook
from hill.writers.backfill import StatsBackfill
from hill.writers.hill import Hill

log = structlog.get_logger(__name__)

BATCH = 8  # jousts between two looks at the request book
IDLE_POLL_SECONDS = 0.25  # how often a busy hill is looked at again
DONE_POLL_SECONDS = 300.0  # every joust has its statistics: how often to look again
LOG_SECONDS = 30.0  # progress is logged at most this often


class BackfillWorker(BackgroundWorker):
    """Replays the jousts that lack statistics while the hill is idle."""

    name = "stats-backfill"

    def __init__(self, hill: Hill, book: RequestBook) -> None:
        super().__init__()
        self.backfill = StatsBackfill(hill, jobs=1)
        self.book = book
        self.played = 0  # jousts replayed since the start
        self._logged = 0.0

    async def step(self) -> None:
        if await self.in_thread(self.book.next_open) is not None:
            await asyncio.sleep(IDLE_POLL_SECONDS)
            return
        work = await self.in_thread(self.backfill.work, BATCH)
        self.played += work.played
        if work.played and (work.done or time.monotonic() - self._logged > LOG_SECONDS):
            self._logged = time.monotonic()
            kept, stored = await self.in_thread(self.backfill.progress)
            log.info("battle statistics replayed", replayed=self.played, kept=kept, stored=stored)
        if work.done:
            await asyncio.sleep(DONE_POLL_SECONDS)
        else:
            await asyncio.sleep(0)  # let the event loop breathe between batches
