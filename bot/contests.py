"""The hill's contests in the bot: `ContestClock` keeps their times and
tells the channels (`!bfjoust-contest` and `-enter` are bot/commands/).

It reads the contests when woken (a contest created, closed or entered, by
a command or by another process through the hill's bell) and at the next
moment one of them needs it (a timer: a reminder or a close), and for each:
announces a new one, reminds 24 hours and 1 hour before the close, closes
it at its closing time (first waiting until the entries heard before then
are in the request book, bot.commands.Commands.settled; the close plays
those still waiting, in the contest's turn at the hill), then takes the
contest's journey on (hill.scheduler.journeys: its tournament played, in
the contest's turn, before any admin's tournament; its results published)
and announces the winner.  What the channels have heard is noted in the
database once written to the server (hill.writers.contests.mark_told), so
a restart says nothing twice; a bot that was down at a closing time closes
the contest as it starts, with the entries heard before it, and takes on
the journey of a contest closed before it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import functools
import math
from collections.abc import Awaitable, Callable, Collection

import structlog

from bot.tournament import TournamentHost
from bot.worker import BackgroundWorker, RetryTimer
from hill.config import Settings
from hill.errors import Stopped
from hill.rules import contests as rules
from hill.rules.contests import ContestState, News
from hill.rules.events import iso_utc, utcnow
from hill.scheduler import Priority, Turns
from hill.scheduler.journeys import publish_contest
from hill.store.contests import ContestView, contests
from hill.threads import Threads
from hill.web.urls import Urls
from hill.writers.hill import Hill

log = structlog.get_logger(__name__)

# say `text` in every channel, then call back once it is all written
Tell = Callable[[str, Callable[[], None]], None]


async def _nothing_waits(heard_before: dt.datetime) -> None:
    return None


class ContestClock(BackgroundWorker):
    """Keeps the contests' times and tells the channels (see the module)."""

    name = "contests"
    priority = Priority.CONTEST
    retry_seconds = 5.0

    def __init__(
        self,
        hill: Hill,
        settings: Settings,
        turns: Turns,
        host: TournamentHost,
        tell: Tell,
        played: Callable[[], None],
    ) -> None:
        super().__init__(turns)
        self.hill = hill
        self.writer = hill.contests
        self.db = hill.db
        self.host = host
        self.tell = tell
        self.played = played  # requests were played by a close: their answers go out
        self.prefix = settings.irc.command
        self.urls = Urls(site=settings.web.url)
        # waits until the IRC commands heard before a time are recorded (Commands.settled)
        self.settled: Callable[[dt.datetime], Awaitable[None]] = _nothing_waits
        self._telling: set[tuple[str, ...]] = set()  # handed to the outbox, not noted yet
        self._noting: set[asyncio.Task[None]] = set()
        self._journeys: dict[str, asyncio.Task[None]] = {}  # contests being played
        self._journey_thread = Threads(1, "contest-journey")
        self._retry = RetryTimer(self.wake.set)  # a journey that stopped, tried again then

    async def close(self) -> None:
        self._retry.cancel()
        for task in self._journeys.values():
            task.cancel()
        await super().close()
        await asyncio.gather(*self._journeys.values(), return_exceptions=True)
        await self._journey_thread.finish()

    async def step(self) -> None:
        self.wake.clear()  # before the read: a change made meanwhile wakes us
        now = utcnow()
        views = await self.in_thread(contests, self.db)
        for view in views:
            await self._attend(view, now)
        moments = [rules.next_moment(v.created_at, v.closes, now, v.told) for v in views if v.open]
        with contextlib.suppress(TimeoutError):
            if moments:  # a timer for the next of them
                await asyncio.wait_for(self.wake.wait(), (min(moments) - now).total_seconds())
            else:
                await self.wake.wait()

    async def _attend(self, view: ContestView, now: dt.datetime) -> None:
        told = set(view.told)
        if view.open:
            reminder = rules.reminder_due(view.created_at, view.closes, now, told)
            due = reminder.marks if reminder else ()
            if News.OPENED not in told:  # it says the closing time: a reminder due is moot
                self._say(view, (News.OPENED, *due), self.opened(view, now))
            elif reminder is not None:
                self._say(view, due, self.reminder(view, now))
            if now >= view.closes:
                await self.close_contest(view.name, "hill")
            return
        seen = (News.OPENED, News.DAY, News.HOUR, News.CLOSED)  # moot once it is closed
        if News.CLOSED not in told:
            self._say(view, seen, self.closed(view))
        if view.state == ContestState.CLOSED and view.name not in self._journeys:
            journey = asyncio.create_task(self._journey(view), name=f"contest-{view.name}")
            self._journeys[view.name] = journey
            journey.add_done_callback(lambda _: self._journeys.pop(view.name, None))
        if view.state == ContestState.PLAYED and News.RESULTS not in told:
            self._say(view, (*seen, News.RESULTS), self.results(view))

    async def close_contest(
        self, name: str, by: str, now: dt.datetime | None = None
    ) -> ContestView:
        """Close contest `name` at its time (or at `now`, if earlier), once
        the entries heard before then are recorded; the close plays those
        still waiting, in the contest's turn."""
        view = await self.in_thread(self.writer.view, name)
        if view.open:
            closing = min(view.closes, now or utcnow())
            await self.settled(closing)
            closing_it = functools.partial(self.writer.close, name, by=by, now=closing)
            view = await self.in_turn(closing_it)
            self.played()
            log.info("contest closed", contest=view.name, state=view.state)
        self.wake.set()
        return view

    async def _journey(self, view: ContestView) -> None:
        """A closed contest's tournament played and its results published
        (hill.scheduler.journeys), in the contest's turn; then told."""
        play = self.host.player(self.priority)
        try:
            async with self.turns.turn(self.priority):
                await self._journey_thread.run(publish_contest, self.hill, view, play)
        except Stopped:
            return
        except Exception as error:  # the cluster down, the disk full...: tried again
            log.warning("a contest's journey stopped", contest=view.name, error=str(error))
            self._retry.after(self.retry_seconds)
        self.wake.set()

    def _say(self, view: ContestView, marks: Collection[News], text: str) -> None:
        """Tell the channels once: `marks` noted when it is written to the server."""
        key = (view.name, *marks)
        if key in self._telling:
            return
        self._telling.add(key)

        def noted() -> None:
            task = asyncio.create_task(self._note(view.name, tuple(marks), key))
            self._noting.add(task)
            task.add_done_callback(self._noting.discard)

        self.tell(text, noted)

    async def _note(self, name: str, marks: tuple[News, ...], key: tuple[str, ...]) -> None:
        try:
            await self.in_thread(self.writer.mark_told, name, tuple(m.value for m in marks))
        finally:
            self._telling.discard(key)
            self.wake.set()

    # --- what the channels hear ---------------------------------------------

    def _enter(self, name: str) -> str:
        return f"{self.prefix}-enter {name} CODE (or {self.prefix}-upload {name} contest)"

    def opened(self, view: ContestView, now: dt.datetime) -> str:
        left = rules.time_left(view.seconds_left(now))
        return (
            f"Contest {view.name} is open: {view.title}. It closes at {iso_utc(view.closes)} "
            f"(in {left}). One entry each, hidden until the close; enter in private with "
            f"{self._enter(view.name)}. {self.urls.contest(view.name)}"
        )

    def reminder(self, view: ContestView, now: dt.datetime) -> str:
        left = rules.time_left(60 * math.ceil(view.seconds_left(now) / 60))  # 1 h, not 59 min 59 s
        return (
            f"Contest {view.name} closes in {left}, at {iso_utc(view.closes)}; "
            f"{len(view.players)} entered so far. Enter in private with "
            f"{self._enter(view.name)}. {self.urls.contest(view.name)}"
        )

    def closed(self, view: ContestView) -> str:
        entrants = ", ".join(e.entrant for e in view.players)
        count = f"{len(view.players)} entr{'y' if len(view.players) == 1 else 'ies'}"
        who = f" ({entrants})" if entrants else ""
        if view.void_reason:
            return f"Contest {view.name} is closed with {count}{who}: {view.void_reason}."
        return (
            f"Contest {view.name} is closed with {count}{who}; its tournament is being "
            f"played and every entry's code is public now. {self.urls.contest(view.name)}"
        )

    def results(self, view: ContestView) -> str:
        shown = view.standings() or []
        winners = rules.winners(shown)
        share = next((r["win_share"] for r in shown if r["place"] == 1), 0.0)
        if len(winners) == 1:
            lead = f"{winners[0]} wins with {share:.1f}% of the match wins"
        else:
            lead = f"first place is shared by {', '.join(winners)} ({share:.1f}% each)"
        rest = [f"{r['place']}. {r['name']}" for r in shown if r["place"] not in (None, 1)]
        then = f"; then {', '.join(rest[:4])}" if rest else ""
        return f"Contest {view.name}: {lead}{then}. {self.urls.contest(view.name)}"
