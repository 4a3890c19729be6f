"""Limits: the outgoing line rate (a token bucket), the commands one user
may send (a token bucket each), and the submission rate (sliding windows per
user and in all)."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque
from dataclasses import dataclass

PRUNE_AT = 1000  # users remembered before idle ones are forgotten


class TokenBucket:
    """`rate` tokens a second, at most `burst` saved up: lines go out in a
    burst of `burst`, then steadily at `rate`, which servers do not count
    as flooding.  A line may cost more than one token (servers charge more
    for some commands, e.g. WHOIS and JOIN), and lines that cannot wait are
    charged all the same (`spend`): the bucket runs into debt, and what
    waits, waits longer."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    @property
    def full(self) -> bool:
        self._refill()
        return self._tokens >= self.burst

    def try_take(self) -> bool:
        """Spend a token if there is one."""
        self._refill()
        if self._tokens < 1:
            return False
        self._tokens -= 1
        return True

    def spend(self, cost: float) -> None:
        """Charge `cost` tokens now, into debt if need be."""
        self._refill()
        self._tokens -= cost

    async def take(self, cost: float = 1) -> None:
        """Wait until a token is saved up, and spend `cost`."""
        self._refill()
        while self._tokens < 1:
            await asyncio.sleep((1 - self._tokens) / self.rate)
            self._refill()
        self._tokens -= cost


class CommandGate:
    """At most `burst` commands at once from one user, then `rate` a second;
    the rest are ignored without an answer (answering a flood would be a
    flood of answers)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._buckets: dict[str, TokenBucket] = {}
        self.ignored: dict[str, int] = {}  # commands ignored in a row, by user

    def admit(self, user: str) -> bool:
        if len(self._buckets) >= PRUNE_AT:
            self._buckets = {u: b for u, b in self._buckets.items() if not b.full}
            self.ignored = {u: n for u, n in self.ignored.items() if u in self._buckets}
        bucket = self._buckets.setdefault(user, TokenBucket(self.rate, self.burst))
        if bucket.try_take():
            self.ignored.pop(user, None)
            return True
        self.ignored[user] = self.ignored.get(user, 0) + 1
        return False


@dataclass(frozen=True)
class Refusal:
    """Why a submission is refused, and whether the user was already told
    so in this window (then the bot says nothing: once is enough)."""

    reason: str
    told: bool


class RateLimiter:
    """At most `per_user` events per user and `overall` in all, within any
    `window` seconds."""

    def __init__(self, per_user: int, overall: int, window: float) -> None:
        self.per_user = per_user
        self.overall = overall
        self.window = window
        self._users: defaultdict[str, deque[float]] = defaultdict(deque)
        self._all: deque[float] = deque()
        self._told: dict[str, float] = {}  # user -> until when they know they are refused

    def _expire(self, stamps: deque[float], now: float) -> None:
        while stamps and stamps[0] <= now - self.window:
            stamps.popleft()

    def check(self, user: str) -> Refusal | None:
        """Record an event for `user`; returns why it is refused, or None."""
        now = time.monotonic()
        for stamps in self._users.values():
            self._expire(stamps, now)
        self._expire(self._all, now)
        # users with nothing in the window are forgotten (the dict stays small)
        for key in [k for k, stamps in self._users.items() if not stamps]:
            del self._users[key]
        self._told = {k: until for k, until in self._told.items() if until > now}
        user = user.lower()
        mine = self._users[user]
        if len(mine) >= self.per_user:
            free = mine[0] + self.window
            reason = f"you have made {len(mine)} submissions recently"
        elif len(self._all) >= self.overall:
            free = self._all[0] + self.window
            reason = "the hill is taking too many submissions"
        else:
            mine.append(now)
            self._all.append(now)
            return None
        told = user in self._told
        self._told[user] = free
        return Refusal(f"{reason}; try again in {int(free - now) + 1} s", told)

    def refund(self, user: str) -> None:
        """Forget `user`'s latest event: the hill refused it without a joust
        (a typo in a program should not cost a submission), or it could not
        be queued ("busy")."""
        mine = self._users.get(user.lower())
        if mine:
            stamp = mine.pop()
            self._all.remove(stamp)
