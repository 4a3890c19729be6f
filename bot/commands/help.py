"""`!bfjoust-help`: the commands, a warning about prose in programs, and the
top of the hill."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import COMMANDS, Context, command
from bot.commands.report import top_line

# what runs in a program: prose with any of these in it is code too
INSTRUCTIONS = "+-<>.,[]()*{}%"
PROSE_WARNING = (
    f"Careful: text in a program is code if it holds any of {INSTRUCTIONS} "
    "(or digits after * or %), so keep those out of comments."
)


@command("-help")
async def help(bot: Context, message: Incoming, args: str) -> None:
    # one answer of three lines, not three answers: when the outbox is full
    # it gives way as a whole, and a one-line answer beside it is never the
    # longest queue (bot.backlog; issue 33.3)
    top = top_line(await bot.standings(), bot.settings.web.url)
    bot.reply(message, [usage_line(bot), PROSE_WARNING, top])


def usage_line(bot: Context) -> str:
    """The players' commands with their usage (also the answer to a private
    message that holds no command)."""
    prefix = bot.irc.command
    usages = ", ".join(
        f"{(prefix + c.suffix).lower()} {c.usage}".rstrip()
        for c in COMMANDS
        if c.listed and not c.admin
    )
    return f"BF Joust hill. Commands: {usages}"
