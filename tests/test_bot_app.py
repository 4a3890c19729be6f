"""`bfjoust bot --local-ircd` as a player would run it, and the pieces of
the bot that are plain functions (line splitting, rate limits)."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import urllib.request

from hypothesis import given
from hypothesis import strategies as st
from support.botharness import RUSH, run
from support.ircclient import IrcTestClient

from bot.ircd import free_port, listening, stop_keeper
from bot.text import split_text, text_budget
from bot.throttle import RateLimiter, TokenBucket


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
        while not (line := process.stdout.readline()).startswith("The web report is at"):
            assert line, "the bot ended before serving the web report"
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
    limiter = RateLimiter(per_user=2, overall=3, window=0.3)
    assert limiter.check("ann") is None and limiter.check("Ann") is None
    refused = limiter.check("ann")
    assert refused and "2 submissions recently" in refused.reason and not refused.told
    again = limiter.check("ANN")
    assert again and again.told  # told once in a window: then quiet
    assert limiter.check("ben") is None
    refused = limiter.check("cy")
    assert refused and "too many submissions" in refused.reason and not refused.told
    time.sleep(0.35)
    assert limiter.check("ann") is None and limiter.check("cy") is None
    limiter.refund("ANN")  # ann's latest is taken back, from her count and the total
    limiter.refund("nobody")  # nothing to take back: no effect
    assert limiter.check("ann") is None and limiter.check("ann") is None
    refused = limiter.check("ann")  # a new window: told again
    assert refused and "2 submissions recently" in refused.reason and not refused.told


def test_token_bucket_rate() -> None:
    async def take(n: int) -> float:
        bucket = TokenBucket(rate=20.0, burst=4)
        started = time.monotonic()
        for _ in range(n):
            await bucket.take()
        return time.monotonic() - started

    assert asyncio.run(take(4)) < 0.05  # the burst
    assert 0.25 <= asyncio.run(take(10)) < 0.6  # then 20 a second: 6 more take 0.3 s
