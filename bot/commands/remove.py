"""`!bfjoust-remove OWNER.NAME` (admins): take any program off the hill."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import Usage
from hill.rules.requests import RequestKind


@command("-remove", "OWNER.NAME", admin=True, vouched=True)
async def remove(bot: Context, message: Incoming, args: str) -> None:
    if not args or " " in args or "." not in args:
        raise Usage("the program's full name")
    await bot.ask(message, RequestKind.REMOVE, message.sender.identity, args)
