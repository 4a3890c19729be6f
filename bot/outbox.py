"""The outbox: every line the bot sends to the server, at a pace it accepts.

Lines go out as the server's flood count allows (bot.penalty), a line at a
time from what waits, in fair turns (bot.backlog): the line whose turn it
is is chosen when the count has room for it, so an answer just asked goes
before a backlog's next line.  Answers wait across disconnections; queries
do not.

Text enters here and only here (`add_text`), made plain (bot.text.plain)
and split to fit IRC lines.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

import structlog

from bot.backlog import Backlog, Kind
from bot.penalty import PenaltyMeter
from bot.text import plain, split_text

log = structlog.get_logger(__name__)


class Outbox:
    """Waiting messages (bot.backlog), sent fairly by `run()`."""

    def __init__(self, meter: PenaltyMeter, *, backlog: Backlog | None = None) -> None:
        self.meter = meter
        self.backlog = backlog if backlog is not None else Backlog()
        self.wakeup = asyncio.Event()  # something was queued, or the client became ready
        self.backlog.on_add = self.wakeup.set

    def __len__(self) -> int:
        return len(self.backlog)

    def add_text(
        self,
        command: str,
        target: str,
        text: str | list[str],
        *,
        budget: int,
        prefix: str = "",
        kind: Kind = Kind.ANSWER,
        recipient: str = "",
        on_sent: Callable[[], None] | None = None,
        asked: float | None = None,
    ) -> bool:
        """Queue `prefix + text` (made plain) to `target`, in as many lines as
        fit `budget` bytes of text each (a list: paragraphs, each from a line
        of its own), one answer to a request heard at `asked` (bot.backlog);
        False when the outbox has no room."""
        prefix = plain(prefix)
        paragraphs = [text] if isinstance(text, str) else text
        room = budget - len(prefix.encode())
        pieces = [piece for p in paragraphs for piece in split_text(plain(p), room)]
        lines = [f"{command} {target} :{prefix}{piece}" for piece in pieces]
        return self.backlog.add(kind, recipient or target, lines, on_sent, asked)

    def query(self, recipient: str, line: str) -> None:
        """Queue a request to the server about `recipient` (WHOIS), before
        their messages."""
        self.backlog.add(Kind.QUERY, recipient, [line])

    def take(self) -> str | None:
        """The next line, whatever the server's count (None: nothing waits)."""
        message = self.backlog.next()
        return None if message is None else self.backlog.pop(message)

    async def run(self, ready: Callable[[], bool], write: Callable[[str], None]) -> None:
        """Send lines while `ready()`, as the server's count allows, until
        cancelled."""
        while True:
            message = self.backlog.next() if ready() else None
            if message is None:
                self.wakeup.clear()
                await self.wakeup.wait()
                continue
            cost = self.meter.cost(message.lines[0])
            if not self.meter.free(cost):
                # room for it, or news: the next line may then be another's
                self.wakeup.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wakeup.wait(), self.meter.delay(cost) + 0.001)
                continue
            line = self.backlog.pop(message)
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
