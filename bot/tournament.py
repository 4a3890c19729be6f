"""The hill's tournaments in the bot: `!bfjoust-tournament`, and the host
that plays them in the background.

`TournamentHost` plays one tournament at a time (hill.tournament_service)
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
import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import structlog

from bot.client import Incoming
from hill.config import Settings
from hill.engine.arena import Arena, CodeOf, Executor, LocalExecutor, Pair, Played
from hill.errors import HillError, Stopped, TournamentError
from hill.play.cluster import executor_for
from hill.store.pools import POOLS_HELP
from hill.store.requests import RequestBook
from hill.store.tournaments import TournamentSummary, latest, tournament
from hill.tournaments.plan import FORMATS
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments

log = structlog.get_logger(__name__)

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
        for start in range(0, len(pairs), CHUNK):
            while self.busy() and not self.stopping.is_set():
                time.sleep(IDLE_POLL_SECONDS)
            if self.stopping.is_set():
                raise Stopped
            yield from self.inner(pairs[start : start + CHUNK], code_of)


def progress_text(s: TournamentSummary, url: str) -> str:
    """A tournament in one line, for IRC."""
    what = f"Tournament #{s.id}, {s.format} over {s.pool} ({s.entrants} entrants)"
    link = f"{url}tournament/{s.id}"
    if s.ended is not None:
        winner = f"; winner: {s.leader}" if s.leader else ""
        return f"{what}: {s.ended}{winner}. {link}"
    share = 100 * s.matches_committed // max(s.matches_expected, 1)
    leader = f"; leader: {s.leader}" if s.leader else ""
    return (
        f"{what}: round {s.rounds_played}/{s.rounds_planned}, {share}% "
        f"({s.matches_committed} of {s.matches_expected} matches){leader}. {link}"
    )


class TournamentHost:
    """Plays the hill's tournaments in the background (see the module)."""

    def __init__(
        self,
        hill: Hill,
        settings: Settings,
        book: RequestBook,
        announce: Callable[[str], None],
        *,
        progress_seconds: float = PROGRESS_SECONDS,
    ) -> None:
        self.service = HillTournaments(hill)
        self.db = hill.db
        self.url = settings.web.url
        self.scheduler = settings.cluster.scheduler
        self.book = book
        self.announce = announce
        self.progress_seconds = progress_seconds
        self.stopping = threading.Event()
        self.wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="tournament")
        self._local = LocalExecutor(hill.arena.programs, jobs=1)  # one core: players first

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="tournaments")

    async def close(self) -> None:
        """Stop after the chunk under way (its results are stored before
        this returns: the hill may be closed then)."""
        self.stopping.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await asyncio.to_thread(self._thread.shutdown, wait=True)

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

    async def _run(self) -> None:
        while True:
            tournament_id = await asyncio.to_thread(self.running)
            if tournament_id is None:
                self.wake.clear()
                await self.wake.wait()
                continue
            try:
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(self._thread, self._play, tournament_id, loop)
            except Stopped:
                return
            except Exception as error:  # the cluster is down, the disk is full: try later
                log.exception("a tournament failed; trying again later", tournament=tournament_id)
                if isinstance(error, TournamentError):
                    self.announce(f"Tournament #{tournament_id} pauses: {error}")
                await asyncio.sleep(RETRY_SECONDS)
                continue
            view = await asyncio.to_thread(tournament, self.db, tournament_id)
            if view is not None:
                self.announce(progress_text(view.summary, self.url))

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
                loop.call_soon_threadsafe(self.announce, progress_text(view.summary, self.url))

        def busy() -> bool:
            return self.book.next_open() is not None

        with executor_for(self.scheduler, self._local) as inner:
            jousts = Arena(YieldingExecutor(inner, busy, self.stopping))
            self.service.prepare(tournament_id, jousts).run(progress)


class TournamentCommand:
    """`!bfjoust-tournament [swiss|round-robin POOL [all-versions]]` (a Command's run):
    anyone asks for the running or last tournament; admins start one."""

    def __init__(
        self,
        host: TournamentHost,
        admins: Sequence[str],
        reply: Callable[[Incoming, str], None],
    ) -> None:
        self.host = host
        self.admins = admins
        self.reply = reply

    async def __call__(self, message: Incoming, args: str) -> None:
        if not args:
            view = await asyncio.to_thread(latest, self.host.db)
            if view is None:
                self.reply(message, "No tournament yet: an admin starts one.")
            else:
                self.reply(message, progress_text(view.summary, self.host.url))
            return
        message = await message.vouched()
        if not message.sender.is_admin(self.admins):
            raise HillError("starting a tournament is for the hill's admins")
        words = args.split()
        every_version = words[2:] == ["all-versions"]
        if words[0] not in FORMATS or not (len(words) == 2 or every_version):
            raise HillError(
                f"start one with: swiss|round-robin POOL [all-versions]; POOL is {POOLS_HELP}"
            )
        running = await asyncio.to_thread(self.host.running)
        try:
            tournament_id = await self.host.begin(
                words[0], words[1], message.sender.nick, all_versions=every_version
            )
        except TournamentError as error:
            raise HillError(str(error)) from None
        view = await asyncio.to_thread(tournament, self.host.db, tournament_id)
        assert view is not None
        s = view.summary
        after = f"; it starts when #{running} is over" if running is not None else ""
        self.reply(
            message,
            f"Tournament #{s.id} started: {s.format} over {s.pool}, {s.entrants} entrants, "
            f"{s.rounds_planned} round{'s' * (s.rounds_planned != 1)}{after}. "
            f"The winner is announced here. {self.host.url}tournament/{s.id}",
        )
