"""Readers of the hill's database for the web pages, off the event loop.

SQLite blocks, so each reader runs its queries in threads of its own: a
flood of page requests never holds up the bot's reads, which share the
event loop's default threads.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from aiohttp import web

T = TypeVar("T")
R = TypeVar("R", bound="ThreadedReader")


class ThreadedReader:
    """A reader with `threads` threads of its own, named `name`."""

    def __init__(self, threads: int, name: str) -> None:
        self._threads = ThreadPoolExecutor(threads, thread_name_prefix=name)

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._threads, function, *args)


def serve(app: web.Application, key: web.AppKey[R], reader: R, routes: web.RouteTableDef) -> None:
    """Serve `routes` with `reader` at app[key], closed with the app."""
    app[key] = reader
    app.add_routes(routes)

    async def close(app: web.Application) -> None:
        app[key].close()

    app.on_cleanup.append(close)
