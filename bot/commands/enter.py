"""`!bfjoust-enter NAME CODE|URL` and `!bfjoust-enter NAME withdraw`: a
player's one entry to contest NAME, or its withdrawal, answered in private
(docs/contests.md).  The request is recorded with the time the bot heard
it: it counts if that is before the close, even if it is played later."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import ENTRY, Context, command
from hill.errors import FetchError, HillError, QueueFull, Usage
from hill.rules.requests import RequestKind

WITHDRAW = "withdraw"


@command("-enter", f"NAME CODE|URL|{WITHDRAW}", vouched=True, enters=True)
async def enter(bot: Context, message: Incoming, args: str) -> None:
    name, _, code = args.partition(" ")
    code = code.strip()
    if not name or not code:
        raise Usage(f"a contest's name and your program, a URL of it, or {WITHDRAW}")
    if message.channel and code.lower() != WITHDRAW:
        # its code (or link) is public before the close: not entered, told why
        raise HillError(
            f"not entered: everyone in {message.channel} can read your code now; send "
            f"contest entries in private: /msg {bot.irc.nick} {bot.irc.command}-enter {name} CODE"
        )
    view = await bot.open_contest(name, message)
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
    if message.channel:  # a withdrawal: nothing secret in it
        bot.reply(message, "I answer entries and withdrawals in private")
