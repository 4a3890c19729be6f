"""What the bot has yet to say, whose turn it is, and what gives way when it
is full, until bot.outbox sends it.

Messages wait per recipient (the player answered, or a channel for
announcements) in the order they came, the bot's own queries about the
recipient (a WHOIS to confirm an account) first: a player who makes the
bot ask a lot pays for it with their own share.  Recipients wait per host
(bot.identity.host_of, where their commands come from: `locate`): one
machine's connections, whatever their nicks and idents.  Answers and
refusals wait alike, in their recipient's turn: neither starves the other.
An answer of several lines is one message (`-help`'s three: bot.client.say
with paragraphs), counted, sent and given way as a whole: sent as three
one-line answers, a crowd's first lines were as short as a player's answer,
and those asked after his pushed it out.

The turns alternate.  Every other line goes to the host served least
recently, and within it to the recipient served least recently; one that
begins to wait counts as served before all those already waiting (in the
order they came), so a player who asks while another floods is next, and
a host that opens 200 connections has one turn among the hosts.  The other
lines go to the recipient with the fewest lines waiting; of those, the
first line of an answer before the rest of one begun, then the recipient
served least recently, then the one asked last, so a one-line answer just
asked does not wait behind a crowd, on its own host either: the crowd's
answers, queued one after another as the bot reads the hill for each,
answer requests heard before his (taken in the order queued, the newest
went first and 200 of them kept a player of the crowd's host waiting
13-60 s), and those heard after his (a server relays a crowd slowly) have
had their first lines already (taken before his, the short turns went to
the rest of theirs: 60 s on ngircd).
No long answer waits for ever.

It is bounded per recipient, per host (but for the request book's stored
answers: the hill's limits bound those) and in all.  When full, refusals
give way first (the recipient's own, their host's, then the oldest), then
the longest queue: whoever has the most lines waiting, as many as the
newcomer would have at least (of those, the rest of an answer begun, then
the one who asked first, the newcomer too), drops their oldest answer not
yet begun that can be asked again.  So a request just heard always finds room, even on a host whose
crowd fills its share, and the crowd's answers, asked before it but queued
after it as the bot gets to them, do not push it out.
A refusal that has waited `refusal_ttl` seconds is dropped ("try again in
26 s" ten minutes late helps no one); what is dropped is logged once per
interval.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import structlog

log = structlog.get_logger(__name__)

MAX_PER_RECIPIENT = 20  # lines waiting for one recipient
MAX_PER_HOST = 60  # lines waiting for one host's recipients
MAX_LINES = 1000  # lines waiting in all
REFUSAL_TTL = 30.0  # seconds a refusal may wait
HOSTS_REMEMBERED = 4096  # recipients whose host is remembered
DROPS_LOGGED_EVERY = 10.0  # seconds: messages dropped are logged together


class Kind(IntEnum):
    QUERY = 0  # the bot's own request to the server about the recipient
    ANSWER = 1  # the answer to a command, an announcement
    REFUSAL = 2  # a command refused (errors, limits, "busy"): gives way first


@dataclass(eq=False)
class Message:
    kind: Kind
    recipient: str
    host: str  # whose turn it waits in: "@" + bot.identity.host_of, or the recipient
    lines: deque[str]
    queued: float  # time.monotonic() when queued
    asked: float  # time.time() when the request it answers was heard
    on_sent: Callable[[], None] | None = None  # once its last line is written
    started: bool = False  # a line of it is out


def _lines(messages: Iterable[Message]) -> int:
    return sum(len(m.lines) for m in messages)


class Backlog:
    """The waiting messages, their bounds and their turns."""

    def __init__(
        self,
        *,
        per_recipient: int = MAX_PER_RECIPIENT,
        per_host: int = MAX_PER_HOST,
        total: int = MAX_LINES,
        refusal_ttl: float = REFUSAL_TTL,
    ) -> None:
        self.per_recipient = per_recipient
        self.per_host = per_host
        self.total = total
        self.refusal_ttl = refusal_ttl
        self._waiting: dict[str, dict[str, deque[Message]]] = {}  # host -> recipient -> messages
        self._lines: Counter[str] = Counter()  # lines waiting, by recipient and by host
        self._served: dict[str, int] = {}  # waiting recipients and hosts -> their last line
        self._shortest = False  # this turn: the fewest lines waiting (else: served least recently)
        self._sent = 0  # lines sent
        self._hosts: dict[str, str] = {}  # recipient -> host, as last seen (locate)
        self._answering: dict[str, float] = {}  # recipient -> the request of its last line
        self._dropped: Counter[str] = Counter()  # messages dropped since last logged
        self._dropped_logged = -DROPS_LOGGED_EVERY
        self.on_add: Callable[[], None] = lambda: None  # once a message is queued

    def __len__(self) -> int:
        return sum(self._lines[h] for h in self._waiting)

    # --- in --------------------------------------------------------------

    def locate(self, recipient: str, host: str) -> None:
        """`recipient` speaks from `host`: their answers wait in that host's turn."""
        self._hosts.pop(recipient, None)
        self._hosts[recipient] = host
        self._forget_oldest(self._hosts)

    def _forget_oldest(self, recipients: dict[str, Any]) -> None:
        """Past HOSTS_REMEMBERED, the oldest with nothing waiting go."""
        if len(recipients) > HOSTS_REMEMBERED:
            idle = [r for r in recipients if not self._lines[r]]
            for old in idle[: len(recipients) - HOSTS_REMEMBERED]:
                del recipients[old]

    def add(
        self,
        kind: Kind,
        recipient: str,
        lines: list[str],
        on_sent: Callable[[], None] | None = None,
        asked: float | None = None,
    ) -> bool:
        """Queue `lines` for `recipient`, the answer to a request heard at
        `asked` (time.time(); default: now); False when there is no room."""
        # "@" + the host (no nick or channel begins so), or the recipient's own
        host = "@" + (self._hosts.get(recipient) or recipient)
        now = time.monotonic()
        asked = time.time() if asked is None else asked
        message = Message(kind, recipient, host, deque(lines), now, asked, on_sent)
        if kind is not Kind.QUERY and not self._make_room(message):
            self._log_drop(kind)
            return False
        messages = self._waiting.setdefault(host, {}).setdefault(recipient, deque())
        if kind is Kind.QUERY:
            messages.appendleft(message)
        else:
            messages.append(message)
        self._count(message, len(lines))
        self.on_add()
        return True

    def _make_room(self, message: Message) -> bool:
        """Whether `message` fits, for its recipient, for their host (a
        stored answer of the request book always does) and in all; for an
        answer, refusals give way, then the longest queue (`_give_way`)."""
        recipient, host, count = message.recipient, message.host, len(message.lines)
        host_bound = message.on_sent is None

        def fits() -> tuple[bool, bool, bool]:
            return (
                self._lines[recipient] + count <= self.per_recipient,
                not host_bound or self._lines[host] + count <= self.per_host,
                len(self) + count <= self.total,
            )

        if message.kind is Kind.ANSWER:
            while not fits()[0] and self._drop(self._refusals(recipient=recipient)):
                pass
            while not fits()[1] and (
                self._drop(self._refusals(host=host)) or self._give_way(message, host)
            ):
                pass
            while not fits()[2] and (self._drop(self._refusals()) or self._give_way(message)):
                pass
        return all(fits())

    def _refusals(self, *, recipient: str | None = None, host: str | None = None) -> list[Message]:
        """The refusals not begun of `recipient`, or of `host`, or of all."""
        return [
            m
            for h, recipients in self._waiting.items()
            if host in (None, h)
            for r, messages in recipients.items()
            if recipient in (None, r)
            for m in messages
            if m.kind is Kind.REFUSAL and not m.started
        ]

    def _give_way(self, newcomer: Message, host: str | None = None) -> bool:
        """Drop the answer that gives way to `newcomer`: on `host` (else on
        the host with the most lines), of the recipient with the most lines
        waiting, as many as the newcomer's would have at least; of those,
        the rest of an answer begun, then the one whose request was asked
        first (a crowd's answers, asked before a player's and queued as the
        bot gets to them, give way to his, not he to theirs; `_yielding`),
        their oldest not begun that can be asked again.  False, the
        newcomer dropped instead, when it would have as many and gives way
        more readily than all of them: a request just heard always finds
        room."""
        if host is None and self._waiting:
            host = max(self._waiting, key=lambda h: self._lines[h])
        recipients = self._waiting.get(host or "", {})
        wanted = self._lines[newcomer.recipient] + len(newcomer.lines)
        candidates = [
            (self._lines[r], self._yielding(droppable[0]), droppable[0])
            for r, messages in recipients.items()
            if r != newcomer.recipient and self._lines[r] >= wanted
            if (droppable := [m for m in messages if not m.started and m.on_sent is None])
        ]
        if not candidates:
            return False
        lines, yielding, victim = max(candidates, key=lambda c: c[:2])
        if lines == wanted and self._yielding(newcomer)[:2] > yielding[:2]:
            return False
        return self._drop([victim])

    def _yielding(self, message: Message) -> tuple[bool, float, float]:
        """How readily `message` gives way, the most first: the rest of an
        answer begun (its recipient has had the first lines: a crowd heard
        after a player, its last lines queued while his answer waits), then
        the answer to the request asked first, then the one queued first."""
        return self._begun(message), -message.asked, -message.queued

    def _begun(self, message: Message) -> bool:
        """Whether `message` is the rest of an answer begun: its recipient's
        last line answered the same request."""
        return self._answering.get(message.recipient) == message.asked

    def _drop(self, messages: list[Message]) -> bool:
        """Drop the oldest of `messages`, unsent; False when there is none."""
        if not messages:
            return False
        oldest = min(messages, key=lambda m: m.queued)
        self._remove(oldest)
        self._log_drop(oldest.kind)
        return True

    def _remove(self, message: Message) -> None:
        """Take a message out."""
        recipients = self._waiting[message.host]
        recipients[message.recipient].remove(message)
        self._count(message, -len(message.lines))
        message.lines.clear()

    def _count(self, message: Message, lines: int) -> None:
        """`lines` more (or fewer) wait for `message`'s recipient and host;
        who has none left is no longer waiting."""
        recipient, host = message.recipient, message.host
        for key in (recipient, host):
            self._lines[key] += lines
            if self._lines[key] <= 0:
                del self._lines[key]
                self._served.pop(key, None)
        if not self._lines[recipient]:
            self._waiting[host].pop(recipient, None)
        if not self._lines[host]:
            self._waiting.pop(host, None)

    def _log_drop(self, kind: Kind | None = None) -> None:
        """Count a message dropped (None: none, only log what is counted if
        it is time): one log line per interval, not one a message in a flood."""
        if kind is not None:
            self._dropped[kind.name] += 1
        now = time.monotonic()
        if self._dropped and now - self._dropped_logged >= DROPS_LOGGED_EVERY:
            log.warning("outbox full, messages dropped", **self._dropped)
            self._dropped.clear()
            self._dropped_logged = now

    @property
    def sent(self) -> int:
        """Lines sent so far: how long something waited, in the bot's own
        lines (a loaded machine stretches seconds, not lines)."""
        return self._sent

    def forget_queries(self) -> None:
        """The connection is gone: its requests mean nothing to the next one."""
        for recipients in list(self._waiting.values()):
            for messages in list(recipients.values()):
                for query in [m for m in messages if m.kind is Kind.QUERY]:
                    self._remove(query)

    # --- out -------------------------------------------------------------

    def next(self) -> Message | None:
        """The message whose turn it is, stale refusals dropped on the way;
        None when nothing waits."""
        while self._waiting:
            if self._shortest:
                host, recipient = min(
                    ((h, r) for h, recipients in self._waiting.items() for r in recipients),
                    key=lambda hr: self._shortest_key(*hr),
                )
            else:
                host = min(self._waiting, key=lambda h: self._served.get(h, 0))
                recipient = min(self._waiting[host], key=lambda r: self._served.get(r, 0))
            message = self._waiting[host][recipient][0]
            stale = time.monotonic() - message.queued > self.refusal_ttl
            if not (message.kind is Kind.REFUSAL and stale):
                return message
            self._remove(message)
        return None

    def _shortest_key(self, host: str, recipient: str) -> tuple[int, bool, int, float]:
        """The fewest lines first; of those, an answer not begun (its
        recipient's last line answered another request), then the recipient
        served least recently, then the one asked last."""
        messages = self._waiting[host][recipient]
        return (
            self._lines[recipient],
            self._begun(messages[0]),
            self._served.get(recipient, 0),
            -messages[-1].asked,
        )

    def pop(self, message: Message) -> str:
        """The next line of `message`, which goes out now."""
        line = message.lines.popleft()
        message.started = True
        self._sent += 1
        self._shortest = not self._shortest
        self._served[message.host] = self._served[message.recipient] = self._sent
        self._answering.pop(message.recipient, None)
        self._answering[message.recipient] = message.asked
        self._forget_oldest(self._answering)
        if not message.lines:
            self._waiting[message.host][message.recipient].remove(message)
        self._count(message, -1)
        self._log_drop()
        return line
