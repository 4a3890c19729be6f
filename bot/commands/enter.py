"""`!bfjoust-enter NAME CODE|URL` and `!bfjoust-enter NAME withdraw`: a
player's one entry to contest NAME, or its withdrawal, answered in private
(docs/contests.md).  The request is recorded with the time the bot heard
it: it counts if that is before the close, even if it is played later."""

from __future__ import annotations

import asyncio

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import FetchError, HillError, QueueFull, Usage
from hill.rules import contests as rules
from hill.rules.requests import RequestKind
from hill.store.contests import ContestView

WITHDRAW = "withdraw"
ENTRY = "entry"  # checks the owner as a program name would


@command("-enter", f"NAME CODE|URL|{WITHDRAW}", vouched=True, enters=True)
async def enter(bot: Context, message: Incoming, args: str) -> None:
    name, _, code = args.partition(" ")
    code = code.strip()
    if not name or not code:
        raise Usage(f"a contest's name and your program, a URL of it, or {WITHDRAW}")
    view = await open_contest(bot, name, message)
    sender = message.sender
    owner = await bot.owner(sender, ENTRY)
    fields = {
        "nick": sender.nick,
        "channel": None,  # answered in private: nobody else sees how an entry does
        "origin": "irc",
        "owner": owner,
        "name": view.name,
        "created_at": message.heard,
    }
    if code.lower() == WITHDRAW:
        await bot.runner.submit(command=RequestKind.CONTEST_WITHDRAW, code=None, **fields)
    else:
        bot.count(sender, owner)
        try:
            source = await bot.source(code)
            await bot.runner.submit(command=RequestKind.CONTEST_ENTER, code=source, **fields)
        except (FetchError, QueueFull):
            bot.limiter.refund(sender.key)  # no program, or no room: it does not count
            raise
    if message.channel:
        bot.reply(
            message,
            "I answer entries in private; send them in private too, the channel sees "
            "what you write here",
        )


async def open_contest(bot: Context, name: str, message: Incoming) -> ContestView:
    """Contest `name`, still taking entries when `message` was heard;
    HillError if there is no such contest or it has closed."""
    view = await asyncio.to_thread(bot.hill.contests.view, name)
    if not view.open or not rules.counts(message.heard, view.closes):
        raise HillError(rules.late(view.name, view.closes))
    return view
