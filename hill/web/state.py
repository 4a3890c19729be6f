"""What the pages show: consistent, cached views of the hill.

The bot may change the hill at any moment (another thread, or another process
through SQLite), so every view is taken at one event, one hill state, and
cached under its id: a page never mixes two states, and while the hill does
not change a request costs one small query.  The Hill's reads block
(SQLite), so they run in a thread.  Battles are trace_store.py's.
"""

from __future__ import annotations

import asyncio
import bisect
import datetime as dt
from collections import OrderedDict
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar

from aiohttp import web

from hill.service import NAME, OWNER, Hill
from hill.standings import Entry, Standings

# the events a program on the hill has survived: every newcomer is a challenge
CHALLENGES = ("join", "challenge", "update")

T = TypeVar("T")
READ_THREADS = 2


class NotFound(LookupError):
    """Something a URL names does not exist; the message is shown to the reader."""


def valid_name(full_name: str) -> bool:
    owner, dot, name = full_name.partition(".")
    return bool(dot) and bool(OWNER.fullmatch(owner)) and bool(NAME.fullmatch(name))


@dataclass(frozen=True)
class Change:
    """One hill event, with the names of the programs it concerns."""

    id: int
    time: dt.datetime
    kind: str
    actor: str
    summary: str
    commit: str | None
    program: str | None  # who arrived
    displaced: str | None  # who left
    program_id: int | None
    method: str
    # the stored standings after it: {"name", "rank", "points", "scores", ...}
    entries: tuple[dict[str, Any], ...] = field(repr=False)


@dataclass(frozen=True)
class Point:
    """A program's place in one hill state, for its chart."""

    event: int
    time: dt.datetime
    rank: int
    size: int
    score: float
    points: float


@dataclass(frozen=True)
class History:
    """Every change of the hill, oldest first (built once per hill state, read
    by every request until the next change)."""

    changes: tuple[Change, ...]

    @cached_property
    def _ids(self) -> list[int]:
        return [c.id for c in self.changes]

    def upto(self, event_id: int) -> tuple[Change, ...]:
        return self.changes[: bisect.bisect_right(self._ids, event_id)]

    def find(self, event_id: int) -> Change | None:
        i = bisect.bisect_left(self._ids, event_id)
        return self.changes[i] if i < len(self._ids) and self._ids[i] == event_id else None

    @cached_property
    def names(self) -> list[str]:
        """Every program that has been on the hill, by name."""
        return sorted({e["name"] for c in self.changes for e in c.entries})

    def series(self, full_name: str) -> list[Point]:
        """The program's rank and score in every state it was part of."""
        points = []
        for change in self.changes:
            for record in change.entries:
                if record["name"] == full_name:
                    points.append(
                        Point(
                            event=change.id,
                            time=change.time,
                            rank=record["rank"],
                            size=len(change.entries),
                            score=record["scores"][change.method],
                            points=record["points"],
                        )
                    )
        return points


@dataclass(frozen=True)
class Snapshot:
    """The hill in one state: the standings after event `event` (None: empty hill)."""

    event: Change | None
    standings: Standings
    ages: dict[int, int]  # program id: challenges survived

    @property
    def commit(self) -> str | None:
        return self.event.commit if self.event else None

    def index(self, full_name: str) -> int:
        """The rank-order index of a program in this state; NotFound if absent."""
        index = self.standings.index(full_name) if valid_name(full_name) else None
        if index is not None:
            return index
        raise NotFound(f"no program {full_name} on the hill in this state")

    def entry(self, full_name: str) -> Entry:
        return self.standings.entries[self.index(full_name)]


def ages(standings: Standings, changes: tuple[Change, ...]) -> dict[int, int]:
    """Challenges each program has survived since it arrived (all in `changes`)."""
    arrivals = {c.program_id: c.id for c in changes if c.program_id is not None}
    challenges = [c.id for c in changes if c.kind in CHALLENGES]
    return {
        e.program.id: len(challenges) - bisect.bisect_right(challenges, arrivals[e.program.id])
        for e in standings.entries
    }


class _Cache(OrderedDict[Hashable, Any]):
    """A small least-recently-used cache."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def get_or(self, key: Hashable) -> Any:
        if key in self:
            self.move_to_end(key)
            return self[key]
        return None

    def put(self, key: Hashable, value: T) -> T:
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)
        return value


class HillReader:
    """The read side of the web pages: snapshots, history and sources."""

    def __init__(self, hill: Hill) -> None:
        self.hill = hill
        self._history: tuple[Any, History] | None = None
        self._snapshots = _Cache(16)
        self._building = asyncio.Lock()
        self.latest: int | None = None  # the current state's event, as last read
        # threads of its own: a flood of page requests never holds up the
        # bot's reads, which share the event loop's default threads
        self._threads = ThreadPoolExecutor(READ_THREADS, thread_name_prefix="web-read")

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._threads, function, *args)

    async def history(self) -> History:
        """Every change up to the current state (rebuilt when the hill changes)."""
        state = await self._run(self.hill.latest_state)
        return await self._history_at(state)

    async def _history_at(self, state: tuple[int, str | None] | None) -> History:
        self.latest = state[0] if state else None
        async with self._building:
            if self._history is None or self._history[0] != state:
                self._history = (state, await self._run(self._read_history))
            return self._history[1]

    def _read_history(self) -> History:
        names = self.hill.program_names()
        return History(
            tuple(
                Change(
                    id=e.id,
                    time=e.time,
                    kind=e.kind,
                    actor=e.actor,
                    summary=e.summary,
                    commit=e.commit,
                    program=names.get(e.program_id) if e.program_id else None,
                    displaced=names.get(e.displaced_id) if e.displaced_id else None,
                    program_id=e.program_id,
                    method=e.standings["method"],
                    entries=tuple(e.standings["entries"]),
                )
                for e in self.hill.changes()
            )
        )

    async def snapshot(self, event_id: int | None = None) -> Snapshot:
        """The hill after event `event_id` (default: now); NotFound if no such state."""
        state = await self._run(self.hill.latest_state)
        history = await self._history_at(state)
        if event_id is None:
            if state is None:
                empty = await self._run(self.hill.standings)
                return Snapshot(None, empty, {})
            event_id = state[0]
        change = history.find(event_id) or await self._in_force(history, event_id)
        key = (change.id, change.commit)
        cached = self._snapshots.get_or(key)
        if cached is None:
            standings = await self._run(self.hill.event_standings, change.id)
            cached = self._snapshots.put(
                key, Snapshot(change, standings, ages(standings, history.upto(change.id)))
            )
        return cached

    async def _in_force(self, history: History, event_id: int) -> Change:
        """The state in force at an event that is no change of the hill (a
        `!bfjoust-test` trial, which takes an event id but changes nothing).
        Ids are never reused, so those between two changes all exist."""
        earlier = history.upto(event_id)
        if not earlier or (earlier[-1] is history.changes[-1] and not await self._exists(event_id)):
            raise NotFound(f"no hill state {event_id}")
        return earlier[-1]

    async def _exists(self, event_id: int) -> bool:
        events = await self._run(self.hill.events)
        return any(e.id == event_id for e in events)

    async def code(self, snapshot: Snapshot, full_name: str) -> bytes:
        return await self._run(self.hill.program_code, snapshot.entry(full_name).program.id)


READER = web.AppKey("reader", HillReader)
