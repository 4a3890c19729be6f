"""The bot against what a network does: a server restart in the middle of a
joust, a nick in use, kicks and bans, long replies, hostile input."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web
from support import ircservers
from support.botharness import (
    CHANNEL,
    RUSH,
    bot_settings,
    run,
    running_bot,
    wait_until,
    with_web_url,
)
from support.httpserver import serve
from support.ircclient import IrcTestClient
from support.reference import REFERENCE

import bot.client
from bot.commands.report import top_line
from bot.ircd import Ngircd, free_port, start_ngircd
from hill.config import HillSettings
from hill.writers.hill import Hill

ngircd = ircservers.ngircd  # the fixture

WARRIORS = REFERENCE / "warriors"
SLOW = (WARRIORS / "esohill-20241026" / "ais523.margins3.bfjoust").read_bytes()


@pytest.mark.irc  # an ngircd of its own, restarted
def test_a_server_restart_during_a_joust_loses_no_result(tmp_path) -> None:
    """The result of a joust that ends while the server is down is delivered
    once the bot is back: the player only sees it on the new connection."""
    # a full hill and one thread, so that the challenge takes a while
    hill = Hill(HillSettings(data_dir=tmp_path / "hill", size=47), jobs=1)
    for path in sorted((WARRIORS / "esohill-20131008").iterdir()):
        hill.challenge("seed", path.stem.replace(".", "_")[:48], path.read_bytes())
    port = free_port()
    server = start_ngircd(tmp_path / "ircd", port, [CHANNEL])
    settings = bot_settings(tmp_path / "hill", port, fetch_allow_private=True)

    async def scenario() -> None:
        nonlocal server
        served = asyncio.Event()
        fetched = 0

        async def program(request: web.Request) -> web.Response:
            nonlocal fetched
            asyncio.get_running_loop().call_soon(served.set)  # the joust starts now
            fetched += 1
            # jousts are kept by the programs' code: a second fetch serves a
            # program that plays the same but is new, so that it jousts again
            return web.Response(body=SLOW + b" again" * (fetched - 1))

        async with serve({"/margins3": program}) as base, running_bot(settings, hill) as hillbot:
            url = f"{base}/margins3"
            alice = await IrcTestClient("alice").connect(port)
            await alice.join(CHANNEL)
            alice.say(CHANNEL, f"!bfjoust margins3 {url}")
            await asyncio.wait_for(served.wait(), 10)
            server.kill()
            await alice.closed.wait()
            await wait_until(lambda: not hillbot.client.ready)
            server = start_ngircd(tmp_path / "ircd", port, [CHANNEL])
            alice = await IrcTestClient("alice").connect(port)  # before the bot is back
            await alice.join(CHANNEL)
            bob = await IrcTestClient("bob").connect(port)  # the server delays newcomers
            text = await alice.reply(hillbot.client.nick, timeout=30)
            assert text.startswith("New program alice.margins3: points ")
            assert "rank " in text and "/47" in text and "pushed off seed." in text
            standings = await asyncio.to_thread(hill.queries.standings)
            assert standings.find("alice.margins3") is not None
            # during a joust the bot keeps answering: the event loop is free
            served.clear()
            alice.say(CHANNEL, f"!bfjoust-test again {url}")
            await asyncio.wait_for(served.wait(), 10)
            bob.say(hillbot.client.nick, "!bfjoust-report")
            assert (await bob.reply(hillbot.client.nick)).startswith("Top of the hill")
            assert not any("alice.again" in m.text for m in alice.lines)  # still jousting
            assert "alice.again: points" in await alice.reply(hillbot.client.nick)

    try:
        run(scenario(), timeout=90)
    finally:
        server.stop()


def test_a_nick_in_use_kicks_and_bans(ngircd: Ngircd, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bot.client, "BANNED_RETRY", 0.5)
    monkeypatch.setattr(bot.client, "REJOIN_DELAY", 0.2)
    channel = f"#kick{free_port()}"
    settings = bot_settings(tmp_path, ngircd.port, channels=(channel,))
    nick = settings.irc.nick

    async def scenario() -> None:
        op = await IrcTestClient("chanop").connect(ngircd.port)
        await op.join(channel)  # the first one in: channel operator
        squatter = await IrcTestClient(nick).connect(ngircd.port)
        async with running_bot(settings) as hillbot:
            assert hillbot.client.nick == nick + "_"
            await op.expect(lambda m: m.command == "JOIN" and m.nick == nick + "_")
            op.send(f"KICK {channel} {nick}_ :out")
            await op.expect(lambda m: m.command == "KICK")
            await op.expect(lambda m: m.command == "JOIN" and m.nick == nick + "_")
            op.send(f"MODE {channel} +b {nick}_!*@*")
            op.send(f"KICK {channel} {nick}_ :banned")
            await op.expect(lambda m: m.command == "KICK")
            await wait_until(lambda: channel not in hillbot.client.joined)
            await asyncio.sleep(1.5)  # rejoin attempts are refused meanwhile
            assert channel not in hillbot.client.joined
            op.say(nick + "_", "!bfjoust-report")  # still answers in private
            assert (await op.reply(nick + "_")).startswith("The hill is empty.")
            op.send(f"MODE {channel} -b {nick}_!*@*")
            await op.expect(lambda m: m.command == "JOIN" and m.nick == nick + "_")
            op.say(channel, f"!bfjoust rush {RUSH}")
            assert "rank 1/1" in await op.reply(nick + "_")
        await squatter.close()

    run(scenario())


def test_long_replies_are_split_to_fit_512_bytes(ngircd: Ngircd, tmp_path) -> None:
    url = "https://hill.example.org/" + "r\u00e9sultats-\u20ac-" * 60 + "/"
    settings = with_web_url(bot_settings(tmp_path, ngircd.port), url)
    hill = Hill(settings.hill)
    for name in ("a" * 48, "b" * 48, "c" * 48, "d" * 48, "e" * 48):
        hill.challenge("x" * 32, name, RUSH.encode())
    expected = top_line(hill.queries.standings(), url)
    assert len(expected.encode()) > 1200

    async def scenario() -> None:
        async with running_bot(settings, hill) as hillbot:
            reader = await IrcTestClient("reader").connect(ngircd.port)
            await reader.join(CHANNEL)
            reader.say(CHANNEL, "!bfjoust-report")
            pieces = [await reader.reply(hillbot.client.nick)]
            while "".join(pieces).replace(" ", "") != expected.replace(" ", ""):
                pieces.append(await reader.reply(hillbot.client.nick, timeout=5))
            lines = [m for m in reader.lines if m.nick == hillbot.client.nick and m.text]
            assert len(lines) >= 4
            for line in lines:
                assert len(line.raw.encode()) + 2 <= 512
                assert "\ufffd" not in line.raw  # never cut inside a character
            assert max(len(line.raw.encode()) for line in lines) > 400  # lines are used

    run(scenario())


def test_hostile_input_does_not_break_the_bot(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)

    async def scenario() -> None:
        async with running_bot(settings) as hillbot:
            nick = hillbot.client.nick
            evil = await IrcTestClient("evil").connect(ngircd.port)
            evil.writer.write(b"PRIVMSG " + nick.encode() + b" :\xff\xfe!bfjoust-help \xc3\r\n")
            evil.say(nick, "\x01VERSION\x01")
            evil.say(nick, "!bfjoust-test y (+)*100000000000000000000000")
            # the mangled line holds no command: told how to use the bot
            assert (await evil.reply(nick)).startswith("BF Joust hill. Commands:")
            assert "evil.y: points" in await evil.reply(nick)  # counts never expand
            evil.say(nick, "!BFJOUST-REPORT")
            assert (await evil.reply(nick)).startswith("The hill is empty.")
            # what the bot echoes is plain: no colours, no text turned around
            await evil.join(CHANNEL)
            evil.say(CHANNEL, "!bfjoust-rank \x02\x0304,12red\x03\u202eevil\u2066")
            assert await evil.reply(nick) == "there is no redevil on the hill"
            echo = next(m.raw for m in evil.lines if m.nick == nick and m.params[0] == CHANNEL)
            assert echo.endswith(" :evil: there is no redevil on the hill")
            assert hillbot.client.ready and hillbot.client.connection.is_connected()

    run(scenario())
