"""`!bfjoust-rescore` (admins): recompute the standings from the stored jousts."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.rules.requests import RequestKind


@command("-rescore", admin=True, vouched=True)
async def rescore(bot: Context, message: Incoming, args: str) -> None:
    await bot.ask(message, RequestKind.RESCORE, message.sender.identity, "")
