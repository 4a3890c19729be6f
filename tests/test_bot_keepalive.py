"""The connection's watch, on a real ngircd, its moments made short: a
quiet server is pinged and kept, a frozen one (SIGSTOP) is dropped and the
bot comes back once it thaws; a nick taken at the start is taken back once
it is free."""

from __future__ import annotations

import os
import signal

import pytest
from structlog.testing import capture_logs
from support.botharness import CHANNEL, bot_settings, run, running_bot, wait_until
from support.ircclient import IrcTestClient

import bot.connection
from bot.ircd import free_port, start_ngircd

pytestmark = pytest.mark.irc


def test_a_quiet_server_is_pinged_and_a_frozen_one_dropped(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bot.connection, "IDLE_PING", 1.0)
    monkeypatch.setattr(bot.connection, "IDLE_DEAD", 4.0)
    server = start_ngircd(tmp_path / "ngircd", free_port(), [CHANNEL])
    settings = bot_settings(tmp_path / "hill", server.port)

    async def scenario() -> None:
        async with running_bot(settings) as hillbot:
            link = hillbot.client.link
            # nobody speaks for three times IDLE_DEAD: the pings keep it up
            seen = link.last_seen
            await wait_until(lambda: link.last_seen > seen + 1.0, timeout=10)  # a PONG
            deadline = link.last_seen + 3 * bot.connection.IDLE_DEAD
            await wait_until(lambda: link.last_seen >= deadline, timeout=30)
            assert hillbot.client.connections == 1
            # frozen: no PONG comes, the bot drops it and comes back once it thaws
            os.kill(server.process.pid, signal.SIGSTOP)
            try:
                await wait_until(lambda: not link.is_connected(), timeout=15)
            finally:
                os.kill(server.process.pid, signal.SIGCONT)
            await wait_until(lambda: hillbot.client.connections == 2 and hillbot.client.ready, 30)

    try:
        with capture_logs() as logs:
            run(scenario(), timeout=90)
    finally:
        server.stop()
    assert [e for e in logs if e["event"] == "server silent, dropping the connection"]


def test_a_nick_taken_at_the_start_is_taken_back_once_free(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(bot.connection, "NICK_RETRY", 0.5)
    server = start_ngircd(tmp_path / "ngircd", free_port(), [CHANNEL])
    settings = bot_settings(tmp_path / "hill", server.port)
    nick = settings.irc.nick

    async def scenario() -> None:
        squatter = await IrcTestClient(nick).connect(server.port)
        async with running_bot(settings) as hillbot:
            assert hillbot.client.nick == nick + "_"
            await squatter.close()
            await wait_until(lambda: hillbot.client.nick == nick, timeout=10)

    try:
        run(scenario(), timeout=60)
    finally:
        server.stop()
