"""Limits on what players ask: the commands one connection may send (a
token bucket each) and the submission rate (sliding windows per user, per
group of users and in all).  What the bot itself sends is paced by
bot.penalty."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

PRUNE_AT = 1000  # users remembered before idle ones are forgotten


class TokenBucket:
    """`rate` tokens a second, at most `burst` saved up: `burst` at once,
    then steadily at `rate`."""

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
    """Events (submissions) within any `window` seconds: at most `per_user`
    for one user, `overall` in all, and the overall budget shared fairly
    between groups of users (a user's group: their account, else their host,
    whose connections may carry any idents it likes).  While n groups take
    part, one may hold at most `overall // (n + 1)`: the `+ 1` keeps a share
    free for the next group to come, so that no group can take it all, and a
    newcomer is not refused because others came first."""

    def __init__(self, per_user: int, overall: int, window: float) -> None:
        self.per_user = per_user
        self.overall = overall
        self.window = window
        self._users: dict[str, deque[float]] = {}
        self._groups: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()
        self._group_of: dict[str, str] = {}  # user -> the group of their events
        self._told: dict[str, float] = {}  # user -> until when they know they are refused

    def _expire(self, now: float) -> None:
        """Forget what is out of the window (and users and groups with nothing in it)."""
        for table in (self._users, self._groups):
            for key, stamps in list(table.items()):
                while stamps and stamps[0] <= now - self.window:
                    stamps.popleft()
                if not stamps:
                    del table[key]
        while self._all and self._all[0] <= now - self.window:
            self._all.popleft()
        self._group_of = {u: g for u, g in self._group_of.items() if u in self._users}
        self._told = {k: until for k, until in self._told.items() if until > now}

    def share(self, group: str) -> int:
        """What one group may hold of the overall budget now, `group` taking part."""
        groups = len(self._groups) + (group.lower() not in self._groups)
        return max(1, self.overall // (groups + 1))

    def check(self, user: str, group: str = "") -> Refusal | None:
        """Record an event for `user` of `group` (default: a group of their
        own); returns why it is refused, or None."""
        now = time.monotonic()
        self._expire(now)
        user, group = user.lower(), (group or user).lower()
        mine = self._users.get(user, deque())
        ours = self._groups.get(group, deque())
        share = self.share(group)
        if len(mine) >= self.per_user:
            free = mine[0] + self.window
            reason = f"you have made {len(mine)} submissions recently"
        elif len(ours) >= share:
            free = ours[len(ours) - share] + self.window
            kind = group.partition(" ")[0] if " " in group else "group"
            reason = (
                f"your {kind} has had its share of the hill's submissions "
                f"({len(ours)} recently; others get their turn)"
            )
        elif len(self._all) >= self.overall:
            free = self._all[0] + self.window
            reason = "the hill is taking too many submissions"
        else:
            self._users.setdefault(user, deque()).append(now)
            self._groups.setdefault(group, deque()).append(now)
            self._all.append(now)
            self._group_of[user] = group
            return None
        told = user in self._told
        self._told[user] = free
        wait = int(free - now) + 1
        return Refusal(
            f"{reason}; try again in {wait} s (until then I ignore your submissions without a "
            f"word, so that a flood costs the channel nothing)",
            told,
        )

    def refund(self, user: str) -> None:
        """Forget `user`'s latest event: the hill refused it without a joust
        (a typo in a program should not cost a submission), or it could not
        be queued ("busy")."""
        user = user.lower()
        mine = self._users.get(user)
        if not mine:
            return
        stamp = mine.pop()
        self._all.remove(stamp)
        ours = self._groups.get(self._group_of.get(user, user))
        if ours is not None and stamp in ours:
            ours.remove(stamp)
