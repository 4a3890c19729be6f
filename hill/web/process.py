"""The web report in a process of its own, for the bot ([web] own_process).

A page may take a core for a while (a big tournament's first build, a
flood of requests), and Python runs one thread at a time: in the bot's own
process that time would come out of IRC.  So by default the bot starts the
web report as a child process (`WebChild`), `python -m hill.web.process`,
which is `bfjoust web` (server.run_web) on the bot's settings: it only
reads the hill, and an upload is a request in the book, which the bot
plays, so the two share nothing but the database and the repository.

The child lives and dies with the bot: it has a session of its own (a
Ctrl-C at the terminal reaches the bot, which stops it cleanly), it stops
when its standard input closes (the bot's end of the pipe, closed however
the bot ends, SIGKILL included), and the bot starts it again if it dies
(after 1 s, then up to a minute between tries).  Its log lines go where the
bot's go.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import sys
import threading

import structlog

from hill.config import Settings

log = structlog.get_logger(__name__)

READY = "ready"
FAILED = "error:"
START_SECONDS = 60.0  # for the child to listen
STOP_SECONDS = 10.0  # for it to stop cleanly, then SIGKILL
RESTART_SECONDS = (1.0, 60.0)  # the first wait before a restart, and the longest
STEADY_SECONDS = 60.0  # a child that ran this long starts the backoff again


class WebChild:
    """The web report of `settings` served by a child process; `start()`
    raises OSError (the child's reason) if it cannot serve; `cleanup()`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.process: asyncio.subprocess.Process | None = None
        self._watching: asyncio.Task[None] | None = None
        self._stopping = False

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    async def start(self) -> None:
        self.process = await self._spawn()
        self._watching = asyncio.create_task(self._watch())

    async def _spawn(self) -> asyncio.subprocess.Process:
        """A child, once it listens; OSError with its reason if it cannot."""
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "hill.web.process",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        assert process.stdin and process.stdout
        try:
            process.stdin.write(pickle.dumps(self.settings))
            await process.stdin.drain()  # (kept open: its end is the child's signal to stop)
            async with asyncio.timeout(START_SECONDS):
                said = (await process.stdout.readline()).decode(errors="replace").strip()
        except TimeoutError:
            said = f"{FAILED} it did not start within {START_SECONDS:g} s"
        except asyncio.CancelledError:
            # the bot stops while the child starts: it serves nobody yet and
            # holds nothing of the hill's (it only reads), so it ends at once
            with contextlib.suppress(ProcessLookupError):
                process.kill()
            await process.wait()
            raise
        if said != READY:
            await _end(process)
            reason = said.removeprefix(FAILED).strip() or f"it ended ({process.returncode})"
            raise OSError(f"the web report: {reason}")
        return process

    async def _watch(self) -> None:
        """Start the child again whenever it ends, until cleanup()."""
        pause = RESTART_SECONDS[0]
        while True:
            assert self.process and self.process.stdout
            started = asyncio.get_running_loop().time()
            await self.process.stdout.read()  # (nothing more is said: until it ends)
            status = await self.process.wait()
            if self._stopping:
                return
            if asyncio.get_running_loop().time() - started > STEADY_SECONDS:
                pause = RESTART_SECONDS[0]
            log.warning(
                f"the web report's process ended (status {status}); "
                f"starting it again in {pause:g} s"
            )
            await asyncio.sleep(pause)
            pause = min(2 * pause, RESTART_SECONDS[1])
            try:
                self.process = await self._spawn()
            except OSError as error:
                log.warning(f"{error}; trying again in {pause:g} s")

    async def cleanup(self) -> None:
        """Stop the child (its stdin closed, then SIGKILL after STOP_SECONDS)."""
        self._stopping = True
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watching
        if self.process is not None:
            await _end(self.process)


async def _end(process: asyncio.subprocess.Process) -> None:
    """Stop the child: the end of its stdin is its signal (it sends itself
    SIGTERM; a second one from here could reach it while its event loop
    closes, and Python would print a traceback); SIGKILL after STOP_SECONDS."""
    if process.stdin is not None:
        process.stdin.close()
    try:
        async with asyncio.timeout(STOP_SECONDS):
            await process.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


def main() -> None:
    """The child: the settings come pickled on stdin (from the bot, its
    parent); it serves until SIGTERM or until stdin closes."""
    from hill.errors import HillError
    from hill.web.server import run_web

    settings = pickle.load(sys.stdin.buffer)
    threading.Thread(target=_stop_when_parent_goes, daemon=True).start()

    def ready(_url: str) -> None:
        print(READY, flush=True)

    try:
        run_web(settings, ready)
    except (OSError, HillError) as error:
        print(f"{FAILED} {error}", flush=True)
        sys.exit(1)


def _stop_when_parent_goes() -> None:
    """stdin ends when the bot closes it or dies: stop as on SIGTERM.  (Read
    with os.read: a daemon thread inside the buffered reader when the
    interpreter exits would hold its lock, and Python would abort.)"""
    with contextlib.suppress(OSError):
        while os.read(sys.stdin.fileno(), 65536):
            pass
    os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    main()
