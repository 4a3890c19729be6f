"""Limits: the outgoing line rate (a token bucket) and the submission rate
(sliding windows per user and in all)."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict, deque


class TokenBucket:
    """`rate` tokens a second, at most `burst` saved up: lines go out in a
    burst of `burst`, then steadily at `rate`, which servers do not count
    as flooding."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._stamp = time.monotonic()

    def _refill(self) -> None:
        now = time.monotonic()
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now

    async def take(self) -> None:
        """Wait for a token and spend it."""
        self._refill()
        while self._tokens < 1:
            await asyncio.sleep((1 - self._tokens) / self.rate)
            self._refill()
        self._tokens -= 1


class RateLimiter:
    """At most `per_user` events per user and `overall` in all, within any
    `window` seconds."""

    def __init__(self, per_user: int, overall: int, window: float) -> None:
        self.per_user = per_user
        self.overall = overall
        self.window = window
        self._users: defaultdict[str, deque[float]] = defaultdict(deque)
        self._all: deque[float] = deque()

    def _expire(self, stamps: deque[float], now: float) -> None:
        while stamps and stamps[0] <= now - self.window:
            stamps.popleft()

    def check(self, user: str) -> str | None:
        """Record an event for `user`; returns why it is refused, or None."""
        now = time.monotonic()
        for stamps in self._users.values():
            self._expire(stamps, now)
        self._expire(self._all, now)
        # users with nothing in the window are forgotten (the dict stays small)
        for key in [k for k, stamps in self._users.items() if not stamps]:
            del self._users[key]
        mine = self._users[user.lower()]
        if len(mine) >= self.per_user:
            wait = int(mine[0] + self.window - now) + 1
            return f"you have made {len(mine)} submissions recently; try again in {wait} s"
        if len(self._all) >= self.overall:
            wait = int(self._all[0] + self.window - now) + 1
            return f"the hill is taking too many submissions; try again in {wait} s"
        mine.append(now)
        self._all.append(now)
        return None

    def refund(self, user: str) -> None:
        """Forget `user`'s latest event: the hill refused it without a joust
        (a typo in a program should not cost a submission)."""
        mine = self._users.get(user.lower())
        if mine:
            stamp = mine.pop()
            self._all.remove(stamp)
