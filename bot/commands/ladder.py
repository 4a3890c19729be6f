"""`!bfjoust-ladder [NAME|OWNER.NAME]`: the top of the all-time ladder, or
where each version of a program stands in it (bot/ladder.py plays it)."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from hill.errors import HillError
from hill.ladder.board import Board, Row
from hill.store.archive import read_board
from hill.web.urls import Urls

TOP = 5  # programs named by `!bfjoust-ladder`
VERSIONS = 3  # versions named by `!bfjoust-ladder NAME`


@command("-ladder", "[NAME|OWNER.NAME]")
async def ladder(bot: Context, message: Incoming, args: str) -> None:
    board = await bot.read(read_board, bot.hill.db)
    if not args:
        bot.reply(message, top_text(board, bot.settings.web.url))
    elif " " in args:
        raise HillError("give one program's name, OWNER.NAME or OWNER.NAME@VERSION")
    else:
        bot.reply(message, version_text(board, args, message.sender.identity))


def rating_text(row: Row) -> str:
    return f"{row.rating:.2f} ({row.rating_low:.2f}-{row.rating_high:.2f})"


def top_text(board: Board | None, site: str) -> str:
    """`!bfjoust-ladder`: the top of the all-time ladder (`site`: the web report's URL)."""
    url = Urls(site=site).ladder()
    if board is None:
        return f"The all-time ladder has no standing yet. {url}"
    top = ", ".join(f"{r.rank}. {r.version.label} {rating_text(r)}" for r in board.rows[:TOP])
    return (
        f"All-time ladder ({board.pool} programs, {board.jousts} of {board.pairs} pairs "
        f"jousted): {top}. Full ladder: {url}"
    )


def version_text(board: Board | None, words: str, identity: str) -> str:
    """`!bfjoust-ladder NAME`: where each version of the program stands."""
    if board is None:
        raise HillError("the all-time ladder has no standing yet")
    rows = board.find(words, identity)
    if not rows:
        raise HillError(f"there is no {words[:60]} in the all-time ladder")
    parts = [
        f"{r.version.label}: ladder rank {r.rank}/{board.pool} "
        f"(95%: {r.stats['rank_low']}-{r.stats['rank_high']}), rating {rating_text(r)}, "
        f"{r.jousts} jousts{', on the hill' if r.on_hill else ''}"
        for r in rows[:VERSIONS]
    ]
    more = f"; and {len(rows) - VERSIONS} older versions" if len(rows) > VERSIONS else ""
    return "; ".join(parts) + more
