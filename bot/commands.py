"""The players' commands: parsing, checks, and the hill's answers.

`Commands.handle` gets every message to the bot; the ones that start with the
prefix run as tasks, so a joust in progress never holds up other commands.
Hill changes go through the JobQueue (one at a time, in a thread); reads of
the standings run in a thread of their own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import structlog

from bot.client import Incoming
from bot.fetch import FetchError, fetch_program, is_url
from bot.identity import Sender
from bot.throttle import RateLimiter
from hill.config import Settings
from hill.queue import JobQueue, QueueFull
from hill.service import Hill, HillError, Report
from hill.standings import Standings

log = structlog.get_logger(__name__)

TOP = 5  # programs named by report and help
WORST = 3  # opponents named by rank


class Reply(Protocol):
    """How an answer goes back (IrcClient.reply)."""

    def __call__(self, message: Incoming, text: str, *, refusal: bool = False) -> None: ...


class Quiet(Exception):
    """A request refused without a word: the sender was told already."""


class Usage(Exception):
    """A malformed command; the message says how to use it."""


@dataclass(frozen=True)
class Command:
    suffix: str  # after the prefix: "", "-test", ...
    usage: str  # the arguments
    run: Callable[[Incoming, str], Awaitable[None]]
    admin: bool = False
    vouched: bool = False  # needs the sender's account confirmed (it names the owner)


class Commands:
    def __init__(
        self,
        settings: Settings,
        hill: Hill,
        queue: JobQueue[Report],
        reply: Reply,
        announce: Callable[[str], None],
    ) -> None:
        self.settings = settings
        self.irc = settings.irc
        self.hill = hill
        self.queue = queue
        self.reply = reply
        self.announce = announce  # to the summary channel
        self.limiter = RateLimiter(
            self.irc.rate_limit_per_user, self.irc.rate_limit_global, self.irc.rate_window_seconds
        )
        self.tasks: set[asyncio.Task[None]] = set()
        table = [
            Command("", "NAME CODE|URL", self.challenge, vouched=True),
            Command("-test", "NAME CODE|URL", self.test, vouched=True),
            Command("-withdraw", "NAME", self.withdraw, vouched=True),
            Command("-rank", "NAME|OWNER.NAME", self.rank),
            Command("-report", "", self.report),
            Command("-help", "", self.help),
            Command("-remove", "OWNER.NAME", self.remove, admin=True, vouched=True),
            Command("-rescore", "", self.rescore, admin=True, vouched=True),
        ]
        self.table = {(self.irc.command + c.suffix).lower(): c for c in table}

    # --- dispatch ----------------------------------------------------------

    def handle(self, message: Incoming) -> None:
        word, _, args = message.text.strip().partition(" ")
        command = self.table.get(word.lower())
        if command is None:
            return
        task = asyncio.create_task(self._run(command, message, args.strip()))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run(self, command: Command, message: Incoming, args: str) -> None:
        name = self.irc.command + command.suffix
        log.info("command", command=name, nick=message.sender.nick, account=message.sender.account)

        def refuse(text: str) -> None:
            self.reply(message, text, refusal=True)

        try:
            if command.vouched:
                message = await message.vouched()
            if command.admin and not message.sender.is_admin(self.irc.admins):
                raise HillError(f"{name} is for the hill's admins")
            await command.run(message, args)
        except Quiet:
            pass
        except Usage as usage:
            refuse(f"usage: {name} {command.usage}".rstrip() + f" ({usage})")
        except (HillError, FetchError) as error:
            refuse(str(error))
        except QueueFull:
            refuse("busy: the queue is full; try again in a minute")
        except Exception:
            log.exception("command failed", command=name)
            refuse("something went wrong; it has been logged")

    # --- changing the hill -------------------------------------------------

    async def challenge(self, message: Incoming, args: str) -> None:
        await self._submit(message, args, test_only=False)

    async def test(self, message: Incoming, args: str) -> None:
        await self._submit(message, args, test_only=True)

    async def _submit(self, message: Incoming, args: str, *, test_only: bool) -> None:
        name, _, code = args.partition(" ")
        code = code.strip()
        if not name or not code:
            raise Usage("a name and the program, or a URL of it")
        sender = message.sender
        owner = sender.tester(name) if test_only else sender.owner(name)
        refusal = self.limiter.check(sender.key)
        if refusal:
            raise Quiet if refusal.told else HillError(refusal.reason)
        source = await self._source(code)

        def job() -> Report:
            return self.hill.challenge(
                self._spelling(sender, owner), name, source, test_only=test_only
            )

        try:
            report = await self.queue.submit(job)
        except (HillError, QueueFull):
            self.limiter.refund(sender.key)  # refused before any joust: it does not count
            raise
        self._deliver(message, report)

    def _spelling(self, sender: Sender, owner: str) -> str:
        """`owner` as the hill already spells it (IRC nicks and accounts
        have no case), so that one person has one name; run in the queue,
        one job at a time, so two new spellings cannot race."""
        return sender.spelling(owner, self.hill.owners())

    async def _source(self, code: str) -> bytes:
        """The program: the text itself, or what its URL serves."""
        if is_url(code):
            return await fetch_program(
                code,
                max_bytes=self.irc.fetch_max_bytes,
                timeout=self.irc.fetch_timeout_seconds,
                allow_private=self.irc.fetch_allow_private,
            )
        return code.encode()

    async def withdraw(self, message: Incoming, args: str) -> None:
        if not args or " " in args:
            raise Usage("the name of your program")
        sender = message.sender
        owner = sender.owner(args)
        report = await self.queue.submit(
            lambda: self.hill.withdraw(self._spelling(sender, owner), args)
        )
        self._deliver(message, report)

    async def remove(self, message: Incoming, args: str) -> None:
        if not args or " " in args or "." not in args:
            raise Usage("the program's full name")
        actor = message.sender.identity
        self._deliver(message, await self.queue.submit(lambda: self.hill.remove(args, actor)))

    async def rescore(self, message: Incoming, args: str) -> None:
        actor = message.sender.identity
        self._deliver(message, await self.queue.submit(lambda: self.hill.rescore(actor)))

    def _deliver(self, message: Incoming, report: Report) -> None:
        self.reply(message, report.summary)
        if report.changed and self.irc.summary_channel != message.channel:
            self.announce(f"{message.sender.nick}: {report.summary}")

    # --- reading the hill --------------------------------------------------

    async def _standings(self) -> Standings:
        return await asyncio.to_thread(self.hill.standings)

    async def report(self, message: Incoming, args: str) -> None:
        self.reply(message, top_line(await self._standings(), self.settings.web.url))

    async def help(self, message: Incoming, args: str) -> None:
        usages = ", ".join(
            f"{word} {c.usage}".rstrip() for word, c in self.table.items() if not c.admin
        )
        self.reply(message, f"BF Joust hill. Commands: {usages}")
        self.reply(message, top_line(await self._standings(), self.settings.web.url))

    async def rank(self, message: Incoming, args: str) -> None:
        if not args or " " in args:
            raise Usage("a program's name")
        standings = await self._standings()
        self.reply(message, rank_line(standings, find(standings, args, message.sender)))


def top_line(standings: Standings, url: str) -> str:
    if standings.size == 0:
        return f"The hill is empty. Full report: {url}"
    method = standings.method
    top = ", ".join(
        f"{e.rank}. {e.program.full_name} {e.scores[method]:.1f}" for e in standings.entries[:TOP]
    )
    return f"Top of the hill ({standings.size} programs, {method}): {top}. Full report: {url}"


def find(standings: Standings, name: str, sender: Sender) -> int:
    """The index of `OWNER.NAME`, or of NAME (the sender's own first)."""
    entries = standings.entries
    if "." in name:
        matches = [i for i, e in enumerate(entries) if e.program.full_name.lower() == name.lower()]
    else:
        matches = [i for i, e in enumerate(entries) if e.program.name.lower() == name.lower()]
        mine = [i for i in matches if sender.same(entries[i].program.owner, sender.identity)]
        matches = mine or matches
    if not matches:
        raise HillError(f"there is no {name[:60]} on the hill")
    if len(matches) > 1:
        names = ", ".join(entries[i].program.full_name for i in matches)
        raise HillError(f"which one? {names}")
    return matches[0]


def rank_line(standings: Standings, index: int) -> str:
    entry = standings.entries[index]
    line = (
        f"{entry.program.full_name}: rank {entry.rank}/{standings.size}, "
        f"score {entry.scores[standings.method]:.2f}, points {entry.points:.2f}"
    )
    margins = sorted(
        (standings.margin(index, j), standings.entries[j].program.full_name)
        for j in range(standings.size)
        if j != index
    )
    worst = [f"{name} ({margin:+d})" for margin, name in margins[:WORST] if margin < 0]
    return line + ("; worst against: " + ", ".join(worst) if worst else "; loses to no one")
