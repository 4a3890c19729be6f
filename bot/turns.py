"""Whose turn it is in the outbox (bot.outbox), and who gives way when it
is full.

Messages wait per recipient, and recipients per host (bot.identity.host_of:
one machine's connections, whatever their nicks and idents).  The turns
alternate: every other line goes to the host that has waited longest since
its last line, to its recipient that has waited longest (in the order they
came: a newcomer waits behind those already waiting, and a host that opens
200 connections has one turn among the hosts); the others go to the
recipient with the fewest lines waiting, the newest first (short answers
first: a one-line answer just asked does not wait behind a crowd, on any
host, and no long one waits for ever).  A recipient is `fresh` from the
moment they have lines waiting until their first line goes.  The outbox
lets a short answer that is no backlog's (bot.backlog) go before the
turn's line when only the room it keeps in reserve is free; not twice in
a row (`jumped`), so that the turn it went before comes next all the same.

When the outbox is full, the longest queue gives way: whoever has the most
lines waiting, as many as the newcomer would have at least, drops their
oldest answer not yet begun, if it is one they can ask again (a stored
answer of the request book never is dropped).  So a request just heard
always finds room, even on a host whose crowd fills its share: a player
there is answered in their turn, and one of the crowd asks again.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar


class Waiting(Protocol):
    lines: deque[str]
    queued: float
    started: bool
    on_sent: Callable[[], None] | None


W = TypeVar("W", bound=Waiting)

# host -> recipient -> the recipient's messages, oldest first
Queues = dict[str, dict[str, deque[W]]]


def _lines(messages: Iterable[Waiting]) -> int:
    return sum(len(m.lines) for m in messages)


class Turns:
    """When each host and recipient last had a turn (or came), and whose
    turn is next."""

    def __init__(self) -> None:
        self._since: dict[tuple[str, str], float] = {}  # ("host"|"to", key) -> when
        self._shortest = False  # this turn: the fewest lines waiting (else: the longest wait)
        self._fresh: set[str] = set()  # recipients waiting for their first line
        self.jumped = False  # the last line jumped its turn

    def update(self, kind: str, key: str, waiting: bool) -> None:
        """`key` (a "host" or a recipient, "to") has lines waiting, or none."""
        if waiting:
            if (kind, key) not in self._since:
                self._since[kind, key] = time.monotonic()
                if kind == "to":
                    self._fresh.add(key)
        elif self._since.pop((kind, key), None) is not None and kind == "to":
            self._fresh.discard(key)

    def fresh(self, recipient: str) -> bool:
        """Whether `recipient` has had no line since theirs began to wait."""
        return recipient in self._fresh

    def served(self, host: str, recipient: str, *, jumped: bool = False) -> None:
        """A line of `recipient`'s went, in its turn or (`jumped`) before it."""
        self._fresh.discard(recipient)
        now = time.monotonic()
        for key in (("host", host), ("to", recipient)):
            if key in self._since:
                self._since[key] = now  # to the back of the line
        if not jumped:
            self._shortest = not self._shortest
        self.jumped = jumped

    def next(self, queues: Queues[Any]) -> tuple[str, str]:
        """The host and the recipient whose turn it is (`queues` not empty)."""
        if self._shortest:
            return _shortest(queues)
        host = min(queues, key=lambda h: self._since.get(("host", h), 0.0))
        return host, min(queues[host], key=lambda r: self._since.get(("to", r), 0.0))


def _shortest(queues: Queues[Any]) -> tuple[str, str]:
    """The host and the recipient with the fewest lines waiting, the newest
    first (`queues` not empty)."""
    return min(
        ((h, r) for h, recipients in queues.items() for r in recipients),
        key=lambda hr: (_lines(queues[hr[0]][hr[1]]), -queues[hr[0]][hr[1]][-1].queued),
    )


def giving_way(queues: Queues[W], host: str | None, wanted: int, newcomer: str) -> W | None:
    """The message that gives way to `newcomer`'s, who would have `wanted`
    lines waiting: on `host` (else on the host with the most lines), of the
    recipient with the most lines waiting, `wanted` at least, the oldest
    not begun that can be asked again; None if there is none."""
    if host is None and queues:
        host = max(queues, key=lambda h: sum(map(_lines, queues[h].values())))
    droppable = {
        recipient: [m for m in messages if not m.started and m.on_sent is None]
        for recipient, messages in queues.get(host or "", {}).items()
        if recipient != newcomer and _lines(messages) >= wanted
    }
    candidates = [(r, found) for r, found in droppable.items() if found]
    if not candidates:
        return None
    recipients = queues[host or ""]
    _, oldest = max(candidates, key=lambda c: (_lines(recipients[c[0]]), -c[1][0].queued))
    return oldest[0]
