"""The hill's scheduler: who changes the hill when, and what wakes them.

The work that changes a hill served by the bot takes turns (turns.py), one
piece at a time, in one order: a player's request, then a contest's steps,
then tournaments, then the all-time ladder, then the statistics backfill.
Nothing looks for work on an interval; each kind of work sleeps on an
event and is woken:

- by the code that made the change, in the same process (a command
  recorded a request: the runner; an admin started a tournament: its host);
- by the hill's bell (hill.store.bell), for a change committed by another
  process (the web report's upload form, the command line beside the bot):
  `Scheduler.changed` wakes every kind of work, each reads what it needs;
- by a timer, for a moment known in advance (a contest's deadline and
  reminders, the ladder's rate, a retry after the storage failed).

The journeys that run through several of these (a contest's close, play
and publication; a tournament's play) are written once, in journeys.py,
and driven the same way by the bot and the command line.
docs/architecture.md draws the whole.

May import: hill.writers, hill.play, hill.store, hill.engine, hill.rules and
the base modules.  Never the web, the command line or the bot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from hill.scheduler.turns import Priority, Turns
from hill.store.bell import listen
from hill.writers.hill import Hill

__all__ = ["Priority", "Scheduler", "Turns"]


class Scheduler:
    """The turns at one hill, and the wake-ups of the work that takes them
    (made on the event loop that runs that work)."""

    def __init__(self, hill: Hill) -> None:
        self.hill = hill
        self.turns = Turns()
        self._woken: list[Callable[[], None]] = []
        self._bell: asyncio.DatagramTransport | None = None

    def on_change(self, wake: Callable[[], None]) -> None:
        """Call `wake()` whenever another process changed the hill."""
        self._woken.append(wake)

    def changed(self) -> None:
        """The hill changed elsewhere: wake every kind of work."""
        for wake in self._woken:
            wake()

    async def start(self) -> None:
        """Listen to the hill's bell."""
        self._bell = await listen(self.hill.db.path, self.changed)

    def close(self) -> None:
        """Stop: no more turns (the piece under way finishes), no more bell."""
        self.turns.close()
        if self._bell is not None:
            self._bell.close()
            self._bell = None
