"""`!bfjoust-upload NAME [test]`: a one-time link to the web form, for a
program too long for a line (hill.store.uploads)."""

from __future__ import annotations

import asyncio

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import Usage


@command("-upload", "NAME [test]", vouched=True)
async def upload(bot: Context, message: Incoming, args: str) -> None:
    name, _, mode = args.partition(" ")
    if not name or mode.strip() not in ("", "test"):
        raise Usage("a name for your program, and `test` to only test it")
    test_only = mode.strip() == "test"
    sender = message.sender
    owner = await bot.owner(sender, name, test_only=test_only)
    bot.count(sender, owner)  # a link is one submission
    seconds = bot.irc.upload_link_seconds
    token = await asyncio.to_thread(
        bot.uploads.issue,
        nick=sender.nick,
        channel=message.channel,
        owner=owner,
        name=name,
        test_only=test_only,
        valid_seconds=seconds,
    )
    what = "test" if test_only else "submit"
    bot.reply(
        Incoming(sender, None, message.text),
        f"{what} {owner}.{name} at {bot.urls.upload(token)} "
        f"(it works once, for {duration(seconds)})",
    )
    if message.channel:
        bot.reply(message, "I have sent you the upload link in private")


def duration(seconds: int) -> str:
    if seconds % 60:
        return f"{seconds} seconds"
    return "1 minute" if seconds == 60 else f"{seconds // 60} minutes"
