"""The IRC bot against a real ngircd, driven by a real IRC client."""

from __future__ import annotations

import asyncio
import re

from support import ircservers
from support.botharness import (
    ADMIN_SECRET,
    CHANNEL,
    NEWS,
    RUSH,
    TRAIL,
    bot_settings,
    run,
    running_bot,
    sign_in,
    wait_until,
)
from support.ircclient import IrcTestClient

from bot.ircd import Ngircd
from hill.rules.programs import NO_INSTRUCTION, REPEATS_NOTHING
from hill.rules.statistics import hill_statistics
from hill.writers.hill import Hill

ngircd = ircservers.ngircd  # the fixture

# a test's answer: where it would rank, its worst opponents (as -rank names
# them) and the link to its full result
TESTED = re.compile(
    r"; test only, the hill is unchanged; (worst against: .+ \(-\d+\)|loses to no one)"
    r"\. Full result: https://hill\.example\.org/test/[A-Za-z0-9_-]{22}$"
)


async def player(
    nick: str, port: int, *channels: str, user: str = "", host: str = "127.0.0.1"
) -> IrcTestClient:
    client = await IrcTestClient(nick).connect(port, user=user, host=host)
    for channel in channels:
        await client.join(channel)
    return client


def test_challenge_in_a_channel_is_answered_there_and_announced(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port, summary_channel=NEWS)

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            alice = await player("alice", ngircd.port, CHANNEL)
            watcher = await player("watcher", ngircd.port, NEWS)
            alice.say(CHANNEL, f"!bfjoust rush {RUSH}")
            reply = await alice.expect(
                lambda m: m.nick == bot.client.nick and m.params[0] == CHANNEL
            )
            # new or an update, and the program's page in the web report
            assert reply.text.startswith("alice: New program alice.rush: points 0.00")
            assert "rank 1/1" in reply.text
            assert reply.text.endswith(". https://hill.example.org/program/alice.rush")
            news = await watcher.expect(lambda m: m.params[0] == NEWS)
            assert news.text == reply.text  # "alice: <summary>"
            standings = await asyncio.to_thread(bot.commands.hill.queries.standings)
            assert [e.program.full_name for e in standings.entries] == ["alice.rush"]

    run(scenario())


