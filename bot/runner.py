"""The bot's hill jobs, played from the durable request book.

Commands record a request (so does the web upload form, perhaps from another
process: the runner looks for new requests every POLL_SECONDS too); the
runner plays the oldest open one on the hill in a thread, one at a time.
What it came to is stored, as data, by the writer in the same transaction
as the hill change it made (hill.writers.hill.play_request); the runner
hands that outcome over to be said on IRC, and the request is marked
delivered once its last line is written to the server.

After a crash the next start first sends the answers that were stored but
not delivered, then plays the requests still open, in order (one cut off
mid-play is played again: its hill change never committed).  Each of those
answers says what happened, so nobody is left wondering.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import structlog

from hill.config import Settings
from hill.errors import HillError
from hill.faults import crash_point
from hill.rules.requests import Outcome, RequestState, answer_text
from hill.store.requests import RequestBook
from hill.store.tables import Request
from hill.threads import Threads
from hill.web.urls import Urls
from hill.writers.hill import Hill, play_request

log = structlog.get_logger(__name__)

POLL_SECONDS = 0.5  # how often the book is read for requests from elsewhere
MAX_ATTEMPTS = 3  # a request the bot died playing this often is not tried again
RETRY_SECONDS = 5.0  # after an unexpected failure of the runner itself
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
        self, hill: Hill, settings: Settings, say: Say, refund: Callable[[str], None]
    ) -> None:
        self.hill = hill
        self.book = RequestBook(hill.db)
        self.settings = settings
        self.urls = Urls(site=settings.web.url)  # the links in the answers
        self.say = say
        self.refund = refund  # the rate limit does not count refused programs
        # the book's own work, one call at a time: requests are numbered in
        # the order they were asked
        self._book_thread = Threads(1, "request-book")
        self.wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._marks: set[asyncio.Task[None]] = set()

    async def in_turn(self, method: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `method` on the request book's one thread, after the book work
        and reads asked before it: a command that reads the hill before it
        submits keeps its place in the queue (two players' commands that
        read on threads of their own could be recorded in either order)."""
        return await self._book_thread.run(method, *args, **kwargs)

    async def submit(self, **fields: Any) -> Request:
        """Record a request (see RequestBook.add); raises QueueFull."""
        request = await self.in_turn(self.book.add, limit=self.settings.irc.queue_size, **fields)
        self.wakeup.set()
        return request

    async def start(self) -> None:
        """Run from now on; requests recorded before are the last run's."""
        asked_before = await self.in_turn(self.book.last_id)
        self._task = asyncio.create_task(self._run(asked_before), name="hill-requests")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._marks:
            await asyncio.gather(*self._marks, return_exceptions=True)
        await self._book_thread.finish()

    async def _run(self, asked_before: int) -> None:
        for request in await self.in_turn(self.book.undelivered):
            assert request.answer is not None  # finished
            self._deliver(request, request.answer, late_note(request, resumed=False))
        while True:
            try:
                await self._next(asked_before)
            except Exception:  # e.g. the disk is full: keep trying, do not stop
                log.exception("the request runner failed; trying again")
                await asyncio.sleep(RETRY_SECONDS)

    async def _next(self, asked_before: int) -> None:
        """Play and answer the oldest open request, or wait for one."""
        self.wakeup.clear()  # before the read: a request recorded meanwhile wakes us
        request = await self.in_turn(self.book.next_open)
        if request is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wakeup.wait(), POLL_SECONDS)
            return
        resumed = request.id <= asked_before
        if request.attempts >= MAX_ATTEMPTS:
            log.error("request given up", id=request.id, attempts=request.attempts)
            why = f"not played: the bot stopped {request.attempts} times while playing it"
            outcome = await self.in_turn(self.book.fail, request.id, why)
        else:
            request = await self.in_turn(self.book.start, request.id)
            outcome = await self._play(request)
        self._deliver(request, outcome, late_note(request, resumed=True) if resumed else "")

    async def _play(self, request: Request) -> Outcome:
        """Play a started request (in a thread); what it came to, as stored."""
        log.info("playing", id=request.id, command=request.command, program=request.full_name)
        try:
            report = await asyncio.to_thread(play_request, self.hill, request)
        except HillError as error:
            if request.command.plays_code:
                self.refund(request.owner)  # refused before any joust
            return await self.in_turn(self.book.fail, request.id, str(error))
        except Exception:
            log.exception("request failed", id=request.id)
            return await self.in_turn(
                self.book.fail, request.id, "something went wrong; it has been logged"
            )
        crash_point("answer-stored")
        return report.outcome

    def _deliver(self, request: Request, outcome: Outcome, note: str) -> None:
        """Put the answer in words and hand it over; `note` says why it
        comes late, if it does (the command line says its own answers)."""
        on_sent = functools.partial(self._mark_delivered, request.id)
        if request.origin == "cli":
            on_sent()
            return
        text = answer_text(outcome, self.urls.program, self.urls.test)
        self.say(request, Answer(text, note, outcome.changed), on_sent)

    def _mark_delivered(self, request_id: int) -> None:
        task = asyncio.create_task(self.in_turn(self.book.mark_delivered, request_id))
        self._marks.add(task)
        task.add_done_callback(self._marks.discard)
