"""The hill's bell: a process that commits a change to a hill's database
rings it, and those listening hear it at once, so work stored by another
process wakes them rather than waiting for them to look.  These listen,
each at an address of its own (LISTENERS):

- the bot serving the hill: the web report's upload form, `bfjoust hill
  submit`, `bfjoust contest create`, `bfjoust tournament cancel` ... wake
  its work (hill/scheduler);
- the web reports (WEB_SLOTS of them may listen at once, each at an
  address of its own): a page waiting for a change (the bot's answer to an
  upload, a contest's close) is sent once it is committed
  (hill/web/changes.py).

A ring is one datagram to each listener's Unix socket in Linux's abstract
namespace, named after the database file's real path and the listener:
no file to leave behind, no path-length limit, nothing to clean up after a
crash.  Ringing never blocks and never fails: with nobody listening (no
bot runs), or the listener's buffer full (it has rings to read already),
the datagram is dropped, which loses nothing, since what was committed is
in the database for whoever reads it next.  The datagram carries the
ringer's process id: the bot does not wake itself through the bell (its
own changes wake its work directly, hill/scheduler); the web report, which
may run in the bot's process, hears every ring.
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


BOT = "bot"
WEB = "web"
WEB_SLOTS = 8  # web reports of one hill that may listen at once, each at a slot of its own
LISTENERS = (BOT, *(f"{WEB}-{slot}" for slot in range(WEB_SLOTS)))


def address(database: Path, listener: str) -> bytes:
    """The socket where `listener` (one of LISTENERS) hears the bell of the
    hill whose database is at `database`."""
    digest = hashlib.sha256(str(database.resolve()).encode()).hexdigest()[:24]
    suffix = "" if listener == BOT else f"-{listener}"
    return f"\0bfjoust-hill-{digest}{suffix}".encode()


class Bell:
    """Rings the bell of one hill (cheap: one datagram, never waits)."""

    def __init__(self, database: Path) -> None:
        self.addresses = [address(database, listener) for listener in LISTENERS]
        self._socket: socket.socket | None = None
        self._pid = 0  # the process the socket was made in (a fork makes its own)

    def ring(self) -> None:
        """Tell those listening, if any, that the hill changed."""
        if self._socket is None or self._pid != os.getpid():
            self._pid = os.getpid()
            self._message = str(self._pid).encode()
            self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            self._socket.setblocking(False)
        for listener in self.addresses:
            # nobody listens, or the listener has rings to read already: both fine
            with contextlib.suppress(OSError):
                self._socket.sendto(self._message, listener)

    def close(self) -> None:
        if self._socket is not None:
            self._socket.close()
            self._socket = None


class _Hearing(asyncio.DatagramProtocol):
    def __init__(self, heard: Callable[[], None], hears_own: bool) -> None:
        self.heard = heard
        self.own = b"" if hears_own else str(os.getpid()).encode()

    def datagram_received(self, data: bytes, addr: object) -> None:
        if data != self.own:
            self.heard()


async def listen(
    database: Path, heard: Callable[[], None], listener: str = BOT
) -> asyncio.DatagramTransport | None:
    """Call `heard()` on the event loop whenever the bell of the hill at
    `database` rings (the bot: rung by another process; a web report: by
    any, at the first of its WEB_SLOTS free); close the transport to stop.
    None when there is no room: another bot listens already (a warning: a
    second bot on the same hill hears only its own changes), or WEB_SLOTS
    web reports do (this one's waiting pages ask again every few seconds)."""
    names = [listener] if listener == BOT else [n for n in LISTENERS if n != BOT]
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    for name in names:
        try:
            sock.bind(address(database, name))
            break
        except OSError as error:
            taken = error
    else:
        sock.close()
        if listener == BOT:
            log.warning("another process listens to the hill's bell", error=str(taken))
        else:
            log.info(f"{WEB_SLOTS} web reports listen to the hill's bell already")
        return None
    sock.setblocking(False)
    transport, _ = await asyncio.get_running_loop().create_datagram_endpoint(
        lambda: _Hearing(heard, hears_own=listener != BOT), sock=sock
    )
    return transport
