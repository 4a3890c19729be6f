"""The bot replays, in the background, the jousts stored before their
battle statistics were kept (the hill's first), while it answers the
players first (against a real ngircd)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import delete
from support import ircservers
from support.botharness import CHANNEL, RUSH, bot_settings, run, running_bot, wait_until
from support.ircclient import IrcTestClient
from support.reference import warrior_path

from bot.ircd import Ngircd
from hill.store.tables import JoustStats
from hill.writers.backfill import StatsBackfill
from hill.writers.hill import Hill

ngircd = ircservers.ngircd  # the fixture
NAMES = [
    "wiki/poke.bfjoust",
    "wiki/wiggle_clear.bfjoust",
    "esohill-20131008/Deewiant_allegro.bfjoust",
]


def test_the_bot_replays_old_jousts_for_their_statistics(ngircd: Ngircd, tmp_path: Path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)
    hill = Hill(settings.hill, jobs=2)
    for path in NAMES:
        hill.challenge("old", path.split("/")[1].split(".")[0], warrior_path(path).read_bytes())
    with hill.lock.transaction() as session:  # a hill of before the statistics
        session.execute(delete(JoustStats))
    progress = StatsBackfill(hill).progress
    assert progress() == (0, 3)

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            alice = await IrcTestClient("alice").connect(ngircd.port)
            await alice.join(CHANNEL)
            alice.say(CHANNEL, f"!bfjoust rush {RUSH}")
            assert "New program alice.rush" in await alice.reply(bot.client.nick)
            await wait_until(lambda: progress() == (6, 6), timeout=30, step=0.1)
            assert bot.backfill.played == 3  # the old ones; the new jousts came with theirs

    run(scenario())
