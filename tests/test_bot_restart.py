"""Promises kept across a crash: a real `bfjoust bot` process is SIGKILLed
with submissions queued, or between a hill change and its answer, then
started again; every player (a real IRC client on a real ngircd) gets an
answer, addressed as the first one would have been, and nothing is played
twice."""

from __future__ import annotations

import itertools
import re
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import ircservers
from support.botharness import CHANNEL, DEFENDER, RUSH, TRAIL, run, wait_until
from support.botprocess import BotProcess, hill_busy, nick_free
from support.ircclient import IrcTestClient

from bot.ircd import Ngircd
from bot.runner import MAX_ATTEMPTS

ngircd = ircservers.ngircd  # the fixture
URL = "https://hill.example.org/"
WEB = f'enabled = false\npublic_url = "{URL}"\n'
_numbers = itertools.count(1)


@pytest.fixture
def bot(tmp_path: Path, ngircd: Ngircd) -> Iterator[BotProcess]:
    process = BotProcess(tmp_path, ngircd.port, f"keeper{next(_numbers)}", web=WEB)
    try:
        yield process
    finally:
        process.stop()
        print(process.log.read_text())


async def joined(watcher: IrcTestClient, nick: str) -> None:
    """The bot is (back) in the channel, and so ready for commands."""
    await watcher.expect(lambda m: m.command == "JOIN" and m.nick == nick, timeout=30)


async def wait_for_requests(bot: BotProcess, states: list[str]) -> None:
    await wait_until(lambda: [r[1] for r in bot.requests()] == states, 20, 0.05)


def test_queued_submissions_are_played_and_answered_after_a_kill(
    bot: BotProcess, ngircd: Ngircd
) -> None:
    async def scenario() -> None:
        alice = await IrcTestClient("alice").connect(ngircd.port)
        await alice.join(CHANNEL)
        bob = await IrcTestClient("bob").connect(ngircd.port)
        carol = await IrcTestClient("carol").connect(ngircd.port)
        await carol.join(CHANNEL)
        await nick_free(alice, bot.nick)
        bot.start()
        await joined(alice, bot.nick)
        with hill_busy(bot.data):
            alice.say(CHANNEL, f"!bfjoust rush {RUSH}")
            await wait_for_requests(bot, ["running"])  # waiting for the hill
            bob.say(bot.nick, f"!bfjoust trail {TRAIL}")
            carol.say(CHANNEL, f"!bfjoust-test probe {DEFENDER}")
            await wait_for_requests(bot, ["running", "queued", "queued"])
            bot.kill()
        assert not any(m.nick == bot.nick and m.command != "JOIN" for m in alice.lines)
        assert not any(m.nick == bot.nick for m in bob.lines)

        await nick_free(alice, bot.nick)
        bot.start()
        await joined(alice, bot.nick)
        to_alice = await alice.expect(
            lambda m: m.nick == bot.nick and m.command == "PRIVMSG", timeout=30
        )
        assert to_alice.params[0] == CHANNEL  # in the channel, as the reply would have been
        assert to_alice.text.startswith(
            "alice: your submission alice.rush was being played when the bot restarted: "
            "New program alice.rush: points 0.00"
        )
        assert to_alice.text.endswith(f". {URL}program/alice.rush")
        to_bob = await bob.expect(lambda m: m.nick == bot.nick, timeout=30)
        assert (to_bob.command, to_bob.params[0]) == ("NOTICE", "bob")  # in private
        assert to_bob.text.startswith(
            "your submission bob.trail was still queued when the bot restarted: "
            "New program bob.trail: "
        )
        to_carol = await carol.reply(bot.nick, "carol.probe", timeout=30)
        assert to_carol.startswith("your test carol.probe was still queued when the bot restarted")
        assert "; test only, the hill is unchanged; " in to_carol
        assert re.search(r"\. Full result: \S+/test/[A-Za-z0-9_-]{22}$", to_carol)

        # played once each, in the order asked, and all marked delivered
        await wait_until(lambda: all(r[3] for r in bot.requests()), 10, 0.05)
        assert [(r[0], r[1]) for r in bot.requests()] == [
            ("alice.rush", "done"),
            ("bob.trail", "done"),
            ("carol.probe", "done"),
        ]
        assert [s.split(":")[0] for s in bot.events("join") + bot.events("challenge")] == [
            "alice.rush",
            "bob.trail",
        ]
        assert len(bot.events("test")) == 1

    run(scenario(), timeout=120)


