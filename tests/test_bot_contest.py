"""Contests with a real `bfjoust bot` process on a real ngircd and several
players (docs/contests.md): announced by an admin, entries in private
(replaced, withdrawn, malformed, to no contest, late), nobody seeing
another's code before the close (IRC, the web and its JSON, the history,
`bfjoust contest show --json`), the close at its time, the winner told,
and the history holding exactly the entries that counted, which a real
`git clone` and `bfjoust tournament run` turn into the published results.
Then the bot SIGKILLed with entries queued across the deadline, and again
in the middle of the tournament: no entry lost, none counted twice, the
same result, and no news told twice."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import itertools
import json
import re
import shlex
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from support import forks as forking
from support import ircservers
from support.botharness import (
    ADMIN_SECRET,
    CHANNEL,
    RUSH,
    news,
    player,
    run,
    sign_in,
    wait_until,
)
from support.botprocess import BotProcess, hill_busy, nick_free
from support.forks import Commands, Forks
from support.ircclient import IrcTestClient, Line
from support.ladderhill import reference
from support.webhill import get, git

from bot.ircd import Ngircd, free_port
from hill.rules.contests import News, recompute_command

ngircd = ircservers.ngircd  # the fixture
_numbers = itertools.count(1)

ALICE = "(>)*8([-]>)*21"
BOB_FIRST = "(>)*7([+]>)*21"
BOB = "(>)*9([-]>)*20"
ERIN = ">(+)*10>(-)*10(>)*6([+]>)*21"
LATE = "(>)*6([-]>)*22"
QUICK = "(>)*9([+]>)*21"
FRANK = "(>)*5(+)*3(>)*4([-]>)*21\n" * 3  # long programs come by the upload form
# a contest's controls for a tournament long enough to be killed in the middle on any
# machine: the first 68 reference programs, 71 entrants and 2485 matches (seconds of
# writes and jousts for the bot, where its results are written every 0.2 s; the kill
# comes one or two of those writes in, a few hundred matches)
POOL = 68
CODES = {"alice": ALICE, "bob": BOB, "erin": ERIN, "frank": FRANK.splitlines()[0]}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path


forks = forking.forks  # the fixture


@pytest.fixture(scope="module")
def bfjoust(forks: Forks) -> Commands:
    """`bfjoust ARGS` as a process of its own, forked from a Python that
    imported the hill already (support.forks): the command and its exit as
    `python -m hill`'s, without a second of imports."""
    return Commands(forks)


async def private(client: IrcTestClient, bot: str, contains: str = "") -> str:
    """The bot's next private answer (a NOTICE) to `client`."""
    line = await client.expect(
        lambda m: m.command == "NOTICE" and m.nick == bot and m.params[0] == client.nick
        and contains in m.text,
        30,
    )  # fmt: skip
    return line.text


def from_bot(client: IrcTestClient, bot: str) -> list[Line]:
    return [m for m in client.lines if m.nick == bot and m.command in ("PRIVMSG", "NOTICE")]


def told(client: IrcTestClient, bot: str, *words: str) -> int:
    """How many of the bot's channel messages hold all of `words`."""
    return sum(
        all(w in m.text for w in words) for m in from_bot(client, bot) if m.params[0] == CHANNEL
    )


def contest_commits(repository: Path, name: str) -> list[tuple[str, list[str]]]:
    """(message, files added) of each commit with the trailer `Contest: NAME`, oldest first."""
    shas = git("log", "--reverse", "--format=%H", cwd=repository).split()
    found = []
    for sha in shas:
        message = git("log", "-1", "--format=%B", sha, cwd=repository)
        if f"\nContest: {name}\n" in message:
            added = git("diff-tree", "--root", "--no-commit-id", "--name-only", "-r", sha,
                        cwd=repository)  # fmt: skip
            found.append((message, sorted(added.split())))
    return found


def recompute(bfjoust: Commands, clone: Path, name: str, page: dict) -> str:
    """Run the page's recompute command in the clone: what it prints."""
    command = shlex.split(page["recompute"]["command"])
    assert command[:3] == ["bfjoust", "tournament", "run"]
    result = bfjoust(*command[1:], cwd=clone / "contests" / name)
    assert result.returncode == 0, result.stderr
    return result.stdout


