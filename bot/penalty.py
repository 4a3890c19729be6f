"""The bot's lines as the server counts them: its flood penalty.

How InspIRCd 3 counts (its `<connect>` class: `threshold`, `commandrate`,
`fakelag`; src/command_parse.cpp, src/users.cpp, src/usermanager.cpp):

- every line a client sends adds the penalty of its command: 1 for most,
  2 for JOIN and WHOIS, 5 for PART, 4 for a NICK once registered; nothing
  for the NICK and USER of registration or for a PONG answering the
  server's PING (`PENALTIES`);
- the count starts again from zero once the client is registered;
- once a second the server forgives `commandrate / 1000` of it, when its
  main loop comes round and finds the clock on a new second: the loop
  waits for the clients' lines up to a second, and lines that wake it are
  read before it looks at the clock, so the forgiving can come up to a
  second after the second began; a loop held up longer than a second (a
  loaded machine) forgives once all the same, so seconds can be lost;
- a client whose penalty reaches `threshold` after a line is cut off
  ("Excess Flood") in a class without fakelag; with fakelag, its lines wait.

The bot keeps the same count (`PenaltyMeter`), from above: every line it
writes is charged, and a second's forgiving is counted only where it
surely fell.  The bot does not know where the server's seconds begin, only
that one begins within each second after registration; so a second
forgives (`rate`, and only `FORGIVEN` of it, what a loaded server's lost
seconds cannot outrun) the lines sent before it surely began, and counts
from the moment it surely came (two seconds on, and `LATE`).  A line goes
out only while the count stays within `burst` (`[irc] burst`, below the
server's threshold).  Some lines cannot wait (registration, PONG); the
others wait their turn, the bot's own (JOIN, WHO, PING) before the
players' answers.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

PENALTIES = {  # InspIRCd 3's penalty of the commands the bot may send; others: 1
    "JOIN": 2,
    "WHOIS": 2,
    "WHOWAS": 2,
    "TOPIC": 2,
    "PART": 5,
    "INVITE": 4,
    "LIST": 5,
    "USER": 0,
    "PASS": 0,
    "PONG": 0,
}
NICK_PENALTY = 4  # a change of nick once registered (the registration's NICK is free)
FORGIVEN = 0.9  # the share of the server's forgiving the bot counts on
LATE = 0.1  # how late past its second the server's forgiving may come (a busy loop)


def penalty(line: str, registered: bool) -> int:
    """What `line` adds to the server's count."""
    command = line.split(" ", 1)[0].upper()
    if command == "NICK":
        return NICK_PENALTY if registered else 0
    return PENALTIES.get(command, 1)


class PenaltyMeter:
    """The penalty the server counts against this connection, from above:
    `rate` of it forgiven a second (`[irc] messages_per_second`, the
    class's commandrate / 1000), and no more than `burst` at any moment."""

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._urgent = 0  # waiters that go first (the bot's own lines)
        self.reset()

    def reset(self, *, registered: bool = False) -> None:
        """A new connection, or registration done: the server counts from zero."""
        self.registered = registered
        self._origin = self.clock()  # the n-th second begins within n-1..n after it
        self._seconds = 0  # seconds surely come and counted
        self._settled = 0.0  # what those seconds left of the lines sent before them
        self._recent: deque[tuple[float, int]] = deque()  # (when, penalty) of the others

    def _settle(self) -> float:
        """Count the seconds surely come; the time the next one surely comes."""
        now = self.clock()
        if not self._recent and not self._settled:  # nothing to forgive: skip ahead
            self._seconds = max(self._seconds, int(now - self._origin - 2 - LATE))
        while now >= (due := self._origin + self._seconds + 2 + LATE):
            self._seconds += 1
            began = self._origin + self._seconds - 1  # this second surely began after
            sent = 0
            while self._recent and self._recent[0][0] <= began:
                sent += self._recent.popleft()[1]
            self._settled = max(0.0, self._settled + sent - self.rate * FORGIVEN)
        return due

    @property
    def count(self) -> float:
        """The server's count at most, now."""
        self._settle()
        return self._settled + sum(cost for _, cost in self._recent)

    def cost(self, line: str) -> int:
        return penalty(line, self.registered)

    def charge(self, line: str) -> None:
        """`line` was written."""
        cost = self.cost(line)
        if cost:
            self._recent.append((self.clock(), cost))

    def fits(self, cost: float) -> bool:
        """Whether a line of `cost` may go now (an empty count takes any line)."""
        count = self.count
        return count == 0 or count + cost <= self.burst

    def free(self, cost: float) -> bool:
        """Whether a line of `cost` may go now, no urgent line waiting."""
        return not self._urgent and self.fits(cost)

    async def room(self, cost: float, *, urgent: bool = False) -> None:
        """Wait until a line of `cost` may go; `urgent` lines go before the others."""
        self._urgent += urgent
        try:
            while not (self.fits(cost) and (urgent or not self._urgent)):
                await asyncio.sleep(max(0.0, self._settle() - self.clock()) + 0.001)
        finally:
            self._urgent -= urgent
