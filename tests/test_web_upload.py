"""Long programs by upload: `!bfjoust-upload` over real IRC gives a one-time
link, the form is driven in headless Chromium, and the real bot process
plays the upload and answers on IRC as for any submission.  The web report
runs in the bot's process, or (last test) in a process of its own."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import re
import sqlite3
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path

import aiohttp
import pytest
from selenium import webdriver
from selenium.webdriver.support.ui import WebDriverWait
from support import ircservers
from support.botharness import CHANNEL, run, wait_until
from support.botprocess import BotProcess
from support.ircclient import IrcTestClient
from support.webbot import player, site, upload_link, web_up
from support.webhill import WebProcess, console_errors, css, load

from bot.ircd import Ngircd, free_port
from hill.config import HillSettings
from hill.store.requests import RequestBook
from hill.store.uploads import UploadLinks
from hill.writers.hill import Hill

ngircd = ircservers.ngircd  # the fixture
MAX_BYTES = 4096
# longer than an IRC line, on many lines
LONG = "(>)*9([-]>)*21\n" + "\n".join(f"(+)*{n}(-)*{n}" for n in range(1, 80)) + "\n"
_numbers = itertools.count(1)


def web_of(bot: BotProcess) -> str:
    return site(int(bot.config.read_text().split("[web]")[1].split("port = ")[1].split()[0]))


@pytest.fixture(scope="module")
def hillbot(tmp_path_factory: pytest.TempPathFactory, ngircd: Ngircd) -> Iterator[BotProcess]:
    """The bot with its web report in its own process, as `make run` has it."""
    web_port = free_port()
    bot = BotProcess(
        tmp_path_factory.mktemp("uploadbot"),
        ngircd.port,
        "uploadbot",
        hill=f"max_program_bytes = {MAX_BYTES}\n",
        web=f"port = {web_port}\n",
    )
    bot.start()
    try:
        web_up(site(web_port))
        yield bot
    finally:
        bot.stop()
        print(bot.log.read_text())


def notice(client: IrcTestClient, link: str) -> str:
    """The bot's message that gave `link`."""
    return next(m.text for m in client.lines if link in m.text)


def result(driver: webdriver.Chrome) -> str:
    """The answer on the page, once the bot has played the upload (the page
    asks again until then, each ask held until the upload moves)."""
    WebDriverWait(driver, 30).until(lambda d: css(d, "#result"))
    return css(driver, "#result")[0].text


def submit_form(driver: webdriver.Chrome) -> None:
    css(driver, "#upload button[type=submit]")[0].click()
    WebDriverWait(driver, 15).until(lambda d: css(d, "#result, #status, #error"))


async def post(url: str, **fields: bytes | str) -> tuple[int, str]:
    """The form posted as a browser does (multipart), without the browser."""
    form = aiohttp.FormData()
    for name, value in fields.items():
        if isinstance(value, bytes):
            form.add_field(name, value, filename="p.bfjoust")
        else:
            form.add_field(name, value, content_type="text/plain")
    async with aiohttp.ClientSession() as session, session.post(url, data=form) as response:
        return response.status, await response.text()


def test_a_long_program_pasted_in_the_form(hillbot: BotProcess, browser: webdriver.Chrome) -> None:
    port = hillbot.port

    async def scenario() -> None:
        alice = await player("alice", port, hillbot.nick)
        link = await upload_link(alice, hillbot.nick, CHANNEL, "long")
        assert await alice.reply(hillbot.nick) == "I have sent you the upload link in private"
        assert notice(alice, link) == f"submit alice.long at {link} (it works once, for 10 minutes)"
        assert link.startswith(web_of(hillbot))

        def fill() -> str:
            load(browser, link)
            assert "alice.long" in css(browser, "h1")[0].text
            css(browser, "#code")[0].send_keys(LONG)
            submit_form(browser)
            text = result(browser)
            assert console_errors(browser) == []  # the CSP let everything run
            css(browser, "#main a[href^='/program/']")[0].click()
            WebDriverWait(browser, 10).until(lambda d: "/program/alice.long" in d.current_url)
            return text

        text = await asyncio.to_thread(fill)
        assert text.startswith("New program alice.long: points 0.00") or "pushed off" in text
        # answered on IRC where it was asked, like any submission
        said = await alice.reply(hillbot.nick, "alice.long")
        assert said.startswith("New program alice.long: ") and said == text
        with urllib.request.urlopen(f"{web_of(hillbot)}source/alice.long") as page:
            assert page.read() == LONG.encode()  # the browser's CR LF made LF again
        # the link is used up: the form is gone, a second upload refused
        status, body = await post(link, code="(>)*9([-]>)*21")
        assert status == 409 and "used already" in body
        with urllib.request.urlopen(link) as page:
            shown = page.read().decode()
        assert 'id="result"' in shown and 'id="upload"' not in shown

    run(scenario(), timeout=120)


