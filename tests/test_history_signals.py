"""A stop never rewrites the published history: a real `bfjoust bot`
process, busy with six submissions from six players on a real ngircd, is
stopped by SIGINT to its whole process group (a terminal's Ctrl-C), by
SIGTERM, or killed by SIGKILL (with its children), again and again.  After
every stop and every restart git holds one commit per hill change, in order,
and every commit the hill ever handed out (the database's commit links,
which `!bfjoust-log`, the feed and the commit pages give, and what clones
saw) is still in the history.  (Each start of the bot is a process of its
own, forked from a server that has imported the bot's modules:
support.forks.)"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import forks as forking
from support import ircservers
from support.botharness import CHANNEL, run, wait_until
from support.botprocess import hill_busy, nick_free
from support.forks import ForkedBot, Forks
from support.ircclient import IrcTestClient
from support.webhill import reference_programs

from bot.ircd import Ngircd

ngircd = ircservers.ngircd  # the fixture
forks = forking.forks  # the fixture
PLAYERS = 6
ROUNDS_OF_EACH = 6  # stops of each kind; about 3 s a round
SIGNALS = ("SIGINT", "SIGTERM", "SIGKILL")
HILL_CHANGES = ("join", "challenge", "update", "withdraw", "remove", "rescore")


class SessionBot(ForkedBot):
    """The bot in a process group of its own, as a terminal runs it: a
    Ctrl-C there reaches it and every child it started."""

    def __init__(self, forks: Forks, folder: Path, port: int, nick: str, *, irc: str) -> None:
        super().__init__(forks, folder, port, nick, irc=irc, session=True)

    def signal(self, name: str) -> None:
        assert self.process is not None
        if name == "SIGTERM":  # as a service manager stops it: the bot alone
            self.process.send_signal(signal.SIGTERM)
        else:  # the whole group: Ctrl-C, or a kill of everything
            os.killpg(self.process.pid, getattr(signal, name))


def history(data: Path) -> list[tuple[str, list[int]]]:
    """(sha, Hill-Event ids) of every commit, oldest first, read by a fresh git."""
    head = subprocess.run(
        ["git", "rev-parse", "--quiet", "--verify", "HEAD"], cwd=data / "hill-repo", check=False
    )
    if head.returncode != 0:  # no commit yet
        return []
    out = subprocess.run(
        ["git", "log", "--reverse", "--format=%H%n%(trailers:key=Hill-Event,valueonly)%x00"],
        cwd=data / "hill-repo",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    commits = []
    for record in filter(None, (r.strip() for r in out.split("\0"))):
        sha, *trailers = record.split()
        commits.append((sha, [int(t) for t in trailers]))
    return commits


def hill_events(data: Path) -> list[tuple[int, str | None]]:
    marks = ", ".join("?" * len(HILL_CHANGES))
    with contextlib.closing(sqlite3.connect(data / "hill.sqlite3", timeout=30)) as db:
        rows = db.execute(
            f"SELECT id, [commit] FROM events WHERE kind IN ({marks}) ORDER BY id", HILL_CHANGES
        )
        return list(rows)


def refs(data: Path) -> list[str]:
    out = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname)"],
        cwd=data / "hill-repo",
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.split()


def check_in_line(data: Path, handed: set[str]) -> tuple[int, int]:
    """Git holds one commit per hill change, in order, each the one the
    database notes, and every commit handed out before; returns (commits,
    events) and adds the commits to `handed`."""
    commits, events = history(data), hill_events(data)
    assert [trailers for _, trailers in commits] == [[event] for event, _ in events]
    shas = [sha for sha, _ in commits]
    assert [commit for _, commit in events] == shas
    assert handed <= set(shas), f"commits handed out are gone: {handed - set(shas)}"
    assert set(refs(data)) <= {"refs/heads/main"}, "nothing may have diverged"
    handed.update(shas)
    return len(commits), len(events)


def test_stops_while_six_submissions_are_in_flight_never_rewrite_history(
    tmp_path: Path, ngircd: Ngircd, forks: Forks
) -> None:
    bot = SessionBot(
        forks,
        tmp_path,
        ngircd.port,
        "keeper",
        irc="rate_limit_per_user = 100\nrate_limit_global = 1000\n",
    )
    programs = [" ".join(code.decode().split()) for _, code in reference_programs()]
    programs = [code for code in programs if len(code) < 380]  # each fits a line
    kinds = [kind for _ in range(ROUNDS_OF_EACH) for kind in SIGNALS]
    random.Random(22).shuffle(kinds)
    rng = random.Random(1)
    handed: set[str] = set()
    results: list[str] = []

    async def scenario() -> None:
        players = [await IrcTestClient(f"p{i}").connect(ngircd.port) for i in range(PLAYERS)]
        for player in players:
            await player.join(CHANNEL)
        watcher = players[0]
        for number, kind in enumerate(kinds):
            await nick_free(watcher, bot.nick)
            bot.start()
            await watcher.expect(lambda m: m.command == "JOIN" and m.nick == bot.nick, 30)
            with hill_busy(bot.data):  # the start caught git up: all in line
                check_in_line(bot.data, handed)
            for index, player in enumerate(players):
                code = programs[(number * PLAYERS + index) % len(programs)]
                player.say(CHANNEL, f"!bfjoust w{number % 3} {code}")
            await asyncio.sleep(rng.uniform(0.02, 0.5))
            stopped = time.monotonic()
            bot.signal(kind)
            assert bot.process is not None
            await wait_until(lambda: bot.process.poll() is not None, 60, 0.02)  # type: ignore[union-attr]
            took = time.monotonic() - stopped
            code = bot.process.returncode
            if kind == "SIGKILL":  # git may lack the last change: the next start makes it
                assert code == -signal.SIGKILL
                handed.update(sha for sha, _ in history(bot.data))
                counts = len(history(bot.data)), len(hill_events(bot.data))
            else:  # a clean stop: the job in hand finished or left, git and the database in line
                assert code == 0, f"{kind}: exit status {code}"
                counts = check_in_line(bot.data, handed)
            results.append(f"{kind} after {took:.2f} s: {counts[0]} commits, {counts[1]} events")
        # the last start plays what was left and delivers every answer
        await nick_free(watcher, bot.nick)
        bot.start()
        await wait_until(lambda: all(r[1] != "queued" for r in bot.requests()), 120, 0.1)
        await wait_until(lambda: all(r[3] for r in bot.requests()), 60, 0.1)
        bot.stop()
        check_in_line(bot.data, handed)

    try:
        run(scenario(), timeout=400)
    finally:
        print("\n".join(results))
        bot.stop()
    log = bot.log.read_text()
    assert "Traceback" not in log, log[-5000:]
    assert len(handed) == len(hill_events(bot.data))
    assert len(results) == len(kinds)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-x", "-q", "-s"]))
