"""A SIGTERM while the bot starts: a clean stop, no traceback (issue 33.6).

It logged two ERROR tracebacks ("cannot schedule new futures after
shutdown"): a signal while the web report started made the stop shut the
request book's thread while the runner was still starting, which then
scheduled work on it.  The signal is sent at moments spread over the start,
from the hill's opening (its database appears once the bot's signal
handlers are set) through the web report's start."""

from __future__ import annotations

import time
from pathlib import Path

from support import ircservers
from support.botharness import run, wait_until
from support.botprocess import BotProcess

from bot.ircd import Ngircd, free_port

ngircd = ircservers.ngircd  # the fixture


def test_a_sigterm_during_the_start_stops_cleanly(tmp_path: Path, ngircd: Ngircd) -> None:
    for step in range(6):
        folder = tmp_path / f"run{step}"
        folder.mkdir()
        bot = BotProcess(folder, ngircd.port, f"early{step}", web=f"port = {free_port()}\n")
        bot.start()
        assert bot.process is not None
        run(wait_until((bot.data / "hill.sqlite3").exists, 60))
        time.sleep(0.15 * step)
        bot.process.terminate()
        status = bot.process.wait(60)
        log = bot.log.read_text()
        assert status == 0, log
        assert "Traceback" not in log and "[error" not in log, log
        assert "stopped" in log
