"""One player floods the bot; every other player is still answered promptly.

A real client writes 1000 commands in one write on the lenient players'
port of a real InspIRCd, while the bot sits on the strict port (a few lines
too many at once and the server drops it for "Excess Flood") at its default
rate: 1 line a second after a burst of 4.  Another player asks
`!bfjoust-rank` throughout; the latency of every answer is measured and
printed.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Iterator

import pytest
from support.botharness import CHANNEL, RUSH, TRAIL, bot_settings, run, running_bot
from support.ircclient import IrcTestClient
from support.ircservers import Inspircd, start_inspircd

from hill.writers.hill import Hill

FLOOD = 1000  # lines in one write
GOAL = 3.0  # seconds: every probe should be answered within this
BOUND = 8.0  # what the test asserts: the goal with room for a loaded machine
PROBES = 15
PROBE_EVERY = 1.0  # seconds between probes (within the prober's own command rate)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspircd]:
    server = start_inspircd(tmp_path_factory.mktemp("inspircd-flood"), services=False)
    yield server
    server.stop()


async def _probe(prober: IrcTestClient, bot: str, targets: list[str]) -> list[float]:
    """Seconds from each `!bfjoust-rank` to its answer, asked in turn in
    each of `targets` (a channel, or the bot in private)."""
    latencies = []
    for i in range(PROBES):
        started = time.monotonic()
        prober.say(targets[i % len(targets)], "!bfjoust-rank ann.rush")
        await prober.reply(bot, "ann.rush: rank", timeout=60)
        latencies.append(time.monotonic() - started)
        await asyncio.sleep(PROBE_EVERY)
    return latencies


def _figures(what: str, latencies: list[float]) -> str:
    return (
        f"{what}: {len(latencies)} probes answered in "
        f"max {max(latencies):.2f} s, median {statistics.median(latencies):.2f} s "
        f"({', '.join(f'{x:.2f}' for x in latencies)})"
    )


def test_a_flood_delays_no_one_else(server: Inspircd, tmp_path) -> None:
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

            # submissions in the channel: 3 taken (the limit), told once, then quiet
            flooder.send(
                "\r\n".join(f"PRIVMSG {CHANNEL} :!bfjoust w{i} {RUSH}" for i in range(FLOOD))
            )
            submissions = await _probe(prober, nick, [CHANNEL, nick])
            print(_figures("during a flood of submissions", submissions))
            answers = [m.text for m in flooder.lines if m.nick == nick]
            assert sum(a.startswith("flooder: New program flooder.w") for a in answers) == 3
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
            cheap = await _probe(prober, nick, [nick, CHANNEL])
            print(_figures("during a flood of cheap commands", cheap))
            later = [m for m in flooder.lines if m.nick == nick and m.params[0] == "flooder"]
            assert 0 < len(later) <= 20  # the gate's burst, not a thousand answers

            assert hillbot.client.connections == 1 and hillbot.client.ready
            slow = [x for x in submissions + cheap if x > GOAL]
            print(f"probes over the {GOAL:.0f} s goal: {len(slow)}")
            assert max(submissions + cheap) < BOUND

    run(scenario(), timeout=180)
