"""A crowd of 200 new clients of one host each asks the bot for help: a
player who is waiting already, on another host or on the crowd's own, is
still answered within a few of the bot's lines, on each of the servers
networks run (InspIRCd, ngircd, ircd-hybrid)."""

from __future__ import annotations

import pytest
from support.botharness import CHANNEL, RUSH, bot_settings, run, running_bot
from support.ircclient import IrcTestClient
from support.ircservers import Network
from support.pacing import (
    BOUND,
    TURN,
    crowd_asks_help,
    figures,
    lines_from,
    median_lines,
    most_lines,
    probe,
)

from bot.backlog import MAX_PER_HOST
from hill.writers.hill import Hill

pytestmark = [pytest.mark.irc, pytest.mark.slow]  # three servers, a crowd of minutes

BURST = 200  # clients, each asking once


@pytest.mark.parametrize(
    "same_host",
    [False, True],
    ids=["other-host", "same-host"],
)
def test_a_burst_of_new_clients_delays_no_one(every_network: Network, tmp_path, same_host) -> None:
    """200 clients of one host connect and each asks `!bfjoust-help` once
    (three lines of answer each: 600 lines, ten minutes at a line a second);
    a player who is waiting already, on another host or on the same one, is
    answered within seconds all the same: hosts take turns, short answers go
    first every other turn (a first line before the rest of answers begun),
    and one host's lines are capped.  (Before: the
    200 never served went first, and the player's second `-rank` had no
    answer within 60 s.)"""
    server = every_network
    settings = bot_settings(tmp_path, server.port, messages_per_second=1.0, burst=4)
    hill = Hill(settings.hill)
    hill.challenge("ann", "rush", RUSH.encode())
    burst_host = "127.0.0.2"

    async def scenario() -> None:
        async with running_bot(settings, hill) as hillbot:
            nick = hillbot.client.nick
            port = server.player_port
            prober = await IrcTestClient("prober").connect(
                port, host=burst_host if same_host else "127.0.0.3"
            )
            await prober.join(CHANNEL)
            crowd = await crowd_asks_help(port, burst_host, BURST, nick)
            waits = await probe(prober, hillbot, [CHANNEL, nick], probes=8)
            where = "the same host" if same_host else "another host"
            helped = lines_from(nick, crowd)
            print(
                every_network.name,
                figures(f"{BURST} new clients ask for help; a player on {where}", waits)
                + f"; the crowd got {helped} lines meanwhile, {len(hillbot.client.outbox)} wait",
            )
            # on the crowd's own host a line more: the round-robin turn may be a
            # crowd member's (the short-answer turn is his: he asked last)
            assert most_lines(waits) <= BOUND + same_host and median_lines(waits) <= TURN
            assert helped > 0 and len(hillbot.client.outbox) <= MAX_PER_HOST  # served, and capped
            assert hillbot.client.connections == 1

    run(scenario(), timeout=180)