@contextlib.contextmanager
def bot_process(folder: Path, port: int, web_port: int | None = None) -> Iterator[BotProcess]:
    web = "enabled = false\n"
    if web_port is not None:
        web = f'enabled = true\nport = {web_port}\npublic_url = "http://127.0.0.1:{web_port}/"\n'
    process = BotProcess(
        folder,
        port,
        f"judge{next(_numbers)}",
        irc=f'admins = ["carol"]\nadmin_secret = "{ADMIN_SECRET}"\n',
        web=web,
    )
    try:
        yield process
    finally:
        process.stop()
        print(process.log.read_text()[-20000:])


def test_a_contest_from_its_announcement_to_its_winner(
    folder: Path, ngircd: Ngircd, bfjoust: Commands
) -> None:
    web_port = free_port()
    site = f"http://127.0.0.1:{web_port}"

    async def scenario(bot: BotProcess) -> None:
        carol = await player("carol", ngircd.port)
        alice, bob, dave, erin, frank = [
            await player(nick, ngircd.port) for nick in ("alice", "bob", "dave", "erin", "frank")
        ]
        everyone = (carol, alice, bob, dave, erin, frank)
        bot.start()
        await carol.expect(lambda m: m.command == "JOIN" and m.nick == bot.nick, 30)
        nick = bot.nick
        dave.say(CHANNEL, f"!bfjoust rush {RUSH}")  # the hill, which entries are tried on
        assert (await dave.reply(nick)).startswith("New program dave.rush")

        # announced by an admin, bad input refused
        dave.say(CHANNEL, "!bfjoust-contest create spring +30s")
        assert await dave.reply(nick) == "creating a contest is for the hill's admins"
        await sign_in(carol, nick)
        carol.say(CHANNEL, "!bfjoust-contest create spring 2020-01-01T00:00Z")
        assert "is in the past" in await carol.reply(nick)
        carol.say(CHANNEL, "!bfjoust-contest create spring soon")
        assert (await carol.reply(nick)).startswith("malformed closing time 'soon'")
        carol.say(CHANNEL, "!bfjoust-contest create bad.name +1h")
        assert (await carol.reply(nick)).startswith("bad contest name")
        # an admin closes a contest early; with one entry it is void, and says why
        # (before spring opens: its 25 s are for what must happen while it is open;
        # with 15 s a loaded machine's `contest show` once ran into the close)
        carol.say(CHANNEL, "!bfjoust-contest create quick +1h")
        await carol.reply(nick, "Contest quick created")
        alice.say(nick, f"!bfjoust-enter quick {QUICK}")
        await private(alice, nick, "quick")
        dave.say(CHANNEL, "!bfjoust-contest close quick")
        assert await dave.reply(nick) == "closing a contest is for the hill's admins"
        carol.say(CHANNEL, "!bfjoust-contest close quick")
        void = "no tournament: a contest needs 2 entries or more, it had 1"
        assert (await carol.reply(nick, "quick")).endswith(
            f"with 1 entry: {void}. {site}/contest/quick"
        )
        assert await news(dave, nick, "Contest quick is closed") == (
            f"Contest quick is closed with 1 entry (alice): {void}."
        )

        carol.say(CHANNEL, "!bfjoust-contest create spring +25s Spring joust")
        created = await carol.reply(nick)
        assert created.startswith("Contest spring created: it closes at ")
        announced = await news(alice, nick, "Contest spring is open")
        assert "Spring joust" in announced and "!bfjoust-enter spring CODE" in announced
        carol.say(CHANNEL, "!bfjoust-contest create SPRING +1h")
        assert "there is a contest spring already" in await carol.reply(nick)

        # entries, in private; answered in private with how they do on the hill
        alice.say(nick, f"!bfjoust-enter spring {ALICE}")
        answer = await private(alice, nick, "spring")
        assert answer.startswith(
            "entry to contest spring accepted; on the hill now, as a -test: your entry: points "
        )
        assert "/2;" in answer and "test only, the hill is unchanged" in answer
        bob.say(CHANNEL, f"!bfjoust-enter spring {BOB_FIRST}")  # in the channel: refused
        refused = await bob.reply(nick)
        assert refused.startswith(f"not entered: everyone in {CHANNEL} can read your code now")
        assert f"/msg {nick} !bfjoust-enter spring CODE" in refused
        bob.say(nick, f"!bfjoust-enter spring {BOB_FIRST}")
        assert (await private(bob, nick, "spring")).startswith("entry to contest spring accepted")
        bob.say(nick, f"!bfjoust-enter spring {BOB}")
        assert "(it replaces your earlier one)" in await private(bob, nick, "spring")
        erin.say(nick, f"!bfjoust-enter spring {ERIN}")
        await private(erin, nick, "accepted")
        erin.say(nick, "!bfjoust-enter spring withdraw")
        assert (await private(erin, nick, "spring")).startswith(
            "your entry to contest spring is withdrawn"
        )
        dave.say(nick, "!bfjoust-enter spring +[[-]")
        assert "line 1, column 2" in await private(dave, nick, "parse error")
        frank.say(nick, f"!bfjoust-enter autumn {LATE}")
        assert (await private(frank, nick)).startswith("there is no contest autumn")

        # a long program: through a one-time upload link
        frank.say(CHANNEL, "!bfjoust-upload spring contest")
        assert await frank.reply(nick, "in private") == "I have sent you the upload link in private"
        link = re.search(r"http://\S+/upload/\S+", await private(frank, nick, "enter contest"))
        assert link is not None
        form = aiohttp.FormData()
        form.add_field("code", FRANK, content_type="text/plain")
        async with aiohttp.ClientSession() as session, session.post(link[0], data=form) as sent:
            assert sent.status == 200 and "Contest <code>spring</code>" in await sent.text()
        assert (await private(frank, nick, "spring")).startswith("entry to contest spring accepted")

        # everyone sees who entered, nobody the code
        frank.say(CHANNEL, "!bfjoust-contest spring")
        line = await frank.reply(nick)
        assert "open, closes" in line and "3 entries: alice, bob, frank" in line
        frank.say(CHANNEL, "!bfjoust-contest")
        assert (await frank.reply(nick)).startswith("Open: spring (closes ")
        page = get(f"{site}/api/contest/spring").json()
        owners = [e["owner"] for e in page["entries"]]
        assert page["state"] == "open" and owners == ["alice", "bob", "frank"]
        assert [e["code_hash"] for e in page["entries"]] == [None, None, None]
        for code in (ALICE, BOB, FRANK):
            assert get(f"{site}/code/{hashlib.sha256(code.encode()).hexdigest()}").status == 404
        shown = bfjoust("contest", "show", "spring", "--json", "--config", bot.config)
        assert [e["code_hash"] for e in json.loads(shown.stdout)["entries"]] == [None] * 3
        early = folder / "early"
        git("clone", "--quiet", f"{site}/hill.git", early)
        assert not (early / "contests" / "spring").exists()  # quick is, being closed
        assert get(f"{site}/api/contest/spring").json()["state"] == "open", "too slow a machine"

        # the close, at its time; a late entry refused
        closed = await news(frank, nick, "Contest spring is closed", timeout=40)
        assert "3 entries (alice, bob, frank)" in closed
        for client in everyone:  # no code reached anyone but its owner before the close
            for message in from_bot(client, nick):
                for owner, code in CODES.items():
                    assert code not in message.text or client.nick == owner
        frank.say(nick, f"!bfjoust-enter spring {LATE}")
        assert (await private(frank, nick)).startswith("contest spring closed at ")
        winner = await news(frank, nick, "Contest spring: ", timeout=60)
        assert f"{site}/contest/spring" in winner

        # published: the entries that counted, the results, the command that remakes them
        page = get(f"{site}/api/contest/spring").json()
        assert page["state"] == "played" and page["winner"] in ("alice", "bob", "frank", None)
        assert page["standings"][0]["place"] == 1
        if page["winner"] is not None:
            assert winner.startswith(f"Contest spring: {page['winner']} wins")
        clone = folder / "clone"
        git("clone", "--quiet", f"{site}/hill.git", clone)
        commits = contest_commits(clone, "spring")
        assert [files for _, files in commits] == [
            [
                "contests/spring/alice.bfjoust",
                "contests/spring/bob.bfjoust",
                "contests/spring/frank.bfjoust",
            ],
            ["contests/spring/results.json"],
        ]
        assert (clone / "contests/spring/bob.bfjoust").read_text() == BOB  # the one that stood
        assert all("Hill-Event: " in message for message, _ in commits)
        published = (clone / "contests/spring/results.json").read_text()
        assert json.loads(published) == page["tournament"]
        assert recompute(bfjoust, clone, "spring", page) == published
        history = get(f"{site}/api/history").json()["changes"]
        assert [c["kind"] for c in history[:2]] == ["contest-results", "contest-entries"]
        carol.say(CHANNEL, "!bfjoust-log")
        assert "Publishing the results of contest spring" in await carol.reply(nick)

    with bot_process(folder, ngircd.port, web_port) as bot:
        run(scenario(bot), timeout=150)


