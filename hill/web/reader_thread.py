"""Readers of the hill's database for the web pages, off the event loop.

SQLite blocks, so each reader runs its queries in threads of its own: a
flood of page requests never holds up the bot's reads, which share the
event loop's default threads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from aiohttp import web

from hill.threads import Threads

T = TypeVar("T")
R = TypeVar("R", bound="ThreadedReader")


class ThreadedReader:
    """A reader with `threads` threads of its own, named `name`."""

    def __init__(self, threads: int, name: str) -> None:
        self._threads = Threads(threads, name)

    def close(self) -> None:
        self._threads.close()

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        return await self._threads.run(function, *args)


def serve(app: web.Application, key: web.AppKey[R], reader: R, routes: web.RouteTableDef) -> None:
    """Serve `routes` with `reader` at app[key], closed with the app."""
    app[key] = reader
    app.add_routes(routes)

    async def close(app: web.Application) -> None:
        app[key].close()

    app.on_cleanup.append(close)
