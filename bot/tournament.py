"""The hill's tournaments in the bot: the host that plays them in the
background (`!bfjoust-tournament` is bot/commands/tournament.py).

`TournamentHost` plays one tournament at a time (hill.writers.tournaments)
in a thread of its own: unfinished ones first, oldest first, when the bot
starts (after a crash, they end exactly as uninterrupted runs), then those
admins start.  Its jousts go in small chunks and a chunk waits while a
player's request is open in the request book: a submission always goes
first.  Now and then it posts the progress of a long tournament, and it
announces the winner.  On `[cluster] scheduler` its jousts run on that Dask
cluster; a failing cluster pauses the tournament, which tries again later.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator, Sequence

from bot.commands.tournament import progress_text
from bot.worker import BackgroundWorker
from hill.config import Settings
from hill.engine import batches
from hill.engine.arena import Arena, CodeOf, Executor, LocalExecutor, Pair, Played
from hill.errors import Stopped, TournamentError
from hill.play.cluster import executor_for
from hill.rules.contests import contest_of_pool
from hill.store.records import tournament
from hill.store.requests import RequestBook
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments

CHUNK = 16  # jousts between two looks at the request book
IDLE_POLL_SECONDS = 0.25  # how often a busy hill is looked at again
RETRY_SECONDS = 60.0  # after a failure (e.g. the cluster is down)
PROGRESS_SECONDS = 600.0  # a long tournament's progress is posted this often


class YieldingExecutor:
    """An executor that plays in chunks, each waiting while `busy()` (a
    player's request is open), and stops between two when `stopping` is set."""

    def __init__(self, inner: Executor, busy: Callable[[], bool], stopping: threading.Event):
        self.inner = inner
        self.busy = busy
        self.stopping = stopping

    def __call__(self, pairs: Sequence[Pair], code_of: CodeOf) -> Iterator[Played]:
        for chunk in batches(pairs, 1, CHUNK):
            while self.busy() and not self.stopping.is_set():
                time.sleep(IDLE_POLL_SECONDS)
            if self.stopping.is_set():
                raise Stopped
            yield from self.inner(chunk, code_of)


class TournamentHost(BackgroundWorker):
    """Plays the hill's tournaments in the background (see the module)."""

    name = "tournament"
    retry_seconds = RETRY_SECONDS

    def __init__(
        self,
        hill: Hill,
        settings: Settings,
        book: RequestBook,
        announce: Callable[[str], None],
        *,
        progress_seconds: float = PROGRESS_SECONDS,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.service = HillTournaments(hill)
        self.db = hill.db
        self.site = settings.web.url
        self.scheduler = settings.cluster.scheduler
        self.book = book
        self.announce = announce
        self.progress_seconds = progress_seconds
        self.on_end = on_end  # after each tournament (a contest's is told by bot/contests.py)
        self.wake = asyncio.Event()
        self._local = LocalExecutor(hill.arena.programs, jobs=1)  # one core: players first

    def running(self) -> int | None:
        unfinished = self.service.unfinished()
        return unfinished[0] if unfinished else None

    async def begin(self, format: str, pool: str, started_by: str, all_versions: bool) -> int:
        """Create a tournament (played once those before it are over); its id."""
        tournament_id = await asyncio.to_thread(
            self.service.create, format, pool, all_versions=all_versions, started_by=started_by
        )
        self.wake.set()
        return tournament_id

    async def step(self) -> None:
        """Play the oldest unfinished tournament to its end and announce it,
        or wait for one."""
        self.wake.clear()  # before the read: a tournament stored meanwhile wakes us
        tournament_id = await asyncio.to_thread(self.running)
        if tournament_id is None:
            await self.wake.wait()
            return
        try:
            await self.in_thread(self._play, tournament_id, asyncio.get_running_loop())
        except TournamentError as error:  # the cluster is down: said, and tried later
            self.announce(f"Tournament #{tournament_id} pauses: {error}")
            raise
        view = await asyncio.to_thread(tournament, self.db, tournament_id)
        if view is not None and contest_of_pool(view.summary.pool) is None:
            self.announce(progress_text(view.summary, self.site))
        if self.on_end is not None:
            self.on_end()

    def _play(self, tournament_id: int, loop: asyncio.AbstractEventLoop) -> None:
        """Play a tournament to its end (in the host's thread)."""
        posted = time.monotonic()

        def progress(done: int, total: int) -> None:
            nonlocal posted
            if time.monotonic() - posted < self.progress_seconds:
                return
            posted = time.monotonic()
            view = tournament(self.db, tournament_id)
            if view is not None:
                loop.call_soon_threadsafe(self.announce, progress_text(view.summary, self.site))

        def busy() -> bool:
            return self.book.next_open() is not None

        with executor_for(self.scheduler, self._local) as inner:
            jousts = Arena(YieldingExecutor(inner, busy, self.stopping))
            self.service.prepare(tournament_id, jousts).run(progress)
