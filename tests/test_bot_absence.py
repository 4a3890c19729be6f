"""Lines said while the bot was away (issue 32.2): where the server keeps
no history for it, the bot says on its return which span it missed, so
that anyone whose command fell in it may say it again (a real ngircd)."""

from __future__ import annotations

import asyncio
import re

from support import ircservers
from support.botharness import CHANNEL, bot_settings, news, player, run, running_bot

from bot.ircd import Ngircd
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
