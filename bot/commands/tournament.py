"""`!bfjoust-tournament [FORMAT POOL [all-versions] | cancel ID]`: anyone
asks for the running or last tournament; admins start one
(bot/tournament.py plays it) or cancel one."""

from __future__ import annotations

from bot.client import Incoming
from bot.commands.base import Context, command
from bot.tournament import progress_text
from hill.errors import HillError, TournamentError
from hill.store.pools import POOLS_HELP
from hill.store.records import latest, tournament
from hill.tournaments.registry import FORMATS

START = f"{'|'.join(FORMATS)} POOL [all-versions]"
CANCEL = "cancel ID"


@command("-tournament", f"[{START} | {CANCEL}]")
async def tournament_command(bot: Context, message: Incoming, args: str) -> None:
    host = bot.tournaments
    if not args:
        view = await bot.read(latest, host.db)
        if view is None:
            bot.reply(message, "No tournament yet: an admin starts one.")
        else:
            bot.reply(message, progress_text(view.summary, bot.settings.web.url))
        return
    message = await message.vouched()
    words = args.split()
    if words[0].lower() == "cancel":
        await cancel(bot, message, words[1:])
        return
    if not message.sender.is_admin(bot.irc.admins):
        raise HillError("starting a tournament is for the hill's admins")
    every_version = words[2:] == ["all-versions"]
    if words[0] not in FORMATS or not (len(words) == 2 or every_version):
        raise HillError(f"start one with: {START}; POOL is {POOLS_HELP}")
    running = await bot.read(host.running)
    try:
        tournament_id = await host.begin(
            words[0], words[1], message.sender.nick, all_versions=every_version
        )
    except TournamentError as error:
        raise HillError(str(error)) from None
    view = await bot.read(tournament, host.db, tournament_id)
    assert view is not None
    s = view.summary
    after = f"; it starts when #{running} is over" if running is not None else ""
    bot.reply(
        message,
        f"Tournament #{s.id} started: {s.format} over {s.pool}, {s.entrants} entrants, "
        f"{s.rounds_planned} round{'s' * (s.rounds_planned != 1)}{after}. "
        f"The winner is announced here. {bot.urls.tournament(s.id)}",
    )


async def cancel(bot: Context, message: Incoming, words: list[str]) -> None:
    if not message.sender.is_admin(bot.irc.admins):
        raise HillError("cancelling a tournament is for the hill's admins")
    if len(words) != 1 or not words[0].lstrip("#").isdigit():
        raise HillError(f"cancel one with: {CANCEL}")
    try:
        summary = await bot.tournaments.cancel(int(words[0].lstrip("#")), message.sender.nick)
    except TournamentError as error:
        raise HillError(str(error)) from None
    bot.reply(message, progress_text(summary, bot.settings.web.url))