def test_challenge_and_test_in_private_are_answered_by_notice(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            bob = await player("bob", ngircd.port)
            bob.say(bot.client.nick, f"!bfjoust trail {TRAIL}")
            line = await bob.expect(lambda m: m.nick == bot.client.nick)
            assert line.command == "NOTICE" and line.params[0] == "bob"
            assert line.text.startswith("New program bob.trail: ") and "rank 1/1" in line.text
            bob.say(bot.client.nick, f"!bfjoust-test rush {RUSH}")
            text = await bob.reply(bot.client.nick)
            assert text.startswith("bob.rush: ") and "rank" in text
            # where it would rank, its worst opponents and its page
            assert TESTED.search(text), text
            standings = await asyncio.to_thread(bot.commands.hill.queries.standings)
            assert [e.program.full_name for e in standings.entries] == ["bob.trail"]

    run(scenario())


def test_withdraw_takes_only_the_senders_own_program(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            nick = bot.client.nick
            alice = await player("alice", ngircd.port)
            mallory = await player("mallory", ngircd.port)
            alice.say(nick, f"!bfjoust rush {RUSH}")
            assert "rank 1/1" in await alice.reply(nick)
            mallory.say(nick, "!bfjoust-withdraw rush")
            assert await mallory.reply(nick) == "there is no mallory.rush on the hill"
            mallory.say(nick, "!bfjoust-withdraw alice.rush")
            assert await mallory.reply(nick) == (
                "alice.rush is not yours: you may withdraw only your own programs"
            )
            assert (await asyncio.to_thread(bot.commands.hill.queries.standings)).size == 1
            alice.say(nick, "!bfjoust-withdraw rush")
            assert await alice.reply(nick) == "alice.rush withdrawn; 0 programs left on the hill"
            assert (await asyncio.to_thread(bot.commands.hill.queries.standings)).size == 0

    run(scenario())


def seed(hill: Hill, programs: dict[str, str]) -> None:
    for full_name, code in programs.items():
        owner, name = full_name.split(".")
        hill.challenge(owner, name, code.encode())


def test_rank_report_and_help(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port)
    hill = Hill(settings.hill)
    seed(hill, {"ann.rush": RUSH, "ben.trail": TRAIL, "cy.idle": "+>-<" * 3, "cy.rush": RUSH})
    standings = hill.queries.standings()

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            nick = bot.client.nick
            dan = await player("dan", ngircd.port, CHANNEL)
            dan.say(CHANNEL, "!bfjoust-rank cy.idle")
            text = await dan.reply(nick)
            index = next(i for i, e in enumerate(standings.entries) if e.program.name == "idle")
            entry = standings.entries[index]
            stats = hill_statistics(standings.outcomes, "markov")
            interval = f"{stats.rank_low[index]}-{stats.rank_high[index]}"
            assert stats.rank_low[index] <= entry.rank <= stats.rank_high[index]
            assert text.startswith(
                f"cy.idle: rank {entry.rank}/4 (95% interval {interval}), "
                f"score {entry.scores['markov']:.2f}, "
                f"points {entry.points:.2f}; worst against: "
            )
            margins = sorted(standings.margin(index, j) for j in range(4) if j != index)
            assert [int(m) for m in _numbers_in_parentheses(text)] == [m for m in margins if m < 0]
            dan.say(CHANNEL, "!bfjoust-rank rush")
            assert await dan.reply(nick) == "which one? " + ", ".join(
                e.program.full_name for e in standings.entries if e.program.name == "rush"
            )
            dan.say(CHANNEL, "!bfjoust-rank nothing")
            assert await dan.reply(nick) == "there is no nothing on the hill"
            dan.say(CHANNEL, "!bfjoust-report")
            top = standings.entries[0]
            text = await dan.reply(nick)
            assert text.startswith(
                f"Top of the hill (4 programs, markov): 1. {top.program.full_name} "
                f"{top.scores['markov']:.1f}, 2. "
            )
            assert text.endswith("Full report: https://hill.example.org/")
            answers: list[int] = []  # lines in each answer queued for dan
            add = bot.client.outbox.backlog.add

            def counted(kind, recipient, lines, *args, **kwargs):  # type: ignore[no-untyped-def]
                if recipient == "dan":
                    answers.append(len(lines))
                return add(kind, recipient, lines, *args, **kwargs)

            bot.client.outbox.backlog.add = counted  # type: ignore[method-assign]
            dan.say(nick, "!bfjoust-help")
            first = await dan.reply(nick, "Commands:")
            assert "!bfjoust NAME CODE|URL" in first and "!bfjoust-withdraw NAME" in first
            assert "-remove" not in first  # admin commands are not advertised
            assert (
                "!bfjoust-upload NAME [test|contest]" in first
            )  # for programs too long for a line
            assert await dan.reply(nick, "Careful") == (
                "Careful: text in a program is code if it holds any of +-<>.,[]()*{}% "
                "(or digits after * or %), so keep those out of comments."
            )
            assert (await dan.reply(nick, "Top of the hill")) == text
            # one answer of three lines: it waits and gives way as a whole, so
            # a one-line answer beside it is never the longest (issue 33.3)
            assert answers == [3]

    run(scenario())


def _numbers_in_parentheses(text: str) -> list[str]:
    import re

    return re.findall(r"\(([+-]\d+)\)", text)


def test_admin_commands_are_for_admins_only(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port, admins=("Carol",))
    hill = Hill(settings.hill)
    seed(hill, {"ann.rush": RUSH, "ben.trail": TRAIL})

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            nick = bot.client.nick
            bob = await player("bob", ngircd.port, CHANNEL)
            carol = await player("carol", ngircd.port, CHANNEL)
            bob.say(CHANNEL, "!bfjoust-remove ann.rush")
            assert await bob.reply(nick) == "!bfjoust-remove is for the hill's admins"
            bob.say(CHANNEL, "!bfjoust-rescore")
            assert await bob.reply(nick) == "!bfjoust-rescore is for the hill's admins"
            assert (await asyncio.to_thread(hill.queries.standings)).size == 2
            carol.say(CHANNEL, "!bfjoust-remove ann.rush")  # a nick alone is anyone's
            assert await carol.reply(nick) == "!bfjoust-remove is for the hill's admins"
            await sign_in(carol, nick)
            carol.say(CHANNEL, "!bfjoust-remove ann.rush")
            assert await carol.reply(nick) == "ann.rush removed; 1 programs left on the hill"
            carol.say(nick, "!bfjoust-rescore")
            assert await carol.reply(nick) == "rescored 1 programs by markov"
            standings = await asyncio.to_thread(hill.queries.standings)
            assert [e.program.full_name for e in standings.entries] == ["ben.trail"]

    run(scenario())


def test_submissions_are_rate_limited_per_user_per_host_and_in_all(
    ngircd: Ngircd, tmp_path
) -> None:
    settings = bot_settings(
        tmp_path, ngircd.port, rate_limit_per_user=2, rate_limit_global=4, rate_window_seconds=60
    )

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            nick = bot.client.nick
            ann = await player("ann", ngircd.port, host="127.0.0.2")
            for name in ("a", "b"):
                ann.say(nick, f"!bfjoust-test {name} {RUSH}")
                assert "test only" in await ann.reply(nick)
            ann.say(nick, f"!bfjoust c {RUSH}")
            refused = await ann.reply(nick)
            assert refused.startswith("you have made 2 submissions recently; try again in")
            assert refused.endswith("I ignore your submissions without a word, so that a flood "
                                    "costs the channel nothing)")  # fmt: skip
            # another connection of ann's host, another ident: the host's share is used
            ann2 = await player("ann2", ngircd.port, user="other", host="127.0.0.2")
            ann2.say(nick, f"!bfjoust-test c {RUSH}")
            said = await ann2.reply(nick)
            assert said.startswith("your host has had its share of the hill's submissions")
            ben, cy, dee = [
                await player(n, ngircd.port, host=f"127.0.0.{i}")
                for i, n in enumerate(("ben", "cy", "dee"), 3)
            ]
            for other in (ben, cy):  # each host a share: the 4 in all are used
                other.say(nick, f"!bfjoust-test d {RUSH}")
                assert "test only" in await other.reply(nick)
            dee.say(nick, f"!bfjoust-test e {RUSH}")
            assert (await dee.reply(nick)).startswith("the hill is taking too many submissions")
            dee.say(nick, "!bfjoust-report")  # reading is not limited
            assert (await dee.reply(nick)).startswith("The hill is empty.")

    run(scenario())


def test_refused_programs_do_not_count_against_the_rate_limit(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port, rate_limit_per_user=2)

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            nick = bot.client.nick
            dan = await player("dan", ngircd.port)
            for _ in range(3):  # typos: answered, but no joust and no submission spent
                dan.say(nick, "!bfjoust-test typo (>)*9[-")
                assert "unmatched '['" in await dan.reply(nick)
            for name in ("a", "b"):
                dan.say(nick, f"!bfjoust-test {name} {RUSH}")
                assert "test only" in await dan.reply(nick)
            dan.say(nick, f"!bfjoust-test c {RUSH}")
            assert (await dan.reply(nick)).startswith("you have made 2 submissions recently")

    run(scenario())


def test_nicks_have_no_case(ngircd: Ngircd, tmp_path) -> None:
    """carol, back as CAROL, still owns carol.prog, and one person has one
    spelling: CAROL's x is carol.x (IRC folds the case of nicks)."""
    settings = bot_settings(tmp_path, ngircd.port)

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            nick = bot.client.nick
            carol = await player("carol", ngircd.port, CHANNEL)
            carol.say(nick, f"!bfjoust prog {RUSH}")
            assert (await carol.reply(nick)).startswith("New program carol.prog: points")
            carol.say(nick, f"!bfjoust x {RUSH}")
            assert (await carol.reply(nick)).startswith("New program carol.x: points")
            await carol.close()
            await wait_until(lambda: not bot.client.roster.shares("carol"))  # the nick is free
            upper = await player("CAROL", ngircd.port)
            upper.say(nick, f"!bfjoust x {TRAIL}")
            text = await upper.reply(nick)
            assert text.startswith("Updated carol.x: points") and "battles changed" in text
            upper.say(nick, "!bfjoust-withdraw prog")
            assert await upper.reply(nick) == "carol.prog withdrawn; 1 programs left on the hill"
            standings = await asyncio.to_thread(bot.commands.hill.queries.standings)
            assert [e.program.full_name for e in standings.entries] == ["carol.x"]

    run(scenario())


def test_a_nick_change_keeps_the_rate_limit(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port, rate_limit_per_user=2)

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            nick = bot.client.nick
            mallory = await player("mallory", ngircd.port)
            for name in ("a", "b"):
                mallory.say(nick, f"!bfjoust-test {name} {RUSH}")
                assert "test only" in await mallory.reply(nick)
            mallory.send("NICK mallory2")
            await mallory.expect(lambda m: m.command == "NICK")
            mallory.nick = "mallory2"
            mallory.say(nick, f"!bfjoust-test c {RUSH}")
            assert (await mallory.reply(nick)).startswith("you have made 2 submissions recently")
            mallory.say(nick, f"!bfjoust-test d {RUSH}")  # told once: now quiet
            mallory.say(nick, "!bfjoust-report")
            assert (await mallory.reply(nick)).startswith("The hill is empty.")

    run(scenario())


USAGE = "usage: !bfjoust NAME CODE|URL (a name and the program, or a URL of it)"
UPLOAD_USAGE = (
    "usage: !bfjoust-upload NAME [test|contest] (a name for your program, `test` to only "
    "test it; a contest's, and `contest`)"
)


LONELY = (
    "no program after the name lonely: a program goes on the same line, or, if it is too "
    "long for one line (a client cuts a pasted one into several), send it with "
    "!bfjoust-upload lonely (a link to a form) or give its URL"
)

BAD_COMMANDS = [
    ("!bfjoust", USAGE),
    ("!bfjoust a.b", USAGE),
    ("!bfjoust lonely", LONELY),  # what a client sends first of a program pasted on lines
    ("!bfjoust-test lonely", LONELY.replace("lonely (a link", "lonely test (a link")),
    ("!bfjoust help", "no program after the name help; did you mean !bfjoust-help?"),
    # typos: a program with no instruction is refused, with the command meant
    ("!bfjoust rank allegro", f"{NO_INSTRUCTION}; did you mean !bfjoust-rank allegro?"),
    ("!bfjoust-test words (only words)*3", NO_INSTRUCTION),
    # a repeat with no count repeats nothing: said so (it was a bare "no instruction")
    ("!bfjoust-test plus (+)", NO_INSTRUCTION + REPEATS_NOTHING),
    ("!bfjoust-rnak allegro", "unknown command !bfjoust-rnak; did you mean !bfjoust-rank allegro?"),
    # the prefix itself mistyped (it was ignored)
    ("!bfjoustt rush (>)*9", "unknown command !bfjoustt; did you mean !bfjoust rush (>)*9?"),
    ("!bfjust-rank allegro", "unknown command !bfjust-rank; did you mean !bfjoust-rank allegro?"),
    ("!bfjoust-rank gh\u200bost\ufeff", "there is no ghost on the hill"),  # nothing invisible
    ("hello bot, how do I play?", "BF Joust hill. Commands: !bfjoust NAME CODE|URL, "),
    ("!bfjoust-withdraw", "usage: !bfjoust-withdraw NAME (the name of your program)"),
    ("!bfjoust-rank", "usage: !bfjoust-rank NAME|OWNER.NAME (a program's name)"),
    ("!bfjoust bad (>)*9([-]>)*21]", "parse error at line 1, column 15: unmatched ']'"),
    ("!bfjoust ../../etc/passwd +", "bad program name '../../etc/passwd'"),
    ("!bfjoust a.b +", "bad program name 'a.b'"),
    ("!bfjoust " + "x" * 49 + " +", "bad program name 'xxxx"),
    ("!bfjoust n\u00e4me +", "bad program name 'n\u00e4me'"),
    ("!bfjoust-remove x", "!bfjoust-remove is for the hill's admins"),
    ("!bfjoust-foo", "unknown command !bfjoust-foo; !bfjoust-help lists them"),
    ("!BFJOUST-Sub\x02mit\u202e x", "unknown command !bfjoust-Submit; !bfjoust-help lists them"),
    ("!bfjoust-upload", UPLOAD_USAGE),
    ("!bfjoust-upload a b", UPLOAD_USAGE),
    ("!bfjoust-upload a.b", "bad program name 'a.b'"),
]


def test_bad_commands_get_a_helpful_answer(ngircd: Ngircd, tmp_path) -> None:
    settings = bot_settings(tmp_path, ngircd.port, rate_limit_per_user=100, command_burst=100)

    async def scenario() -> None:
        async with running_bot(settings) as bot:
            eve = await player("eve", ngircd.port)
            for command, answer in BAD_COMMANDS:
                eve.say(bot.client.nick, command)
                assert (await eve.reply(bot.client.nick)).startswith(answer), command
            # words that only look like commands get how to use the bot
            eve.say(bot.client.nick, "!bfjoustfoo bar")
            eve.say(bot.client.nick, "!bfjoust- x")
            eve.say(bot.client.nick, "!bfjoust-rank")
            assert (await eve.reply(bot.client.nick)).startswith("BF Joust hill. Commands:")
            assert (await eve.reply(bot.client.nick)).startswith("unknown command !bfjoust-;")
            assert (await eve.reply(bot.client.nick)).startswith("usage: !bfjoust-rank")
            assert (await asyncio.to_thread(bot.commands.hill.queries.standings)).size == 0

    run(scenario())


def test_a_nick_taken_from_the_admin_gets_no_admin_rights(ngircd: Ngircd, tmp_path) -> None:
    """On a network without accounts (issue 33.2): ROOT_ADMIN, Root_Admin,
    and whoever takes the admin's nick the moment they change it had the
    admin's rights.  Now the admin proves the operator's secret in private,
    for that nick on that connection only."""
    settings = bot_settings(tmp_path, ngircd.port, admins=("root_admin",))
    hill = Hill(settings.hill)
    seed(hill, {"ann.rush": RUSH, "ben.trail": TRAIL})
    refused = "!bfjoust-remove is for the hill's admins"

    async def scenario() -> None:
        async with running_bot(settings, hill) as bot:
            nick = bot.client.nick
            for squatter in ("ROOT_ADMIN", "Root_Admin"):  # the admin away: their nick free
                mallory = await player(squatter, ngircd.port, CHANNEL)
                mallory.say(CHANNEL, "!bfjoust-remove ann.rush")
                assert await mallory.reply(nick) == refused
                mallory.say(nick, "!bfjoust-admin guess")
                assert await mallory.reply(nick) == "that is not the admin secret"
                await mallory.close()
            root = await player("root_admin", ngircd.port, CHANNEL)
            root.say(CHANNEL, f"!bfjoust-admin {ADMIN_SECRET}")  # said where all can read it
            assert "never say the admin secret in a channel" in await root.reply(nick)
            await sign_in(root, nick)
            root.send("NICK root_away")  # the admin changes nick: the login goes
            await root.expect(lambda m: m.command == "NICK")
            mallory = await player("root_admin", ngircd.port, CHANNEL)
            mallory.say(CHANNEL, "!bfjoust-remove ann.rush")
            assert await mallory.reply(nick) == refused
            root.say(CHANNEL, "!bfjoust-remove ann.rush")  # and root_away is not listed
            assert await root.reply(nick) == refused
            assert (await asyncio.to_thread(hill.queries.standings)).size == 2

    run(scenario())