@pytest.mark.parametrize(
    ("point", "note"),
    [
        # the joust was played, the hill not yet changed: played again
        ("jousted", "was being played when the bot restarted"),
        # the hill changed (and the request with it), git not yet written
        ("stored", "was played before the bot restarted"),
        # everything stored, the answer not yet sent
        ("answer-stored", "was played before the bot restarted"),
    ],
)
def test_an_answer_cut_off_by_a_kill_is_delivered_after_the_restart(
    bot: BotProcess, ngircd: Ngircd, point: str, note: str
) -> None:
    async def scenario() -> None:
        dave = await IrcTestClient("dave").connect(ngircd.port)
        await dave.join(CHANNEL)
        bot.start(crash_at=point)
        await joined(dave, bot.nick)
        dave.say(CHANNEL, f"!bfjoust rush {RUSH}")
        assert bot.process is not None
        await wait_until(lambda: bot.process.poll() is not None, 30)  # type: ignore[union-attr]
        assert bot.process.returncode == -signal.SIGKILL
        assert not any(m.nick == bot.nick and m.command == "PRIVMSG" for m in dave.lines)

        await nick_free(dave, bot.nick)
        bot.start()
        text = await dave.reply(bot.nick, "dave.rush", timeout=30)
        assert text.startswith(f"your submission dave.rush {note}: New program dave.rush: ")
        await wait_until(lambda: all(r[3] for r in bot.requests()), 10, 0.05)
        assert [s.split(":")[0] for s in bot.events("join")] == ["dave.rush"]  # once
        assert [(r[0], r[1]) for r in bot.requests()] == [("dave.rush", "done")]
        # and nothing more comes: one answer per request
        dave.say(CHANNEL, "!bfjoust-report")
        await dave.reply(bot.nick, "Top of the hill")
        answers = [m for m in dave.lines if m.nick == bot.nick and "dave.rush" in m.text]
        assert len(answers) == 2  # the answer, and the report naming dave.rush

    run(scenario(), timeout=120)


def test_a_request_that_kills_the_bot_every_time_is_given_up(
    bot: BotProcess, ngircd: Ngircd
) -> None:
    """The bot does not crash forever on one request: after MAX_ATTEMPTS
    starts that died playing it, the player is told and the bot goes on."""

    async def scenario() -> None:
        erin = await IrcTestClient("erin").connect(ngircd.port)
        await erin.join(CHANNEL)
        for attempt in range(MAX_ATTEMPTS):
            await nick_free(erin, bot.nick)
            bot.start(crash_at="jousted")
            if attempt == 0:  # later starts resume it at once, and die
                await joined(erin, bot.nick)
                erin.say(CHANNEL, f"!bfjoust rush {RUSH}")
            await wait_until(lambda: bot.process.poll() is not None, 30)  # type: ignore[union-attr]
        await nick_free(erin, bot.nick)
        bot.start()
        text = await erin.reply(bot.nick, "erin.rush", timeout=30)
        assert text == (
            "your submission erin.rush was being played when the bot restarted: "
            f"not played: the bot stopped {MAX_ATTEMPTS} times while playing it"
        )
        erin.say(CHANNEL, f"!bfjoust trail {TRAIL}")
        assert (await erin.reply(bot.nick, "erin.trail")).startswith("New program erin.trail: ")
        assert [s.split(":")[0] for s in bot.events("join")] == ["erin.trail"]

    run(scenario(), timeout=150)


def test_requests_are_numbered_in_the_order_the_bot_heard_them(
    bot: BotProcess, ngircd: Ngircd
) -> None:
    """Each command is its own task and reads the hill before it submits:
    those reads must not let a later player overtake an earlier one."""
    players = [f"p{i}" for i in range(6)]

    async def scenario() -> None:
        clients = [await IrcTestClient(nick).connect(ngircd.port) for nick in players]
        for client in clients:
            await client.join(CHANNEL)
        await nick_free(clients[0], bot.nick)
        bot.start()
        await joined(clients[0], bot.nick)
        with hill_busy(bot.data):
            for client in clients:
                client.say(CHANNEL, f"!bfjoust-test probe {DEFENDER}")
            await wait_for_requests(bot, ["running"] + ["queued"] * (len(players) - 1))
            heard = re.findall(r"command=!bfjoust-test nick=(\w+)", bot.log.read_text())
            asked = [r[0].split(".")[0] for r in bot.requests()]
            assert sorted(heard) == sorted(players)
            assert asked == heard

    run(scenario(), timeout=120)
