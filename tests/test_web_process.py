"""The bot's web report in a process of its own (the default): a real bot
process and ngircd.  The web process answers as the bot's own pages did,
comes back when it dies, stops with the bot on a Ctrl-C at the terminal
(SIGINT) and goes when the bot is killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from support import ircservers
from support.webbot import family, web_bot, web_up
from support.webhill import build_hill, reference_programs

from bot.ircd import Ngircd

ngircd = ircservers.ngircd  # the fixture


def web_pid(bot_pid: int) -> int:
    """The web report's process: the bot's child running hill.web.process."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for pid in family(bot_pid)[1:]:
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"hill.web.process" in command:
                return pid
        time.sleep(0.1)
    raise AssertionError("no web process")


def gone(pid: int, timeout: float = 20) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state == "Z":
                return True  # dead, not yet reaped
        except (ProcessLookupError, FileNotFoundError):
            return True
        time.sleep(0.1)
    return False


def test_the_web_process_lives_and_dies_with_the_bot(tmp_path: Path, ngircd: Ngircd) -> None:
    bot, url = web_bot(tmp_path, ngircd.port, "procbot")
    bot.start()
    try:
        web_up(url)
        assert bot.process is not None
        first = web_pid(bot.process.pid)
        # it dies: the bot starts it again
        os.kill(first, signal.SIGKILL)
        assert gone(first)  # (its socket closed: what answers next is the new one)
        web_up(url, timeout=30)
        second = web_pid(bot.process.pid)
        assert second != first
        with urllib.request.urlopen(url + "api/standings", timeout=30) as response:
            assert response.status == 200
        # Ctrl-C at the terminal reaches the bot's process group, not its
        # web process (a session of its own): the bot stops it
        assert os.getsid(second) != os.getsid(bot.process.pid)
        os.kill(bot.process.pid, signal.SIGINT)
        assert bot.process.wait(30) == 0
        assert gone(second)
        log = bot.log.read_text()
        assert "the web report's process ended" in log and "Traceback" not in log, log[-3000:]

        # the bot killed: its web process goes too
        bot.start()
        web_up(url)
        third = web_pid(bot.process.pid)
        bot.kill()
        assert gone(third)
    finally:
        bot.stop()


@pytest.mark.slow  # web processes started and stopped again and again
def test_the_web_process_stops_cleanly_however_busy(tmp_path: Path) -> None:
    """Started and stopped again and again, three at once (a busy machine):
    each child ends with status 0 and says nothing on stderr.  (When the bot
    closed the child's stdin and sent SIGTERM too, the second signal could
    come while the child's event loop closed, and the child's thread reading
    stdin could hold its lock at exit: a traceback, or status -6 or -15,
    about 1 stop in 12 under load.)"""
    build_hill(tmp_path / "var", reference_programs()[:3], size=5).close()
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from bot.ircd import free_port\n"
        "from hill.config import HillSettings, Settings, WebSettings\n"
        "from hill.web.process import WebChild\n"
        "hill = HillSettings(data_dir=Path(sys.argv[1]))\n"
        "async def main():\n"
        "    for _ in range(8):\n"
        "        child = WebChild(Settings(hill=hill, web=WebSettings(port=free_port())))\n"
        "        await child.start()\n"
        "        await child.cleanup()\n"
        "        print(child.process.returncode)\n"
        "asyncio.run(main())\n"
    )
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "var")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    for run in runs:
        out, err = run.communicate(timeout=300)
        assert run.returncode == 0, err[-2000:]
        assert out.split() == ["0"] * 8, (out, err[-2000:])
        said = [line for line in err.splitlines() if " [info " not in line]
        assert said == [], "\n".join(said[-40:])
