"""The owner of a program pushed off the hill is told: by a private NOTICE
when they are online, otherwise on their next command, even across a
restart of the bot; once (against a real ngircd, with real IRC clients)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

from support import ircservers
from support.botharness import CHANNEL, RUSH, TRAIL, bot_settings, run, running_bot
from support.ircclient import IrcTestClient

from bot.ircd import Ngircd
from hill.config import Settings
from hill.store.notices import NoticeBook
from hill.writers.hill import Hill

ngircd = ircservers.ngircd  # the fixture
IDLE = "+>-<" * 3  # loses to everyone
PAGE = "https://hill.example.org/program/carol.idle"


def small_hill(tmp_path: Path, port: int) -> tuple[Settings, Hill]:
    """A hill of two, full: carol's weak program and alice's rush."""
    settings = bot_settings(tmp_path, port)
    settings = dataclasses.replace(settings, hill=dataclasses.replace(settings.hill, size=2))
    hill = Hill(settings.hill, jobs=2)
    hill.challenge("carol", "idle", IDLE.encode())
    hill.challenge("alice", "rush", RUSH.encode())
    return settings, hill


def told(line) -> bool:
    return line.command == "NOTICE" and "your program carol.idle" in line.text


def test_an_owner_online_is_told_at_once(ngircd: Ngircd, tmp_path: Path) -> None:
    settings, hill = small_hill(tmp_path, ngircd.port)

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            carol = await IrcTestClient("carol").connect(ngircd.port)
            await carol.join(CHANNEL)
            bob = await IrcTestClient("bob").connect(ngircd.port)
            await bob.join(CHANNEL)
            bob.say(CHANNEL, f"!bfjoust trail {TRAIL}")
            assert "pushed off carol.idle" in await bob.reply(bot.client.nick)
            notice = await carol.expect(lambda m: m.nick == bot.client.nick and told(m))
            assert notice.params[0] == "carol"  # in private
            assert notice.text.startswith(
                "your program carol.idle was pushed off the hill by bob.trail ("
            )
            assert notice.text.endswith(f" UTC); its page: {PAGE}")
            book = NoticeBook(hill.db)
            for _ in range(100):  # marked sent once written to the server
                if not await asyncio.to_thread(book.pending):
                    break
                await asyncio.sleep(0.05)
            assert await asyncio.to_thread(book.pending) == []

    run(scenario())


def test_an_owner_away_is_told_on_their_next_command_even_after_a_restart(
    ngircd: Ngircd, tmp_path: Path
) -> None:
    settings, hill = small_hill(tmp_path, ngircd.port)

    async def push_off() -> None:
        async with running_bot(settings, hill) as bot:
            bob = await IrcTestClient("bob").connect(ngircd.port)
            bob.say(bot.client.nick, f"!bfjoust trail {TRAIL}")
            assert "pushed off carol.idle" in await bob.reply(bot.client.nick)

    run(push_off())
    assert [n.program for n in NoticeBook(Hill(settings.hill).db).pending()] == ["carol.idle"]

    async def come_back() -> None:
        async with running_bot(settings) as bot:  # a new bot on the same hill
            nick = bot.client.nick
            carol = await IrcTestClient("carol").connect(ngircd.port)
            carol.say(nick, "!bfjoust-report")  # not in a channel: seen by her command
            notice = await carol.expect(lambda m: m.nick == nick and told(m), timeout=20)
            assert notice.params[0] == "carol"
            assert "pushed off the hill by bob.trail" in notice.text
            await carol.reply(nick)  # the report itself
            book = NoticeBook(bot.commands.hill.db)
            for _ in range(100):
                if not await asyncio.to_thread(book.pending):
                    break
                await asyncio.sleep(0.05)
            assert await asyncio.to_thread(book.pending) == []
            carol.say(nick, "!bfjoust-report")  # told once
            await carol.reply(nick)
            await asyncio.sleep(0.5)
            assert sum(told(m) for m in carol.lines) == 1

    run(come_back())


def test_an_owner_waiting_since_before_a_restart_is_told_as_the_bot_joins(
    ngircd: Ngircd, tmp_path: Path, monkeypatch
) -> None:
    """Pushed off while the bot was away, carol (in the channel all along)
    was told 29-38 s after it came back: at its next poll (issue 32.3).  The
    bot now looks as it sees her in the channel; the poll is set an hour off
    here, so only that can tell her."""
    import bot.notices

    monkeypatch.setattr(bot.notices, "RETRY_SECONDS", 3600.0)
    settings, hill = small_hill(tmp_path, ngircd.port)
    hill.challenge("bob", "trail", TRAIL.encode())  # while no bot runs: carol.idle leaves

    async def scenario() -> None:
        carol = await IrcTestClient("carol").connect(ngircd.port)
        await carol.join(CHANNEL)
        async with running_bot(settings, hill) as bot:
            notice = await carol.expect(lambda m: m.nick == bot.client.nick and told(m), 20)
            assert "was pushed off the hill by bob.trail" in notice.text

    run(scenario())
