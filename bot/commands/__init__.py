"""The players' commands, one module each (as sopel has them): `!bfjoust`
and `-test` (submit.py), `-upload`, `-withdraw`, `-rank`, `-ladder`,
`-report`, `-log`, `-tournament`, `-contest`, `-enter`, `-help`, and the
admins' `-remove` and `-rescore`.  A command declares its name, usage and needs once, where it
is written (base.command); a new one is a module here, imported below.

`Commands.handle` gets every message to the bot; the ones that start with the
prefix run as tasks, so a joust in progress never holds up other commands.
Hill changes are recorded as requests that the Runner plays one at a time
and answers (bot/runner.py); reads of the hill run in threads.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re

import structlog

from bot.admins import AdminLogins
from bot.client import Incoming
from bot.commands.base import COMMANDS, ECHOED, Command, Context, Reply, did_you_mean
from bot.contests import ContestClock
from bot.intake import near_prefix
from bot.runner import Runner
from bot.tournament import TournamentHost
from hill.config import Settings
from hill.errors import FetchError, HillError, QueueFull, Quiet, StorageError, Usage
from hill.writers.hill import Hill

# isort: off
# each module registers its commands, in the order -help lists them
from bot.commands import submit, upload, withdraw, rank, ladder, report  # noqa: F401
from bot.commands import log, tournament, contest, enter, help, remove, rescore  # noqa: F401
from bot.commands import admin  # noqa: F401
# isort: on

logger = structlog.get_logger(__name__)

BUSY = "busy: the queue is full; try again in a minute"


class Commands(Context):
    """Every command of bot/commands/, dispatched by its word."""

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
        super().__init__(settings, hill, runner, reply, tournaments, contests, admin_logins)
        self.tasks: set[asyncio.Task[None]] = set()
        self.entering: dict[asyncio.Task[None], dt.datetime] = {}  # contest entries, heard at
        self.table = {(self.irc.command + c.suffix).lower(): c for c in COMMANDS}

    def handle(self, message: Incoming) -> None:
        word, _, args = message.text.strip().partition(" ")
        command = self.table.get(word.lower())
        if command is None:
            if word.lower().startswith(self.irc.command.lower() + "-"):
                self.reply(message, self._unknown(word, args.strip()), refusal=True)
            elif near_prefix(word, self.irc.command):
                self.reply(message, self._mistyped(word, args.strip()), refusal=True)
            elif not message.channel:  # talking to the bot in private: how to use it
                self.reply(message, help.usage_line(self), refusal=True)
            return
        task = asyncio.create_task(self._run(command, message, args.strip()))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        if command.enters:
            self.entering[task] = message.heard
            task.add_done_callback(self.entering.pop)

    async def settled(self, heard_before: dt.datetime, timeout: float = 60.0) -> None:
        """Until every contest entry heard before `heard_before` is in the
        request book (or refused): a close waits for them (bot/contests.py)."""
        waiting = [t for t, heard in self.entering.items() if heard < heard_before]
        if waiting:
            await asyncio.wait(waiting, timeout=timeout)

    async def _run(self, command: Command, message: Incoming, args: str) -> None:
        name = self.irc.command + command.suffix

        def refuse(text: str) -> None:
            self.reply(message, text, refusal=True)

        try:
            if command.vouched:
                message = await message.vouched()
            sender = message.sender
            logger.info("command", command=name, nick=sender.nick, account=sender.account)
            if command.admin and not message.sender.is_admin(self.irc.admins):
                raise HillError(f"{name} is for the hill's admins")
            await command.run(self, message, args)
        except Quiet:
            pass
        except Usage as usage:
            refuse(f"usage: {name} {command.usage}".rstrip() + f" ({usage})")
        except (HillError, FetchError) as error:
            refuse(str(error))
        except QueueFull:
            refuse(BUSY)
        except StorageError as error:  # the disk full, say: not the command's fault
            self.runner.trouble.struck(error.trouble)  # one log line per interval: the runner's
            refuse(f"{error.trouble}; try again in a few minutes")
        except Exception:
            logger.exception("command failed", command=name)
            refuse("something went wrong; it has been logged")

    def _mistyped(self, word: str, args: str) -> str:
        """`!bfjoustt NAME CODE`, `!bfjust-rank x`: the command meant."""
        rest = word.partition("-")[2]
        meant = self.irc.command + (f"-{rest}" if rest else "")
        shown = re.sub(r"[^A-Za-z0-9_!-]", "", word)[:30]
        if meant.lower() not in self.table:
            return f"unknown command {shown}; {self.irc.command}-help lists them"
        echoed = f" {args}" if args and len(args) <= ECHOED else ""
        return f"unknown command {shown}; did you mean {meant}{echoed}?"

    def _unknown(self, word: str, args: str) -> str:
        shown = re.sub(r"[^A-Za-z0-9_-]", "", word[len(self.irc.command) :])[:30]
        hint = did_you_mean(self.irc.command, shown[1:], args)
        return f"unknown command {self.irc.command}{shown}; {hint + ' ' if hint else ''}" + (
            f"{self.irc.command}-help lists them"
        )
