"""Telling the owner of a program that left the hill without their doing
(pushed off by a newcomer, removed by an admin): a private NOTICE as soon
as the bot sees them online (in one of its channels: the nick itself, or
on a network with accounts a nick logged in as the owner's account),
otherwise on their next command.

The notices are the writer's, stored with the change that made the
program leave (hill.store.notices), so a restart forgets none; one is
marked sent once its line is written to the server, and one cut off by a
restart before that is sent again.  The bot looks for owners to tell as it
starts, after each answer it gives, on each command, as soon as it sees
someone in its channels (a join, the names of a channel it joins, a nick
change, an account seen: an owner waiting since before a restart is told
the moment the bot is back in the channel), and when another process
changes the hill (`bfjoust hill submit` beside the bot: the hill's bell,
hill.scheduler).  A look the storage failed is tried again after
RETRY_SECONDS (a timer).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine
from typing import Any

import structlog
from irc.client import Event, ServerConnection

from bot.client import Incoming, IrcClient
from bot.identity import Sender
from bot.registration import Handler
from bot.worker import RetryTimer
from hill.rules.changes import left_notice
from hill.store.notices import NoticeBook, PendingNotice
from hill.threads import Threads
from hill.web.urls import Urls
from hill.writers.hill import Hill

log = structlog.get_logger(__name__)

RETRY_SECONDS = 30.0  # after a look the storage failed
# the server's events by which the bot sees someone in its channels (bot.accounts.Roster)
SEEN_EVENTS = ("join", "endofnames", "nick", "account", "endofwho")


def _owns(sender: Sender, owner: str) -> bool:
    """Whether `sender` is `owner` (their account, or their nick)."""
    return bool(sender.identity) and sender.same(sender.identity, owner)


class NoticeDesk:
    """Sends the hill's notices to their owners (see the module)."""

    def __init__(self, hill: Hill, client: IrcClient, urls: Urls) -> None:
        self.book = NoticeBook(hill.db)
        self._thread = Threads(1, "bot-notices")  # its reads and marks, in order
        self.client = client
        self.urls = urls
        self._owners: set[str] = set()  # the owners with notices waiting (folded), as last read
        self._sending: set[int] = set()  # queued for the server, not written yet
        self._work: set[asyncio.Task[None]] = set()
        self._looking: asyncio.Task[None] | None = None
        self._again = False  # someone came while a look was under way: look once more
        self._retry = RetryTimer(self.look)  # a failed look, tried again then
        self._closed = False
        # after the roster's handlers (added before): it knows them when we look
        seen: dict[str, Handler] = {event: self._someone_seen for event in SEEN_EVENTS}
        client.link.add_handlers(seen)

    def start(self) -> None:
        self.look()

    async def close(self) -> None:
        self._closed = True  # no look begins after this (its threads are going)
        self._retry.cancel()
        for task in list(self._work):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._thread.finish()

    def look(self) -> None:
        """Look for owners to tell now (after an answer: a change may have
        pushed someone off; the hill changed elsewhere)."""
        self._spawn(self._look())

    async def _look(self, message: Incoming | None = None) -> None:
        try:
            await self.deliver(message)
        except Exception:  # e.g. the disk is full: tried again in a while
            log.exception("sending the notices failed; trying again later")
            self._retry.after(RETRY_SECONDS)

    def _someone_seen(self, connection: ServerConnection, event: Event) -> None:
        """Someone is in a channel of the bot's now: an owner to tell, perhaps."""
        if not self._owners or self._closed:
            return
        if self._looking is not None and not self._looking.done():
            self._again = True  # a burst of joins: one more look when this one ends
            return
        self._looking = asyncio.create_task(self._look_while_seen())
        self._work.add(self._looking)
        self._looking.add_done_callback(self._work.discard)

    async def _look_while_seen(self) -> None:
        self._again = True
        while self._again:
            self._again = False
            await self._look()

    def on_command(self, message: Incoming) -> None:
        """A command came in: its sender may be an owner with notices waiting."""
        if self._owners and self.client.link.fold(message.sender.nick) in self._owners:
            self._spawn(self._deliver_to(message))
        elif self._owners and message.sender.identity:
            self._spawn(self._look(message))

    async def _deliver_to(self, message: Incoming) -> None:
        # the nick of an owner: worth confirming who it is (by WHOIS where needed)
        await self._look(await message.vouched())

    async def deliver(self, message: Incoming | None = None) -> None:
        """Send the waiting notices whose owners are online, or are the
        sender of `message`."""
        pending = await self._thread.run(self.book.pending)
        fold = self.client.link.fold
        self._owners = {fold(n.owner) for n in pending}
        sender = message.sender if message is not None else None
        for notice in pending:
            if notice.id in self._sending:
                continue
            nick = self.client.online(notice.owner)
            if sender is not None and _owns(sender, notice.owner):
                nick = sender.nick  # they are here: no need to look
            if nick is not None:
                self._send(nick, notice)

    def _send(self, nick: str, notice: PendingNotice) -> None:
        self._sending.add(notice.id)
        text = left_notice(
            notice.program,
            notice.reason,
            notice.by,
            notice.time,
            self.urls.program(notice.program),
        )
        log.info("telling an owner", owner=notice.owner, nick=nick, program=notice.program)
        self.client.say(nick, text, notice=True, on_sent=lambda: self._sent(notice.id))

    def _sent(self, notice_id: int) -> None:
        async def mark() -> None:
            await self._thread.run(self.book.mark_sent, notice_id)
            self._sending.discard(notice_id)

        self._spawn(mark())

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        if self._closed:  # the bot stops: a look asked now would find no thread
            work.close()
            return
        task = asyncio.create_task(work)
        self._work.add(task)
        task.add_done_callback(self._work.discard)
