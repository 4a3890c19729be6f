"""The all-time ladder in the bot, played in the background while the hill
is idle (`!bfjoust-ladder` is bot/commands/ladder.py).

`LadderWorker` plays the ladder (hill.writers.ladder) in small batches, in
a thread of its own and on one core, each batch in its turn at the hill
(hill.scheduler.turns: after players' requests, contests and tournaments),
so a submission waits at most for the batch under way (a few jousts).  It
keeps to `[ladder] jousts_per_hour` by resting after each batch (a timer).
Once every pair has met it sleeps until the hill changes (a new program:
woken by the bot's answers and the hill's bell).  Stopped, or killed, it
loses nothing: what it played is stored batch by batch, and the next start
resumes from there.
"""

from __future__ import annotations

import asyncio
import time

import structlog

from bot.worker import BackgroundWorker
from hill.config import LadderSettings
from hill.scheduler import Priority, Turns
from hill.writers.hill import Hill
from hill.writers.ladder import ArchiveLadder

log = structlog.get_logger(__name__)

BATCH = 8  # jousts a turn
RETRY_SECONDS = 30.0  # after an unexpected failure
REFIT_SECONDS = 60.0  # the standing shown is refitted at most this often (new programs at once)


def rest_after(started: float, finished: float, jousts: int, per_hour: int) -> float:
    """Seconds to rest after `jousts` jousts played from `started` to
    `finished`, so that they take at least their share of the hour."""
    return max(0.0, started + jousts * 3600.0 / per_hour - finished)


class LadderWorker(BackgroundWorker):
    """Plays the all-time ladder while the hill is idle (see the module)."""

    name = "ladder"
    priority = Priority.LADDER
    retry_seconds = RETRY_SECONDS

    def __init__(self, hill: Hill, settings: LadderSettings, turns: Turns) -> None:
        super().__init__(turns)
        self.ladder = ArchiveLadder(hill, jobs=1, refit_seconds=REFIT_SECONDS)
        self.settings = settings
        self.played = 0  # jousts played since the start

    def start(self) -> None:
        if self.settings.enabled:
            super().start()

    async def step(self) -> None:
        """Play one batch in its turn, then rest as the rate asks, or sleep
        until the hill changes once every pair has met."""
        self.wake.clear()  # before the batch: a change made meanwhile is seen
        started = time.monotonic()
        work = await self.in_turn(self.ladder.work, BATCH)
        self.played += work.played
        if work.played:
            log.debug("ladder batch", jousts=work.played, refitted=work.refitted)
        if work.done and not work.played:
            await self.wake.wait()
            return
        await asyncio.sleep(
            rest_after(started, time.monotonic(), work.played, self.settings.jousts_per_hour)
        )
