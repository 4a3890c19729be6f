"""Slowloris against a real bot: 1,100 idle or half-sent HTTP connections
held (and opened again as the server closes them), with the bot under the
default descriptor limit of 1024, while a player submits and asks on IRC
(ngircd) and a reader loads pages.  The bot keeps working, its web report
keeps serving, closes slow connections, never runs out of descriptors, and
its log stays small.  Latencies are printed, not asserted."""

from __future__ import annotations

import asyncio
import contextlib
import resource
import selectors
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from support import ircservers
from support.botharness import CHANNEL, run
from support.botprocess import BotProcess
from support.webbot import descriptors, family, player, rank_latency, web_bot, web_up

from bot.ircd import Ngircd

ngircd = ircservers.ngircd  # the fixture
SOCKETS = 1100
DESCRIPTORS = 1024
HOLD_SECONDS = 25.0  # longer than the server's idle_seconds (15)
RUSH = "(>)*9([-]>)*21"
TRAIL = ">(+)*10>(-)*10(>)*6([+]>)*21"


@dataclass
class Slowloris:
    """Holds `count` connections to host:port, half of them idle and half
    with a request's headers half sent, opening a new one for each the
    server closes, until stopped."""

    host: str
    port: int
    count: int
    opened: int = 0
    closed_by_server: int = 0
    refused: int = 0  # closed with a 503
    connect_errors: int = 0
    running: bool = True

    def connect(self, index: int) -> socket.socket | None:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=10)
        except OSError:
            self.connect_errors += 1
            return None
        if index % 2:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        self.opened += 1
        return sock

    def run(self) -> None:
        watch = selectors.DefaultSelector()  # (select() stops at descriptor 1023)
        for index in range(self.count):
            if sock := self.connect(index):
                watch.register(sock, selectors.EVENT_READ)
        while self.running:
            for key, _ in watch.select(0.5):
                sock = key.fileobj
                assert isinstance(sock, socket.socket)
                try:
                    said = sock.recv(4096)
                except OSError:
                    said = b""
                if said and b" 503 " not in said[:20]:
                    continue  # (an answer: not for a half-sent request)
                self.refused += bool(said)
                self.closed_by_server += 1
                watch.unregister(sock)
                sock.close()
            for index in range(self.count - len(watch.get_map())):  # closed or failed
                if self.running and (new := self.connect(index)):
                    watch.register(new, selectors.EVENT_READ)
        # stopped: every socket still held closed here, by the thread that holds
        # them (stop() closed a list this thread had not written yet: 1,789
        # descriptors stayed open in the test worker)
        for key in list(watch.get_map().values()):
            with contextlib.suppress(OSError):
                key.fileobj.close()  # type: ignore[union-attr]
        watch.close()

    def stop(self) -> None:
        """Stop; the thread closes its sockets as it ends (join it)."""
        self.running = False


@pytest.fixture(scope="module", params=["own process", "in the bot"])
def hillbot(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, ngircd: Ngircd
) -> Iterator[BotProcess]:
    """The bot with its web report in a process of its own (the default), or
    on the bot's own event loop."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 3 * SOCKETS:  # this test's own sockets
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4 * SOCKETS), hard))
    own = request.param == "own process"
    bot, url = web_bot(
        tmp_path_factory.mktemp("slowloris"),
        ngircd.port,
        "lorisbot" if own else "lorisbot2",
        web=f"own_process = {str(own).lower()}\n",
    )
    bot.url = url  # type: ignore[attr-defined]
    bot.start(descriptors=DESCRIPTORS)
    try:
        web_up(url)
        yield bot
    finally:
        bot.stop()


def page_time(url: str, deadline: float = 60) -> float:
    """How long until a page is served (a 503 or a cut connection is tried again)."""
    started = time.monotonic()
    while time.monotonic() - started < deadline:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                if response.status == 200:
                    return time.monotonic() - started
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"{url} not served within {deadline} s")


def test_slow_sockets_do_not_take_the_bot_down(hillbot: BotProcess) -> None:
    assert hillbot.process is not None
    url = hillbot.url  # type: ignore[attr-defined]
    host, port = url.removeprefix("http://").rstrip("/").split(":")

    async def scenario() -> None:
        ann = await player("ann", hillbot.port, hillbot.nick)
        ann.say(CHANNEL, f"!bfjoust first {RUSH}")
        await ann.reply(hillbot.nick, "ann.first", 60)
        log_before = hillbot.log.stat().st_size
        attack = Slowloris(host, int(port), SOCKETS)
        thread = threading.Thread(target=attack.run, daemon=True)
        thread.start()
        try:
            await asyncio.sleep(3)  # all of them open (or tried)
            started = time.monotonic()
            latencies, pages, held = [], [], []
            ann.say(CHANNEL, f"!bfjoust second {TRAIL}")
            said = await ann.reply(hillbot.nick, "ann.second", 60)
            assert "ann.second" in said
            while time.monotonic() - started < HOLD_SECONDS:
                latencies.append(await rank_latency(ann, hillbot.nick, "ann.first", 30))
                pages.append(await asyncio.to_thread(page_time, url))
                pids = family(hillbot.process.pid)  # the bot and its web report
                held.append(max(descriptors(pid) for pid in pids))
                await asyncio.sleep(1)
        finally:
            attack.stop()
            thread.join(timeout=30)
        grown = hillbot.log.stat().st_size - log_before
        log = hillbot.log.read_bytes()[log_before:].decode(errors="replace")
        print(
            f"{SOCKETS} slow sockets ({attack.opened} opened in all, {attack.closed_by_server}"
            f" closed by the server, {attack.refused} with a 503, {attack.connect_errors}"
            f" failed to connect); descriptors of the bot or its web process: at most"
            f" {max(held)} of {DESCRIPTORS}; the log grew {grown} bytes;"
            f" IRC answers {[round(x, 2) for x in latencies]};"
            f" a page {[round(x, 2) for x in pages]}"
        )
        assert max(held) < DESCRIPTORS - 100
        assert attack.closed_by_server >= SOCKETS // 2  # slow ones are closed
        assert "Too many open files" not in log and "Traceback" not in log, log[-3000:]
        assert grown < 20_000, log[-3000:]
        assert hillbot.process.poll() is None

    run(scenario(), timeout=240)
    assert hillbot.process.poll() is None