def test_a_file_uploaded_for_a_test_in_private(
    hillbot: BotProcess, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    port = hillbot.port
    program = tmp_path / "filed.bfjoust"
    program.write_bytes(LONG.replace("\n", "\r\n").encode())  # kept as sent

    async def scenario() -> None:
        bob = await player("bob", port, hillbot.nick)
        link = await upload_link(bob, hillbot.nick, hillbot.nick, "filed test")

        def send() -> str:
            load(browser, link)
            assert "Test" in css(browser, "h1")[0].text
            css(browser, "#file")[0].send_keys(str(program))
            submit_form(browser)
            return result(browser)

        text = await asyncio.to_thread(send)
        assert text.startswith("bob.filed: ") and "test only, the hill is unchanged; " in text
        assert re.search(r"\. Full result: http://\S+/test/[A-Za-z0-9_-]{22}$", text)
        answer = await bob.expect(lambda m: m.nick == hillbot.nick and "bob.filed" in m.text, 20)
        assert (answer.command, answer.params[0], answer.text) == ("NOTICE", "bob", text)
        assert all(not e.startswith("bob.filed") for e in hillbot.events("join"))
        with contextlib.closing(sqlite3.connect(hillbot.data / "hill.sqlite3")) as db:
            (code,) = db.execute("SELECT code FROM requests WHERE name = 'filed'").fetchone()
        assert code == program.read_bytes()  # a file is taken byte for byte

    run(scenario(), timeout=120)


def test_bad_uploads_use_up_nothing(
    hillbot: BotProcess, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    port = hillbot.port
    oversized = tmp_path / "big.bfjoust"
    oversized.write_bytes(b"+" * (MAX_BYTES + 1))

    async def scenario() -> None:
        carol = await player("carol", port, hillbot.nick)
        link = await upload_link(carol, hillbot.nick, hillbot.nick, "careful")

        def attempts() -> list[str]:
            errors = []
            load(browser, link)
            css(browser, "#file")[0].send_keys(str(oversized))
            submit_form(browser)
            errors.append(css(browser, "#error")[0].text)
            load(browser, link)
            css(browser, "#code")[0].send_keys("(>)*9[-")
            submit_form(browser)
            errors.append(css(browser, "#error")[0].text)
            assert css(browser, "#code")[0].get_attribute("value") == "(>)*9[-"  # kept
            load(browser, link)
            submit_form(browser)  # nothing given
            errors.append(css(browser, "#error")[0].text)
            load(browser, link)  # still good for one upload
            css(browser, "#code")[0].send_keys(LONG)
            submit_form(browser)
            errors.append(result(browser))
            return errors

        status, body = await post(link, code="my warrior, version two")  # prose only
        assert status == 400 and "the program has no instruction" in body
        big, malformed, empty, good = await asyncio.to_thread(attempts)
        assert big == f"program too large: the limit is {MAX_BYTES} bytes"
        assert malformed.startswith("parse error at line 1, column 6: unmatched '['")
        assert empty == "the program is empty: paste it or choose its file"
        assert "carol.careful" in good
        said = await carol.reply(hillbot.nick, "carol.careful")
        assert said == good
        status, _ = await post(link, file=b"+" * (MAX_BYTES + 1))
        assert status == 409  # used now: no more uploads, whatever their size

    run(scenario(), timeout=120)


def test_a_link_uploads_only_as_the_one_who_asked(
    hillbot: BotProcess, browser: webdriver.Chrome
) -> None:
    """Whoever holds dan's link uploads dan's program: fields added to the
    form to name another owner or program are ignored."""
    port = hillbot.port

    async def scenario() -> None:
        dan = await player("dan", port, hillbot.nick)
        link = await upload_link(dan, hillbot.nick, hillbot.nick, "mine")

        def forge() -> str:
            load(browser, link)
            browser.execute_script(
                "for (const [name, value] of [['owner', 'eve'], ['name', 'stolen']]) {"
                " const input = document.createElement('input');"
                " input.type = 'hidden'; input.name = name; input.value = value;"
                " document.getElementById('upload').append(input); }"
            )
            css(browser, "#code")[0].send_keys(LONG)
            submit_form(browser)
            return result(browser)

        text = await asyncio.to_thread(forge)
        assert text.startswith("New program dan.mine: ")
        assert await dan.reply(hillbot.nick, "dan.mine") == text
        assert not any("eve" in r[0] or "stolen" in r[0] for r in hillbot.requests())

    run(scenario(), timeout=120)


def test_the_web_in_its_own_process_and_an_expired_link(
    tmp_path: Path, ngircd: Ngircd, browser: webdriver.Chrome
) -> None:
    """`bfjoust web` beside a bot that serves no pages: the form records the
    upload, the bot process plays it and answers on IRC, the page shows it."""
    web_port = free_port()
    bot = BotProcess(
        tmp_path,
        ngircd.port,
        f"apartbot{next(_numbers)}",
        irc="upload_link_seconds = 3\n",
        web=f"enabled = false\nport = {web_port}\n",
    )
    # the web report only reads: the hill is made first (the bot would make it too)
    hill = [sys.executable, "-m", "hill", "hill", "--config", str(bot.config), "init"]
    subprocess.run(hill, check=True, capture_output=True, timeout=120)
    web = subprocess.Popen(
        [sys.executable, "-m", "hill", "web", "--config", str(bot.config)],
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "web.log").open("w"),
    )
    pages = site(web_port)

    async def scenario() -> None:
        await asyncio.to_thread(web_up, pages)
        bot.start()
        frank = await player("frank", ngircd.port, bot.nick)
        link = await upload_link(frank, bot.nick, bot.nick, "apart")
        assert link.startswith(pages) and notice(frank, link).endswith("for 3 seconds)")
        status, body = await post(link, code=LONG)
        # after the 303: queued, or already being played (the post's commit rang the
        # hill's bell: the bot plays it at once), or played
        assert status == 200 and ('id="status"' in body or 'id="result"' in body)
        said = await frank.reply(bot.nick, "frank.apart")
        assert said.startswith("New program frank.apart: ")
        await wait_until(lambda: bot.requests()[-1][1] == "done", 10)
        with urllib.request.urlopen(link) as page:
            assert said.replace("'", "&#39;") in page.read().decode()

        late = await upload_link(frank, bot.nick, bot.nick, "late")
        await asyncio.sleep(3.2)

        def expired() -> tuple[str, bool]:
            load(browser, late)
            return css(browser, "#error")[0].text, bool(css(browser, "#upload"))

        message, form = await asyncio.to_thread(expired)
        assert message == "this link has expired: ask the bot for a new one" and not form
        status, body = await post(late, code=LONG)
        assert status == 410 and "expired" in body
        assert [r[0] for r in bot.requests()] == ["frank.apart"]

    try:
        run(scenario(), timeout=120)
    finally:
        bot.stop()
        web.terminate()
        web.wait(15)
        print(bot.log.read_text(), (tmp_path / "web.log").read_text())


def test_the_page_is_sent_when_the_answer_comes(tmp_path: Path) -> None:
    """No reload on an interval: the page waiting for the bot's answer asks
    again at once (Refresh 0, with what it saw) and that request is held
    until the upload moves in the book, which another process's commit
    tells the web report through the hill's bell (a real `bfjoust web`)."""
    hill = Hill(HillSettings(data_dir=tmp_path / "var"))
    links, book = UploadLinks(hill.db), RequestBook(hill.db)
    token = links.issue(
        nick="ann", channel=None, owner="ann", name="slow", test_only=False, valid_seconds=600
    )
    asked = links.redeem(token, b"(>)*9([-]>)*21", limit=10)
    web = WebProcess(tmp_path)
    try:
        page = f"{web.url}/upload/{token}"
        with urllib.request.urlopen(page) as first:
            assert first.headers["Refresh"] == f"0; url=/upload/{token}?seen=queued.0"
            assert 'id="status"' in first.read().decode()

        def again(seen: str) -> Future[tuple[str, str]]:
            def fetch() -> tuple[str, str]:
                with urllib.request.urlopen(f"{page}?seen={seen}", timeout=60) as reply:
                    return reply.headers.get("Refresh", ""), reply.read().decode()

            return pool.submit(fetch)

        with ThreadPoolExecutor(1) as pool:
            held = again("queued.0")
            with pytest.raises(FutureTimeout):
                held.result(timeout=1.5)  # nothing moved: still held
            book.start(asked.id)  # the bot begins playing it (a commit here: the bell)
            refresh, shown = held.result(timeout=20)
            assert refresh == f"0; url=/upload/{token}?seen=running.0"
            assert 'id="status"' in shown

            held = again("running.0")
            with pytest.raises(FutureTimeout):
                held.result(timeout=1.5)
            book.fail(asked.id, "ann.slow: the tape went nowhere")
            refresh, shown = held.result(timeout=20)
            assert refresh == "" and "the tape went nowhere" in shown and 'id="result"' in shown
        # an old page asking with what it saw long ago is answered at once
        with urllib.request.urlopen(f"{page}?seen=queued.0", timeout=5) as late:
            assert "the tape went nowhere" in late.read().decode()
    finally:
        assert web.stop() == 0, web.log()
        hill.close()
