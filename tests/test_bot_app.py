"""`bfjoust bot --local-ircd` as a player would run it, and the pieces of
the bot that are plain functions (line splitting, rate limits)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.botharness import RUSH, run
from support.ircclient import IrcTestClient

from bot.ircd import free_port, listening, stop_keeper
from bot.text import split_text, text_budget
from bot.throttle import RateLimiter


@pytest.mark.irc  # `make run`'s IRC server, and the bot as a subprocess
def test_bfjoust_bot_with_a_local_ircd(tmp_path) -> None:
    port, web_port = free_port(), free_port()
    config = tmp_path / "config.toml"
    config.write_text(
        f'[hill]\ndata_dir = "hill"\n\n'
        f'[irc]\nport = {port}\nnick = "localbot"\nchannels = ["#local"]\n\n'
        f"[web]\nport = {web_port}\n"
    )
    log = tmp_path / "bot.log"  # a file, not a pipe nobody reads while the bot runs
    process = subprocess.Popen(
        [sys.executable, "-m", "hill", "bot", "--config", str(config), "--local-ircd"],
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
    )
    try:
        assert process.stdout is not None
        first = process.stdout.readline()
        assert first.startswith(f"A local IRC server is running on 127.0.0.1 port {port}")
        instructions = first + process.stdout.readline() + process.stdout.readline()
        assert "join #local and try: !bfjoust mywarrior" in instructions
        said = []
        while not (line := process.stdout.readline()).startswith("The web report is at"):
            assert line, "the bot ended before serving the web report"
            said.append(line)
        # the operator is told how to be the hill's admin (the server has no accounts)
        (admin_line,) = [s for s in said if s.startswith("To be the hill's admin: /msg localbot")]
        secret = admin_line.split()[-1]
        assert secret == (tmp_path / "hill" / "admin-secret").read_text().strip()
        assert (tmp_path / "hill" / "admin-secret").stat().st_mode & 0o077 == 0
        assert line.strip() == f"The web report is at http://127.0.0.1:{web_port}/"

        async def play() -> None:
            player = await IrcTestClient("player").connect(port)
            await player.join("#local")
            # the bot is in the channel: it joins after us, or was there (NAMES)
            await player.expect(
                lambda m: (
                    (m.command == "JOIN" and m.nick == "localbot")
                    or (m.command == "353" and "localbot" in m.text.split())
                ),
                20,
            )
            player.say("#local", f"!bfjoust rush {RUSH}")
            answer = await player.reply("localbot")
            assert answer.startswith("New program player.rush: points 0.00")
            # the web report beside the bot, on the same event loop, shows it
            with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/api/standings") as page:
                standings = json.load(page)
            assert standings["progs"] == ["player.rush"]
            player.say("localbot", f"!bfjoust-admin {secret}")
            assert (await player.reply("localbot")).startswith("you are the hill's admin")

        try:
            run(play())
        finally:
            print(log.read_text())
        process.send_signal(signal.SIGTERM)
        assert process.wait(15) == 0
        stderr = log.read_text()
        assert "stopping" in stderr and "Traceback" not in stderr
        # a clean stop is no problem: nothing at warning level or above after it
        after_stop = stderr[stderr.index("stopping") :]
        assert "[warning" not in after_stop and "[error" not in after_stop, after_stop
        # the same lines in files of the data folder, the web's requests apart
        logs = tmp_path / "hill" / "logs"
        bot_log, access = (logs / "bot.log").read_text(), (logs / "access.log").read_text()
        assert "stopping" in bot_log and "GET /api/standings" not in bot_log
        assert "GET /api/standings" in access and "web report on" in (logs / "web.log").read_text()
        # the local IRC server outlives the bot: players stay connected across
        # restarts (tests/test_local_ircd.py); it is stopped on its own
        assert listening("127.0.0.1", port)
        assert (tmp_path / "hill" / "ircd" / "inspircd.conf").exists()
        assert (tmp_path / "hill" / "hill.sqlite3").exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        stop_keeper(tmp_path / "hill" / "ircd")
    assert not listening("127.0.0.1", port)


def _encoded(text: str) -> int:
    return len(text.encode())


@given(
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=600),
    st.integers(min_value=4, max_value=120),
)
def test_split_text_fits_the_budget_and_keeps_the_text(text: str, budget: int) -> None:
    pieces = split_text(text, budget)
    assert all(_encoded(piece) <= budget for piece in pieces)
    clean = text.replace("\r", " ").replace("\n", " ").replace("\0", " ")
    joined = "".join(pieces)
    # only the spaces at the cuts are dropped (a cut may fall on a last space:
    # "abc\r" in 3 bytes is one piece, "abc")
    assert joined.replace(" ", "") == clean.replace(" ", "")
    assert len(clean) - len(joined) <= len(pieces)


def test_text_budget_counts_the_prefix_the_server_adds() -> None:
    source = "hillbot!~bfjoust@host.example.org"
    budget = text_budget(source, "PRIVMSG", "#bfjoust")
    line = f":{source} PRIVMSG #bfjoust :" + "x" * budget + "\r\n"
    assert len(line.encode()) == 512


def test_rate_limiter_windows() -> None:
    limiter = RateLimiter(per_user=2, overall=6, window=0.3)
    assert limiter.check("ann") is None and limiter.check("Ann") is None
    refused = limiter.check("ann")
    assert refused and "2 submissions recently" in refused.reason and not refused.told
    again = limiter.check("ANN")
    assert again and again.told  # told once in a window: then quiet
    assert limiter.check("ben") is None and limiter.check("cy") is None
    assert limiter.check("dee") is None and limiter.check("eve") is None
    refused = limiter.check("fay")
    assert refused and "too many submissions" in refused.reason and not refused.told
    time.sleep(0.35)
    assert limiter.check("ann") is None and limiter.check("cy") is None
    limiter.refund("ANN")  # ann's latest is taken back, from her count and the total
    limiter.refund("nobody")  # nothing to take back: no effect
    assert limiter.check("ann") is None and limiter.check("ann") is None
    refused = limiter.check("ann")  # a new window: told again
    assert refused and "2 submissions recently" in refused.reason and not refused.told


def test_the_overall_budget_is_shared_between_hosts() -> None:
    """One host's many connections (idents are the user's choice) take at
    most a share of the budget, and a share is always left for a newcomer."""
    limiter = RateLimiter(per_user=3, overall=20, window=0.5)
    attacker = [f"connection ~a{i}@10.0.0.1" for i in range(7)]
    taken = [limiter.check(u, "host 10.0.0.1") is None for u in attacker for _ in range(3)]
    assert sum(taken) == 10  # alone, half of the 20
    assert limiter.check("connection ~p@10.0.0.2", "host 10.0.0.2") is None  # room left
    refused = limiter.check(attacker[0] + "x", "host 10.0.0.1")
    assert refused and "your host has had its share" in refused.reason
    for n in range(3, 9):  # more hosts: smaller shares, and one always free
        limiter.check(f"connection ~u@10.0.0.{n}", f"host 10.0.0.{n}")
    assert limiter.share("host 10.0.0.99") == 20 // 10
    assert limiter.check("connection ~new@10.0.0.99", "host 10.0.0.99") is None
    limiter.refund("connection ~new@10.0.0.99")  # from the host's count too
    assert limiter.check("connection ~new2@10.0.0.99", "host 10.0.0.99") is None
    assert limiter.check("connection ~new3@10.0.0.99", "host 10.0.0.99") is None
    assert limiter.check("connection ~new4@10.0.0.99", "host 10.0.0.99") is not None
    time.sleep(0.55)  # a new window: the attacker's host may take its share again
    assert limiter.check(attacker[0], "host 10.0.0.1") is None