def test_a_bot_killed_across_the_deadline_and_mid_tournament(
    folder: Path, ngircd: Ngircd, bfjoust: Commands
) -> None:
    controls = reference_controls(folder, POOL)
    total = (len(controls) + 3) * (len(controls) + 2) // 2  # a round robin's matches

    async def scenario(bot: BotProcess) -> None:
        alice, bob, carol = [await player(nick, ngircd.port) for nick in ("alice", "bob", "carol")]
        await nick_free(alice, bot.nick)
        bot.start()
        await alice.expect(lambda m: m.command == "JOIN" and m.nick == bot.nick, 30)
        nick = bot.nick
        made = bfjoust("contest", "create", "winter", "--closes", "+10s",
                       *[a for path in controls.values() for a in ("--control", path)],
                       "--config", bot.config)  # fmt: skip
        assert made.returncode == 0, made.stderr
        closes = json.loads(bfjoust("contest", "show", "winter", "--json", "--config", bot.config)
                            .stdout)["closes"]  # fmt: skip
        await sign_in(carol, nick)
        carol.say(CHANNEL, "!bfjoust-contest create soon +1h0m4s")  # the hour's reminder is due
        carol.say(CHANNEL, "!bfjoust-contest create later +1d0h0m4s")  # in 4 s, and the day's
        await news(alice, nick, "Contest winter is open")
        await news(alice, nick, "Contest soon closes in 1 h", timeout=20)
        await news(alice, nick, "Contest later closes in 1 d", timeout=20)

        alice.say(nick, f"!bfjoust-enter winter {ALICE}")
        assert "accepted" in await private(alice, nick, "winter")
        with hill_busy(bot.data):  # heard and recorded, not yet played
            # bob's is recorded first and waits for the hill, carol's behind it: two
            # players' commands may be recorded in either order, so one after the other
            bob.say(nick, f"!bfjoust-enter winter {BOB}")
            await wait_until(lambda: entries(bot)[1:] == [("bob", "running", 1)], 20, 0.01)
            carol.say(nick, f"!bfjoust-enter winter {ERIN}")
            await wait_until(lambda: len(entries(bot)) == 3, 20, 0.01)
            assert entries(bot)[1:] == [("bob", "running", 1), ("carol", "queued", 0)]
            bot.kill()
        unanswered = from_bot(bob, nick) + from_bot(carol, nick)
        assert not any(m.command == "NOTICE" and "winter" in m.text for m in unanswered)
        deadline = dt.datetime.fromisoformat(closes.replace("Z", "+00:00"))
        await asyncio.sleep((deadline - dt.datetime.now(dt.UTC)).total_seconds() + 1)
        assert bot.process is not None and bot.process.poll() is not None  # down at the deadline

        # back after the deadline, the bot plays bob's and carol's entries, closes the
        # contest and starts its tournament, all before it is on IRC again. The hill's
        # lock (nothing is written without it) holds the tournament until the close has
        # been told; let go, the close is noted as told and the first results are
        # written; held again, the tournament can write nothing more: the bot is killed
        # there, in the middle of it, the news told once
        database = bot.data / "hill.sqlite3"
        await nick_free(alice, nick)
        bot.start()
        await wait_until(lambda: contest_state(database, "winter") != "open", 60, 0.002)
        with hill_busy(bot.data):
            await alice.expect(lambda m: m.command == "JOIN" and m.nick == nick, 30)
            closed = await news(alice, nick, "Contest winter is closed", timeout=60)
        await wait_until(lambda: noted(database, "winter", News.CLOSED)
                         and matches(database, "committed") > 0, 60, 0.002)  # fmt: skip
        with hill_busy(bot.data):
            committed = matches(database, "committed")
            assert 0 < committed < total, "the tournament ended first: too fast a machine"
            bot.kill()
        print(f"killed with {committed} of {total} matches committed")
        assert "3 entries (alice, bob, carol)" in closed
        to_bob = await private(bob, nick, "winter")
        assert to_bob.startswith("your entry to contest winter was being played when the bot "
                                 "restarted: entry to contest winter accepted")  # fmt: skip
        assert "accepted" in await private(carol, nick, "winter")

        await nick_free(alice, nick)
        bot.start()
        await alice.expect(lambda m: m.command == "JOIN" and m.nick == nick, 30)
        alice.say(nick, f"!bfjoust-enter winter {LATE}")
        assert (await private(alice, nick, "winter")).startswith("contest winter closed at")
        winner = await news(alice, nick, "Contest winter: ", timeout=180)
        assert " wins with " in winner or "is shared" in winner

        # every news once, across the restarts
        for words in [("winter", "is open"), ("winter", "is closed"), ("Contest winter:",),
                      ("soon", "is open"), ("soon", "closes in"),
                      ("later", "is open"), ("later", "closes in")]:  # fmt: skip
            assert told(alice, nick, *words) == 1, words
        # each entry played once (bob's again, as it was cut off); the late one never recorded
        assert entries(bot) == [("alice", "done", 1), ("bob", "done", 2), ("carol", "done", 1)]

    with bot_process(folder, ngircd.port) as bot:
        run(scenario(bot), timeout=300)
        shown = json.loads(bfjoust("contest", "show", "winter", "--json", "--config", bot.config)
                           .stdout)  # fmt: skip
    assert shown["state"] == "played"
    assert [e["owner"] for e in shown["entries"]] == ["alice", "bob", "carol"]
    clone = folder / "clone"
    git("clone", "--quiet", bot.data / "hill-repo", clone)
    commits = contest_commits(clone, "winter")
    assert len(commits) == 2
    # the hill was empty: the first commit is the contest's, with the report of an empty hill
    entrants = {Path(f).stem for f in commits[0][1] if f.startswith("contests/winter/")}
    assert entrants == {"alice", "bob", "carol"} | {f"control.{n}" for n in controls}
    published = (clone / "contests/winter/results.json").read_text()
    assert json.loads(published) == shown["tournament"]  # the result the kill did not change:
    page = {"recompute": {"command": recompute_command(shown["tournament"])}}
    assert recompute(bfjoust, clone, "winter", page) == published  # an uninterrupted run's


