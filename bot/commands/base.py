"""What a command is, and what every command reads and shares.

A command is one module of this package: an async function declared with
`@command(suffix, usage, ...)` (its name after the prefix, its usage line,
and whether it is for admins or names an owner), once, where it is
written, as sopel declares its commands.  It gets the bot's `Context`.
"""

from __future__ import annotations

import difflib
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from bot.admins import AdminLogins
from bot.client import Incoming
from bot.contests import ContestClock
from bot.fetch import fetch_program, is_url
from bot.identity import Sender
from bot.runner import Runner
from bot.throttle import RateLimiter
from bot.tournament import TournamentHost
from hill.config import Settings
from hill.errors import HillError, Quiet
from hill.rules import contests
from hill.rules.requests import RequestKind
from hill.rules.standings import Standings
from hill.store.contests import ContestView
from hill.store.state_statistics import StatisticsByState
from hill.store.uploads import UploadLinks
from hill.threads import Threads
from hill.web.urls import Urls
from hill.writers.hill import Hill

T = TypeVar("T")


class Reply(Protocol):
    """How an answer goes back (IrcClient.reply)."""

    def __call__(
        self, message: Incoming, text: str | list[str], *, refusal: bool = False
    ) -> None: ...


Run = Callable[["Context", Incoming, str], Awaitable[None]]


@dataclass(frozen=True)
class Command:
    suffix: str  # after the prefix: "", "-test", ...
    usage: str  # the arguments
    run: Run
    admin: bool = False
    vouched: bool = False  # needs the sender's account confirmed (it names the owner)
    enters: bool = False  # records a contest's entry: a close waits for it (bot/contests.py)
    listed: bool = True  # in the players' list of commands (-help)


ENTRY = "entry"  # a contest entry's owner is checked as a program's named so would be

# every command, in the order `-help` lists them (the order their modules are imported)
COMMANDS: list[Command] = []


def command(
    suffix: str,
    usage: str = "",
    *,
    admin: bool = False,
    vouched: bool = False,
    enters: bool = False,
    listed: bool = True,
) -> Callable[[Run], Run]:
    """Declare a command: its suffix after the prefix, its usage, whether
    it is for the hill's admins, whether it needs the sender's account,
    whether it records a contest's entry."""

    def register(run: Run) -> Run:
        COMMANDS.append(Command(suffix, usage, run, admin, vouched, enters, listed))
        return run

    return register


ECHOED = 60  # the longest arguments a hint repeats


def did_you_mean(prefix: str, word: str, args: str = "") -> str:
    """A hint for `word` mistyped or misplaced (`!bfjoust-rnak x`, `!bfjoust
    rank x`): "did you mean !bfjoust-rank x?" for the closest command's
    name, "" when none is close."""
    names = {c.suffix.lstrip("-").lower(): c.suffix for c in COMMANDS if c.suffix}
    close = difflib.get_close_matches(word.lower(), names, n=1, cutoff=0.7)
    if not close:
        return ""
    shown = f" {args}" if args and len(args) <= ECHOED else ""
    return f"did you mean {prefix}{names[close[0]]}{shown}?"


class Context:
    """What the commands read and share: the settings, the hill (read in
    threads), the runner that plays hill changes, the rate limit, the links."""

    def __init__(
        self,
        settings: Settings,
        hill: Hill,
        runner: Runner,
        reply: Reply,
        tournaments: TournamentHost,
        contests: ContestClock,
        admin_logins: AdminLogins,
    ) -> None:
        self.settings = settings
        self.irc = settings.irc
        self.hill = hill
        self.runner = runner  # plays hill changes and answers them
        self.reply = reply
        self.tournaments = tournaments
        self.contests = contests  # closes contests and tells the channels
        self.admin_logins = admin_logins  # without accounts: who proved the admin secret
        self.urls = Urls(site=settings.web.url)  # the web report's links
        self.uploads = UploadLinks(hill.db)
        self.statistics = StatisticsByState(hill.queries)
        self.limiter = RateLimiter(
            self.irc.rate_limit_per_user, self.irc.rate_limit_global, self.irc.rate_window_seconds
        )
        self.limit_keys: dict[str, str] = {}  # owner -> whose limit their last submission used
        # the commands' reads of the hill, on threads of their own (hill.threads' policy)
        self.reads = Threads(2, "bot-commands")

    async def read(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """`function(*args, **kwargs)` on the commands' threads."""
        return await self.reads.run(function, *args, **kwargs)

    async def read_shared(self, function: Callable[..., T], *args: Hashable) -> T:
        """The read `function(*args)` on the commands' threads, shared by the
        commands that ask for the same one before it begins
        (Threads.run_shared: 200 `-help` at once read the hill once or twice,
        and a player's `-rank` waits behind no queue of them)."""
        return await self.reads.run_shared(function, *args)

    async def owner(self, sender: Sender, name: str, *, test_only: bool = False) -> str:
        """Whose program `name` of `sender`'s is (HillError if they may not
        have one), spelt as the hill already spells that owner: nicks and
        accounts have no case, and one person has one name."""
        owner = sender.tester(name) if test_only else sender.owner(name)
        return sender.spelling(owner, await self.runner.in_turn(self.hill.queries.owners))

    def count(self, sender: Sender, owner: str) -> None:
        """Count a submission against `sender`'s limit (their account, or
        their connection) and their group's share (their account, or their
        host); raises when over it, quietly after the first time."""
        refusal = self.limiter.check(sender.key, sender.group)
        if refusal:
            raise Quiet if refusal.told else HillError(refusal.reason)
        self.limit_keys[owner] = sender.key

    def refund(self, owner: str) -> None:
        """The hill refused `owner`'s program without a joust: it does not count."""
        self.limiter.refund(self.limit_keys.get(owner, owner))

    async def ask(
        self,
        message: Incoming,
        kind: RequestKind,
        owner: str,
        name: str,
        code: bytes | None = None,
    ) -> None:
        """Record a hill job; the runner plays it and answers."""
        await self.runner.submit(
            nick=message.sender.nick,
            channel=message.channel,
            origin="irc",
            command=kind,
            owner=owner,
            name=name,
            code=code,
        )

    async def source(self, code: str) -> bytes:
        """The program: the text itself, or what its URL serves."""
        if is_url(code):
            return await fetch_program(
                code,
                max_bytes=self.irc.fetch_max_bytes,
                timeout=self.irc.fetch_timeout_seconds,
                allow_private=self.irc.fetch_allow_private,
            )
        return code.encode()

    async def open_contest(self, name: str, message: Incoming) -> ContestView:
        """Contest `name`, still taking entries when `message` was heard;
        HillError if there is no such contest or it has closed."""
        view = await self.read_shared(self.hill.contests.view, name)
        if not view.open or not contests.counts(message.heard, view.closes):
            raise HillError(contests.late(view.name, view.closes))
        return view

    async def standings(self) -> Standings:
        return await self.read_shared(self.hill.queries.standings)
