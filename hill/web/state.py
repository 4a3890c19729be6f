"""What the pages show: consistent, cached views of the hill.

The bot may change the hill at any moment (another thread, or another process
through SQLite), so every view is taken at one event, one hill state, and
cached under its id: a page never mixes two states, and while the hill does
not change a request costs one small query.  The reads (hill.store.queries: plain
data) block (SQLite), so they run in threads.  Nothing here changes the hill:
the web report reads a database the bot or `bfjoust hill` made.  The
snapshots and the history are kept in cache.StateCache (made once per state
however many ask at once).  Battles are battles/store.py's.  `event()` is a
hill state's change as every page's JSON gives it.
"""

from __future__ import annotations

import bisect
import datetime as dt
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from aiohttp import web

from hill.errors import NotFound
from hill.rules import names
from hill.rules.events import ARRIVALS, iso_utc
from hill.rules.standings import Entry, Standings
from hill.rules.statistics import Statistics, hill_statistics
from hill.store.queries import HillEvent, HillQueries
from hill.web.cache import StateCache
from hill.web.reader_thread import ThreadedReader

READ_THREADS = 2
SNAPSHOTS = 16  # hill states kept


def event(change: HillEvent | None) -> dict[str, Any] | None:
    """A hill state's change, as every page's JSON gives it."""
    if change is None:
        return None
    return {
        "id": change.id,
        "time": iso_utc(change.time),
        "kind": change.kind,
        "actor": change.actor,
        "summary": change.summary,
        "commit": change.commit,
        "program": change.program,
        "displaced": change.displaced,
        "size": len(change.entries),
        "contest": change.contest,  # the contest whose files it publishes
    }


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
class Timeline:
    """Every change of the hill, oldest first (built once per hill state, read
    by every request until the next change)."""

    changes: tuple[HillEvent, ...]

    @property
    def key(self) -> tuple[Any, ...]:
        """What the pages of the whole history depend on: its last change."""
        last = self.changes[-1] if self.changes else None
        return ("history", len(self.changes), last and last.id, last and last.commit)

    @cached_property
    def _ids(self) -> list[int]:
        return [c.id for c in self.changes]

    def upto(self, event_id: int) -> tuple[HillEvent, ...]:
        return self.changes[: bisect.bisect_right(self._ids, event_id)]

    def find(self, event_id: int) -> HillEvent | None:
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

    event: HillEvent | None
    standings: Standings
    ages: dict[int, int]  # program id: challenges survived

    @property
    def commit(self) -> str | None:
        return self.event.commit if self.event else None

    def index(self, full_name: str) -> int:
        """The rank-order index of a program in this state; NotFound if absent."""
        index = self.standings.index(full_name) if names.is_full_name(full_name) else None
        if index is not None:
            return index
        raise NotFound(f"no program {full_name} on the hill in this state")

    def entry(self, full_name: str) -> Entry:
        return self.standings.entries[self.index(full_name)]

    @cached_property
    def statistics(self) -> Statistics:
        """docs/statistics.md for this state: computed once, as the snapshot is
        cached per state (HillReader computes it in its read threads)."""
        return hill_statistics(self.standings.outcomes, self.standings.method)


def ages(standings: Standings, changes: tuple[HillEvent, ...]) -> dict[int, int]:
    """Challenges each program has survived since it arrived (all in `changes`)."""
    arrivals = {c.program_id: c.id for c in changes if c.program_id is not None}
    challenges = [c.id for c in changes if c.kind in ARRIVALS]
    return {
        e.program.id: len(challenges) - bisect.bisect_right(challenges, arrivals[e.program.id])
        for e in standings.entries
    }


class HillReader(ThreadedReader):
    """The read side of the web pages: snapshots, history and sources."""

    def __init__(self, queries: HillQueries) -> None:
        super().__init__(READ_THREADS, "web-read")
        self.queries = queries
        self._history: StateCache[str, Timeline] = StateCache(1)
        self._snapshots: StateCache[int, Snapshot] = StateCache(SNAPSHOTS)
        self.latest: int | None = None  # the current state's event, as last read

    async def history(self) -> Timeline:
        """Every change up to the current state (read again when the hill changes)."""
        state = await self._shared(self.queries.latest_state)
        return await self._history_at(state)

    async def _history_at(self, state: tuple[int, str | None] | None) -> Timeline:
        self.latest = state[0] if state else None

        async def read() -> Timeline:
            return Timeline(tuple(await self._run(self.queries.changes)))

        return await self._history.get("history", state, read)

    async def snapshot(self, event_id: int | None = None) -> Snapshot:
        """The hill after event `event_id` (default: now); NotFound if no such state."""
        state = await self._shared(self.queries.latest_state)
        history = await self._history_at(state)
        if event_id is None:
            if state is None:
                return Snapshot(None, Standings.empty(self.queries.ranking), {})
            event_id = state[0]
        change = history.find(event_id) or await self._in_force(history, event_id)

        async def read() -> Snapshot:
            standings = await self._run(self.queries.standings_at, change.id)
            made = Snapshot(change, standings, ages(standings, history.upto(change.id)))
            await self._run(getattr, made, "statistics")  # off the event loop
            return made

        return await self._snapshots.get(change.id, change.commit, read)

    async def _in_force(self, history: Timeline, event_id: int) -> HillEvent:
        """The state in force at an event that is no change of the hill (a
        `!bfjoust-test` trial, which takes an event id but changes nothing)."""
        change_id = await self._run(self.queries.change_in_force, event_id)
        change = None if change_id is None else history.find(change_id)
        if change is None:
            raise NotFound(f"no hill state {event_id}")
        return change

    async def code(self, snapshot: Snapshot, full_name: str) -> bytes:
        return await self._run(self.queries.program_code, snapshot.entry(full_name).program.id)


READER = web.AppKey("reader", HillReader)
