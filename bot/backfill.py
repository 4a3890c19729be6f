"""The battle statistics of the jousts stored before they were kept,
replayed by the bot in the background (hill.writers.backfill): in small
batches, in a thread of its own and on one core, each in its turn at the
hill, the last of all (hill.scheduler.turns: a submission waits at most for
the batch under way), the current hill's jousts first.  Its progress is
logged; once every joust has its statistics it sleeps until another
process changes the hill (a joust stored by an older version of the hill
meanwhile: woken by the hill's bell).
Stopped, or killed, it loses nothing: what it played is stored batch by
batch.
"""

from __future__ import annotations

import time

import structlog

from bot.worker import BackgroundWorker
from hill.scheduler import Priority, Turns
from hill.writers.backfill import StatsBackfill
from hill.writers.hill import Hill

log = structlog.get_logger(__name__)

BATCH = 8  # jousts a turn
LOG_SECONDS = 30.0  # progress is logged at most this often


class BackfillWorker(BackgroundWorker):
    """Replays the jousts that lack statistics while the hill is idle."""

    name = "stats-backfill"
    priority = Priority.BACKFILL

    def __init__(self, hill: Hill, turns: Turns) -> None:
        super().__init__(turns)
        self.backfill = StatsBackfill(hill, jobs=1)
        self.played = 0  # jousts replayed since the start
        self._logged = 0.0

    async def step(self) -> None:
        self.wake.clear()  # before the batch: a change made meanwhile is seen
        work = await self.in_turn(self.backfill.work, BATCH)
        self.played += work.played
        if work.played and (work.done or time.monotonic() - self._logged > LOG_SECONDS):
            self._logged = time.monotonic()
            kept, stored = await self.in_thread(self.backfill.progress)
            log.info("battle statistics replayed", replayed=self.played, kept=kept, stored=stored)
        if work.done:
            await self.wake.wait()
