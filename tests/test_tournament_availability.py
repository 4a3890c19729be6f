"""A big tournament never silences the hill: a real `bfjoust bot` process on
a real ngircd, an archive of 600 programs, and an admin's round robin of
them all (179,700 matches: its bookkeeping, not its jousts, is the work,
some seconds even on a fast machine; before, it held SQLite's write lock
for the whole round, minutes).
While it plays, players submit: every submission is recorded and answered
with its real answer within seconds, and SQLite's write lock, probed from
outside, never keeps a writer waiting long.  A SIGTERM in mid-tournament
stops the bot within seconds; the next start plays it on, players
submitting meanwhile, to exactly the result of an uninterrupted run."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

from support import ircservers
from support.bighill import WriteLockProbe, archive_hill, committed_matches, quick_programs
from support.botharness import ADMIN_SECRET, CHANNEL, run, sign_in, wait_until
from support.botprocess import BotProcess, nick_free
from support.ircclient import IrcTestClient

from bot.ircd import Ngircd
from hill.engine.arena import Arena
from hill.play.tournament import Tournament
from hill.store.database import Database
from hill.store.records import tournament
from hill.tournaments.ledger import MemoryStore
from hill.tournaments.plan import TournamentPlan

ngircd = ircservers.ngircd  # the fixture
ENTRANTS = 600
MATCHES = ENTRANTS * (ENTRANTS - 1) // 2
PLAYERS = ("alice", "bob", "dan", "erin")


async def submit_all(
    players: list[IrcTestClient], bot: str, first: int, count: int
) -> list[tuple[str, float]]:
    """`count` submissions, one every 0.3 s from each player in turn; each
    answer and how long it took to come."""

    async def answer(player: IrcTestClient, name: str, asked: float) -> tuple[str, float]:
        text = await player.reply(bot, f"{player.nick}.{name}", timeout=60)
        return text, time.monotonic() - asked

    waiting = []
    for number in range(first, first + count):
        player = players[number % len(players)]
        name = f"q{number}"
        player.say(CHANNEL, f"!bfjoust {name} (>)*{2 + number % 8}([-]>)*{21 - number % 3}")
        waiting.append(asyncio.create_task(answer(player, name, time.monotonic())))
        await asyncio.sleep(0.3)
    return list(await asyncio.gather(*waiting))


def test_players_are_answered_during_a_big_tournament_and_a_sigterm(
    ngircd: Ngircd, tmp_path: Path
) -> None:
    programs = quick_programs(ENTRANTS)
    bot = BotProcess(
        tmp_path,
        ngircd.port,
        "bighill",
        irc=f'admins = ["carol"]\nadmin_secret = "{ADMIN_SECRET}"\n',
    )
    archive_hill(bot.data, programs)
    figures: dict[str, object] = {}

    async def scenario() -> None:
        carol = await IrcTestClient("carol").connect(ngircd.port)
        await carol.join(CHANNEL)
        players = [await IrcTestClient(nick).connect(ngircd.port) for nick in PLAYERS]
        for player in players:
            await player.join(CHANNEL)
        await nick_free(carol, bot.nick)
        bot.start()
        await carol.expect(lambda m: m.command == "JOIN" and m.nick == bot.nick, timeout=30)

        await sign_in(carol, bot.nick)
        carol.say(CHANNEL, "!bfjoust-tournament round-robin archive")
        started = await carol.reply(bot.nick, "Tournament #1", timeout=30)
        assert started.startswith(f"Tournament #1 started: round-robin over archive, {ENTRANTS}")
        answers = await submit_all(players, bot.nick, 0, 8)
        figures["answers during the tournament (s)"] = [round(t, 2) for _, t in answers]
        for text, _ in answers:
            assert "New program" in text or "rank" in text, text

        # a SIGTERM while it plays: the bot stops within seconds
        await wait_until(lambda: committed_matches(bot.data) > 0, timeout=120, step=0.05)
        assert committed_matches(bot.data) < MATCHES, "the tournament ended before the stop"
        assert bot.process is not None
        stopping = time.monotonic()
        bot.process.send_signal(signal.SIGTERM)
        while bot.process.poll() is None and time.monotonic() - stopping < 60:
            await asyncio.sleep(0.05)
        figures["SIGTERM to exit (s)"] = round(time.monotonic() - stopping, 2)
        assert bot.process.poll() == 0
        figures["committed at the stop"] = committed_matches(bot.data)

        # the next start plays it on; players are answered meanwhile
        await nick_free(carol, bot.nick)
        bot.start()
        await carol.expect(lambda m: m.command == "JOIN" and m.nick == bot.nick, timeout=30)
        answers = await submit_all(players, bot.nick, 8, 4)
        figures["answers during the resumed tournament (s)"] = [round(t, 2) for _, t in answers]
        # its end, as the bot announces it: every match committed by then
        await carol.expect(
            lambda m: m.nick == bot.nick and "Tournament #1" in m.text and "complete" in m.text,
            timeout=510,
        )
        assert committed_matches(bot.data) == MATCHES

    with WriteLockProbe(bot.data / "hill.sqlite3") as probe:
        try:
            run(scenario(), timeout=900)
        finally:
            bot.stop()
            print(bot.log.read_text()[-5000:])
    figures["longest wait for the write lock (s)"] = round(probe.longest, 3)
    print(figures)
    assert probe.tries > 100
    assert probe.longest < 3.0, figures  # it was the whole round: minutes
    assert all(t < 20 for t in figures["answers during the tournament (s)"]), figures  # type: ignore[attr-defined]
    assert figures["SIGTERM to exit (s)"] < 15, figures  # type: ignore[operator]

    # every submission recorded, played and its answer delivered, in order
    requests = bot.requests()
    assert [(r[0], r[1], r[3]) for r in requests] == [
        (f"{PLAYERS[n % len(PLAYERS)]}.q{n}", "done", 1) for n in range(12)
    ]
    # exactly the result of an uninterrupted run
    db = Database.existing(bot.data / "hill.sqlite3")
    view = tournament(db, 1)
    db.close()
    assert view is not None and view.summary.ended == "complete"
    code = {f"old.{name}": source for name, source in programs}
    plan = TournamentPlan("round-robin", tuple(view.result["entrants"]), view.result["seed"])
    uninterrupted = Tournament(plan, code, MemoryStore(), Arena(jobs=1))  # one core, as the bot's
    uninterrupted.run()
    assert view.result == uninterrupted.to_json()
