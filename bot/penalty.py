"""The bot's lines as the server counts them: its flood penalty.

Servers cut off a client that sends too much too fast ("Excess Flood").
InspIRCd 3 counts a penalty per command (`<connect>` `threshold`,
`commandrate`; src/command_parse.cpp, src/usermanager.cpp): 1 for most
lines, 2 for JOIN and WHOIS, 5 for PART, 4 for a NICK once registered,
nothing for registration's NICK and USER or for a PONG (`PENALTIES`);
once a second, when its loop comes round, it forgives `commandrate /
1000`, and a client whose count reaches `threshold` is cut off (or, with
`fakelag`, made to wait).  ircd-hybrid (and Libera.Chat's solanum) reads 5
lines at once, then 2 each time a once-a-second timer comes round (it cut
the bot off at 1.8 lines a second), and cuts off a client whose unread
lines pass its receive queue (2560 bytes by default); ngircd reads 3 lines at a
time, slower past a kilobyte a second, and never cuts a client off for its
pace.  A bot within InspIRCd's count at one line a second is within all
three.

The bot keeps that count from above (`PenaltyMeter`): a bucket that every
line written fills by its penalty and that empties steadily at `FORGIVEN`
of `[irc] messages_per_second`; a line goes out only while the bucket stays
within `[irc] burst` (an empty bucket takes any line).  The server forgives
in steps, once a second and up to a second late (a line that wakes its loop
is counted before it looks at the clock), so its count may stand up to two
seconds' forgiving above the bucket: `burst + 2 * messages_per_second` must
stay below the server's threshold (the defaults: 4 + 2 against InspIRCd's
usual 10, or 8 in the tests' strict class).  Lines that cannot wait
(registration, PONG) are charged and go at once; the bot's own (JOIN, WHO,
PING) wait before the players' answers (`urgent`).
"""

from __future__ import annotations

import asyncio
import time
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
FORGIVEN = 0.9  # the share of the server's forgiving the bot counts on (a busy server loses some)


def penalty(line: str, registered: bool) -> int:
    """What `line` adds to the server's count."""
    command = line.split(" ", 1)[0].upper()
    if command == "NICK":
        return NICK_PENALTY if registered else 0
    return PENALTIES.get(command, 1)


class PenaltyMeter:
    """The penalty the server counts against this connection, from above:
    `rate` of it forgiven a second (the class's commandrate / 1000), and
    no more than `burst` at any moment."""

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = burst
        self.clock = clock
        self._urgent: list[float] = []  # the costs of the lines that go first (the bot's own)
        self.reset()

    def reset(self, *, registered: bool = False) -> None:
        """A new connection, or registration done: the server counts from zero."""
        self.registered = registered
        self._count = 0.0
        self._stamp = self.clock()

    @property
    def count(self) -> float:
        """The server's count at most, now (but for its late forgiving)."""
        now = self.clock()
        self._count = max(0.0, self._count - (now - self._stamp) * self.rate * FORGIVEN)
        self._stamp = now
        return self._count

    def cost(self, line: str) -> int:
        return penalty(line, self.registered)

    def charge(self, line: str) -> None:
        """`line` was written."""
        self._count = self.count + self.cost(line)

    def fits(self, cost: float) -> bool:
        """Whether a line of `cost` may go now (an empty count takes any line)."""
        count = self.count
        return count == 0 or count + cost <= self.burst

    def free(self, cost: float) -> bool:
        """Whether a line of `cost` may go now, no urgent line waiting."""
        return not self._urgent and self.fits(cost)

    def delay(self, cost: float) -> float:
        """Seconds until a line of `cost` fits (or, for a line that is not
        urgent, the urgent lines waiting), no other line sent meanwhile."""
        count, cost = self.count, max([cost, *self._urgent])
        return max(0.0, min(count + cost - self.burst, count)) / (self.rate * FORGIVEN)

    async def room(self, cost: float, *, urgent: bool = False) -> None:
        """Wait until a line of `cost` may go; `urgent` lines go before the others."""
        if urgent:
            self._urgent.append(cost)
        try:
            while not (self.fits(cost) and (urgent or not self._urgent)):
                await asyncio.sleep(self.delay(cost) + 0.001)
        finally:
            if urgent:
                self._urgent.remove(cost)
