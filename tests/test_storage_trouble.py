"""The hill's storage failing under a real `bfjoust bot` on a real ngircd.

A full disk (the data folder on a small tmpfs of its own): first git cannot
write (no inode left: the database, whose files exist, still can), then
nothing can.  Every player is answered (the real answer when the database
took the change, else "the hill's disk is full" and the real answer once
there is room again), nothing is lost, the trouble is a few log lines (no
traceback), and git catches up as soon as the space comes back, without
waiting for another change.  A database locked too long by another
process: the requests are kept in memory, in order, and played after."""

from __future__ import annotations

import asyncio
import contextlib
import html
import itertools
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest
from support import ircservers
from support.botharness import CHANNEL, run, wait_until
from support.botprocess import BotProcess, nick_free
from support.ircclient import IrcTestClient

from bot.ircd import Ngircd, free_port

ngircd = ircservers.ngircd  # the fixture
PROGRAMS = [f"(>)*{n}([-]>)*{21 - n % 3}" for n in range(2, 12)]


@contextlib.contextmanager
def small_disk(where: Path) -> Iterator[Path]:
    """A tmpfs of 32 MB and 4000 inodes at `where` (root only)."""
    where.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=32m,nr_inodes=4000", "tmpfs", str(where)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (root needed): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "--lazy", str(where)], check=False)


def use_up_inodes(folder: Path) -> None:
    folder.mkdir()
    with contextlib.suppress(OSError):
        for number in itertools.count():
            (folder / str(number)).touch()


def use_up_space(filler: Path) -> None:
    """Fill the disk to the last byte (smaller and smaller writes)."""
    with open(filler, "r+b", buffering=0) as out:
        for size in (1 << 20, 1 << 12, 1):
            with contextlib.suppress(OSError):
                while True:
                    out.write(b"\0" * size)


def free(disk: Path) -> None:
    subprocess.run(["rm", "-rf", str(disk / "inodes"), str(disk / "filler")], check=True)


def commits(data: Path) -> int:
    out = subprocess.run(
        ["git", "-C", str(data / "hill-repo"), "rev-list", "--count", "HEAD"],
        capture_output=True,
        text=True,
    )
    return int(out.stdout) if out.returncode == 0 else 0


def hill_changes(data: Path) -> int:
    with contextlib.closing(sqlite3.connect(data / "hill.sqlite3", timeout=30)) as db:
        return db.execute("SELECT count(*) FROM events WHERE kind != 'test'").fetchone()[0]


def test_a_full_disk_loses_nothing_and_says_so(ngircd: Ngircd, tmp_path: Path) -> None:
    with small_disk(tmp_path / "disk") as disk:
        bot = BotProcess(
            disk,
            ngircd.port,
            "fullbot",
            irc="rate_limit_per_user = 20\n",
            web=f"port = {free_port()}\n",
        )
        try:
            run(scenario(bot, ngircd, disk), timeout=240)
        finally:
            bot.stop()
            log = bot.log.read_text()
            print(log[-6000:])
        requests = bot.requests()
    assert "Traceback" not in log
    assert "something went wrong" not in log
    waits = [line for line in log.splitlines() if "waits: the hill's disk is full" in line]
    assert 1 <= len(waits) <= 7, waits  # one line per worker, not one a try
    assert "the request runner goes on" in log and "git (behind the database) goes on" in log
    assert "the upload form goes on" in log
    assert [(r[0], r[1], r[3]) for r in requests] == [
        (f"alice.s{n}", "done", 1) for n in range(3)
    ] + [
        ("alice.p1", "done", 1),
        ("bob.p2", "done", 1),
        ("carol.p3", "done", 1),
        ("dan.big", "done", 1),
    ]


