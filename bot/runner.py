"""The bot's hill jobs, played from the durable request book.

Commands record a request (so does the web upload form, perhaps from another
process: the runner looks for new requests every POLL_SECONDS too); the
runner plays the oldest open one on the hill in a thread, one at a time.
The answer is stored in the same transaction as the hill change it reports,
then sent on IRC, and the request is marked delivered once its last line is
written to the server.

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
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import quote

import structlog
from sqlalchemy.orm import Session

from hill.config import Settings
from hill.errors import HillError
from hill.faults import crash_point
from hill.rules.events import ARRIVALS
from hill.store.requests import RequestBook
from hill.store.tables import Request
from hill.writers.hill import Hill, Report

log = structlog.get_logger(__name__)

POLL_SECONDS = 0.5  # how often the book is read for requests from elsewhere
MAX_ATTEMPTS = 3  # a request the bot died playing this often is not tried again
RETRY_SECONDS = 5.0  # after an unexpected failure of the runner itself
T = TypeVar("T")

# (request, text, on_sent): send an answer on IRC as the request was asked
Answer = Callable[[Request, str, Callable[[], None]], None]


def program_url(web_url: str, full_name: str) -> str:
    return f"{web_url}program/{quote(full_name, safe='')}"


def answer_text(report: Report, web_url: str) -> str:
    """A job's answer: a submission says whether the program is new or an
    update, and links its page in the web report."""
    if report.kind in ("join", "challenge") and report.program:
        return f"New program {report.summary}. {program_url(web_url, report.program)}"
    if report.kind == "update" and report.program:
        return f"Updated {report.summary}. {program_url(web_url, report.program)}"
    return report.summary


def describe(request: Request) -> str:
    """The request, as its asker would say it: "your submission alice.rush"."""
    name = request.full_name
    upload = " upload" if request.origin == "web" else ""
    return {
        "challenge": f"your submission{upload} {name}",
        "test": f"your test{upload} {name}",
        "withdraw": f"your withdrawal of {name}",
        "remove": f"your removal of {name}",
    }.get(request.command, "your rescore")


def late_note(request: Request, resumed: bool) -> str:
    """Why an answer comes after a restart, to go before it."""
    if resumed and request.attempts > 1:  # cut off while played, then played again
        return f"{describe(request)} was being played when the bot restarted"
    if resumed:
        return f"{describe(request)} was still queued when the bot restarted"
    verb = "played" if request.state == "done" else "refused"
    return f"{describe(request)} was {verb} before the bot restarted"


class Runner:
    """Plays the requests of the book in order and hands over their answers."""

    def __init__(
        self, hill: Hill, settings: Settings, answer: Answer, refund: Callable[[str], None]
    ) -> None:
        self.hill = hill
        self.book = RequestBook(hill.db)
        self.settings = settings
        self.answer = answer
        self.refund = refund  # the rate limit does not count refused programs
        # the book's own work, one call at a time: requests are numbered in
        # the order they were asked
        self._executor = ThreadPoolExecutor(1, thread_name_prefix="request-book")
        self.wakeup = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._marks: set[asyncio.Task[None]] = set()

    async def in_turn(self, method: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `method` on the request book's one thread, after the book work
        and reads asked before it: a command that reads the hill before it
        submits keeps its place in the queue (two players' commands that
        read on threads of their own could be recorded in either order)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._executor, functools.partial(method, *args, **kwargs)
        )

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
        self._executor.shutdown(wait=True)

    async def _run(self, asked_before: int) -> None:
        for request in await self.in_turn(self.book.undelivered):
            self._deliver(request, late_note(request, resumed=False))
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
        request = await self._play(request)
        self._deliver(request, late_note(request, resumed=True) if resumed else "")

    async def _play(self, request: Request) -> Request:
        if request.attempts >= MAX_ATTEMPTS:
            log.error("request given up", id=request.id, attempts=request.attempts)
            return await self.in_turn(
                self.book.fail,
                request.id,
                f"not played: the bot stopped {request.attempts} times while playing it",
            )
        request = await self.in_turn(self.book.start, request.id)
        log.info("playing", id=request.id, command=request.command, program=request.full_name)
        try:
            await asyncio.to_thread(self._execute, request)
        except HillError as error:
            if request.command in ("challenge", "test"):
                self.refund(request.owner)  # refused before any joust
            return await self.in_turn(self.book.fail, request.id, str(error))
        except Exception:
            log.exception("request failed", id=request.id)
            return await self.in_turn(
                self.book.fail, request.id, "something went wrong; it has been logged"
            )
        crash_point("answer-stored")
        return await self.in_turn(self.book.get, request.id)

    def _execute(self, request: Request) -> Report:
        """Play one request on the hill (in a thread); it is marked done in
        the transaction of the hill change."""

        def record(session: Session, report: Report) -> None:
            text = answer_text(report, self.settings.web.url)
            program = report.program if report.kind in ARRIVALS else None
            self.book.finish(session, request.id, text, program=program, announce=report.changed)

        hill, owner, name = self.hill, request.owner, request.name
        if request.command in ("challenge", "test"):
            code = request.code or b""
            test_only = request.command == "test"
            return hill.challenge(owner, name, code, test_only=test_only, record=record)
        if request.command == "withdraw":
            return hill.withdraw(owner, name, record=record)
        if request.command == "remove":
            return hill.remove(name, owner, record=record)
        return hill.rescore(owner, record=record)

    def _deliver(self, request: Request, note: str) -> None:
        """Send the answer; `note` says why it comes late, if it does."""
        text = request.result or ""
        if note:
            text = f"{note}: {text}"
        self.answer(request, text, functools.partial(self._mark_delivered, request.id))

    def _mark_delivered(self, request_id: int) -> None:
        task = asyncio.create_task(self.in_turn(self.book.mark_delivered, request_id))
        self._marks.add(task)
        task.add_done_callback(self._marks.discard)
