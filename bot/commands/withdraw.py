"""`!bfjoust-withdraw NAME`: an owner takes their own program off the hill."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import HillError, Usage
from hill.rules.requests import RequestKind


@command("-withdraw", "NAME", vouched=True)
async def withdraw(bot: Context, message: Incoming, args: str) -> None:
    if not args or " " in args:
        raise Usage("the name of your program")
    sender = message.sender
    owner_given, dot, rest = args.partition(".")  # owners have no '.'
    name = rest if dot else args
    owner = await bot.owner(sender, name)
    if dot and not sender.same(owner_given, owner):
        raise HillError(f"{args[:80]} is not yours: you may withdraw only your own programs")
    await bot.ask(message, RequestKind.WITHDRAW, owner, name)
