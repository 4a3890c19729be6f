"""ircd-hybrid without services offers the IRCv3 account capabilities, but
no one can log in: the bot says so at start, and with `[irc] accounts =
"none"` players own their programs by nick there, as on any network
without accounts."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs
from support.botharness import CHANNEL, RUSH, bot_settings, player, run, running_bot
from support.ircservers import start_network

pytestmark = pytest.mark.irc


def test_a_server_offering_accounts_without_services(tmp_path) -> None:
    hybrid = start_network("hybrid", tmp_path / "hybrid")
    try:

        async def scenario(accounts: str) -> tuple[str, list[str]]:
            settings = bot_settings(tmp_path / accounts, hybrid.port, accounts=accounts)
            with capture_logs() as logs:
                async with running_bot(settings) as bot:
                    nick = bot.client.nick
                    alice = await player(f"alice{accounts}", hybrid.port)
                    alice.say(CHANNEL, f"!bfjoust rush {RUSH}")
                    answer = await alice.reply(nick, timeout=60)
                    await alice.close()
            return answer, [entry["event"] for entry in logs if entry["log_level"] == "warning"]

        answer, warnings = run(scenario("auto"), timeout=120)
        assert answer.startswith("log in to your services account (NickServ)"), answer
        assert any("no services answer" in w and 'accounts = "none"' in w for w in warnings)
        answer, warnings = run(scenario("none"), timeout=120)
        assert answer.startswith("New program alicenone.rush: "), answer
        assert not any("no services answer" in w for w in warnings)
    finally:
        hybrid.stop()
