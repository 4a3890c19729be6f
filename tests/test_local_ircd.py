"""`make run`'s local IRC server: it outlives the bot, so a restart (a
Ctrl-C and `make run` again, for real) disconnects no player and the answer
promised after the restart reaches them; a client that floods and leaves
neither makes it spin nor grows its log; its log is capped, and a server
that spins is started again."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.botharness import RUSH, run, wait_until
from support.botprocess import hill_busy
from support.ircclient import IrcTestClient

import bot.ircd
from bot.ircd import CappedLog, free_port, launch_keeper, listening, stop_keeper

pytestmark = pytest.mark.irc  # `make run`'s own IRC server

REPOSITORY = Path(__file__).resolve().parents[1]
CHANNEL = "#local"


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_pid(directory: Path) -> int:
    """InspIRCd's pid, once its file holds it (it is written as the server
    starts: an empty file now and then under load)."""
    pid_file, deadline = directory / "inspircd.pid", time.monotonic() + 10
    while not (text := pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return int(text)


@pytest.fixture
def kept(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A local server under its keeper, as `--local-ircd` starts it."""
    directory, port = tmp_path / "ircd", free_port()
    launch_keeper(directory, "127.0.0.1", port)
    try:
        yield directory, port
    finally:
        stop_keeper(directory)
    assert not listening("127.0.0.1", port)


