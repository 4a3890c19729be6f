"""The bot on a network with services accounts (InspIRCd 3 linked to Anope
2.0): SASL, account-based ownership, and flood limits the server enforces;
on a network whose messages carry no account tag, no one passes for an
account's owner by taking a nick the bot cannot see."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator

import pytest
import trustme
from structlog.testing import capture_logs
from support.botharness import CHANNEL, RUSH, TRAIL, bot_settings, run, running_bot, wait_until
from support.ircclient import IrcTestClient
from support.ircservers import Inspircd, start_inspircd

from bot.client import IrcClient
from hill.writers.hill import Hill

pytestmark = pytest.mark.irc  # InspIRCd with Anope services, and bots on it

PASSWORD = "correct-horse"
CAPS = ("account-tag", "account-notify", "extended-join")
# the default outgoing rate, which the bot's port (strict) accepts with the
# WHOIS queries of a network without account tags
DEFAULT_RATE = {"messages_per_second": 1.0, "burst": 4}
LOG_IN = "log in to your services account (NickServ) to change the hill"


def _registered(server: Inspircd, accounts: tuple[str, ...]) -> Inspircd:
    async def register() -> None:
        for nick in accounts:
            client = await IrcTestClient(nick).connect(server.player_port)
            client.say("NickServ", f"REGISTER {PASSWORD} {nick}@example.org")
            notice = await client.expect(lambda m: m.nick == "NickServ")
            assert "registered" in notice.text, notice.text

    try:
        run(register())
    except BaseException:
        server.stop()
        raise
    return server


@pytest.fixture(scope="module")
def network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspircd]:
    server = start_inspircd(tmp_path_factory.mktemp("inspircd"), services=True)
    yield _registered(server, ("hillbot", "alice", "bob"))
    server.stop()


@pytest.fixture(scope="module")
def untagged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Inspircd]:
    """A network with accounts whose messages carry no account tag: the
    server offers account-notify and extended-join, not account-tag."""
    directory = tmp_path_factory.mktemp("inspircd-untagged")
    server = start_inspircd(directory, services=True, account_tag=False)
    yield _registered(server, ("alice", "bob", "mallory", "root"))
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

                from hill.store.tables import ProgramRow

                codes = {
                    p.status: p.code
                    for p in session.scalars(select(ProgramRow).where(ProgramRow.name == "rush"))
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

    with capture_logs() as logs:
        run(scenario(), timeout=90)
    # NickServ answered: no warning that no one can log in (tests/test_bot_hybrid.py)
    events = [e["event"] for e in logs]
    assert "services answer: players log in there" in events
    assert not [e for e in events if "no services answer" in e]


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
    bursts of 4) keeps it on while it answers every submission.  A "busy"
    refusal costs no submission: a newcomer is not told the hill is taking
    too many."""
    count = 14
    settings = bot_settings(
        tmp_path,
        network.port,
        messages_per_second=1.0,
        burst=4,
        queue_size=2,
        rate_limit_per_user=100,
        # the flooder's host may take half of it: its share, and the
        # newcomer's (same host), would be used up by the busy ones if they counted
        rate_limit_global=2 * count,
        command_burst=count,
    )

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
            newcomer = await IrcTestClient("newcomer").connect(network.player_port)
            newcomer.say(nick, f"!bfjoust-test mine {RUSH}")
            assert "test only, the hill is unchanged" in await newcomer.reply(nick)

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


def test_accounts_known_without_message_tags(untagged: Inspircd, tmp_path) -> None:
    """Where messages carry no account tag, the bot keeps track itself: WHOX
    for those in the channel before it, extended-join for those who join,
    account-notify for those who log in later, WHOIS for anyone else."""
    settings = bot_settings(tmp_path, untagged.port, **DEFAULT_RATE)
    port = untagged.player_port

    async def scenario() -> None:
        alice = await IrcTestClient("alice").connect(port, sasl=("alice", PASSWORD))
        await alice.join(CHANNEL)  # before the bot
        async with running_bot(settings) as hillbot:
            nick = hillbot.client.nick
            _check_untagged(hillbot.client)
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
            ally = await IrcTestClient("ally").connect(port, sasl=("alice", PASSWORD))
            ally.say(nick, "!bfjoust-withdraw rush")  # in no channel: confirmed by WHOIS
            assert await ally.reply(nick) == "alice.rush withdrawn; 2 programs left on the hill"

    run(scenario())


def _check_untagged(client: IrcClient) -> None:
    """The bot sees a network with accounts but no account tags."""
    assert client.has_accounts and "account-tag" not in client.link.registration.offered
    assert {"account-notify", "extended-join"} <= client.enabled


async def _out_of_sight(client: IrcClient, player: IrcTestClient, new_nick: str) -> None:
    """`player` is out of the bot's sight (no channel shared); then takes
    another nick, a change the bot cannot see."""
    await wait_until(lambda: not client.roster.shares(player.nick))
    await _rename(player, new_nick)


