"""Lines said while the bot was away (issue 32.2): where the server keeps
no history for it, the bot says on its return which span it missed, so
that anyone whose command fell in it may say it again (a real ngircd)."""

from __future__ import annotations

import asyncio
import re

from support import ircservers
from support.botharness import CHANNEL, bot_settings, news, player, run, running_bot

from bot.ircd import Ngircd, free_port, launch_keeper, stop_keeper
from hill.writers.hill import Hill

ngircd = ircservers.ngircd  # the fixture
SPAN = re.compile(
    r"I was away from (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) to (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC: "
    r"a command said then was not heard; if you said one, say it again"
)


def test_the_bot_back_says_which_span_it_missed(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)

    async def scenario() -> None:
        ann = await player("ann", ngircd.port)
        async with running_bot(settings, Hill(settings.hill)) as bot:
            nick = bot.client.nick
            ann.say(CHANNEL, "!bfjoust-report")
            assert (await ann.reply(nick)).startswith("The hill is empty.")
        ann.say(CHANNEL, "!bfjoust-report")  # said while the bot is away: nobody hears it
        await asyncio.sleep(2.5)
        async with running_bot(settings, Hill(settings.hill)) as bot:
            said = await news(ann, bot.client.nick, "I was away from")
            span = SPAN.fullmatch(said)
            assert span is not None, said
            assert span[1] < span[2]

    run(scenario())


def test_lines_said_while_away_are_read_from_the_servers_history(tmp_path) -> None:
    """`make run`'s InspIRCd keeps its channels' last lines (chanhistory) and
    replays them, with their times, to the bot as it joins: a command said
    while the bot restarted is played once, in order, answered as heard late."""
    directory, port = tmp_path / "ircd", free_port()
    launch_keeper(directory, "127.0.0.1", port, [CHANNEL])
    settings = bot_settings(tmp_path, port)
    try:

        async def scenario() -> None:
            ann = await player("ann", port)
            async with running_bot(settings, Hill(settings.hill)) as bot:
                ann.say(CHANNEL, "!bfjoust-report")
                assert (await ann.reply(bot.client.nick)).startswith("The hill is empty.")
            await asyncio.sleep(1.5)  # the history's times are whole seconds
            ann.say(CHANNEL, "!bfjoust-report")  # while the bot is away
            ann.say(CHANNEL, "!bfjoust-rank nothing")
            await asyncio.sleep(1.5)
            async with running_bot(settings, Hill(settings.hill)) as bot:
                nick = bot.client.nick
                # played in the order said; their answers may come in either order
                answers = sorted([await ann.reply(nick), await ann.reply(nick)])
                late = r"\(heard late: you said it at \d\d:\d\d:\d\d UTC\) "
                assert re.fullmatch(late + r"The hill is empty\..*", answers[0]), answers
                assert re.fullmatch(late + r"there is no nothing on the hill", answers[1]), answers
                said = await news(ann, nick, "I was away from")
                assert said.endswith("; the server kept what was said: I answer it now")
            late = sum("heard late" in line.text for line in ann.lines)
            await asyncio.sleep(2.5)
            async with running_bot(settings, Hill(settings.hill)) as bot:  # played once only
                await news(ann, bot.client.nick, "I was away from")
                await asyncio.sleep(1.0)
                assert sum("heard late" in line.text for line in ann.lines) == late == 2

        run(scenario())
    finally:
        stop_keeper(directory)
