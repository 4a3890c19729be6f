"""What the bot has yet to say, until bot.outbox sends it: messages waiting
per recipient (the player answered, or a channel for announcements),
recipients per host (where the player's commands come from: `locate`), in
two tiers (answers, then refusals: a refusal's line after every
ANSWERS_BEFORE_A_REFUSAL answer lines while one waits), whose turn is
next (bot.turns), and what gives way when it is full.

It is bounded per recipient, per host (but for the request book's stored
answers: the hill's limits bound those) and in all; refusals make room
first, then the longest queue's answers that can be asked again; what is
dropped is logged once per interval.  A refusal that has waited
`refusal_ttl` seconds is dropped ("try again in 26 s" ten minutes late
helps no one).  The bot's own queries (a WHOIS to confirm a player's
account) go first among the lines for the player they are about, in that
player's turn: a player who makes the bot ask a lot pays for it with their
own share.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

import structlog

from bot.turns import Queues, Turns, giving_way

log = structlog.get_logger(__name__)

MAX_PER_RECIPIENT = 20  # lines waiting for one recipient
MAX_PER_HOST = 60  # lines waiting for one host's recipients
MAX_LINES = 1000  # lines waiting in all
REFUSAL_TTL = 30.0  # seconds a refusal may wait
HOSTS_REMEMBERED = 4096  # recipients whose host is remembered
DROPS_LOGGED_EVERY = 10.0  # seconds: messages dropped are logged together
SHORT_ANSWER = 2  # lines: what is a short answer
# answers go before refusals, but never more than this many lines in a row
# while a refusal waits: two players asking a little faster than the pace
# starved every refusal (a late contest entry, a malformed program) for good
ANSWERS_BEFORE_A_REFUSAL = 2


class Kind(IntEnum):
    """What a message is, in the order they go out for one recipient."""

    QUERY = 0  # the bot's own request to the server about the recipient
    ANSWER = 1  # the answer to a command, an announcement
    REFUSAL = 2  # a command refused: errors, limits, "busy"


TIERS = (Kind.ANSWER, Kind.REFUSAL)  # queries wait with the answers, before them


def _tier(kind: Kind) -> Kind:
    return Kind.REFUSAL if kind is Kind.REFUSAL else Kind.ANSWER


@dataclass(eq=False)
class Message:
    kind: Kind
    recipient: str
    host: str  # whose turn it waits in (bot.identity.host_of, or the recipient's own)
    lines: deque[str]
    queued: float  # time.monotonic() when queued
    on_sent: Callable[[], None] | None = None  # once its last line is written
    started: bool = False  # a line of it is out
    after: int = 0  # the lines sent before it came


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
        self._waiting: dict[Kind, Queues[Message]] = {tier: {} for tier in TIERS}
        self._lines: Counter[str] = Counter()  # lines waiting, by recipient
        self._host_lines: Counter[str] = Counter()  # lines waiting, by host
        self.turns = Turns()
        self._sent = 0  # lines sent
        self._hosts: dict[str, str] = {}  # recipient -> host, as last seen (locate)
        self._dropped: Counter[str] = Counter()  # messages dropped since last logged
        self._dropped_logged = -DROPS_LOGGED_EVERY
        self._answers_in_a_row = 0  # answer lines sent since the last refusal's
        self.on_add: Callable[[], None] = lambda: None  # once a message is queued

    def __len__(self) -> int:
        return self._lines.total()

    # --- in --------------------------------------------------------------

    def locate(self, recipient: str, host: str) -> None:
        """`recipient` speaks from `host`: their answers wait in that host's turn."""
        self._hosts.pop(recipient, None)
        self._hosts[recipient] = host
        if len(self._hosts) > HOSTS_REMEMBERED:  # the oldest with nothing waiting go
            idle = [r for r in self._hosts if not self._lines[r]]
            for old in idle[: len(self._hosts) - HOSTS_REMEMBERED]:
                del self._hosts[old]

    def add(
        self,
        kind: Kind,
        recipient: str,
        lines: list[str],
        on_sent: Callable[[], None] | None = None,
    ) -> bool:
        """Queue `lines` for `recipient`; False when there is no room."""
        host = self._hosts.get(recipient) or f"{recipient} (no host known)"
        message = Message(kind, recipient, host, deque(lines), time.monotonic(), on_sent)
        message.after = self._sent
        if kind is not Kind.QUERY and not self._make_room(message):
            self._log_drop(kind)
            return False
        messages = self._waiting[_tier(kind)].setdefault(host, {}).setdefault(recipient, deque())
        if kind is Kind.QUERY:
            messages.appendleft(message)
        else:
            messages.append(message)
        self._count(message, len(lines))
        self.on_add()
        return True

    def _make_room(self, message: Message) -> bool:
        """Whether `message` fits, for its recipient, for their host (a
        stored answer of the request book always does: the hill's limits
        bound those) and in all.  For an answer, waiting refusals give way
        (the recipient's own, their host's, then the oldest), then the
        longest queue's answers that can be asked again (bot.turns)."""
        recipient, host, count = message.recipient, message.host, len(message.lines)
        host_bound = message.on_sent is None
        if message.kind is Kind.ANSWER:
            while self._lines[recipient] + count > self.per_recipient:
                if not self._drop_refusal(recipient=recipient):
                    break
            wanted = self._lines[recipient] + count
            while host_bound and self._host_lines[host] + count > self.per_host:
                if not (self._drop_refusal(host=host) or self._give_way(wanted, recipient, host)):
                    break
            while len(self) + count > self.total:
                if not (self._drop_refusal() or self._give_way(wanted, recipient)):
                    break
        return (
            self._lines[recipient] + count <= self.per_recipient
            and (not host_bound or self._host_lines[host] + count <= self.per_host)
            and len(self) + count <= self.total
        )

    def _drop_refusal(self, *, recipient: str | None = None, host: str | None = None) -> bool:
        """Drop the oldest waiting refusal of `recipient`, or of `host`, or
        of all; False when there is none."""
        heads = [
            messages[0]
            for h, recipients in self._waiting[Kind.REFUSAL].items()
            if host is None or h == host
            for r, messages in recipients.items()
            if recipient is None or r == recipient
        ]
        if not heads:
            return False
        oldest = min(heads, key=lambda m: m.queued)
        self._remove(oldest)
        self._log_drop(oldest.kind)
        return True

    def _give_way(self, wanted: int, recipient: str, host: str | None = None) -> bool:
        """Drop an answer that gives way to `recipient`'s (bot.turns.giving_way)."""
        found = giving_way(self._waiting[Kind.ANSWER], host, wanted, recipient)
        if found is None:
            return False
        self._remove(found)
        self._log_drop(found.kind)
        return True

    def _remove(self, message: Message) -> None:
        """Take a message out, unsent."""
        tier = _tier(message.kind)
        recipients = self._waiting[tier][message.host]
        messages = recipients[message.recipient]
        messages.remove(message)
        self._count(message, -len(message.lines))
        message.lines.clear()
        if not messages:
            del recipients[message.recipient]
            if not recipients:
                del self._waiting[tier][message.host]

    def _count(self, message: Message, lines: int) -> None:
        recipient, host = message.recipient, message.host
        for counter, key in ((self._lines, recipient), (self._host_lines, host)):
            counter[key] += lines
            if counter[key] <= 0:
                del counter[key]
        self.turns.update("to", recipient, bool(self._lines[recipient]))
        self.turns.update("host", host, bool(self._host_lines[host]))

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
        for recipients in list(self._waiting[Kind.ANSWER].values()):
            for messages in list(recipients.values()):
                for query in [m for m in messages if m.kind is Kind.QUERY]:
                    self._remove(query)

    # --- out -------------------------------------------------------------

    def next(self) -> Message | None:
        """The message whose turn it is (bot.turns), stale refusals dropped
        on the way; None when nothing waits."""
        now = time.monotonic()
        refusals_due = self._answers_in_a_row >= ANSWERS_BEFORE_A_REFUSAL
        for tier in reversed(TIERS) if refusals_due else TIERS:
            waiting = self._waiting[tier]
            while waiting:
                host, recipient = self.turns.next(waiting)
                message = waiting[host][recipient][0]
                if tier is Kind.REFUSAL and now - message.queued > self.refusal_ttl:
                    self._remove(message)
                    continue
                return message
        return None

    def short(self, message: Message) -> bool:
        """Whether `message` is a short answer that is no backlog's: its
        recipient has a line or two waiting, none sent yet, and it was just
        asked (a line at most went out since) or its host has nothing
        else waiting."""
        recipient, host = message.recipient, message.host
        return (
            message.kind is not Kind.REFUSAL
            and self.turns.fresh(recipient)
            and self._lines[recipient] <= SHORT_ANSWER
            and (self._sent - message.after <= 1 or self._host_lines[host] <= SHORT_ANSWER)
        )

    def shorts(self) -> list[Message]:
        """The short answers (`short`) at the head of their recipient's queue."""
        return [
            messages[0]
            for recipients in self._waiting[Kind.ANSWER].values()
            for messages in recipients.values()
            if self.short(messages[0])
        ]

    def pop(self, message: Message, *, jumped: bool = False) -> str:
        """The next line of `message`, which goes out in its turn (or, if
        `jumped`, before it)."""
        line = message.lines.popleft()
        message.started = True
        refusal = message.kind is Kind.REFUSAL
        self._answers_in_a_row = 0 if refusal else self._answers_in_a_row + 1
        self._count(message, -1)
        if not message.lines:
            self._remove(message)
        self.turns.served(message.host, message.recipient, jumped=jumped)
        self._sent += 1
        self._log_drop()
        return line
