"""The bot on a network with services accounts (InspIRCd 3 linked to Anope
2.0): SASL, account-based ownership, and flood limits the server enforces."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
import trustme
from botharness import CHANNEL, RUSH, TRAIL, bot_settings, run, running_bot
from ircclient import IrcTestClient
from ircservers import Inspircd, start_inspircd

import bot.client

PASSWORD = "correct-horse"
CAPS = ("account-tag", "account-notify", "extended-join")


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspircd]:
    server = start_inspircd(tmp_path_factory.mktemp("inspircd"), services=True)

    async def register() -> None:
        for nick in ("hillbot", "alice", "bob"):
            client = await IrcTestClient(nick).connect(server.player_port)
            client.say("NickServ", f"REGISTER {PASSWORD} {nick}@example.org")
            notice = await client.expect(lambda m: m.nick == "NickServ")
            assert "registered" in notice.text, notice.text

    run(register())
    yield server
    server.stop()


def test_programs_belong_to_accounts(network: Inspircd, tmp_path) -> None:
    settings = bot_settings(
        tmp_path,
        network.port,
        nick="hillbot",
        sasl_username="hillbot",
        sasl_password=PASSWORD,
        admins=("alice",),
    )

    async def scenario() -> None:
        async with running_bot(settings) as hillbot:
            client = hillbot.client
            assert client.account == "hillbot" and client.has_accounts
            assert {"account-tag", "account-notify", "extended-join"} <= client.enabled
            port = network.player_port
            # alice, logged in by SASL under another nick: the program is her account's
            ally = await IrcTestClient("ally").connect(port, caps=CAPS, sasl=("alice", PASSWORD))
            ally.say("hillbot", f"!bfjoust rush {RUSH}")
            assert (await ally.reply("hillbot")).startswith("New program alice.rush: points 0.00")
            await ally.close()
            # someone not logged in, with her nick, can only test
            fake = await IrcTestClient("alice").connect(port)
            await fake.join(CHANNEL)
            fake.say(CHANNEL, f"!bfjoust rush {TRAIL}")
            refusal = "log in to your services account (NickServ) to change the hill"
            assert (await fake.reply("hillbot")).startswith(refusal)
            fake.say(CHANNEL, "!bfjoust-withdraw rush")
            assert (await fake.reply("hillbot")).startswith(refusal)
            fake.say(CHANNEL, "!bfjoust-remove alice.rush")  # an admin's nick is not enough
            assert await fake.reply("hillbot") == "!bfjoust-remove is for the hill's admins"
            fake.say(CHANNEL, f"!bfjoust-test rush {TRAIL}")
            assert "test only, the hill is unchanged" in await fake.reply("hillbot")
            standings = await asyncio.to_thread(hillbot.commands.hill.queries.standings)
            assert [e.program.full_name for e in standings.entries] == ["alice.rush"]
            with hillbot.commands.hill.db.session() as session:
                from sqlalchemy import select

                from hill.storage import Program

                codes = {
                    p.status: p.code
                    for p in session.scalars(select(Program).where(Program.name == "rush"))
                }
                assert codes["hill"] == RUSH.encode()
            # bob identifies after connecting; account-notify and tags follow
            bob = await IrcTestClient("bob").connect(port)
            bob.say("NickServ", f"IDENTIFY {PASSWORD}")
            await bob.expect(lambda m: m.nick == "NickServ" and "recognized" in m.text)
            bob.say("hillbot", "!bfjoust-withdraw rush")
            assert await bob.reply("hillbot") == "there is no bob.rush on the hill"
            # the real alice, identified, may withdraw and remove
            alice = await IrcTestClient("alice2").connect(port, sasl=("alice", PASSWORD))
            alice.say("hillbot", "!bfjoust-withdraw rush")
            assert await alice.reply("hillbot") == (
                "alice.rush withdrawn; 0 programs left on the hill"
            )

    run(scenario(), timeout=90)


def test_owners_that_are_not_valid_are_refused_clearly(network: Inspircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, network.port)

    async def scenario() -> None:
        async with running_bot(settings) as hillbot:
            nick = hillbot.client.nick
            evil = await IrcTestClient("ev\\il").connect(network.player_port)  # `\`: IRC, not owner
            evil.say(nick, f"!bfjoust-test x {RUSH}")
            assert (await evil.reply(nick)).startswith("bad owner 'ev\\\\il'")
            evil.say(nick, f"!bfjoust x {RUSH}")
            assert (await evil.reply(nick)).startswith("log in to your services account")

    run(scenario())


def test_a_flood_of_submissions_is_answered_busy_and_the_bot_stays(
    network: Inspircd, tmp_path
) -> None:
    """The bot's port disconnects a client for "Excess Flood" past a few
    lines at once; the bot's own throttle (the defaults: 1 line a second,
    bursts of 4) keeps it on while it answers every submission."""
    settings = bot_settings(
        tmp_path,
        network.port,
        messages_per_second=1.0,
        burst=4,
        queue_size=2,
        rate_limit_per_user=100,
        rate_limit_global=100,
    )
    count = 14

    async def scenario() -> None:
        async with running_bot(settings) as hillbot:
            nick = hillbot.client.nick
            flooder = await IrcTestClient("flooder").connect(network.player_port)
            flooder.send(
                "\r\n".join(f"PRIVMSG {nick} :!bfjoust-test w{i} {RUSH}" for i in range(count))
            )
            answers = [await flooder.reply(nick, timeout=40) for _ in range(count)]
            busy = [a for a in answers if a.startswith("busy: the queue is full")]
            done = [a for a in answers if "test only, the hill is unchanged" in a]
            assert busy and done and len(busy) + len(done) == count
            assert hillbot.client.connections == 1 and hillbot.client.ready

    run(scenario(), timeout=90)


def test_tls(tmp_path) -> None:
    """The bot connects with TLS; with verification on, a certificate no
    authority signed is refused (and the bot keeps trying, never crashes)."""
    ca = trustme.CA()
    certificate = ca.issue_cert("127.0.0.1", "localhost")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    certificate.private_key_pem.write_to_path(str(key))
    certificate.cert_chain_pems[0].write_to_path(str(cert))
    server = start_inspircd(tmp_path / "ircd", services=False, tls=(cert, key))
    port = server.tls_port

    async def scenario() -> None:
        lax = bot_settings(tmp_path / "lax", port, tls=True, tls_verify=False)
        async with running_bot(lax) as hillbot:
            player = await IrcTestClient("player").connect(server.player_port)
            player.say(hillbot.client.nick, f"!bfjoust-test x {RUSH}")
            assert "test only" in await player.reply(hillbot.client.nick)
        strict = bot_settings(tmp_path / "strict", port, tls=True, tls_verify=True)
        with pytest.raises(TimeoutError):
            async with running_bot(strict, ready_timeout=3):
                pass

    try:
        run(scenario())
    finally:
        server.stop()


def test_accounts_known_without_message_tags(network: Inspircd, tmp_path, monkeypatch) -> None:
    """Where messages carry no account tag, the bot keeps track itself: WHOX
    for those in the channel before it, extended-join for those who join,
    account-notify for those who log in later."""
    monkeypatch.setattr(bot.client, "WANTED_CAPS", ("account-notify", "extended-join"))
    settings = bot_settings(tmp_path, network.port)
    port = network.player_port

    async def scenario() -> None:
        alice = await IrcTestClient("alice").connect(port, sasl=("alice", PASSWORD))
        await alice.join(CHANNEL)  # before the bot
        async with running_bot(settings) as hillbot:
            nick = hillbot.client.nick
            assert hillbot.client.has_accounts and "account-tag" not in hillbot.client.enabled
            alice.say(CHANNEL, f"!bfjoust rush {RUSH}")
            assert (await alice.reply(nick)).startswith("New program alice.rush: points")
            carol = await IrcTestClient("carol").connect(port)
            await carol.join(CHANNEL)
            carol.say(CHANNEL, f"!bfjoust rush {TRAIL}")
            assert (await carol.reply(nick)).startswith("log in to your services account")
            bob = await IrcTestClient("bob").connect(port)
            await bob.join(CHANNEL)
            bob.say("NickServ", f"IDENTIFY {PASSWORD}")
            await bob.expect(lambda m: m.nick == "NickServ" and "recognized" in m.text)
            bob.say(nick, f"!bfjoust trail {TRAIL}")
            assert (await bob.reply(nick)).startswith("New program bob.trail: points")
            dave = await IrcTestClient("dave").connect(port, sasl=("bob", PASSWORD))
            await dave.join(CHANNEL)  # logged in as he joins: extended-join says so
            dave.say(nick, f"!bfjoust rush {RUSH}")
            assert (await dave.reply(nick)).startswith("New program bob.rush: points")
            names = {e.program.full_name for e in hillbot.commands.hill.queries.standings().entries}
            assert names == {"alice.rush", "bob.trail", "bob.rush"}

    run(scenario())
