"""The running bot's status file (`bot-status.json` in the data folder),
rewritten on a heartbeat (every HEARTBEAT_SECONDS, a timer on the event
loop), for the web report's `/healthz` and `/metrics` (hill.web.operations.health),
whichever process serves them.

It says when it was written (a file that stops being rewritten is a bot
that stopped or whose event loop is stuck), the IRC link (connected,
registered, the nick), the request runner (running, the storage trouble
it waits on, git behind the database), and the bot process's own metrics
(hill.writers.metrics, in Prometheus's text format).  Written to a temporary file
and renamed, so a reader never sees half of it; on a clean stop it says
the bot stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any, Protocol

import structlog
from prometheus_client import generate_latest

from bot.client import IrcClient
from bot.runner import Runner
from hill.writers.metrics import PROCESS

log = structlog.get_logger(__name__)

HEARTBEAT_SECONDS = 5.0


class _Bot(Protocol):
    client: IrcClient
    runner: Runner


class StatusFile:
    """Writes the bot's status to `path` until closed."""

    def __init__(self, path: Path, bot: _Bot) -> None:
        self.path = path
        self.bot = bot
        self.started = time.time()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="status-file")

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        with contextlib.suppress(OSError):
            self.write(stopped=True)

    async def _run(self) -> None:
        while True:
            try:
                self.write()
            except OSError as error:  # the disk full: the status goes stale, said each try
                log.warning("cannot write the status file", path=str(self.path), error=str(error))
            except Exception:  # never the bot's end: the status goes stale, which says it
                log.exception("the status file failed")
            await asyncio.sleep(HEARTBEAT_SECONDS)

    def status(self, *, stopped: bool = False) -> dict[str, Any]:
        link = self.bot.client.link
        runner = self.bot.runner
        connected = link.is_connected()
        return {
            "pid": os.getpid(),
            "written": time.time(),
            "started": self.started,
            "stopped": stopped,
            "irc": {
                "connected": connected,
                "registered": connected and link.registration.registered,
                "nick": link.nick if connected else None,
            },
            "writer": {
                "running": runner.running and not stopped,
                "trouble": runner.trouble.why,
                "git_behind": runner.hill.history.behind,
            },
            "metrics": generate_latest(PROCESS).decode(),
        }

    def write(self, *, stopped: bool = False) -> None:
        partial = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        partial.write_text(json.dumps(self.status(stopped=stopped)))
        os.replace(partial, self.path)
