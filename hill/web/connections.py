"""The web report's connections, bounded: nobody can take the process's
file descriptors (slowloris) or fill its log.

* A connection that has not sent a whole request within `idle_seconds`
  (headers trickled, or nothing at all), or that sits idle that long
  between requests, is closed (aiohttp's keep-alive timer, which covers
  both: `server_options`).  Bodies have limits of their own where they are
  read (the upload form, /hill.git).
* At most `limit` connections are open at once, well below the process's
  descriptors (`connection_limit`: the soft limit less RESERVE, kept for
  the hill's SQLite files, git's pipes, the lock and the logs).  A new
  connection past the limit takes the place of the oldest idle one (no
  request under way: an idle or half-sent one, which is what a flood of
  slow sockets holds); if every one is busy serving, the newcomer gets a
  503 at once and is closed.  `accept()` itself never runs out.
* What the flood costs is logged as one summary line a minute, and
  errors the event loop reports (such as a failing `accept()`) once per
  kind a minute (`OncePerInterval`), with the count of those left out.
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import structlog
from aiohttp import web
from aiohttp.typedefs import Handler

from hill.logs import Throttle

log = structlog.get_logger(__name__)

RESERVE = 256  # descriptors kept for the hill: SQLite, git's pipes, the lock, the logs
SUMMARY_SECONDS = 60.0
BUSY_ANSWER = (
    b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\nConnection: close\r\n"
    b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: 36\r\n\r\n"
    b"busy: too many connections; retry.\r\n"
)


def server_options(idle_seconds: float) -> dict[str, Any]:
    """aiohttp's server options: the keep-alive timer closes a connection
    without a whole request after `idle_seconds`, from its start or from
    its last answer."""
    return {"keepalive_timeout": idle_seconds}


def connection_limit(configured: int, reserve: int = RESERVE) -> int:
    """The connections the web may hold: `configured`, and never more than
    the descriptors the process may open less `reserve`.  The soft limit is
    first raised to the hard one (as far as 65536) when it is lower."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = min(hard, 65536) if hard != resource.RLIM_INFINITY else 65536
    if soft < wanted:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
    return max(8, min(configured, soft - reserve))


class _Refusal(asyncio.Protocol):
    """A connection past the limit while every other is busy: a 503, closed."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(BUSY_ANSWER)
        transport.close()


class ConnectionGuard:
    """Makes the protocol of each accepted connection for `server` (the
    aiohttp server of a runner, set once the runner is set up), keeping at
    most `limit` open; its middleware tells it which connections are
    serving a request."""

    def __init__(self, limit: int) -> None:
        self.server: web.Server | None = None
        self.limit = limit
        self.serving: Counter[Any] = Counter()  # handler: requests under way
        self.closed_idle = 0
        self.refused = 0
        self._reported = time.monotonic()

    def protocol(self) -> asyncio.Protocol:
        """The protocol for a connection just accepted (asyncio's factory)."""
        assert self.server is not None
        live = [h for h in self.server.connections if h.transport is not None]
        if len(live) >= self.limit:
            idle = next((h for h in live if h not in self.serving), None)  # oldest first
            if idle is None:
                self.refused += 1
                self._report()
                return _Refusal()
            idle.force_close()
            self.closed_idle += 1
            self._report()
        return self.server()

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        """Marks the request's connection as serving while the handler runs."""
        connection = request.protocol
        self.serving[connection] += 1
        try:
            return await handler(request)
        finally:
            self.serving[connection] -= 1
            if self.serving[connection] <= 0:
                del self.serving[connection]

    def _report(self) -> None:
        now = time.monotonic()
        if now - self._reported >= SUMMARY_SECONDS:
            self.report()
            self._reported = now

    def report(self) -> None:
        """One line: what the limit cost since the last one."""
        if self.closed_idle or self.refused:
            log.warning(
                f"web connections at the limit of {self.limit}: {self.closed_idle} idle or "
                f"half-sent ones closed to make room, {self.refused} refused (all busy) "
                f"in the last {SUMMARY_SECONDS} s"
            )
            self.closed_idle = self.refused = 0


class OncePerInterval:
    """An event loop's exception handler that logs each kind of error (its
    message) at most once per `interval` seconds, then how many it left out
    (hill.logs.Throttle)."""

    def __init__(self, interval: float = SUMMARY_SECONDS) -> None:
        self.lines = Throttle(interval)

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        message = str(context.get("message", "error"))
        exception = context.get("exception")
        left_out = self.lines.due(f"{message} {type(exception).__name__ if exception else ''}")
        if left_out is None:
            return
        if left_out:
            context = {**context, "message": f"{message} ({left_out} more since the last)"}
        loop.default_exception_handler(context)


def quiet_loop_errors(loop: asyncio.AbstractEventLoop) -> Callable[[], None]:
    """Install OncePerInterval on `loop`; returns how to put back the old handler."""
    old = loop.get_exception_handler()
    loop.set_exception_handler(OncePerInterval())
    return lambda: loop.set_exception_handler(old)
