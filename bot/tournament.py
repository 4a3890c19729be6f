"""The hill's tournaments in the bot: the host that plays them in the
background, and its progress in one line (`!bfjoust-tournament` is
bot/commands/tournament.py).

`TournamentHost` plays one tournament at a time (hill.scheduler.journeys)
in a thread of its own and in its turn at the hill: unfinished ones first,
oldest first, when the bot starts (after a crash, they end exactly as
uninterrupted runs), then those admins start (it sleeps until one is: the
command wakes it, or the hill's bell for one started by another process).
A contest's tournament is not its own: the contest's journey plays it
(bot/contests.py), before any admin's.  Its work goes in small pieces
(jousts in chunks, its bookkeeping in short transactions), and between two
pieces it hands its turn to more urgent work (a player's request, a
contest): a submission always goes first.  The bot's stop stops it between
two pieces; an admin's cancel (`!bfjoust-tournament cancel ID`, or
`bfjoust tournament cancel ID` from another process) after its write
transaction under way.  Now and then it posts the progress of a long
tournament, and it announces the winner (or the cancellation).  On
`[cluster] scheduler` its jousts run on that Dask cluster; a failing
cluster pauses the tournament, which tries again later.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Iterator, Sequence

from bot.worker import BackgroundWorker
from hill.config import Settings
from hill.engine import Pair, Played, batches
from hill.engine.arena import Arena, CodeOf, Executor, LocalExecutor
from hill.errors import Cancelled, TournamentError
from hill.play.cluster import executor_for
from hill.scheduler import Priority, Turns
from hill.scheduler.journeys import TournamentPlayer, play_tournament
from hill.store.records import TournamentSummary, tournament
from hill.threads import Threads
from hill.web.urls import Urls
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments

CHUNK = 16  # jousts between two pieces of work (more urgent work may go between)
RETRY_SECONDS = 60.0  # after a failure (e.g. the cluster is down)
PROGRESS_SECONDS = 600.0  # a long tournament's progress is posted this often


class YieldingExecutor:
    """An executor that plays in chunks, `checkpoint()` before each (it
    hands the turn to more urgent work, and raises Stopped once the bot
    stops)."""

    def __init__(self, inner: Executor, checkpoint: Callable[[], None]) -> None:
        self.inner = inner
        self.checkpoint = checkpoint

    def __call__(self, pairs: Sequence[Pair], code_of: CodeOf) -> Iterator[Played]:
        for chunk in batches(pairs, 1, CHUNK):
            self.checkpoint()
            yield from self.inner(chunk, code_of)


class TournamentHost(BackgroundWorker):
    """Plays the hill's tournaments in the background (see the module)."""

    name = "tournament"
    priority = Priority.TOURNAMENT
    retry_seconds = RETRY_SECONDS

    def __init__(
        self,
        hill: Hill,
        settings: Settings,
        turns: Turns,
        announce: Callable[[str], None],
        *,
        progress_seconds: float = PROGRESS_SECONDS,
    ) -> None:
        super().__init__(turns)
        self.hill = hill
        self.service = HillTournaments(hill)
        self.db = hill.db
        self.site = settings.web.url
        self.scheduler = settings.cluster.scheduler
        self.announce = announce
        self.progress_seconds = progress_seconds
        self.reads = Threads(1, "tournament-reads")  # the host's thread plays: reads go here
        self.orders = Threads(1, "tournament-orders")  # the admins' cancels, behind no read
        self._local = LocalExecutor(hill.arena.programs, jobs=1)  # one core: players first

    async def close(self) -> None:
        await super().close()
        await self.reads.finish()
        await self.orders.finish()

    def running(self) -> int | None:
        """The admins' tournament to play on, oldest first (a contest's is
        its journey's to play)."""
        unfinished = self.service.unfinished(contests=False)
        return unfinished[0] if unfinished else None

    async def begin(self, format: str, pool: str, started_by: str, all_versions: bool) -> int:
        """Create a tournament (played once those before it are over); its id."""
        tournament_id = await self.reads.run(
            self.service.create, format, pool, all_versions=all_versions, started_by=started_by
        )
        self.wake.set()
        return tournament_id

    async def cancel(self, tournament_id: int, by: str) -> TournamentSummary:
        """Cancel a tournament (TournamentError if there is none, or it is
        over); its summary from its counts, at once (not behind the host's
        reads, such as a big tournament's view at its end).  The one being
        played stops within a second, and its result is announced."""
        return await self.orders.run(self.service.cancel, tournament_id, by)

    async def step(self) -> None:
        """Play the oldest unfinished tournament to its end and announce it,
        or wait for one."""
        self.wake.clear()  # before the read: a tournament stored meanwhile wakes us
        tournament_id = await self.reads.run(self.running)
        if tournament_id is None:
            await self.wake.wait()
            return
        try:
            await self.in_turn(self._play, tournament_id, asyncio.get_running_loop())
        except Cancelled:
            pass  # its end, with its standings as they stand, is announced below
        except TournamentError as error:  # the cluster is down: said, and tried later
            self.announce(f"Tournament #{tournament_id} pauses: {error}")
            raise
        view = await self.reads.run(tournament, self.db, tournament_id)
        if view is not None:
            self.announce(progress_text(view.summary, self.site))

    def player(self, priority: Priority) -> TournamentPlayer:
        """Plays a tournament to its end in the calling thread, which holds
        the turn at `priority` (a contest's journey has its own)."""

        def play(tournament_id: int) -> None:
            self._play(tournament_id, None, functools.partial(self.between, priority))

        return play

    def _play(
        self,
        tournament_id: int,
        loop: asyncio.AbstractEventLoop | None,
        between: Callable[[], None] | None = None,
    ) -> None:
        """Play a tournament to its end (in a thread holding the turn);
        its progress posted on `loop` now and then, if given."""
        checkpoint = between or self.between
        posted = time.monotonic()

        def progress(done: int, total: int) -> None:
            nonlocal posted
            if loop is None or time.monotonic() - posted < self.progress_seconds:
                return
            posted = time.monotonic()
            view = tournament(self.db, tournament_id)
            if view is not None:
                loop.call_soon_threadsafe(self.announce, progress_text(view.summary, self.site))

        with executor_for(self.scheduler, self._local) as inner:
            jousts = Arena(YieldingExecutor(inner, checkpoint))
            play_tournament(self.hill, tournament_id, jousts, checkpoint, progress)


def progress_text(s: TournamentSummary, site: str) -> str:
    """A tournament in one line, for IRC (`site`: the web report's URL)."""
    what = f"Tournament #{s.id}, {s.format} over {s.pool} ({s.entrants} entrants)"
    link = Urls(site=site).tournament(s.id)
    if s.cancelled:
        leader = f"; leader: {s.leader}" if s.leader else ""
        done = f"{s.matches_committed} of {s.matches_expected} matches"
        return f"{what}: {s.ended} after {done}{leader}. {link}"
    if s.ended is not None:
        winner = f"; winner: {s.leader}" if s.leader else ""
        return f"{what}: {s.ended}{winner}. {link}"
    share = 100 * s.matches_committed // max(s.matches_expected, 1)
    leader = f"; leader: {s.leader}" if s.leader else ""
    return (
        f"{what}: round {s.rounds_played}/{s.rounds_planned}, {share}% "
        f"({s.matches_committed} of {s.matches_expected} matches){leader}. {link}"
    )
