"""`!bfjoust NAME CODE|URL` and `!bfjoust-test NAME CODE|URL`: challenge the
hill with a program, or see where it would rank."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import FetchError, QueueFull, Usage
from hill.rules.requests import RequestKind


@command("", "NAME CODE|URL", vouched=True)
async def challenge(bot: Context, message: Incoming, args: str) -> None:
    await submit(bot, message, args, RequestKind.CHALLENGE)


@command("-test", "NAME CODE|URL", vouched=True)
async def test(bot: Context, message: Incoming, args: str) -> None:
    await submit(bot, message, args, RequestKind.TEST)


async def submit(bot: Context, message: Incoming, args: str, kind: RequestKind) -> None:
    name, _, code = args.partition(" ")
    code = code.strip()
    if not name or not code:
        raise Usage("a name and the program, or a URL of it")
    sender = message.sender
    owner = await bot.owner(sender, name, test_only=kind == RequestKind.TEST)
    bot.count(sender, owner)
    try:
        source = await bot.source(code)
        await bot.ask(message, kind, owner, name, source)
    except (FetchError, QueueFull):
        bot.limiter.refund(sender.key)  # no program, or no room: it does not count
        raise
