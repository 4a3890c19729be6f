"""Readers of the hill's database for the web pages, off the event loop.

SQLite blocks, so each reader runs its queries in threads of its own: a
flood of page requests never holds up the bot's reads, which share the
event loop's default threads.  `attach` gives a reader (or anything with
threads to close) to the application, closed with it (server.py attaches
every one).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol, TypeVar

from aiohttp import web

from hill.threads import Threads
from hill.web.cache import SingleFlight

T = TypeVar("T")


class Closable(Protocol):
    def close(self) -> None: ...


R = TypeVar("R", bound=Closable)


class ThreadedReader:
    """A reader with `threads` threads of its own, named `name`."""

    def __init__(self, threads: int, name: str) -> None:
        self._threads = Threads(threads, name)
        self._reading = SingleFlight()

    def close(self) -> None:
        self._threads.close()

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        return await self._threads.run(function, *args)

    async def _shared(self, function: Callable[..., T], *args: Hashable) -> T:
        """`function(*args)` on the threads, once for all who ask at the same
        time (cache.SingleFlight)."""
        return await self._reading.run((function, *args), lambda: self._run(function, *args))


def attach(app: web.Application, key: web.AppKey[R], reader: R) -> None:
    """`reader` at app[key], closed when the app is cleaned up."""
    app[key] = reader

    async def close(app: web.Application) -> None:
        app[key].close()

    app.on_cleanup.append(close)