async def scenario(bot: BotProcess, ngircd: Ngircd, disk: Path) -> None:
    alice = await IrcTestClient("alice").connect(ngircd.port)
    bob = await IrcTestClient("bob").connect(ngircd.port)
    carol = await IrcTestClient("carol").connect(ngircd.port)
    dan = await IrcTestClient("dan").connect(ngircd.port)
    for client in (alice, bob, carol, dan):
        await client.join(CHANNEL)
    await nick_free(alice, bot.nick)
    bot.start()
    await alice.expect(lambda m: m.command == "JOIN" and m.nick == bot.nick, timeout=30)
    for n in range(3):
        alice.say(CHANNEL, f"!bfjoust s{n} {PROGRAMS[n]}")
        assert "New program" in await alice.reply(bot.nick, f"alice.s{n}")
    assert commits(bot.data) == hill_changes(bot.data) == 3
    dan.say(CHANNEL, "!bfjoust-upload big")  # a link, used once the disk is full
    given = await dan.expect(lambda m: m.command == "NOTICE" and "/upload/" in m.text, 20)
    link = given.text.split(" at ")[1].split()[0]
    assert await dan.reply(bot.nick) == "I have sent you the upload link in private"

    # no inode left: git cannot write; the database (its files exist) can
    (disk / "filler").touch()  # for later
    use_up_inodes(disk / "inodes")
    alice.say(CHANNEL, f"!bfjoust p1 {PROGRAMS[3]}")
    answer = await alice.reply(bot.nick, "alice.p1")
    assert answer.startswith("New program alice.p1"), answer  # stored: the real answer, now
    assert commits(bot.data) == 3 and hill_changes(bot.data) == 4  # git is behind

    # no byte left either (the log of writes emptied first, so that the
    # database needs room to write at all): nothing can be written
    with contextlib.closing(sqlite3.connect(bot.data / "hill.sqlite3", timeout=30)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    use_up_space(disk / "filler")
    bob.say(CHANNEL, f"!bfjoust p2 {PROGRAMS[4]}")
    kept = await bob.reply(bot.nick, "bob.p2")
    assert kept == (
        "the hill's disk is full: your submission bob.p2 is kept, "
        "and played as soon as it can be recorded"
    )
    carol.say(bot.nick, f"!bfjoust p3 {PROGRAMS[5]}")  # in private
    assert (await carol.reply(bot.nick, "carol.p3")).startswith("the hill's disk is full")
    # the upload form says so and keeps the link; another link cannot be made
    status, page = await post_program(link, PROGRAMS[6])
    assert status == 503 and html.escape(PROGRAMS[6]) in page, page  # the pasted program kept
    assert "the hill&#39;s disk is full: nothing was recorded and the link still works" in page
    dan.say(CHANNEL, "!bfjoust-upload other")
    assert await dan.reply(bot.nick) == "the hill's disk is full; try again in a few minutes"
    await asyncio.sleep(8)  # the runner, the ladder and git keep trying meanwhile

    # room again: what was kept is recorded, played and answered, and git
    # catches up, with no other change to wait for
    freed = time.monotonic()
    free(disk)
    assert (await bob.reply(bot.nick, "bob.p2", timeout=30)).startswith("New program bob.p2")
    assert (await carol.reply(bot.nick, "carol.p3", timeout=30)).startswith("New program")
    print(f"answered {time.monotonic() - freed:.1f} s after the space came back")
    await wait_until(lambda: commits(bot.data) == hill_changes(bot.data) == 6, timeout=30)
    print(f"git caught up {time.monotonic() - freed:.1f} s after the space came back")
    status, page = await post_program(link, PROGRAMS[6])  # the same link, now it can be
    assert status == 200 and "dan.big" in page
    assert (await dan.reply(bot.nick, "dan.big", timeout=30)).startswith("New program dan.big")
    await wait_until(lambda: all(r[3] for r in bot.requests()), timeout=10)


async def post_program(link: str, code: str) -> tuple[int, str]:
    """The upload form posted as a browser does (multipart); after a
    redirect, the page it leads to."""
    form = aiohttp.FormData({"code": code})
    form.add_field("file", b"", filename="")  # no file chosen
    async with aiohttp.ClientSession() as session, session.post(link, data=form) as response:
        return response.status, await response.text()


def test_a_database_locked_too_long_keeps_the_request(ngircd: Ngircd, tmp_path: Path) -> None:
    """Another process holds SQLite's write lock past the wait a write
    allows (10 s): the submission is kept in memory, its player told why,
    the next one kept after it, and both recorded, in order, played and
    answered once the lock is let go."""
    bot = BotProcess(tmp_path, ngircd.port, "lockedbot")

    async def scenario() -> None:
        alice = await IrcTestClient("alice").connect(ngircd.port)
        bob = await IrcTestClient("bob").connect(ngircd.port)
        for client in (alice, bob):
            await client.join(CHANNEL)
        await nick_free(alice, bot.nick)
        bot.start()
        await alice.expect(lambda m: m.command == "JOIN" and m.nick == bot.nick, timeout=30)
        with contextlib.closing(
            sqlite3.connect(bot.data / "hill.sqlite3", isolation_level=None)
        ) as holder:
            holder.execute("BEGIN IMMEDIATE")
            alice.say(CHANNEL, f"!bfjoust first {PROGRAMS[0]}")
            assert await alice.reply(bot.nick, "alice.first", timeout=30) == (
                "the hill's database is busy: your submission alice.first is kept, "
                "and played as soon as it can be recorded"
            )
            bob.say(CHANNEL, f"!bfjoust second {PROGRAMS[1]}")
            assert (await bob.reply(bot.nick, "bob.second")).startswith(
                "the hill's database is busy: your submission bob.second is kept"
            )
            holder.execute("COMMIT")
        assert "New program alice.first" in await alice.reply(bot.nick, "alice.first")
        assert "New program bob.second" in await bob.reply(bot.nick, "bob.second")
        await wait_until(lambda: all(r[3] for r in bot.requests()), timeout=10)

    try:
        run(scenario(), timeout=120)
    finally:
        bot.stop()
        print(bot.log.read_text()[-4000:])
    assert [(r[0], r[1]) for r in bot.requests()] == [
        ("alice.first", "done"),
        ("bob.second", "done"),
    ]
    assert "Traceback" not in bot.log.read_text()
