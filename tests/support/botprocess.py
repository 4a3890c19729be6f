"""A real `bfjoust bot` process for the tests: started, killed, restarted,
with a look into its SQLite file (the test's view of what it promised)."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from support.botharness import CHANNEL
from support.ircclient import IrcTestClient


class BotProcess:
    """`bfjoust bot` on a config of its own; its log collects every run."""

    def __init__(
        self,
        folder: Path,
        port: int,
        nick: str,
        *,
        hill: str = "",
        irc: str = "",
        web: str = "enabled = false\n",
    ) -> None:
        """`hill`, `irc`, `web`: keys of those sections (TOML lines)."""
        self.nick = nick
        self.port = port
        self.data = folder / "hill"
        self.config = folder / "config.toml"
        self.config.write_text(
            f'[hill]\ndata_dir = "hill"\nsize = 10\n{hill}\n'
            f'[irc]\nport = {port}\nnick = "{nick}"\nchannels = ["{CHANNEL}"]\n'
            f"messages_per_second = 10.0\nburst = 10\n{irc}\n[web]\n{web}"
        )
        self.log = folder / "bot.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, crash_at: str | None = None, descriptors: int | None = None) -> None:
        """`descriptors`: the process's limit of open files (soft and hard)."""
        env = {k: v for k, v in os.environ.items() if k != "BFJOUST_CRASH_AT"}
        if crash_at:
            env["BFJOUST_CRASH_AT"] = crash_at
        limit = [] if descriptors is None else ["prlimit", f"--nofile={descriptors}", "--"]
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [*limit, sys.executable, "-m", "hill", "bot", "--config", str(self.config)],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def requests(self) -> list[tuple[str, str, str, int]]:
        """(full name, state, outcome's summary, delivered) of every request, in order."""
        with contextlib.closing(sqlite3.connect(self.data / "hill.sqlite3", timeout=10)) as db:
            rows = db.execute(
                "SELECT owner || '.' || name, state,"
                " coalesce(json_extract(outcome, '$.summary'), ''), delivered"
                " FROM requests ORDER BY id"
            )
            return list(rows)

    def events(self, kind: str) -> list[str]:
        """The summaries of the hill events of one kind."""
        with contextlib.closing(sqlite3.connect(self.data / "hill.sqlite3", timeout=10)) as db:
            rows = db.execute("SELECT summary FROM events WHERE kind = ? ORDER BY id", (kind,))
            return [summary for (summary,) in rows]


@contextlib.contextmanager
def hill_busy(data: Path) -> Iterator[None]:
    """Hold the hill's lock, as a long joust (or `bfjoust hill rescore`)
    would: the bot takes requests but cannot play them meanwhile."""
    with open(data / "hill.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


async def nick_free(watcher: IrcTestClient, nick: str) -> None:
    """Until the server has let go of a killed bot's nick (it may notice the
    dead connection a moment after the kill); a bot started sooner would
    come back as nick_ and answer under that name."""
    async with asyncio.timeout(30):
        while True:
            watcher.send(f"ISON {nick}")
            online = await watcher.expect(lambda m: m.command == "303")
            if nick.lower() not in online.text.lower().split():
                return
            await asyncio.sleep(0.2)