async def _rename(player: IrcTestClient, new_nick: str) -> None:
    player.send(f"NICK {new_nick}")
    await player.expect(lambda m: m.command == "NICK" and m.text == new_nick)
    player.nick = new_nick


def test_a_nick_taken_after_its_owner_left_has_none_of_her_rights(
    untagged: Inspircd, tmp_path
) -> None:
    """alice submits and leaves; whoever takes her nick may not overwrite or
    withdraw her program, in the channel or in private, nor use the admin's
    nick to remove or rescore, whether logged in (as someone else) or not."""
    settings = bot_settings(tmp_path, untagged.port, admins=("root",), **DEFAULT_RATE)
    port = untagged.player_port

    async def scenario() -> None:
        async with running_bot(settings) as hillbot:
            client, nick = hillbot.client, hillbot.client.nick
            _check_untagged(client)
            alice = await _player_with_a_program(client, port, "alice", CHANNEL)
            alice.send(f"PART {CHANNEL}")
            await _out_of_sight(client, alice, "alice_away")
            for account in (None, "mallory"):
                mallory = await _take_nick(port, "alice", account)
                for where in (nick, CHANNEL):
                    if where == CHANNEL:
                        await mallory.join(CHANNEL)
                    mallory.say(where, f"!bfjoust prog {TRAIL}")
                    answer = await mallory.reply(nick)
                    assert answer.startswith(
                        LOG_IN if account is None else "New program mallory.prog: "
                    )
                    mallory.say(where, "!bfjoust-withdraw prog")
                    answer = await mallory.reply(nick)
                    assert (
                        answer.startswith(LOG_IN)
                        if account is None
                        else (answer == "mallory.prog withdrawn; 1 programs left on the hill")
                    )
                await _leave(client, mallory)
            # alice herself, in no channel: her account is confirmed, her program hers
            alice.say(nick, f"!bfjoust prog {RUSH}")
            assert "alice.prog: points" in await alice.reply(nick)
            # the admin, seen in the channel, then gone; his nick is worth nothing
            root = await IrcTestClient("root").connect(port, sasl=("root", PASSWORD))
            await root.join(CHANNEL)
            root.say(CHANNEL, "!bfjoust-rescore")
            assert (await root.reply(nick)).startswith("rescored 1 programs")
            root.send(f"PART {CHANNEL}")
            await _out_of_sight(client, root, "root_away")
            for account in (None, "mallory"):
                mallory = await _take_nick(port, "root", account)
                for where in (nick, CHANNEL):
                    if where == CHANNEL:
                        await mallory.join(CHANNEL)
                    for command in ("-remove alice.prog", "-rescore"):
                        mallory.say(where, f"!bfjoust{command}")
                        word = command.split()[0]
                        assert (
                            await mallory.reply(nick) == f"!bfjoust{word} is for the hill's admins"
                        )
                await _leave(client, mallory)
            queries = hillbot.commands.hill.queries
            entries = (await asyncio.to_thread(queries.standings)).entries
            assert [e.program.full_name for e in entries] == ["alice.prog"]
            assert queries.program_code(entries[0].program.id) == RUSH.encode()
            assert [e.kind for e in queries.events()].count("rescore") == 1

    run(scenario(), timeout=120)


async def _player_with_a_program(
    client: IrcClient, port: int, account: str, channel: str
) -> IrcTestClient:
    """`account`, logged in under that nick, in `channel`, with `account.prog`."""
    player = await IrcTestClient(account).connect(port, sasl=(account, PASSWORD))
    await player.join(channel)
    player.say(channel, f"!bfjoust prog {RUSH}")
    assert (await player.reply(client.nick)).startswith(f"New program {account}.prog: points")
    return player


async def _take_nick(port: int, nick: str, account: str | None) -> IrcTestClient:
    """A connection with `nick`, logged in as `account` (None: not at all)."""
    sasl = (account, PASSWORD) if account else None
    return await IrcTestClient(nick).connect(port, sasl=sasl)


async def _leave(client: IrcClient, player: IrcTestClient) -> None:
    """`player` quits; the nick is free once the bot has seen it go."""
    await player.close()
    await wait_until(lambda: not client.roster.shares(player.nick))


