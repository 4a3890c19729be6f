"""The all-time ladder in the bot, on a real ngircd: `!bfjoust-ladder`, and
the background ladder that plays only while the hill is idle (a submission
arriving while it plays is answered promptly), keeps to its rate, and takes
in new programs."""

from __future__ import annotations

import asyncio
import datetime as dt
import time
from pathlib import Path
from typing import Any

from support import ircservers
from support.botharness import CHANNEL, bot_settings, run, running_bot, wait_until
from support.ircclient import IrcTestClient
from support.ladderhill import archive_hill, reference

from bot.commands.ladder import top_text, version_text
from bot.ircd import Ngircd
from bot.ladder import BATCH
from hill.config import LadderSettings
from hill.store import archive
from hill.store.tables import Request
from hill.writers.ladder import ArchiveLadder

ngircd = ircservers.ngircd  # the fixture


async def player(nick: str, port: int) -> IrcTestClient:
    client = await IrcTestClient(nick).connect(port)
    await client.join(CHANNEL)
    return client


def test_bfjoust_ladder_on_irc(ngircd: Ngircd, tmp_path: Path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)
    hill = archive_hill(tmp_path, count=12, size=4)

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            nick = bot.client.nick
            dan = await player("dan", ngircd.port)
            dan.say(CHANNEL, "!bfjoust-ladder")
            assert await dan.reply(nick) == top_text(None, settings.web.url)
            await asyncio.to_thread(ArchiveLadder(hill).step, 16)
            board = await asyncio.to_thread(archive.read_board, hill.db)
            dan.say(CHANNEL, "!bfjoust-ladder")
            text = await dan.reply(nick)
            assert text == top_text(board, settings.web.url)
            assert text.startswith(f"All-time ladder (12 programs, {board.jousts} of 66 pairs")
            row = board.rows[3]
            dan.say(CHANNEL, f"!bfjoust-ladder {row.version.full_name}")
            text = await dan.reply(nick)
            assert text == version_text(board, row.version.full_name, "dan")
            assert text.startswith(f"{row.version.label}: ladder rank 4/12 (95%: ")
            dan.say(CHANNEL, "!bfjoust-ladder nobody.nothing")
            assert await dan.reply(nick) == "there is no nobody.nothing in the all-time ladder"
            dan.say(CHANNEL, "!bfjoust-help")
            assert "!bfjoust-ladder [NAME|OWNER.NAME]" in await dan.reply(nick)

    run(scenario())


def timed_work(ladder: ArchiveLadder, log: list[tuple[float, float]]) -> None:
    """Record when each piece of the ladder's work starts and ends (wall clock)."""
    work = ladder.work

    def timed(batch: int) -> Any:
        started = time.time()
        try:
            return work(batch)
        finally:
            log.append((started, time.time()))

    ladder.work = timed  # type: ignore[method-assign]


def when(stored: dt.datetime) -> float:
    return stored.replace(tzinfo=dt.UTC).timestamp()


def test_a_submission_goes_first_while_the_ladder_plays(ngircd: Ngircd, tmp_path: Path) -> None:
    """The ladder plays batch after batch while nothing waits; a submission
    arriving meanwhile is answered promptly, no batch starts while it is
    open, and the newcomer joins the ladder right after."""
    # 100 jousts a second: unpaced, the engine plays this archive's whole
    # ladder in under a second, before the player has even joined
    ladder = LadderSettings(enabled=True, jousts_per_hour=360_000)
    settings = bot_settings(tmp_path, ngircd.port, ladder=ladder)
    hill = archive_hill(tmp_path, count=40, size=10)
    # one that fits an IRC line (a longer one would be cut at its first line)
    newcomer_name, newcomer = reference(1, start=52)[0]

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            work: list[tuple[float, float]] = []
            timed_work(bot.ladder.ladder, work)
            nick = bot.client.nick
            alice = await player("alice", ngircd.port)
            await wait_until(lambda: bot.ladder.played >= 3 * BATCH, timeout=60)
            asked = time.monotonic()
            alice.say(CHANNEL, f"!bfjoust {newcomer_name} {' '.join(newcomer.decode().split())}")
            text = await alice.reply(nick, timeout=60)
            answered = time.monotonic() - asked
            assert text.startswith(f"New program alice.{newcomer_name}: ")
            request = await asyncio.to_thread(bot.runner.book.get, 1)
            assert isinstance(request, Request) and request.state == "done"
            opened, closed = when(request.created_at), when(request.finished_at)
            during = [(s, e) for s, e in work if opened + 0.1 < s < closed]
            print(
                f"answered in {answered:.2f} s while the ladder played "
                f"({bot.ladder.played} jousts so far, {len(work)} batches; the request "
                f"was open {closed - opened:.2f} s)"
            )
            assert answered < 10.0  # generous: a loaded machine
            assert during == []  # no batch began while the request was open
            # the newcomer joins the ladder, from its hill record
            label = f"alice.{newcomer_name}@1"

            def joined() -> bool:
                board = archive.read_board(hill.db)
                return board is not None and any(r.version.label == label for r in board.rows)

            await wait_until(joined, timeout=60, step=0.2)
            board = archive.read_board(hill.db)
            row = next(r for r in board.rows if r.version.label == label)
            assert row.on_hill and row.jousts >= 9

    run(scenario(), timeout=240)


def test_the_background_ladder_keeps_to_its_rate(ngircd: Ngircd, tmp_path: Path) -> None:
    """At 360 jousts an hour, a batch of up to 8 is followed by 10 s of rest a joust."""
    settings = bot_settings(
        tmp_path, ngircd.port, ladder=LadderSettings(enabled=True, jousts_per_hour=360)
    )
    hill = archive_hill(tmp_path, count=16, size=5)

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            await wait_until(lambda: bot.ladder.played > 0, timeout=60)
            first = bot.ladder.played
            await asyncio.sleep(3)
            assert bot.ladder.played == first <= BATCH  # one batch, then rest
            board = await asyncio.to_thread(archive.read_board, hill.db)
            assert board is not None and board.pool == 16  # its standing is there at once

    run(scenario(), timeout=120)