class MakeRun:
    """`make run` on a configuration of its own, in a process group of its
    own as a terminal runs it (a Ctrl-C reaches make and the bot)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port, self.web_port = free_port(), free_port()
        self.config = folder / "config.toml"
        self.config.write_text(
            f'[hill]\ndata_dir = "hill"\nsize = 10\n\n'
            f'[irc]\nport = {self.port}\nnick = "runbot"\nchannels = ["{CHANNEL}"]\n'
            f"messages_per_second = 10.0\nburst = 10\n\n"
            f"[web]\nport = {self.web_port}\n\n[ladder]\nenabled = false\n"
        )
        self.data = folder / "hill"
        self.output = folder / "make.out"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
        with self.output.open("ab") as output:
            self.process = subprocess.Popen(
                [
                    "make",
                    "--no-print-directory",
                    "-C",
                    str(REPOSITORY),
                    "run",
                    f"CONFIG={self.config}",
                    f"PYTHON={sys.executable}",
                ],
                stdout=output,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )

    def said(self) -> str:
        return self.output.read_text(errors="replace")

    def ctrl_c(self) -> int:
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGINT)
        return self.process.wait(60)

    def requests(self) -> list[tuple[str, str]]:
        with contextlib.closing(sqlite3.connect(self.data / "hill.sqlite3", timeout=10)) as db:
            return list(db.execute("SELECT owner || '.' || name, state FROM requests"))


async def bot_in_channel(player: IrcTestClient, nick: str) -> None:
    player.send(f"NAMES {CHANNEL}")
    await player.expect(
        lambda m: (
            (m.command == "JOIN" and m.nick == nick)
            or (m.command == "353" and nick in m.text.replace("@", "").split())
        ),
        60,
    )


def test_a_restart_under_make_run_keeps_players_connected(tmp_path: Path) -> None:
    make = MakeRun(tmp_path)
    make.start()
    try:
        deadline = time.monotonic() + 120
        while "The web report is at" not in make.said():
            assert make.process and make.process.poll() is None, make.said()
            assert time.monotonic() < deadline, make.said()
            time.sleep(0.1)
        assert f"A local IRC server is running on 127.0.0.1 port {make.port}" in make.said()
        ircd = make.data / "ircd"
        keeper, server = int((ircd / "keeper.pid").read_text()), server_pid(ircd)

        async def scenario() -> None:
            player = await IrcTestClient("player").connect(make.port)
            await player.join(CHANNEL)
            await bot_in_channel(player, "runbot")
            with hill_busy(make.data):  # a promise: recorded, not yet played
                player.say(CHANNEL, f"!bfjoust rush {RUSH}")
                await wait_until(lambda: make.requests() == [("player.rush", "running")], 30)
                stopping = threading.Thread(target=make.ctrl_c)
                stopping.start()
                await asyncio.sleep(0.5)
            while stopping.is_alive():  # the bot finishes its job, then ends
                await asyncio.sleep(0.05)
            assert make.process is not None and make.process.returncode is not None
            await asyncio.sleep(1)
            # the player is still connected, to the same server
            assert not player.closed.is_set()
            assert not any(m.command == "ERROR" for m in player.lines)
            assert listening("127.0.0.1", make.port)
            assert (keeper, server) == (int((ircd / "keeper.pid").read_text()), server_pid(ircd))
            await player.expect(lambda m: m.command == "QUIT" and m.nick == "runbot", 10)
            player.send("PING :still-here")
            await player.expect(lambda m: m.command == "PONG" and "still-here" in m.text)
            # `make run` again: the bot finds the server and keeps its promise
            make.start()
            answer = await player.reply("runbot", "player.rush", timeout=120)
            assert answer.startswith(
                "your submission player.rush was played before the bot restarted: "
                "New program player.rush"
            ), answer
            assert not player.closed.is_set()

        run(scenario(), timeout=300)
        assert "An IRC server is already running on 127.0.0.1" in make.said()
        make.ctrl_c()
    finally:
        if make.process is not None and make.process.poll() is None:
            os.killpg(make.process.pid, signal.SIGKILL)
        stop_keeper(make.data / "ircd")
        print(make.said()[-5000:])
    assert not listening("127.0.0.1", make.port)


def test_a_flood_and_leave_neither_spins_the_server_nor_grows_its_log(
    kept: tuple[Path, int],
) -> None:
    """The sequence that makes Debian's ngircd 26.1 spin and log "Broken
    pipe" at 25 MB/s for ever: a client sends lines and leaves without
    reading the replies."""
    directory, port = kept
    server = server_pid(directory)
    for lines in (10, 5000):
        flooder = socket.create_connection(("127.0.0.1", port))
        flooder.sendall(b"NICK flooder\r\nUSER f 0 * :f\r\n")
        time.sleep(1.2)
        flood = b"".join(b"PRIVMSG nosuchnick%d :hello there\r\n" % i for i in range(lines))
        with contextlib.suppress(OSError):
            flooder.sendall(flood)
        flooder.close()
    cpu = cpu_seconds(server)
    time.sleep(5)
    assert cpu_seconds(server) - cpu < 1.0  # not spinning (ngircd: 5 s of 5)
    log_bytes = sum(p.stat().st_size for p in directory.glob("ircd.log*"))
    assert log_bytes < 200_000

    async def still_serving() -> None:
        other = await IrcTestClient("other").connect(port)
        await other.join("#after")
        other.send("PING :alive")
        await other.expect(lambda m: m.command == "PONG")

    run(still_serving(), timeout=30)
    assert server_pid(directory) == server  # the same server, never restarted


def test_the_local_server_log_is_capped(tmp_path: Path) -> None:
    log = CappedLog(tmp_path / "ircd.log", limit=10_000)
    for number in range(5000):
        log.write(b"Write error on connection 8 (socket 8): Broken pipe! %d\n" % number)
    files = sorted(tmp_path.glob("ircd.log*"))
    assert [f.name for f in files] == ["ircd.log", "ircd.log.1"]
    assert all(f.stat().st_size <= 10_000 for f in files)
    assert files[0].read_bytes().endswith(b"Broken pipe! 4999\n")


def test_a_server_that_spins_is_started_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keeper's watch, on a real process that spins a core."""
    monkeypatch.setattr(bot.ircd, "SPIN_SECONDS", 3.0)
    monkeypatch.setattr(bot.ircd, "SPIN_SHARE", 0.3)  # (the machine is shared)
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        why = bot.ircd._watch(spinner, threading.Event())
        assert why is not None and "of a core or more" in why
    finally:
        spinner.kill()
        spinner.wait()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(2)"])
    assert bot.ircd._watch(sleeper, threading.Event()) == "ended (status 0)"


def test_a_second_bot_finds_the_kept_server(kept: tuple[Path, int]) -> None:
    """Another keeper in the same folder leaves the first one alone."""
    directory, port = kept
    server = server_pid(directory)
    second = subprocess.run(
        [sys.executable, "-m", "bot.ircd", "keep", str(directory), "127.0.0.1", str(port)],
        timeout=30,
    )
    assert second.returncode == 0 and server_pid(directory) == server
    assert listening("127.0.0.1", port)
