"""The players' commands: parsing, checks, and the hill's answers.

`Commands.handle` gets every message to the bot; the ones that start with the
prefix run as tasks, so a joust in progress never holds up other commands.
Hill changes are recorded as requests that the Runner plays one at a time
and answers (bot/runner.py); reads of the standings run in a thread.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import structlog

from bot.client import Incoming
from bot.fetch import fetch_program, is_url
from bot.history_log import log_lines
from bot.identity import Sender
from bot.ladder import LadderCommand
from bot.runner import Runner
from bot.throttle import RateLimiter
from bot.tournament import TournamentCommand, TournamentHost
from hill.config import Settings
from hill.errors import FetchError, HillError, QueueFull, Quiet, Usage
from hill.rules import names
from hill.rules.standings import Standings
from hill.rules.statistics import Statistics
from hill.store.state_statistics import StatisticsByState
from hill.store.uploads import UploadLinks
from hill.writers.hill import Hill

log = structlog.get_logger(__name__)

TOP = 5  # programs named by report and help
WORST = 3  # opponents named by rank
BUSY = "busy: the queue is full; try again in a minute"
# what runs in a program: prose with any of these in it is code too
INSTRUCTIONS = "+-<>.,[]()*{}%"
PROSE_WARNING = (
    f"Careful: text in a program is code if it holds any of {INSTRUCTIONS} "
    "(or digits after * or %), so keep those out of comments."
)


class Reply(Protocol):
    """How an answer goes back (IrcClient.reply)."""

    def __call__(self, message: Incoming, text: str, *, refusal: bool = False) -> None: ...


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
        runner: Runner,
        reply: Reply,
        tournaments: TournamentHost,
    ) -> None:
        self.settings = settings
        self.irc = settings.irc
        self.hill = hill
        self.runner = runner  # plays hill changes and answers them
        self.uploads = UploadLinks(hill.db)
        self.reply = reply
        self.limiter = RateLimiter(
            self.irc.rate_limit_per_user, self.irc.rate_limit_global, self.irc.rate_window_seconds
        )
        self.limit_keys: dict[str, str] = {}  # owner -> whose limit their last submission used
        self.tasks: set[asyncio.Task[None]] = set()
        self.statistics = StatisticsByState(hill.queries)
        table = [
            Command("", "NAME CODE|URL", self.challenge, vouched=True),
            Command("-test", "NAME CODE|URL", self.test, vouched=True),
            Command("-upload", "NAME [test]", self.upload, vouched=True),
            Command("-withdraw", "NAME", self.withdraw, vouched=True),
            Command("-rank", "NAME|OWNER.NAME", self.rank),
            Command("-ladder", "[NAME|OWNER.NAME]", LadderCommand(hill, settings.web.url, reply)),
            Command("-report", "", self.report),
            Command("-log", "[NAME|OWNER.NAME]", self.recent_changes),
            Command(
                "-tournament",
                "[swiss|round-robin POOL [all-versions]]",
                TournamentCommand(tournaments, self.irc.admins, reply),
            ),
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
            if word.lower().startswith(self.irc.command.lower() + "-"):
                self.reply(message, self._unknown(word), refusal=True)
            return
        task = asyncio.create_task(self._run(command, message, args.strip()))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _run(self, command: Command, message: Incoming, args: str) -> None:
        name = self.irc.command + command.suffix

        def refuse(text: str) -> None:
            self.reply(message, text, refusal=True)

        try:
            if command.vouched:
                message = await message.vouched()
            sender = message.sender
            log.info("command", command=name, nick=sender.nick, account=sender.account)
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
            refuse(BUSY)
        except Exception:
            log.exception("command failed", command=name)
            refuse("something went wrong; it has been logged")

    def _unknown(self, word: str) -> str:
        shown = re.sub(r"[^A-Za-z0-9_-]", "", word[len(self.irc.command) :])[:30]
        return f"unknown command {self.irc.command}{shown}; {self.irc.command}-help lists them"

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
        owner = await self._owner(sender, name, test_only=test_only)
        self._count(sender, owner)
        try:
            source = await self._source(code)
            await self._ask(message, "test" if test_only else "challenge", owner, name, source)
        except (FetchError, QueueFull):
            self.limiter.refund(sender.key)  # no program, or no room: it does not count
            raise

    async def _owner(self, sender: Sender, name: str, *, test_only: bool = False) -> str:
        """Whose program `name` of `sender`'s is (HillError if they may not
        have one), spelt as the hill already spells that owner: nicks and
        accounts have no case, and one person has one name."""
        owner = sender.tester(name) if test_only else sender.owner(name)
        return sender.spelling(owner, await self.runner.in_turn(self.hill.queries.owners))

    def _count(self, sender: Sender, owner: str) -> None:
        """Count a submission against `sender`'s limit (their account, or
        their connection); raises when over it, quietly after the first time."""
        refusal = self.limiter.check(sender.key)
        if refusal:
            raise Quiet if refusal.told else HillError(refusal.reason)
        self.limit_keys[owner] = sender.key

    def refund(self, owner: str) -> None:
        """The hill refused `owner`'s program without a joust: it does not count."""
        self.limiter.refund(self.limit_keys.get(owner, owner))

    async def _ask(
        self, message: Incoming, command: str, owner: str, name: str, code: bytes | None = None
    ) -> None:
        """Record a hill job; the runner plays it and answers."""
        await self.runner.submit(
            nick=message.sender.nick,
            channel=message.channel,
            origin="irc",
            command=command,
            owner=owner,
            name=name,
            code=code,
        )

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

    async def upload(self, message: Incoming, args: str) -> None:
        """A one-time link to the web form, for a program too long for a line."""
        name, _, mode = args.partition(" ")
        if not name or mode.strip() not in ("", "test"):
            raise Usage("a name for your program, and `test` to only test it")
        test_only = mode.strip() == "test"
        sender = message.sender
        owner = await self._owner(sender, name, test_only=test_only)
        self._count(sender, owner)  # a link is one submission
        seconds = self.irc.upload_link_seconds
        token = await asyncio.to_thread(
            self.uploads.issue,
            nick=sender.nick,
            channel=message.channel,
            owner=owner,
            name=name,
            test_only=test_only,
            valid_seconds=seconds,
        )
        what = "test" if test_only else "submit"
        self.reply(
            Incoming(sender, None, message.text),
            f"{what} {owner}.{name} at {self.settings.web.url}upload/{token} "
            f"(it works once, for {_duration(seconds)})",
        )
        if message.channel:
            self.reply(message, "I have sent you the upload link in private")

    async def withdraw(self, message: Incoming, args: str) -> None:
        if not args or " " in args:
            raise Usage("the name of your program")
        sender = message.sender
        owner_given, dot, rest = args.partition(".")  # owners have no '.'
        name = rest if dot else args
        owner = await self._owner(sender, name)
        if dot and not sender.same(owner_given, owner):
            raise HillError(f"{args[:80]} is not yours: you may withdraw only your own programs")
        await self._ask(message, "withdraw", owner, name)

    async def remove(self, message: Incoming, args: str) -> None:
        if not args or " " in args or "." not in args:
            raise Usage("the program's full name")
        await self._ask(message, "remove", message.sender.identity, args)

    async def rescore(self, message: Incoming, args: str) -> None:
        await self._ask(message, "rescore", message.sender.identity, "")

    # --- reading the hill --------------------------------------------------

    async def _standings(self) -> Standings:
        return await asyncio.to_thread(self.hill.queries.standings)

    async def report(self, message: Incoming, args: str) -> None:
        self.reply(message, top_line(await self._standings(), self.settings.web.url))

    async def help(self, message: Incoming, args: str) -> None:
        usages = ", ".join(
            f"{word} {c.usage}".rstrip() for word, c in self.table.items() if not c.admin
        )
        self.reply(message, f"BF Joust hill. Commands: {usages}")
        self.reply(message, PROSE_WARNING)
        self.reply(message, top_line(await self._standings(), self.settings.web.url))

    async def recent_changes(self, message: Incoming, args: str) -> None:
        if " " in args:
            raise Usage("a program's name, or nothing for the whole hill")
        queries, who, url = self.hill.queries, message.sender.identity, self.settings.web.url
        for line in await asyncio.to_thread(log_lines, queries, args, who, url):
            self.reply(message, line)

    async def rank(self, message: Incoming, args: str) -> None:
        if not args or " " in args:
            raise Usage("a program's name")
        standings, stats = await asyncio.to_thread(self.statistics.current)
        self.reply(message, rank_line(standings, find(standings, args, message.sender), stats))


def _duration(seconds: int) -> str:
    if seconds % 60:
        return f"{seconds} seconds"
    return "1 minute" if seconds == 60 else f"{seconds // 60} minutes"


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
    full_names = [e.program.full_name for e in standings.entries]
    return names.choose(full_names, name, sender.identity, "on the hill")


def rank_line(standings: Standings, index: int, stats: Statistics) -> str:
    """Rank with its 95% interval (the configuration bootstrap), score,
    points and worst opponents."""
    entry = standings.entries[index]
    low, high = int(stats.rank_low[index]), int(stats.rank_high[index])
    line = (
        f"{entry.program.full_name}: rank {entry.rank}/{standings.size} "
        f"(95% interval {low}-{high}), "
        f"score {entry.scores[standings.method]:.2f}, points {entry.points:.2f}"
    )
    margins = sorted(
        (standings.margin(index, j), standings.entries[j].program.full_name)
        for j in range(standings.size)
        if j != index
    )
    worst = [f"{name} ({margin:+d})" for margin, name in margins[:WORST] if margin < 0]
    return line + ("; worst against: " + ", ".join(worst) if worst else "; loses to no one")