def reference_controls(folder: Path, count: int) -> dict[str, Path]:
    """The first `count` reference programs as a contest's controls: their
    names (two programs of the same name told apart), and their files."""
    controls: dict[str, Path] = {}
    for name, code in reference(count):
        name = next(f"{name}{s}" for s in ("", "_2", "_3", "_4") if f"{name}{s}" not in controls)
        controls[name] = folder / f"{name}.bfjoust"
        controls[name].write_bytes(code)
    return controls


def contest_state(database: Path, contest: str) -> str | None:
    """The state of `contest` in the database (None: there is no such contest)."""
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as db:
        row = db.execute("SELECT state FROM contests WHERE name = ?", (contest,)).fetchone()
        return None if row is None else row[0]


def noted(database: Path, contest: str, what: News) -> bool:
    """Whether the channels have heard `what` of `contest`, as the bot noted it."""
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as db:
        row = db.execute("SELECT told FROM contests WHERE name = ?", (contest,)).fetchone()
        return row is not None and what.value in json.loads(row[0] or "[]")


def entries(bot: BotProcess) -> list[tuple[str, str, int]]:
    """(owner, state, attempts) of the contest requests, in order."""
    with contextlib.closing(sqlite3.connect(bot.data / "hill.sqlite3", timeout=10)) as db:
        rows = db.execute(
            "SELECT owner, state, attempts FROM requests WHERE command = 'contest-enter'"
            " ORDER BY id"
        )
        return list(rows)


def matches(database: Path, status: str) -> int:
    with contextlib.closing(sqlite3.connect(database, timeout=30)) as db:
        query = "SELECT count(*) FROM tournament_matches WHERE status = ?"
        return db.execute(query, (status,)).fetchone()[0]
