"""The outbox: every line the bot sends to the server, at a rate it accepts.

Lines go out as the server's flood count allows (bot.penalty: its
penalty per command, forgiven at `messages_per_second`, never above
`burst`), from what waits (bot.backlog), a line at a time in fair turns
(bot.turns): hosts and recipients in the order they came, every other line
to the shortest queue, so that no host's crowd and no player's many answers
hold up another's; answers go before refusals.  A backlog leaves the last
`reserve` of the server's count free, for a short answer just asked to go
at once.  Answers wait across disconnections; queries do not.

Text enters here and only here (`add_text`), made plain (bot.text.plain)
and split to fit IRC lines.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

import structlog

from bot.backlog import Backlog, Kind, Message
from bot.penalty import PenaltyMeter
from bot.text import plain, split_text

log = structlog.get_logger(__name__)

# the server's count a backlog leaves free for short answers (bot.backlog:
# short): half a line, as the count is forgiven 0.9 a second, costs a
# backlog almost nothing (46 lines in 50 s rather than 47, simulated), where
# a whole line would cost a fifth of the pace
RESERVE = 0.5


@dataclass(frozen=True)
class Choice:
    """The message the next line comes from, the room it needs in the
    server's count, and whether it goes before its turn."""

    message: Message
    need: float
    jump: bool = False


class Outbox:
    """Waiting messages (bot.backlog), sent fairly by `run()`."""

    def __init__(
        self, meter: PenaltyMeter, *, reserve: float = RESERVE, backlog: Backlog | None = None
    ) -> None:
        self.meter = meter
        # a reserve only where a line can still go past it (else half the pace)
        self.reserve = reserve if meter.burst >= 2 + reserve else 0
        self.backlog = backlog if backlog is not None else Backlog()
        self.wakeup = asyncio.Event()  # something was queued, or the client became ready
        self.backlog.on_add = self.wakeup.set

    def __len__(self) -> int:
        return len(self.backlog)

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
        return self.backlog.add(kind, recipient or target, lines, on_sent)

    def query(self, recipient: str, line: str) -> None:
        """Queue a request to the server about `recipient` (WHOIS), before
        their messages."""
        self.backlog.add(Kind.QUERY, recipient, [line])

    # --- sending ---------------------------------------------------------

    def choose(self) -> Choice | None:
        """Where the next line comes from, and the room it needs in the
        server's count: a short answer (bot.backlog: `short`) may take the
        last `reserve` of it, any other line leaves it free; and when only
        the reserve is free, a short answer goes before the turn's line (not
        twice in a row: bot.turns).  None when nothing waits."""
        message = self.backlog.next()
        if message is None:
            return None
        cost = self.meter.cost(message.lines[0])
        if not self.reserve or self.backlog.short(message):
            return Choice(message, cost)
        jumping = not self.backlog.turns.jumped and not self.meter.fits(cost + self.reserve)
        if jumping and (jumpers := self.backlog.shorts()):
            jumper = min(jumpers, key=lambda m: m.queued)
            return Choice(jumper, self.meter.cost(jumper.lines[0]), jump=True)
        return Choice(message, cost + self.reserve)

    def take(self) -> tuple[str, Message] | None:
        """The next line (`choose()`, whatever the count) and its message;
        None when nothing waits."""
        choice = self.choose()
        return None if choice is None else self.pop(choice)

    def pop(self, choice: Choice) -> tuple[str, Message]:
        """The next line of `choice`'s message, and the message (no lines
        left after its last)."""
        message = choice.message
        return self.backlog.pop(message, jumped=choice.jump), message

    async def _room_or_news(self, need: float) -> None:
        """Wait until the server's count has room for `need`, or something
        is queued (the next line may be another)."""
        self.wakeup.clear()
        waits = [
            asyncio.ensure_future(self.meter.room(need)),
            asyncio.ensure_future(self.wakeup.wait()),
        ]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()

    async def run(self, ready: Callable[[], bool], write: Callable[[str], None]) -> None:
        """Send lines while `ready()`, as the server's count allows (the
        meter), until cancelled."""
        while True:
            while not (len(self) and ready()):
                self.wakeup.clear()
                await self.wakeup.wait()
            choice = self.choose()
            if choice is None:
                continue
            if not self.meter.free(choice.need):
                await self._room_or_news(choice.need)
                continue  # choose again: the count, the queues, the connection may have changed
            line, message = self.pop(choice)
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
