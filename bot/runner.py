"""The bot's hill jobs, played from the durable request book.

Commands record a request and wake the runner (so does the web upload form,
perhaps from another process: its commit rings the hill's bell, which wakes
the runner too, hill.scheduler); the runner plays the oldest open one on the
hill in a thread, one at a time, each in its turn (hill.scheduler.turns: a
player's request goes before any other work).
What it came to is stored, as data, by the writer in the same transaction
as the hill change it made (hill.writers.hill.play_request); the runner
hands that outcome over to be said on IRC, and the request is marked
delivered once its last line is written to the server.

After a crash the next start first sends the answers that were stored but
not delivered, then plays the requests still open, in order (one cut off
mid-play is played again: its hill change never committed).  Each of those
answers says what happened, so nobody is left wondering.

Nothing heard is lost when the storage fails (hill.errors.StorageError:
the disk full, the database locked too long): a request that cannot be
recorded is kept in memory, in order, its player told why (Kept), and
recorded as soon as it can be; one that cannot be played waits in the book,
its player told once; an answer that was stored but not handed over is
delivered without a restart; git, when it fell behind, is caught up every
few seconds (a timer, armed while it is behind); and the trouble is one
log line, not a traceback a try.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog

from bot.worker import RetryTimer
from hill.config import Settings
from hill.errors import HillError, Kept, QueueFull, Stopped, StorageError
from hill.faults import crash_point
from hill.logs import Trouble
from hill.rules.requests import FINISHED, Outcome, RequestState, answer_text
from hill.scheduler import Priority, Turns
from hill.store.requests import RequestBook
from hill.store.tables import Request
from hill.threads import Threads
from hill.web.urls import Urls
from hill.writers.hill import Hill, play_request

log = structlog.get_logger(__name__)

MAX_ATTEMPTS = 3  # a request the bot died playing this often is not tried again
RETRY_SECONDS = 2.0  # after a failure (the storage's, or the runner's own)
HISTORY_SECONDS = 5.0  # how often git is tried again while it is behind
T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    """A request's answer in words, put together when it is sent."""

    text: str  # what the request came to (hill.rules.requests.answer_text)
    note: str  # why it comes late, after a restart ("" if it does not)
    changed: bool  # the hill changed: told in the summary channel too

    @property
    def line(self) -> str:
        """What the asker is told."""
        return f"{self.note}: {self.text}" if self.note else self.text


# (request, its answer, on_sent): say it on IRC as the request was asked
Say = Callable[[Request, Answer, Callable[[], None]], None]


def late_note(request: Request, resumed: bool) -> str:
    """Why an answer comes after a restart, to go before it."""
    asked = request.command.describe(request.full_name, upload=request.origin == "web")
    if resumed and request.attempts > 1:  # cut off while played, then played again
        return f"{asked} was being played when the bot restarted"
    if resumed:
        return f"{asked} was still queued when the bot restarted"
    verb = "played" if request.state == RequestState.DONE else "refused"
    return f"{asked} was {verb} before the bot restarted"


