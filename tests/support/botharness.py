"""Running the real bot in the test's event loop on a temporary hill."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import itertools
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from bot.app import HillBot
from hill.config import HillSettings, IrcSettings, LadderSettings, Settings, WebSettings
from hill.writers.hill import Hill
from support.ircclient import IrcTestClient

CHANNEL = "#bfjoust"
NEWS = "#hill-news"
_numbers = itertools.count(1)

# Quick programs for the tests (see the BF Joust rules in the README)
RUSH = "(>)*9([-]>)*21"
TRAIL = ">(+)*10>(-)*10(>)*6([+]>)*21"
DEFENDER = "(+)*30<(-)*30>([-]+)*10000"


# the operator's secret that makes an admin on a network without accounts (bot/admins.py)
ADMIN_SECRET = "the-tests-operator-secret"


async def sign_in(client: Any, bot_nick: str) -> None:
    """`client` proves the admin secret to the bot, in private."""
    client.say(bot_nick, f"!bfjoust-admin {ADMIN_SECRET}")
    assert (await client.reply(bot_nick)).startswith("you are the hill's admin")


def bot_settings(
    data_dir: Path, port: int, ladder: LadderSettings | None = None, **irc: Any
) -> Settings:
    """Settings for one test's bot: its own nick, a quick outgoing rate
    unless the test says otherwise, no web report, no background ladder
    unless `ladder` says so."""
    irc = {
        "nick": f"hillbot{next(_numbers)}",
        "channels": (CHANNEL,),
        "messages_per_second": 20.0,
        "burst": 20,
        "admin_secret": ADMIN_SECRET,
        **irc,
    }
    return Settings(
        hill=HillSettings(data_dir=data_dir, size=10),
        irc=IrcSettings(server="127.0.0.1", port=port, **irc),
        web=WebSettings(enabled=False, public_url="https://hill.example.org/"),
        ladder=ladder or LadderSettings(enabled=False),
    )


def with_web_url(settings: Settings, url: str) -> Settings:
    return dataclasses.replace(settings, web=dataclasses.replace(settings.web, public_url=url))


async def wait_until(condition: Any, timeout: float = 15.0, step: float = 0.02) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(step)


@contextlib.asynccontextmanager
async def running_bot(
    settings: Settings, hill: Hill | None = None, ready_timeout: float = 15.0
) -> AsyncIterator[HillBot]:
    """The bot connected and in its channels; stopped and its hill closed after."""
    hill = hill or Hill(settings.hill, jobs=2)
    bot = HillBot(settings, hill)
    task = asyncio.create_task(bot.run())
    try:
        await wait_until(lambda: bot.client.ready or task.done(), ready_timeout)
        if task.done():
            task.result()  # its error
        yield bot
    finally:
        await bot.stop()
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        hill.close()


async def player(nick: str, port: int) -> IrcTestClient:
    """A player connected to the server on `port`, in the bot's channel."""
    client = await IrcTestClient(nick).connect(port)
    await client.join(CHANNEL)
    return client


async def news(client: IrcTestClient, bot: str, contains: str, timeout: float = 20.0) -> str:
    """The next message of `bot` to the channel, to all, with `contains` in it."""
    line = await client.expect(
        lambda m: m.command == "PRIVMSG" and m.nick == bot and m.params[0] == CHANNEL
        and contains in m.text and not m.text.startswith(f"{client.nick}: "),
        timeout,
    )  # fmt: skip
    return line.text


def run(coroutine: Any, timeout: float = 60.0) -> Any:
    """Run a test scenario with an overall time limit."""

    async def limited() -> Any:
        try:
            async with asyncio.timeout(timeout):
                return await coroutine
        finally:
            while IrcTestClient.connected:
                await IrcTestClient.connected.pop().close()

    return asyncio.run(limited())
