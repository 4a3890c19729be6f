"""The bot's wiring: the hill, the runner of its requests, the IRC client,
the commands, the web report (a child process, or on the same event loop), logging, the local IRC
server (started, or found running), and the process's life: SIGINT and
SIGTERM stop it cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import secrets
import signal
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import structlog

from bot.backfill import BackfillWorker
from bot.client import Incoming, IrcClient
from bot.commands import Commands
from bot.contests import ContestClock
from bot.identity import Sender
from bot.ircd import is_loopback, launch_keeper, listening
from bot.ladder import LadderWorker
from bot.notices import NoticeDesk
from bot.runner import Answer, Runner
from bot.status import StatusFile
from bot.tournament import TournamentHost
from hill.config import Settings
from hill.layout import DataFolder
from hill.logs import configure_logging
from hill.scheduler import Scheduler
from hill.store.tables import Request
from hill.writers.hill import Hill

T = TypeVar("T")

log = structlog.get_logger(__name__)


class HillBot:
    """The bot for one hill; `run()` until `stop()`."""

    def __init__(self, settings: Settings, hill: Hill) -> None:
        self.settings = settings
        folder = DataFolder(settings.hill.data_dir)
        self.client = IrcClient(settings.irc, self._on_message, heard_path=folder.heard)
        # the hill's work in turns, in one order (players first), and what wakes it
        self.scheduler = Scheduler(hill)
        turns = self.scheduler.turns
        self.runner = Runner(hill, settings, self._answer, self._refund, turns)
        self.tournaments = TournamentHost(hill, settings, turns, self._announce)
        self.contests = ContestClock(
            hill, settings, turns, self.tournaments, self._tell, self.runner.deliver_finished
        )
        self.commands = Commands(
            settings,
            hill,
            self.runner,
            self.client.reply,
            self.tournaments,
            self.contests,
            self.client.admins,
        )
        self.contests.settled = self.commands.settled
        self.ladder = LadderWorker(hill, settings.ladder, turns)
        # the statistics of the jousts stored before they were kept
        self.backfill = BackfillWorker(hill, turns)
        # owners told when their program is pushed off (or removed)
        self.notices = NoticeDesk(hill, self.client, self.commands.urls)
        # a change committed by another process wakes every kind of work
        for wake in (
            self.runner.wakeup.set,
            self.tournaments.wake.set,
            self.contests.wake.set,
            self.ladder.wake.set,
            self.backfill.wake.set,
            self.notices.look,
        ):
            self.scheduler.on_change(wake)
        # the bot's health and metrics, for the web report's /healthz and /metrics
        self.status = StatusFile(folder.bot_status, self)
        self.started = False  # every worker started (run() is in the IRC client)

    def _on_message(self, message: Incoming) -> None:
        self.commands.handle(message)
        self.notices.on_command(message)

    def _announce(self, text: str) -> None:
        """News for everyone (a tournament's progress and winner): every channel."""
        for channel in self.settings.irc.channels:
            self.client.say(channel, text)

    def _tell(self, text: str, on_sent: Callable[[], None]) -> None:
        """A contest's news for every channel; `on_sent` once all of it is written."""
        channels = self.settings.irc.channels
        sent = all_sent(len(channels), on_sent)
        for channel in channels:
            self.client.say(channel, text, on_sent=sent)

    def _refund(self, owner: str) -> None:
        self.commands.refund(owner)

    def _answer(self, request: Request, answer: Answer, on_sent: Callable[[], None]) -> None:
        """A request's answer, addressed as the reply to its command would
        have been; a hill change is also told in the summary channel.
        `on_sent` once all of it is written to the server."""
        summary = self.settings.irc.summary_channel
        told = [request.channel]
        if answer.changed and summary and summary != request.channel:
            told.append(summary)
        sent = all_sent(len(told), on_sent)
        asker = Incoming(Sender(request.nick, None, False), request.channel, "")
        self.client.reply(asker, answer.line, on_sent=sent)
        if len(told) > 1:
            self.client.say(summary, f"{request.nick}: {answer.text}", on_sent=sent)
        if answer.changed:  # someone pushed off, perhaps; a new program for the ladder
            self.notices.look()
            self.ladder.wake.set()

    async def run(self) -> None:
        await self.scheduler.start()
        await self.runner.start()
        self.tournaments.start()
        self.contests.start()
        self.ladder.start()
        self.backfill.start()
        self.notices.start()
        self.status.start()
        self.started = True
        await self.client.run()

    async def stop(self) -> None:
        self.client.absence.heard()  # listening until now
        self.client.absence.save()
        await self.client.stop()
        self.scheduler.close()  # no more turns: the work under way finishes its piece
        await self.tournaments.close()
        await self.contests.close()
        await self.ladder.close()
        await self.backfill.close()
        await self.notices.close()
        await self.runner.close()
        await self.status.close()


def all_sent(count: int, on_sent: Callable[[], None]) -> Callable[[], None]:
    """A callback for each of `count` messages that calls `on_sent` once
    the last of them is written (at once when there are none)."""
    remaining = count

    def sent() -> None:
        nonlocal remaining
        remaining -= 1
        if remaining == 0:
            on_sent()

    if count == 0:
        on_sent()
    return sent


def run_bot(settings: Settings, *, local_ircd: bool = False) -> None:
    """Run the bot (and the web report) until Ctrl-C or SIGTERM; the local
    IRC server, when it starts one, keeps running after."""
    configure_logging(folder=settings.hill.data_dir, name="bot")
    if local_ircd:
        start_local_ircd(settings)
        settings = with_admin_secret(settings)
    asyncio.run(_serve(settings))


async def _serve(settings: Settings) -> None:
    """The bot until SIGINT or SIGTERM, then a clean stop: the job in hand
    is finished (its hill change stored and committed to git: git runs in
    sessions of its own, so a Ctrl-C at the terminal does not reach it),
    its answer kept for the next start, the hill closed."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    # before the hill opens: a signal while it repairs waits for the repair
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, _stop_on_signal, stop, signum)
    hill = Hill(settings.hill)
    bot = HillBot(settings, hill)
    runner = None
    running: asyncio.Task[None] | None = None
    try:
        if settings.web.enabled:
            # a signal while the web report starts stops its start too
            runner = await _unless_stopped(stop, _start_web(settings, hill))
            if runner is not None:
                print(f"The web report is at {settings.web.url}", flush=True)
        if not stop.is_set():
            running = asyncio.create_task(bot.run())
            await stop.wait()
    finally:
        log.info("stopping")
        if running is not None and not bot.started:
            # stopped while starting: no worker starts after its threads are gone
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
        await bot.stop()
        if running is not None:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
        if runner is not None:
            await runner.cleanup()
        # the job in hand runs in the loop's default threads: let it finish
        await loop.shutdown_default_executor()
        hill.close()
        log.info("stopped")


async def _unless_stopped(stop: asyncio.Event, work: Coroutine[Any, Any, T]) -> T | None:
    """The result of `work`, or None when `stop` is set first (`work` is cancelled)."""
    task = asyncio.create_task(work)
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
    stopping.cancel()
    if task.done():
        return task.result()
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    return None


async def _start_web(settings: Settings, hill: Hill) -> Any:
    """The web report: a child process of its own ([web] own_process, the
    default: no page can slow IRC), or on this event loop; either has
    `cleanup()`.  OSError if it cannot serve (its port is taken...)."""
    if settings.web.own_process:
        from hill.web.process import WebChild  # loaded only when used

        child = WebChild(settings)
        await child.start()
        return child
    from hill.web.server import start_web

    return await start_web(
        hill.queries, settings.hill, settings.web, queue_size=settings.irc.queue_size
    )


def _stop_on_signal(stop: asyncio.Event, signum: int) -> None:
    if stop.is_set():
        log.warning(
            "still stopping: the job in hand finishes first (SIGKILL stops at once)",
            signal=signal.Signals(signum).name,
        )
    stop.set()


def with_admin_secret(settings: Settings) -> Settings:
    """`make run`'s server has no accounts: unless [irc] admin_secret says
    one, the operator's secret is made once, kept in the data folder (read
    by its owner alone) and told on the terminal (bot/admins.py)."""
    irc = settings.irc
    if irc.admin_secret:
        return settings
    path = DataFolder(settings.hill.data_dir).admin_secret
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(secrets.token_urlsafe(18) + "\n")
    secret = path.read_text().strip()
    print(
        f"To be the hill's admin: /msg {irc.nick} {irc.command}-admin {secret}\n"
        f"(the secret is kept in {path}; [irc] admin_secret sets your own).",
        flush=True,
    )
    return dataclasses.replace(settings, irc=dataclasses.replace(irc, admin_secret=secret))


def start_local_ircd(settings: Settings) -> None:
    """The local IRC server (bot.ircd), for a configured loopback server:
    started when nothing listens there yet, found running otherwise (one a
    bot before this one started, which players are still connected to)."""
    irc = settings.irc
    if not is_loopback(irc.server):
        return
    directory = DataFolder(settings.hill.data_dir).ircd
    if listening(irc.server, irc.port):
        print(f"An IRC server is already running on {irc.server} port {irc.port}.", flush=True)
        return
    host = "::1" if ":" in irc.server else "127.0.0.1"
    channels = [c for c in (*irc.channels, irc.summary_channel) if c]
    launch_keeper(directory, host, irc.port, channels)
    channel = irc.channels[0] if irc.channels else "#bfjoust"
    print(
        f"A local IRC server is running on {irc.server} port {irc.port} (no TLS).\n"
        f"Connect with any IRC client, e.g. `irssi -c {irc.server} -p {irc.port}`,\n"
        f"join {channel} and try: {irc.command} mywarrior (>)*9([-]>)*21\n"
        f"or {irc.command}-help.  It keeps running when the bot stops, so players stay\n"
        f"connected across restarts; `make stop-ircd` (python -m bot.ircd stop {directory})\n"
        f"stops it.  Its configuration and log are in {directory}.",
        flush=True,
    )
