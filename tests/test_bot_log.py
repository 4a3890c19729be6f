"""`!bfjoust-log [NAME]` against a real ngircd: the hill's last three
changes, or a program's, newest first, each with its commit's link."""

from __future__ import annotations

import re

from support import ircservers
from support.botharness import CHANNEL, RUSH, TRAIL, bot_settings, run, running_bot
from support.ircclient import IrcTestClient

from bot.ircd import Ngircd
from hill.writers.hill import Hill

ngircd = ircservers.ngircd  # the fixture
LINK = re.compile(r" https://hill\.example\.org/commit/([0-9a-f]{12})$")


def test_the_last_changes_of_the_hill_and_of_a_program(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)
    hill = Hill(settings.hill)
    hill.challenge("ann", "rush", RUSH.encode())
    hill.challenge("ben", "trail", TRAIL.encode())
    hill.challenge("ann", "rush", b"(>)*8([-]>)*21")  # an update
    hill.challenge("ben", "idle", b"[]")
    hill.challenge("cy", "rush", RUSH.encode())
    hill.challenge("dan", "probe", b"+", test_only=True)  # a trial: no change
    changes = {c.id: c for c in hill.queries.changes()}

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            nick = bot.client.nick
            ann = await IrcTestClient("ann").connect(ngircd.port)
            await ann.join(CHANNEL)

            async def answer(command: str, count: int) -> list[str]:
                ann.say(CHANNEL, command)
                return [await ann.reply(nick) for _ in range(count)]

            def event_of(line: str) -> int:
                number = int(line.split(" ")[0].lstrip("#"))
                link = LINK.search(line)
                assert link and changes[number].commit.startswith(link.group(1)), line
                return number

            latest = await answer("!bfjoust-log", 3)
            assert [event_of(line) for line in latest] == sorted(changes)[-3:][::-1]
            assert " Adding cy.rush by cy: cy.rush: points " in latest[0]
            assert " Adding ben.idle by ben: " in latest[1]
            # NAME: the sender's own first; OWNER.NAME: anyone's
            mine = await answer("!bfjoust-log rush", 2)
            assert [event_of(line) for line in mine] == [3, 1]
            assert " Updating ann.rush by ann: " in mine[0] and "battles changed" in mine[0]
            (theirs,) = await answer("!bfjoust-log CY.rush", 1)
            assert event_of(theirs) == 5
            assert await answer("!bfjoust-log nobody", 1) == [
                "there is no nobody in the hill's history"
            ]
            assert await answer("!bfjoust-log probe", 1) == [
                "there is no probe in the hill's history"  # a trial is no version
            ]
            (usage,) = await answer("!bfjoust-log a b", 1)
            assert usage.startswith("usage: !bfjoust-log [NAME|OWNER.NAME]")
            assert "!bfjoust-log [NAME|OWNER.NAME]" in (await answer("!bfjoust-help", 1))[0]

    run(scenario())


def test_an_empty_hill_has_no_log(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            ann = await IrcTestClient("ann").connect(ngircd.port)
            ann.say(bot.client.nick, "!bfjoust-log")
            assert await ann.reply(bot.client.nick) == "Nothing has happened on the hill yet."

    run(scenario())
