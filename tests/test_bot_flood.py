"""One player floods the bot; every other player is still answered promptly,
on each of the servers networks run (InspIRCd, ngircd, ircd-hybrid).

A real client writes 1000 commands in one write (on InspIRCd on the lenient
players' port, while the bot sits on the strict port: a few lines too many
at once and the server drops it for "Excess Flood"), the bot at its default
rate: 1 line a second after a burst of 4.  Another player asks
`!bfjoust-rank` throughout; each answer must come within a few of the bot's
lines (the seconds are printed; bench/pacing.py prints them per server).
A crowd of new clients: tests/test_bot_burst.py; long backlogs:
tests/test_bot_drain.py.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from support.botharness import CHANNEL, RUSH, TRAIL, bot_settings, run, running_bot, wait_until
from support.ircclient import IrcTestClient
from support.ircservers import Inspircd, Network
from support.pacing import (
    BOUND,
    GOAL,
    REPLY_GUARD,
    TURN,
    Wait,
    figures,
    median_lines,
    most_lines,
    probe,
)

from hill.writers.hill import Hill

pytestmark = [pytest.mark.irc, pytest.mark.slow]  # InspIRCd, and floods of minutes

FLOOD = 1000  # lines in one write


def test_a_flood_delays_no_one_else(every_network: Network, tmp_path) -> None:
    server = every_network
    settings = bot_settings(tmp_path, server.port, messages_per_second=1.0, burst=4)
    hill = Hill(settings.hill)
    for owner, code in (("ann", RUSH), ("ben", TRAIL)):
        hill.challenge(owner, "rush", code.encode())

    async def scenario() -> None:
        async with running_bot(settings, hill) as hillbot:
            nick = hillbot.client.nick
            port = server.player_port
            flooder = await IrcTestClient("flooder").connect(port)
            prober = await IrcTestClient("prober").connect(port)
            await flooder.join(CHANNEL)
            await prober.join(CHANNEL)

            # tests in the channel (no account needed: ircd-hybrid offers
            # account-notify without services): 3 taken (the limit), told once, then quiet
            flooder.send(
                "\r\n".join(f"PRIVMSG {CHANNEL} :!bfjoust-test w{i} {RUSH}" for i in range(FLOOD))
            )
            submissions = await probe(prober, hillbot, [CHANNEL, nick])
            print(every_network.name, figures("during a flood of submissions", submissions))
            for _ in range(3):  # played by the request runner: they may come after the probes
                await flooder.reply(nick, "test only", timeout=REPLY_GUARD)
            answers = [m.text for m in flooder.lines if m.nick == nick]
            assert sum(a.startswith("flooder: ") and "test only" in a for a in answers) == 3, (
                answers
            )
            refusals = [a for a in answers if "submissions recently" in a]
            assert len(refusals) == 1, answers  # once per window, not 997 times

            # cheap commands in private: a few answered, the rest ignored
            commands = [
                "!bfjoust-rank ann.rush",
                "!bfjoust-help",
                "!bfjoust-report",
                "!bfjoust-nonsense",
                "!bfjoust bad (>",
                "!bfjoust-withdraw",
            ]
            flooder.send(
                "\r\n".join(f"PRIVMSG {nick} :{commands[i % len(commands)]}" for i in range(FLOOD))
            )
            cheap = await probe(prober, hillbot, [nick, CHANNEL])
            print(every_network.name, figures("during a flood of cheap commands", cheap))
            later = [m for m in flooder.lines if m.nick == nick and m.params[0] == "flooder"]
            # the gate's burst, not a thousand answers (on ngircd, which reads
            # the flooder's lines at its own pace, none may have come yet)
            assert len(later) <= 20

            assert hillbot.client.connections == 1 and hillbot.client.ready
            slow = [s for s, _ in submissions + cheap if s > GOAL]
            print(f"probes over the {GOAL:.0f} s goal: {len(slow)}")
            assert most_lines(submissions + cheap) <= BOUND
            assert median_lines(submissions + cheap) <= TURN

    run(scenario(), timeout=180)


IDENTS = 7  # one host's connections, each with an ident of its own
WINDOW = 10  # seconds: the rate window, short for the test (60 by default)
TRIES = 8  # the player's submissions, one every PLAYER_EVERY seconds
PLAYER_EVERY = 3.5


def test_one_host_with_many_idents_leaves_room_for_others(
    flood_inspircd: Inspircd, tmp_path
) -> None:
    """On a network without accounts one host opens 7 connections, each with
    its own ident (a user@host of its own, so a per-user limit of its own),
    and each asks twice as often as it may (3 a window): 21 a window would
    be taken, more than the hill's 20.  The host gets its share, and a
    player on another host is never refused and answered promptly."""
    settings = bot_settings(
        tmp_path, flood_inspircd.port, messages_per_second=1.0, burst=4, rate_window_seconds=WINDOW
    )
    hill = Hill(settings.hill)
    for owner, code in (("ann", RUSH), ("ben", TRAIL)):
        hill.challenge(owner, "rush", code.encode())

    async def attack(nick: str, client: IrcTestClient, offset: float, until: float) -> int:
        await asyncio.sleep(offset)
        sent = 0
        while time.monotonic() < until:
            client.say(nick, f"!bfjoust-test w{sent} {RUSH}")
            sent += 1
            await asyncio.sleep(WINDOW / 6)
        return sent

    async def scenario() -> None:
        async with running_bot(settings, hill) as hillbot:
            nick = hillbot.client.nick
            port = flood_inspircd.player_port
            attackers = [
                await IrcTestClient(f"idents{i}").connect(port, user=f"u{i}", host="127.0.0.2")
                for i in range(IDENTS)
            ]
            player = await IrcTestClient("player").connect(port, host="127.0.0.3")
            until = time.monotonic() + WINDOW + TRIES * PLAYER_EVERY  # the player's tries too
            attacks = [
                asyncio.create_task(attack(nick, a, i * WINDOW / 6 / IDENTS, until))
                for i, a in enumerate(attackers)
            ]
            await asyncio.sleep(WINDOW)  # the attack in full swing
            refused, waits = 0, []
            for i in range(TRIES):
                started = time.monotonic()
                wait = Wait(hillbot, player.nick)
                player.say(nick, f"!bfjoust-test mine{i} {RUSH}")
                try:
                    answer = await player.reply(nick, timeout=REPLY_GUARD)
                except TimeoutError:  # refused without a word: told so before
                    answer = ""
                waits.append(wait.over())
                refused += "test only" not in answer
                await asyncio.sleep(max(0.0, started + PLAYER_EVERY - time.monotonic()))
            sent = sum(await asyncio.gather(*attacks))
            taken = sum("test only" in m.text for a in attackers for m in a.lines if m.nick == nick)
            print(
                f"{IDENTS} idents of one host sent {sent} submissions, {taken} taken; "
                f"the player on another host: refused {refused} of {TRIES}; "
                + figures("answers", waits)
            )
            assert refused == 0
            assert most_lines(waits) <= BOUND
            assert hillbot.client.connections == 1

    run(scenario(), timeout=180)


ASKERS = ("alice", "bob")
ASK_EVERY = 1.6  # seconds: two players together a little faster than the pace


def test_a_refusal_is_not_starved_by_answers(flood_inspircd: Inspircd, tmp_path) -> None:
    """Two players ask `-rank` a little faster together than the bot's pace,
    so answers always wait; a third player's mistyped command is refused,
    and the refusal comes in its turn, a few lines after it is asked (it
    used to wait behind every answer until it was dropped, unsent, after
    30 s)."""
    settings = bot_settings(tmp_path, flood_inspircd.port, messages_per_second=1.0, burst=4)
    hill = Hill(settings.hill)
    hill.challenge("ann", "rush", RUSH.encode())

    async def ask(client: IrcTestClient, nick: str, until: float) -> None:
        while time.monotonic() < until:
            client.say(CHANNEL, "!bfjoust-rank ann.rush")
            await asyncio.sleep(ASK_EVERY)

    async def scenario() -> None:
        async with running_bot(settings, hill) as hillbot:
            nick = hillbot.client.nick
            port = flood_inspircd.player_port
            askers = [await IrcTestClient(who).connect(port) for who in ASKERS]
            carol = await IrcTestClient("carol").connect(port, host="127.0.0.4")
            for client in (*askers, carol):
                await client.join(CHANNEL)
            until = time.monotonic() + 40
            asking = [asyncio.create_task(ask(a, nick, until)) for a in askers]
            # answers pile up: the askers' are some lines behind
            await wait_until(lambda: len(hillbot.client.outbox) >= 3, timeout=REPLY_GUARD)
            wait = Wait(hillbot, carol.nick)
            carol.say(CHANNEL, "!bfjoust-rnak ann.rush")
            refusal = await carol.reply(nick, timeout=REPLY_GUARD)
            seconds, lines = wait.over()
            answered = sum(m.nick == nick for a in askers for m in a.lines)
            print(
                f"a refusal behind two players asking every {ASK_EVERY} s: {seconds:.2f} s, "
                f"{lines} lines; they had {answered} answers"
            )
            assert "unknown command" in refusal and lines <= BOUND, refusal
            for task in asking:
                task.cancel()

    run(scenario(), timeout=180)