class Runner:
    """Plays the requests of the book in order and hands over their answers."""

    def __init__(
        self,
        hill: Hill,
        settings: Settings,
        say: Say,
        refund: Callable[[str], None],
        turns: Turns | None = None,
    ) -> None:
        self.hill = hill
        self.turns = turns or Turns()  # the hill's turns: a request plays in its own
        self.book = RequestBook(hill.db)
        self.settings = settings
        self.urls = Urls(site=settings.web.url)  # the links in the answers
        self.say = say
        self.refund = refund  # the rate limit does not count refused programs
        # the book's own work, one call at a time: requests are numbered in
        # the order they were asked
        self._book_thread = Threads(1, "request-book")
        self._play_thread = Threads(1, "request-play")  # the hill's changes (and git's catch-up)
        self.wakeup = asyncio.Event()  # a request recorded, an answer to deliver
        self._task: asyncio.Task[None] | None = None
        self._marks: set[asyncio.Task[None]] = set()
        self.trouble = Trouble("the request runner")  # the storage's, while it lasts
        self.kept: list[dict[str, Any]] = []  # heard, not recorded yet (in order)
        self._handed: set[int] = set()  # answers handed over, not yet marked delivered
        self._unmarked: list[int] = []  # sent, but marking them delivered failed
        self._told: set[int] = set()  # requests whose players know they wait for the storage
        self._rescan = False  # look for stored answers not handed over
        self._retry = RetryTimer(self.wakeup.set)  # held back by the storage: tried then

    @property
    def running(self) -> bool:
        """Whether it plays the book's requests (its task is alive)."""
        return self._task is not None and not self._task.done()

    async def in_turn(self, method: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `method` on the request book's one thread, after the book work
        and reads asked before it: a command that reads the hill before it
        submits keeps its place in the queue (two players' commands that
        read on threads of their own could be recorded in either order)."""
        return await self._book_thread.run(method, *args, **kwargs)

    async def submit(self, **fields: Any) -> Request:
        """Record a request (see RequestBook.add); QueueFull when the queue
        is full.  When the storage cannot take it (the disk full), it is
        kept here, recorded as soon as it can be, and Kept says so."""
        trouble = self.trouble.why
        if not self.kept:  # else after those: requests are played in the order heard
            try:
                request = await self.in_turn(
                    self.book.add, limit=self.settings.irc.queue_size, **fields
                )
            except StorageError as error:
                trouble = error.trouble
                self.trouble.struck(trouble)
            else:
                self.wakeup.set()
                return request
        if len(self.kept) >= self.settings.irc.queue_size:
            raise QueueFull
        self.kept.append(fields)
        self.wakeup.set()  # the runner records it as soon as it can (and retries)
        asked = Request(**fields)
        what = asked.command.describe(asked.full_name, upload=asked.origin == "web")
        raise Kept(f"{trouble}: {what} is kept, and played as soon as it can be recorded")

    async def start(self) -> None:
        """Run from now on; requests recorded before are the last run's."""
        asked_before = await self.in_turn(self.book.last_id)
        self._task = asyncio.create_task(self._run(asked_before), name="hill-requests")

    async def close(self) -> None:
        self._retry.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._marks:
            await asyncio.gather(*self._marks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self._record_kept()
        for fields in self.kept:  # the storage never took them: said, at least
            log.error(
                "a request heard but never recorded is lost at this stop",
                why=self.trouble.why,
                **{k: v for k, v in fields.items() if k != "code"},
            )
        await self._play_thread.finish()  # the change under way is stored first
        await self._book_thread.finish()

    async def _run(self, asked_before: int) -> None:
        for request in await self.in_turn(self.book.undelivered):
            assert request.answer is not None  # finished
            self._deliver(request, request.answer, late_note(request, resumed=False))
        while True:
            try:
                await self._next(asked_before)
            except Stopped:  # the bot stops: no more turns
                return
            except Exception as error:  # e.g. the disk is full: keep trying, do not stop
                if isinstance(error, StorageError):
                    self.trouble.struck(error.trouble)
                else:
                    log.exception("the request runner failed; trying again")
                self._rescan = True
                await asyncio.sleep(RETRY_SECONDS)

    async def _next(self, asked_before: int) -> None:
        """Play and answer the oldest open request, or wait for one; first
        what the storage held back (requests kept, answers and marks not
        stored or not handed over, git behind)."""
        self.wakeup.clear()  # before the read: a request recorded meanwhile wakes us
        await self._record_kept()
        await self._catch_up()
        request = await self.in_turn(self.book.next_open)
        if request is None:
            await self.wakeup.wait()
            return
        resumed = request.id <= asked_before
        if request.attempts >= MAX_ATTEMPTS:
            log.error("request given up", id=request.id, attempts=request.attempts)
            why = f"not played: the bot stopped {request.attempts} times while playing it"
            outcome = await self.in_turn(self.book.fail, request.id, why)
        else:
            async with self.turns.turn(Priority.REQUEST):
                request = await self.in_turn(self.book.start, request.id)
                self.trouble.cleared()
                outcome = await self._play(request)
        self._deliver(request, outcome, late_note(request, resumed=True) if resumed else "")

    async def _play(self, request: Request) -> Outcome:
        """Play a started request (in a thread); what it came to, as stored.
        If the storage fails it, it waits in the book (its player told)."""
        log.info("playing", id=request.id, command=request.command, program=request.full_name)
        try:
            report = await self._play_thread.run(play_request, self.hill, request)
        except HillError as error:
            if request.command.plays_code:
                self.refund(request.owner)  # refused before any joust
            return await self.in_turn(self.book.fail, request.id, str(error))
        except Exception as error:
            stored = await self.in_turn(self.book.get, request.id)
            if stored.state in FINISHED and stored.answer is not None:
                return stored.answer  # its change was stored: what failed came after
            if isinstance(error, StorageError):  # not the request's fault: it waits for the storage
                await self.in_turn(self.book.requeue, request.id)
                self._tell_waiting(request, error.trouble)
                raise
            log.exception("request failed", id=request.id)
            return await self.in_turn(
                self.book.fail, request.id, "something went wrong; it has been logged"
            )
        crash_point("answer-stored")
        return report.outcome

    async def _record_kept(self) -> None:
        """Record the requests kept in memory, in order."""
        while self.kept:
            await self.in_turn(self.book.add, limit=len(self.kept) + 10**6, **self.kept[0])
            self.kept.pop(0)
            self.trouble.cleared()

    async def _catch_up(self) -> None:
        """After a failure: the answers stored but not handed over, the
        marks of delivery not stored; git, while it is behind."""
        while self._unmarked:
            await self.in_turn(self.book.mark_delivered, self._unmarked[0])
            self._handed.discard(self._unmarked.pop(0))
        if self._rescan:
            for request in await self.in_turn(self.book.undelivered):
                if request.id not in self._handed and request.answer is not None:
                    self._deliver(request, request.answer, "")
            self._rescan = False
        if self.hill.history.behind:
            await self._play_thread.run(self.hill.history.catch_up)
            if self.hill.history.behind:
                self._retry.after(HISTORY_SECONDS)

    def _tell_waiting(self, request: Request, trouble: str) -> None:
        """Tell a player, once, that their request waits for the storage."""
        if request.id in self._told or request.origin == "cli":  # the command line says its own
            return
        self._told.add(request.id)
        what = request.command.describe(request.full_name, upload=request.origin == "web")
        text = f"{trouble}: {what} waits, and is played as soon as it can be"
        self.say(request, Answer(text, "", False), lambda: None)

    def deliver_finished(self) -> None:
        """Deliver the answers of requests finished by someone else (a
        contest's close plays the entries still waiting)."""
        self._rescan = True
        self.wakeup.set()

    def _deliver(self, request: Request, outcome: Outcome, note: str) -> None:
        """Put the answer in words and hand it over; `note` says why it
        comes late, if it does (the command line says its own answers)."""
        self._handed.add(request.id)
        on_sent = functools.partial(self._mark_delivered, request.id)
        if request.origin == "cli":
            on_sent()
            return
        text = answer_text(outcome, self.urls.program, self.urls.test)
        self.say(request, Answer(text, note, outcome.changed), on_sent)

    def _mark_delivered(self, request_id: int) -> None:
        task = asyncio.create_task(self._mark(request_id))
        self._marks.add(task)
        task.add_done_callback(self._marks.discard)

    async def _mark(self, request_id: int) -> None:
        try:
            await self.in_turn(self.book.mark_delivered, request_id)
        except StorageError as error:
            self.trouble.struck(error.trouble)
            self._unmarked.append(request_id)  # marked later; never said twice
            self._retry.after(RETRY_SECONDS)
        else:
            self._handed.discard(request_id)
