"""The hill's changes as the web report hears them: the hill's bell
(hill/store/bell.py), heard by this process, wakes the pages that wait for
a change (an upload's page waits for the bot's answer) instead of the
browser asking again and again.

`Changes.after(seen, read)` is a long poll: it reads now, and while what
it reads is still what the browser saw last (`seen`) it waits for the next
ring and reads again, for at most HOLD_SECONDS (and, with `settle`,
answers no sooner than that after it was asked: a page following a
tournament's progress is told at most once a second, however often
matches commit).  When this process cannot listen (hill/store/bell.py's
WEB_SLOTS web reports of the same hill listen already) nothing is heard:
`after` answers what it read after UNHEARD_SECONDS, so that the pages ask
every few seconds, as pages did before they could be told.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from aiohttp import web

from hill.store.bell import WEB, listen

HOLD_SECONDS = 25.0  # a waiting page is sent after this at the latest (proxies' timeouts)
UNHEARD_SECONDS = 2.0  # ... and after this when the bell cannot be heard
T = TypeVar("T")


class Changes:
    """Rings of the hill's bell, each waking whoever waits for the next."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.heard = False  # listening: a change wakes the waiting pages
        self.waiting = 0  # requests held now
        self._stopped = False
        self._next = asyncio.Event()
        self._bell: asyncio.DatagramTransport | None = None

    async def start(self, _app: web.Application) -> None:
        self._bell = await listen(self.database, self._rang, WEB)
        self.heard = self._bell is not None

    async def stop(self, _app: web.Application) -> None:
        """No more waiting: every page waiting is sent as it stands."""
        if self._bell is not None:
            self._bell.close()
            self._bell = None
        self._stopped = True
        self._rang()

    def _rang(self) -> None:
        self._next.set()
        self._next = asyncio.Event()

    async def after(
        self, seen: str | None, read: Callable[[], Awaitable[tuple[str, T]]], settle: float = 0.0
    ) -> T:
        """`read()` gives (a key of what it read, what it read); once its key
        differs from `seen`, or at HOLD_SECONDS (UNHEARD_SECONDS when the
        bell is not heard), what it read last."""
        loop = asyncio.get_running_loop()
        asked = loop.time()
        deadline = asked + (HOLD_SECONDS if self.heard else UNHEARD_SECONDS)
        rang = self._next  # taken before each read: a ring during the read is not lost
        key, value = await read()
        self.waiting += 1
        try:
            while key == seen and loop.time() < deadline:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(rang.wait(), deadline - loop.time())
                if self._stopped or (self.heard and not rang.is_set()):
                    break  # stopping, or held to the end with no ring: nothing to read again
                await asyncio.sleep(asked + settle - loop.time())  # (none when past)
                rang = self._next
                key, value = await read()
        finally:
            self.waiting -= 1
        return value


CHANGES = web.AppKey("changes", Changes)


def setup(app: web.Application, database: Path) -> None:
    """The app hears the hill's bell while it runs."""
    app[CHANGES] = Changes(database)
    app.on_startup.append(app[CHANGES].start)
    app.on_shutdown.append(app[CHANGES].stop)
