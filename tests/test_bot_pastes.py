"""Long programs a client cut into several IRC lines (issue 32.1), on a
real ngircd: joined again and said so, or refused with the reason when
the end is uncertain; never played cut without a word."""

from __future__ import annotations

import asyncio

from support import ircservers
from support.botharness import CHANNEL, bot_settings, player, run, running_bot
from support.ircclient import IrcTestClient

from bot.ircd import Ngircd
from bot.pastes import MAX_BATCH_BYTES, Multiline
from hill.writers.hill import Hill

ngircd = ircservers.ngircd  # the fixture

# a real program, 1,082 characters on one line (as the irssi paste)
LONG = ("(>)*8" + "(+)*3>(-)*3>" * 20 + "([-[+]]>)*21" + " " + "." * 700)[:1082]


def source_of(client: IrcTestClient) -> str:
    """nick!user@host as the server relays our lines (from its echo of our JOIN)."""
    return next(line.source for line in client.lines if line.command == "JOIN")


def split_like_irssi(client: IrcTestClient, target: str, text: str) -> list[str]:
    """`text` cut as irssi cuts a long line: each piece as long as the
    relayed line allows (512 bytes with the prefix and CR LF)."""
    room = 512 - len(f":{source_of(client)} PRIVMSG {target} :\r\n".encode())
    return [text[i : i + room] for i in range(0, len(text), room)]


def stored_code(hill: Hill, full_name: str) -> bytes:
    entry = next(e for e in hill.queries.standings().entries if e.program.full_name == full_name)
    return hill.queries.program_code(entry.program.id)


def test_a_long_line_cut_by_the_client_is_joined_and_said_so(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)
    hill = Hill(settings.hill)

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            nick = bot.client.nick
            ann = await player("ann", ngircd.port)
            pieces = split_like_irssi(ann, CHANNEL, f"!bfjoust long {LONG}")
            assert len(pieces) == 3
            for index, piece in enumerate(pieces):
                ann.say(CHANNEL, piece)
                if index == 1:
                    await asyncio.sleep(1.5)  # a client paces its lines (irssi: 2.2 s)
            assert await ann.reply(nick, "joined") == "joined 3 lines your client split"
            assert (await ann.reply(nick, "ann.long")).startswith("New program ann.long")
            code = await asyncio.to_thread(stored_code, hill, "ann.long")
            assert code == LONG.encode()  # whole, not its first 350 bytes

            # a program pasted on several lines: each comes as a message of its own
            bob = await player("bob", ngircd.port)
            for line in ("!bfjoust-test multi (>)*9(", "[-]>", ")*21"):
                bob.say(CHANNEL, line)
            assert await bob.reply(nick, "joined") == "joined 3 lines your client split"
            assert "test only" in await bob.reply(nick, "bob.multi")

            # the name alone on the first line, the code on the next
            cy = await player("cy", ngircd.port)
            cy.say(CHANNEL, "!bfjoust-test named")
            cy.say(CHANNEL, "(>)*9([-]>)*21")
            assert "test only" in await cy.reply(nick, "cy.named")

    run(scenario())


def test_a_line_at_the_limit_with_nothing_after_is_refused(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)
    hill = Hill(settings.hill)

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            nick = bot.client.nick
            dee = await player("dee", ngircd.port)
            first = split_like_irssi(dee, CHANNEL, f"!bfjoust cut {LONG}")[0]
            dee.say(CHANNEL, first)  # the rest never comes (a client that dropped it)
            refused = await dee.reply(nick, "limit")
            assert refused.startswith("your line reached IRC's limit (512 bytes) and nothing")
            assert "!bfjoust-upload cut" in refused
            await asyncio.sleep(0.5)
            standings = await asyncio.to_thread(hill.queries.standings)
            assert standings.size == 0  # nothing played cut

    run(scenario())


def multiline_batch(source: str, target: str, ref: str, pieces: list[tuple[str, bool]]) -> bytes:
    """The lines a server with IRCv3 `draft/multiline` relays for one
    multiline message (the spec's own example's form): each piece a line,
    tagged draft/multiline-concat when it continues the line before."""
    lines = [f"@msgid={ref}-id :{source} BATCH +{ref} draft/multiline {target}"]
    for text, concat in pieces:
        tags = f"batch={ref}" + (";draft/multiline-concat" if concat else "")
        lines.append(f"@{tags} :{source} PRIVMSG {target} :{text}")
    lines.append(f"BATCH -{ref}")
    return "".join(line + "\r\n" for line in lines).encode()


def test_a_multiline_batch_is_played_whole(ngircd: Ngircd, tmp_path) -> None:
    """No server packaged by Debian offers draft/multiline (ngircd,
    InspIRCd 3, ircd-hybrid, ircd-irc2, ircd-ircu): the lines such a server
    relays are fed to the bot's own connection, as if they came from ngircd,
    for a real player there, who gets the answers through the server."""
    settings = bot_settings(tmp_path, ngircd.port)
    hill = Hill(settings.hill)

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            # asked for where a server offers it
            assert "draft/multiline" in bot.client.link.registration.wanted
            nick = bot.client.nick
            ann = await player("ann", ngircd.port)
            feed = bot.client.connection.process_data
            # a program on three lines, its first line sent in two pieces (concat)
            pieces = [
                ("!bfjoust multi (>)*8(+)*3>", False),
                ("(-)*3>(", True),
                ("[-]>", False),
                (")*21", False),
            ]
            feed(multiline_batch(source_of(ann), CHANNEL, "m1", pieces))
            answer = await ann.reply(nick, "ann.multi")
            assert answer.startswith("New program ann.multi")
            code = await asyncio.to_thread(stored_code, hill, "ann.multi")
            assert code == b"(>)*8(+)*3>(-)*3>(\n[-]>\n)*21"

            # 1,082 characters in pieces of 300 joined without a break: whole,
            # not held as a line cut at the limit, nor refused
            line = f"!bfjoust long {LONG}"
            cut = [(line[i : i + 300], i > 0) for i in range(0, len(line), 300)]
            feed(multiline_batch(source_of(ann), CHANNEL, "m2", cut))
            answer = await ann.reply(nick, "ann.long")
            assert answer.startswith("New program ann.long"), answer
            code = await asyncio.to_thread(stored_code, hill, "ann.long")
            assert code == LONG.encode()
            said = [line.text for line in ann.lines if line.nick == nick]
            assert not any("joined" in t or "limit" in t for t in said), said

    run(scenario())


def test_multiline_batches_keep_their_lines_and_drop_what_is_too_long() -> None:
    """bot.pastes.Multiline alone: blank lines kept, concat pieces joined as
    they are, batches told apart by their reference, an oversized one dropped."""
    batches = Multiline()
    batches.open("a", "#c", "opening a")
    batches.open("b", "#c", "opening b")
    for text, concat in (("one", False), ("", False), ("two ", False), ("three", True)):
        batches.add("a", text, concat)
    batches.add("b", "x" * MAX_BATCH_BYTES, False)
    batches.add("b", "y", True)
    assert not batches.holds("c") and batches.holds("a")
    assert batches.close("a") == ("#c", "opening a", "one\n\ntwo three")
    assert batches.close("b") is None  # longer than any server allows: not played in part
    assert batches.close("a") is None and not batches.holds("a")
