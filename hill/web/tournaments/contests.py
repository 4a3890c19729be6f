"""The contest pages (docs/contests.md): `/contests` (JSON `/api/contests`),
the open ones with a live countdown, then the closed and played ones; and
each contest at `/contest/NAME` (JSON `/api/contest/NAME`): the contract of
`bfjoust contest show --json`, and more for the page.

While a contest is open its pages show the entrants and the time left,
never the code nor anything made from it (hill.store.contests hides it).
Once played: the standings with each player's share of the match wins and
the controls marked, the crosstable with a sample battle per pair and the
reality show (the tournament pages' data, reader.py; a big tournament's
from its table, its pieces on its own page), and the command that
recomputes the results from a clone of the hill's history.  While it
plays, its progress is a few counts (reader.progress), never the
tournament read whole.

A page follows its contests by asking its JSON twin with what it shows
(`?seen=`, the key of `watch_key`, which static/contest.js builds alike):
the answer is held until that changes (hill/web/changes.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from hill.errors import NotFound
from hill.rules import contests as rules
from hill.rules.contests import ContestState
from hill.rules.events import iso_utc, utcnow
from hill.store.contests import ContestView, contest, contests
from hill.store.database import Database
from hill.web.changes import CHANGES
from hill.web.reader_thread import ThreadedReader
from hill.web.tournaments.reader import TOURNAMENTS
from hill.web.urls import clone_url

CLONE_FOLDER = "hill"  # what the page's clone command names its folder
SETTLE_SECONDS = 1.0  # a page following its contests is told at most this often
DETAIL = ("programs", "samples", "crosstable", "thumbnails", "eliminations", "bump_chart")


class ContestReader(ThreadedReader):
    """The contests, read in a thread of their own (SQLite blocks)."""

    def __init__(self, db: Database) -> None:
        super().__init__(1, "web-contests")
        self.db = db

    async def all(self) -> list[ContestView]:
        return await self._run(contests, self.db)

    async def one(self, name: str) -> ContestView:
        if not rules.NAME.fullmatch(name):
            raise NotFound(f"no contest {name[:40]!r}: names are letters, digits, _ and -")
        view = await self._run(contest, self.db, name)
        if view is None:
            raise NotFound(f"there is no contest {name}")
        return view


CONTESTS = web.AppKey("contests", ContestReader)


def summary(view: ContestView, now: Any) -> dict[str, Any]:
    """A contest at a glance, for the list."""
    return {
        "name": view.name,
        "title": view.title,
        "format": view.format,
        "closes": iso_utc(view.closes),
        "state": view.state.value,
        "seconds_left": view.seconds_left(now),
        "entrants": len(view.players),
        "winner": view.winner,
        "void_reason": view.void_reason,
    }


def watch_key(views: list[ContestView], progress: dict[str, Any] | None = None) -> str:
    """Where the contests stand, as a page following them compares it:
    each one's NAME:STATE, sorted ("none" for none), and a tournament's
    matches committed (static/contest.js builds it alike from the JSON)."""
    key = " ".join(sorted(f"{view.name}:{view.state.value}" for view in views)) or "none"
    return key if progress is None else f"{key} progress:{progress['matches_committed']}"


async def contest_list(request: web.Request) -> dict[str, Any]:
    async def read() -> tuple[str, list[ContestView]]:
        views = await request.app[CONTESTS].all()
        return watch_key(views), views

    seen = request.query.get("seen")
    views = await request.app[CHANGES].after(seen, read, SETTLE_SECONDS)
    now = utcnow()
    return {"now": iso_utc(now), "contests": [summary(v, now) for v in views]}


async def contest_page(request: web.Request) -> dict[str, Any]:
    tournaments = request.app[TOURNAMENTS]

    async def read() -> tuple[str, tuple[ContestView, dict[str, Any] | None]]:
        view = await request.app[CONTESTS].one(request.match_info["name"])
        progress = None
        if view.tournament_id is not None:
            progress = await tournaments.progress(view.tournament_id)
        return watch_key([view], progress), (view, progress)

    seen = request.query.get("seen")
    view, progress = await request.app[CHANGES].after(seen, read, SETTLE_SECONDS)
    now = utcnow()
    data: dict[str, Any] = {
        **view.to_json(),  # the contract of `bfjoust contest show --json`
        "seconds_left": view.seconds_left(now),
        "entrants": len(view.players),
        "void_reason": view.void_reason,
        "control_entries": [{"name": c.entrant, "code_hash": c.code_hash} for c in view.controls],
        "now": iso_utc(now),
        "created_at": iso_utc(view.created_at),
        "created_by": view.created_by,
        "closed_at": view.closed_at and iso_utc(view.closed_at),
        "closed_by": view.closed_by,
        "tournament_id": view.tournament_id,
        "standings": view.standings(),
        "progress": None,
        "recompute": None,
        **dict.fromkeys(DETAIL),
    }
    if view.tournament_id is not None:
        data["progress"] = progress
        if view.state == ContestState.PLAYED:
            played = await tournaments.played(view.tournament_id)
            data.update({key: played[key] for key in DETAIL})
    if view.result is not None:
        data["recompute"] = {
            "clone": f"git clone {clone_url(request)} {CLONE_FOLDER}",
            "folder": f"{CLONE_FOLDER}/{rules.folder(view.name)}",
            "command": rules.recompute_command(view.result),
        }
    return data
