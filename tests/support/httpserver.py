"""A real HTTP server on loopback for the tests (aiohttp)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from aiohttp import web
from aiohttp.typedefs import Handler


@contextlib.asynccontextmanager
async def serve(routes: dict[str, Handler]) -> AsyncIterator[str]:
    """A real HTTP server on a free loopback port; yields its base URL."""
    app = web.Application()
    app.add_routes([web.get(path, handler) for path, handler in routes.items()])
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()
