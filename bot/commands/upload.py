"""`!bfjoust-upload NAME [test]`: a one-time link to the web form, for a
program too long for a line (hill.store.uploads); `!bfjoust-upload NAME
contest`, the same for an entry to contest NAME."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import ENTRY, Context, command
from hill.errors import Usage
from hill.rules.events import iso_utc


@command("-upload", "NAME [test|contest]", vouched=True)
async def upload(bot: Context, message: Incoming, args: str) -> None:
    name, _, mode = args.partition(" ")
    mode = mode.strip().lower()
    if not name or mode not in ("", "test", "contest"):
        raise Usage("a name for your program, `test` to only test it; a contest's, and `contest`")
    test_only = mode == "test"
    sender = message.sender
    if mode == "contest":
        view = await bot.open_contest(name, message)
        owner = await bot.owner(sender, ENTRY)
        bot.count(sender, owner)
        seconds = bot.irc.upload_link_seconds
        token = await bot.read(
            bot.uploads.issue,
            nick=sender.nick,
            channel=None,  # an entry is answered in private
            owner=owner,
            name=view.name,
            test_only=False,
            contest=True,
            valid_seconds=seconds,
        )
        answer = (
            f"enter contest {view.name} at {bot.urls.upload(token)} (it works once, for "
            f"{duration(seconds)}; entries count until the close at {iso_utc(view.closes)})"
        )
        _private(bot, message, answer)
        return
    owner = await bot.owner(sender, name, test_only=test_only)
    bot.count(sender, owner)  # a link is one submission
    seconds = bot.irc.upload_link_seconds
    token = await bot.read(
        bot.uploads.issue,
        nick=sender.nick,
        channel=message.channel,
        owner=owner,
        name=name,
        test_only=test_only,
        valid_seconds=seconds,
    )
    what = "test" if test_only else "submit"
    link, lasting = bot.urls.upload(token), duration(seconds)
    _private(bot, message, f"{what} {owner}.{name} at {link} (it works once, for {lasting})")


def _private(bot: Context, message: Incoming, answer: str) -> None:
    bot.reply(Incoming(message.sender, None, message.text), answer)
    if message.channel:
        bot.reply(message, "I have sent you the upload link in private")


def duration(seconds: int) -> str:
    if seconds % 60:
        return f"{seconds} seconds"
    return "1 minute" if seconds == 60 else f"{seconds // 60} minutes"
