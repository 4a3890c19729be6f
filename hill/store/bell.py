"""The hill's bell: a process that commits a change to a hill's database
rings it, and the bot serving that hill hears it at once, so work stored by
another process (the web report's upload form, `bfjoust hill submit`,
`bfjoust contest create`, `bfjoust tournament cancel` ...) wakes the bot
rather than waiting for it to look.

A ring is one datagram to a Unix socket in Linux's abstract namespace,
named after the database file's real path: no file to leave behind, no
path-length limit, nothing to clean up after a crash.  Ringing never
blocks and never fails: with nobody listening (no bot runs), or the
listener's buffer full (it has rings to read already), the datagram is
dropped, which loses nothing, since what was committed is in the database
for whoever reads it next.  The datagram carries the ringer's process id:
a process does not wake itself through the bell (its own changes wake its
work directly, hill/scheduler).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import socket
from collections.abc import Callable
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)


def address(database: Path) -> bytes:
    """The bell's socket for the hill whose database is at `database`."""
    digest = hashlib.sha256(str(database.resolve()).encode()).hexdigest()[:24]
    return b"\0bfjoust-hill-" + digest.encode()


class Bell:
    """Rings the bell of one hill (cheap: one datagram, never waits)."""

    def __init__(self, database: Path) -> None:
        self.address = address(database)
        self._socket: socket.socket | None = None
        self._pid = 0  # the process the socket was made in (a fork makes its own)

    def ring(self) -> None:
        """Tell the bot serving this hill, if one does, that it changed."""
        if self._socket is None or self._pid != os.getpid():
            self._pid = os.getpid()
            self._message = str(self._pid).encode()
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._socket.setblocking(False)
        # nobody listens, or the listener has rings to read already: both fine
        with contextlib.suppress(OSError):
            self._socket.sendto(self._message, self.address)

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class _Hearing(asyncio.DatagramProtocol):
    def __init__(self, heard: Callable[[], None]) -> None:
        self.heard = heard
        self.own = str(os.getpid()).encode()

    def datagram_received(self, data: bytes, addr: object) -> None:
        if data != self.own:
            self.heard()


async def listen(database: Path, heard: Callable[[], None]) -> asyncio.DatagramTransport | None:
    """Call `heard()` on the event loop whenever another process rings the
    bell of the hill at `database`; close the transport to stop.  None (and
    a warning) when another process listens already: a second bot on the
    same hill hears only its own changes."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(address(database))
    except OSError as error:
        sock.close()
        log.warning("another process listens to the hill's bell", error=str(error))
        return None
    sock.setblocking(False)
    transport, _ = await loop.create_datagram_endpoint(lambda: _Hearing(heard), sock=sock)
    return transport
