"""`!bfjoust-report`: the top of the hill and where the full report is."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.rules.standings import Standings
from hill.web.urls import Urls

TOP = 5  # programs named


@command("-report")
async def report(bot: Context, message: Incoming, args: str) -> None:
    bot.reply(message, top_line(await bot.standings(), bot.settings.web.url))


def top_line(standings: Standings, site: str) -> str:
    """The top of the hill, and the web report's address (`site`)."""
    home = Urls(site=site).home()
    if standings.size == 0:
        return f"The hill is empty. Full report: {home}"
    method = standings.method
    top = ", ".join(
        f"{e.rank}. {e.program.full_name} {e.scores[method]:.1f}" for e in standings.entries[:TOP]
    )
    return f"Top of the hill ({standings.size} programs, {method}): {top}. Full report: {home}"
