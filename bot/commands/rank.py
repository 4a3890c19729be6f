"""`!bfjoust-rank NAME|OWNER.NAME`: a program's rank with its 95% interval,
score, points and worst opponents."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from bot.identity import Sender
from hill.errors import Usage
from hill.rules import names
from hill.rules.changes import WORST, worst_text
from hill.rules.standings import Standings, worst_opponents
from hill.rules.statistics import Statistics


@command("-rank", "NAME|OWNER.NAME")
async def rank(bot: Context, message: Incoming, args: str) -> None:
    if not args or " " in args:
        raise Usage("a program's name")
    standings, stats = await bot.read_shared(bot.statistics.current)
    bot.reply(message, rank_line(standings, find(standings, args, message.sender), stats))


def find(standings: Standings, name: str, sender: Sender) -> int:
    """The index of `OWNER.NAME`, or of NAME (the sender's own first)."""
    full_names = [e.program.full_name for e in standings.entries]
    return names.choose(full_names, name, sender.identity, "on the hill")


def rank_line(standings: Standings, index: int, stats: Statistics) -> str:
    """Rank with its 95% interval (the configuration bootstrap), score,
    points and worst opponents."""
    entry = standings.entries[index]
    low, high = int(stats.rank_low[index]), int(stats.rank_high[index])
    line = (
        f"{entry.program.full_name}: rank {entry.rank}/{standings.size} "
        f"(95% interval {low}-{high}), "
        f"score {entry.scores[standings.method]:.2f}, points {entry.points:.2f}"
    )
    return f"{line}; {worst_text(worst_opponents(standings, index, WORST))}"
