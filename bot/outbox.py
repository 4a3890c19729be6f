"""The outbox: every line the bot sends to the server, at a rate it accepts.

Lines go out as the server's flood count allows (bot.penalty: its
penalty per command, forgiven at `messages_per_second`, never above
`burst`).  Messages wait per
recipient (the player answered, or a channel for announcements) and are
taken one line at a time, for the recipient served least recently (round
robin, with a newcomer first), so that one player's many answers never hold
up another's.  Answers go before refusals, and the bot's own queries (a
WHOIS to confirm a player's account) go first among the lines for the
player they are about, in that player's turn: a player who makes the bot
ask a lot pays for it with their own share.  A refusal that has waited
`refusal_ttl` seconds is dropped ("try again in 26 s" ten minutes late
helps no one).  The outbox is bounded per recipient and in all; refusals
make room first.  Answers wait across disconnections; queries do not.

Text enters here and only here (`add_text`), made plain (bot.text.plain)
and split to fit IRC lines.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

import structlog

from bot.penalty import PenaltyMeter
from bot.text import plain, split_text

log = structlog.get_logger(__name__)

MAX_PER_RECIPIENT = 20  # lines waiting for one recipient
MAX_LINES = 1000  # lines waiting in all
REFUSAL_TTL = 30.0  # seconds a refusal may wait


class Kind(IntEnum):
    """What a message is, in the order they go out for one recipient."""

    QUERY = 0  # the bot's own request to the server about the recipient
    ANSWER = 1  # the answer to a command, an announcement
    REFUSAL = 2  # a command refused: errors, limits, "busy"


TIERS = (Kind.ANSWER, Kind.REFUSAL)  # queries wait with the answers, before them


@dataclass(eq=False)
class Message:
    kind: Kind
    recipient: str
    lines: deque[str]
    queued: float  # time.monotonic() when queued
    on_sent: Callable[[], None] | None = None  # once its last line is written


class Outbox:
    """Waiting messages, sent fairly by `run()`."""

    def __init__(
        self,
        meter: PenaltyMeter,
        *,
        per_recipient: int = MAX_PER_RECIPIENT,
        total: int = MAX_LINES,
        refusal_ttl: float = REFUSAL_TTL,
    ) -> None:
        self.meter = meter
        self.per_recipient = per_recipient
        self.total = total
        self.refusal_ttl = refusal_ttl
        # per tier, the recipients with messages waiting, and the messages
        self._waiting: dict[Kind, dict[str, deque[Message]]] = {tier: {} for tier in TIERS}
        self._lines: Counter[str] = Counter()  # lines waiting, by recipient
        self._served: dict[str, float] = {}  # when each recipient last had a line sent
        self.wakeup = asyncio.Event()  # something was queued, or the client became ready

    def __len__(self) -> int:
        return self._lines.total()

    # --- queueing --------------------------------------------------------

    def add_text(
        self,
        command: str,
        target: str,
        text: str,
        *,
        budget: int,
        prefix: str = "",
        kind: Kind = Kind.ANSWER,
        recipient: str = "",
        on_sent: Callable[[], None] | None = None,
    ) -> bool:
        """Queue `prefix + text` (made plain) to `target`, in as many lines as
        fit `budget` bytes of text each; False when the outbox has no room."""
        prefix = plain(prefix)
        pieces = split_text(plain(text), budget - len(prefix.encode()))
        lines = [f"{command} {target} :{prefix}{piece}" for piece in pieces]
        return self.add(kind, recipient or target, lines, on_sent)

    def query(self, recipient: str, line: str) -> None:
        """Queue a request to the server about `recipient` (WHOIS), before
        their messages."""
        self.add(Kind.QUERY, recipient, [line])

    def add(
        self,
        kind: Kind,
        recipient: str,
        lines: list[str],
        on_sent: Callable[[], None] | None = None,
    ) -> bool:
        if kind is not Kind.QUERY and not self._make_room(kind, recipient, len(lines)):
            (log.warning if kind is Kind.ANSWER else log.info)(
                "outbox full, message dropped", recipient=recipient, kind=kind.name
            )
            return False
        message = Message(kind, recipient, deque(lines), time.monotonic(), on_sent)
        tier = Kind.REFUSAL if kind is Kind.REFUSAL else Kind.ANSWER
        messages = self._waiting[tier].setdefault(recipient, deque())
        if kind is Kind.QUERY:
            messages.appendleft(message)
        else:
            messages.append(message)
        self._count(recipient, len(lines))
        self.wakeup.set()
        return True

    def _make_room(self, kind: Kind, recipient: str, count: int) -> bool:
        """Whether `count` more lines for `recipient` fit; for an answer,
        waiting refusals give way (the recipient's own, then the oldest)."""
        if kind is Kind.ANSWER:
            while self._lines[recipient] + count > self.per_recipient:
                if not self._drop_refusal(recipient):
                    break
            while len(self) + count > self.total:
                if not self._drop_refusal(None):
                    break
        return self._lines[recipient] + count <= self.per_recipient and (
            len(self) + count <= self.total
        )

    def _drop_refusal(self, recipient: str | None) -> bool:
        """Drop `recipient`'s oldest waiting refusal (None: the oldest of
        all); False when there is none."""
        refusals = self._waiting[Kind.REFUSAL]
        if recipient is None and refusals:
            recipient = min(refusals, key=lambda r: refusals[r][0].queued)
        messages = refusals.get(recipient) if recipient is not None else None
        if not messages:
            return False
        self._drop(messages.popleft())
        if not messages:
            del refusals[recipient]
        return True

    def _drop(self, message: Message) -> None:
        self._count(message.recipient, -len(message.lines))
        message.lines.clear()

    def _count(self, recipient: str, lines: int) -> None:
        self._lines[recipient] += lines
        if self._lines[recipient] <= 0:
            del self._lines[recipient]

    def forget_queries(self) -> None:
        """The connection is gone: its requests mean nothing to the next one."""
        waiting = self._waiting[Kind.ANSWER]
        for recipient, messages in list(waiting.items()):
            for query in [m for m in messages if m.kind is Kind.QUERY]:
                self._drop(query)
                messages.remove(query)
            if not messages:
                del waiting[recipient]

    # --- sending ---------------------------------------------------------

    def take(self) -> tuple[str, Message] | None:
        """The next line to send and its message (with no lines left after
        the last); None when nothing is waiting.  Stale refusals are dropped."""
        now = time.monotonic()
        for tier in TIERS:
            waiting = self._waiting[tier]
            while waiting:
                recipient = min(waiting, key=lambda r: self._served.get(r, -1.0))
                messages = waiting[recipient]
                message = messages[0]
                if tier is Kind.REFUSAL and now - message.queued > self.refusal_ttl:
                    self._drop(messages.popleft())
                    line = None
                else:
                    line = message.lines.popleft()
                    self._count(recipient, -1)
                    self._served[recipient] = now
                    if not message.lines:
                        messages.popleft()
                if not messages:
                    del waiting[recipient]
                if line is not None:
                    self._forget_idle(now)
                    return line, message
        return None

    def _forget_idle(self, now: float) -> None:
        """Keep `_served` small: who was served long ago is a newcomer again."""
        if len(self._served) > MAX_LINES:
            self._served = {r: t for r, t in self._served.items() if now - t < self.refusal_ttl}

    async def run(self, ready: Callable[[], bool], write: Callable[[str], None]) -> None:
        """Send lines while `ready()`, as the server's count allows (the
        meter), until cancelled."""
        while True:
            while not (len(self) and ready()):
                self.wakeup.clear()
                await self.wakeup.wait()
            await self.meter.room(1)
            if not ready():
                continue  # lost meanwhile: the lines wait for the next connection
            taken = self.take()
            if taken is None:
                continue
            line, message = taken
            cost = self.meter.cost(line)
            if cost > 1:  # a WHOIS: it waits for its room, and is lost with the connection
                await self.meter.room(cost)
                if not ready():
                    continue
            try:
                write(line)
            except Exception:
                log.exception("cannot send", line=line[:80])
                continue
            if not message.lines and message.on_sent is not None:
                try:
                    message.on_sent()
                except Exception:
                    log.exception("on_sent failed")
