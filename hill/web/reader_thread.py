"""Readers of the hill's database for the web pages, off the event loop.

SQLite blocks, so each reader runs its queries in threads of its own: a
flood of page requests never holds up the bot's reads, which share the
event loop's default threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from aiohttp import web

from hill.threads import Threads

T = TypeVar("T")
R = TypeVar("R", bound="ThreadedReader")


class ThreadedReader:
    """A reader with `threads` threads of its own, named `name`."""

    def __init__(self, threads: int, name: str) -> None:
        self._threads = Threads(threads, name)
        self._reading: dict[Hashable, asyncio.Future[Any]] = {}

    def close(self) -> None:
        self._threads.close()

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        return await self._threads.run(function, *args)

    async def _shared(self, function: Callable[..., T], *args: Hashable) -> T:
        """`function(*args)` on the threads, once for all who ask at the same
        time (a flood of requests waits for one read, not in a queue of them)."""
        key = (function, *args)
        reading = self._reading.get(key)
        if reading is None:
            reading = self._reading[key] = asyncio.ensure_future(self._run(function, *args))
            reading.add_done_callback(lambda _: self._reading.pop(key, None))
        return await asyncio.shield(reading)


def serve(app: web.Application, key: web.AppKey[R], reader: R, routes: web.RouteTableDef) -> None:
    """Serve `routes` with `reader` at app[key], closed with the app."""
    app[key] = reader
    app.add_routes(routes)

    async def close(app: web.Application) -> None:
        app[key].close()

    app.on_cleanup.append(close)