def test_kicks_make_the_bot_forget_what_it_saw(untagged: Inspircd, tmp_path) -> None:
    """A player kicked from the last channel the bot shares with him, and
    everyone the bot saw only in a channel it is kicked from, are out of
    sight: whoever has those nicks next must prove their account."""
    side = "#side"
    settings = bot_settings(tmp_path, untagged.port, channels=(CHANNEL, side), **DEFAULT_RATE)
    port = untagged.player_port

    async def scenario() -> None:
        op = await IrcTestClient("op").connect(port)
        await op.join(side)  # the first one in: channel operator
        async with running_bot(settings) as hillbot:
            client, nick = hillbot.client, hillbot.client.nick
            _check_untagged(client)
            bob = await _player_with_a_program(client, port, "bob", side)
            op.send(f"KICK {side} bob :out")
            await _out_of_sight(client, bob, "bob_away")
            mallory = await _take_nick(port, "bob", None)
            mallory.say(nick, "!bfjoust-withdraw prog")
            assert (await mallory.reply(nick)).startswith(LOG_IN)
            # the bot itself kicked: what it learnt in that channel goes too
            await bob.join(side)
            await wait_until(lambda: client.roster.known("bob_away"))
            op.send(f"KICK {side} {nick} :out")
            await wait_until(lambda: not client.roster.shares("bob_away"))
            await _rename(bob, "bob_gone")
            squatter = await _take_nick(port, "bob_away", None)
            squatter.say(nick, "!bfjoust-withdraw prog")
            assert (await squatter.reply(nick)).startswith(LOG_IN)
            await wait_until(lambda: client.link.fold(side) in client.joined)  # back in
            squatter.say(nick, "!bfjoust-withdraw prog")
            assert (await squatter.reply(nick)).startswith(LOG_IN)
            bob.say(nick, "!bfjoust-withdraw prog")
            assert await bob.reply(nick) == "bob.prog withdrawn; 0 programs left on the hill"

    run(scenario(), timeout=120)


def test_a_flood_from_someone_out_of_sight_costs_one_whois(untagged: Inspircd, tmp_path) -> None:
    """A logged-in player in no channel writes 1000 submissions at once: the
    bot confirms the account once (WHOIS), takes 3, says "try again" once,
    stays connected on its strict port, and answers someone else at once."""
    settings = bot_settings(tmp_path, untagged.port, **DEFAULT_RATE)
    port = untagged.player_port

    async def scenario() -> None:
        async with running_bot(settings) as hillbot:
            client, nick = hillbot.client, hillbot.client.nick
            _check_untagged(client)
            flooder = await IrcTestClient("flooder").connect(port, sasl=("mallory", PASSWORD))
            prober = await IrcTestClient("prober").connect(port)
            flooder.send("\r\n".join(f"PRIVMSG {nick} :!bfjoust w{i} {RUSH}" for i in range(1000)))
            backlog, waits = client.outbox.backlog, []
            for _ in range(5):
                started, lines = asyncio.get_running_loop().time(), backlog.sent
                prober.say(nick, "!bfjoust-report")
                await prober.reply(nick)
                waits.append((asyncio.get_running_loop().time() - started, backlog.sent - lines))
                await asyncio.sleep(1)
            print("probes during the flood:", ", ".join(f"{s:.2f} s/{n} lines" for s, n in waits))
            # answers and refusals wait alike, in the flooder's own turn
            await flooder.reply(nick, "submissions recently", timeout=25)
            for _ in range(3):
                await flooder.reply(nick, "New program mallory.w", timeout=25)
            await asyncio.sleep(1)  # a second one would follow at once
            answers = [m.text for m in flooder.lines if m.nick == nick]
            assert sum(a.startswith("New program mallory.w") for a in answers) == 3, answers
            assert sum("submissions recently" in a for a in answers) == 1, answers
            assert client.connections == 1 and client.ready
            # within a few of the bot's own lines (a loaded machine stretches
            # the seconds, not the turns): the goal is 3 s at a line a second
            assert max(lines for _, lines in waits) <= 8

    run(scenario(), timeout=90)


def test_an_owner_is_told_under_whatever_nick_they_use(untagged: Inspircd, tmp_path) -> None:
    """Her program pushed off, alice is told in private where the bot sees
    her logged in: as "ally", in its channel (known by WHOX)."""
    settings = bot_settings(tmp_path, untagged.port, **DEFAULT_RATE)
    settings = dataclasses.replace(settings, hill=dataclasses.replace(settings.hill, size=2))
    hill = Hill(settings.hill, jobs=2)
    hill.challenge("alice", "idle", b"+>-<+>-<")
    hill.challenge("root", "rush", RUSH.encode())
    port = untagged.player_port

    async def scenario() -> None:
        ally = await IrcTestClient("ally").connect(port, sasl=("alice", PASSWORD))
        await ally.join(CHANNEL)  # before the bot: WHOX tells it her account
        async with running_bot(settings, hill) as hillbot:
            nick = hillbot.client.nick
            await wait_until(lambda: hillbot.client.online("alice") == "ally")
            bob = await IrcTestClient("bobby").connect(port, sasl=("bob", PASSWORD))
            bob.say(nick, f"!bfjoust trail {TRAIL}")
            assert "pushed off alice.idle" in await bob.reply(nick)
            notice = await ally.expect(
                lambda m: m.nick == nick and m.command == "NOTICE" and "alice.idle" in m.text
            )
            assert notice.params[0] == "ally"
            assert "was pushed off the hill by bob.trail" in notice.text

    run(scenario(), timeout=90)
