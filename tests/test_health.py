"""`/healthz` and `/metrics` on real processes: a `bfjoust bot` on ngircd
with its web report in its own process, and `bfjoust web` served beside a
bot that serves no pages, while players submit on IRC, a request waits
behind the hill's lock, a stock `git clone` runs, and the bot stops."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families
from support import ircservers
from support.botharness import CHANNEL, run, wait_until
from support.botprocess import BotProcess, hill_busy
from support.webbot import player, site, web_up
from support.webhill import get, git

from bot.ircd import Ngircd, free_port

ngircd = ircservers.ngircd  # the fixture


def healthz(url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(f"{url}healthz", timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def metrics(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of `/metrics`, read by prometheus_client's own parser:
    (name, labels) to value."""
    with urllib.request.urlopen(f"{url}metrics", timeout=30) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        text = answer.read().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_health_and_metrics_of_a_bot_with_its_web_process(tmp_path: Path, ngircd: Ngircd) -> None:
    web_port = free_port()
    bot = BotProcess(tmp_path, ngircd.port, "healthbot", web=f"port = {web_port}\n")
    url = site(web_port)
    bot.start()

    async def scenario() -> None:
        await asyncio.to_thread(web_up, url)
        ann = await player("ann", ngircd.port, bot.nick)
        for i in range(3):
            ann.say(CHANNEL, f"!bfjoust rush{i} (>)*{8 + i}([-]>)*21")
            await ann.reply(bot.nick, f"ann.rush{i}", 60)
        await wait_until(lambda: healthz(url)[0] == 200, 30)  # the status file written
        status, report = await asyncio.to_thread(healthz, url)
        assert status == 200 and report["healthy"], report
        assert report["irc"]["registered"] and report["irc"]["nick"] == bot.nick
        assert report["writer"]["running"] and report["writer"]["seen_seconds_ago"] < 30
        assert report["requests"] == {
            "open": 0, "oldest_open_seconds": None, "limit_seconds": 300.0, "ok": True
        }  # fmt: skip

        await asyncio.to_thread(git, "clone", "--quiet", f"{url}hill.git", tmp_path / "clone")
        assert (await asyncio.to_thread(get, f"{url}nowhere")).status == 404
        await asyncio.sleep(6)  # the bot's own metrics reach the web with its status file

    try:
        run(scenario(), timeout=180)
        samples = metrics(url)
        print(json.dumps({f"{k[0]}{dict(k[1])}": v for k, v in samples.items()}, indent=0))
        challenges = (("command", "challenge"),)
        assert samples[("bfjoust_answer_seconds_count", challenges)] == 3
        assert samples[("bfjoust_answer_seconds_bucket", (*challenges, ("le", "+Inf")))] == 3
        assert 0 < samples[("bfjoust_answer_seconds_sum", challenges)] < 3 * 60
        # each newcomer against the hill before it
        assert samples[("bfjoust_jousts_stored_total", ())] == 0 + 1 + 2
        assert samples[("bfjoust_requests_waiting", ())] == 0
        assert samples[("bfjoust_lock_wait_seconds_count", ())] >= 3  # the bot's, via its status
        assert samples[("bfjoust_clones_served_total", ())] == 1
        assert samples[("bfjoust_web_requests_total", (("status", "404"),))] == 1
        assert samples[("bfjoust_web_requests_total", (("status", "200"),))] >= 3
        for name in ("bfjoust_bot_up", "bfjoust_writer_running", "bfjoust_irc_registered"):
            assert samples[(name, ())] == 1
    finally:
        bot.stop()


def test_health_says_what_is_wrong(tmp_path: Path, ngircd: Ngircd) -> None:
    """`bfjoust web` beside a bot that serves no pages: a request stuck behind
    the hill's lock past `stuck_request_seconds`, then the bot stopped."""
    web_port = free_port()
    bot = BotProcess(
        tmp_path,
        ngircd.port,
        "sickbot",
        web=f"enabled = false\nport = {web_port}\nstuck_request_seconds = 2\n",
    )
    hill = [sys.executable, "-m", "hill", "hill", "--config", str(bot.config), "init"]
    subprocess.run(hill, check=True, capture_output=True, timeout=120)
    web = subprocess.Popen(
        [sys.executable, "-m", "hill", "web", "--config", str(bot.config)],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "web.log").open("w"),
    )
    url = site(web_port)

    async def scenario() -> None:
        await asyncio.to_thread(web_up, url)
        status, report = await asyncio.to_thread(healthz, url)
        assert status == 503 and not report["healthy"]  # no bot: no writer, no IRC
        assert not report["writer"]["ok"] and report["writer"]["seen_seconds_ago"] is None
        assert not report["irc"]["ok"] and report["requests"]["ok"]
        bot.start()
        ann = await player("ann", ngircd.port, bot.nick)
        await wait_until(lambda: healthz(url)[0] == 200, 30)
        with hill_busy(bot.data):  # a long joust, say: the request waits
            ann.say(CHANNEL, "!bfjoust stuck (>)*9([-]>)*21")
            await asyncio.sleep(3)
            status, report = await asyncio.to_thread(healthz, url)
            assert status == 503 and report["writer"]["ok"] and report["irc"]["ok"]
            assert report["requests"]["open"] == 1 and not report["requests"]["ok"]
            assert report["requests"]["oldest_open_seconds"] > 2
            samples = await asyncio.to_thread(metrics, url)
            assert samples[("bfjoust_requests_waiting", ())] == 1
            assert samples[("bfjoust_oldest_request_age_seconds", ())] > 2
        await ann.reply(bot.nick, "ann.stuck", 60)
        await wait_until(lambda: healthz(url)[0] == 200, 30)

    try:
        run(scenario(), timeout=180)
        bot.stop()  # a clean stop says so at once
        status, report = healthz(url)
        assert status == 503 and report["writer"]["stopped"] and not report["writer"]["ok"]
        samples = metrics(url)
        assert samples[("bfjoust_bot_up", ())] == 0
        assert ("bfjoust_lock_wait_seconds_count", ()) not in samples  # the bot's are gone
    finally:
        bot.stop()
        web.terminate()
        web.wait(15)
