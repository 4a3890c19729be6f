"""The analytics pages: a program's profile as `/api/profile/NAME` (its
page, /program/NAME, shows it: views.py), the hill's strategy map
`/strategy` (JSON `/api/strategy`), and the same map for a test's hill
(`/test/TOKEN/strategy`) and for a tournament's entrants
(`/tournament/ID/strategy`).  Their data is analytics_pages.py's, read by
analytics_reader.py; the pictures are analytics_charts.py's.

A strategy map shows at most analytics_pages.MAX_MAP programs, the first
by rank: beyond, a matrix stops being a picture anyone reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from aiohttp import web

from hill.store.database import Database
from hill.web import analytics_pages, pages
from hill.web.analytics_reader import ANALYTICS, AnalyticsReader
from hill.web.reader_thread import serve
from hill.web.state import Snapshot
from hill.web.tournament_reader import TOURNAMENTS
from hill.web.tournament_views import tournament_id
from hill.web.trial_views import TRIALS
from hill.web.urls import PATHS
from hill.web.views import json_response, last_state, name_param, page, snapshot

routes = web.RouteTableDef()


@routes.get(PATHS["profile-json"], name="profile-json")
async def profile(request: web.Request) -> web.Response:
    """A program's profile in the state asked for (its page shows the same)."""
    snap = await snapshot(request)
    name = name_param(request)
    if snap.standings.index(name) is None and "event" not in request.query:
        snap = await last_state(request, name)  # a program that left: as it stood last
    data = await request.app[ANALYTICS].profile(snap, name)  # NotFound: not in this state
    return json_response({"event": pages.event(snap.event), **data})


async def state_map(request: web.Request, snap: Snapshot, key: Any = None) -> dict[str, Any]:
    """The strategy map of a hill state (the first MAX_MAP programs)."""
    shown = min(snap.standings.size, analytics_pages.MAX_MAP)
    entries = snap.standings.entries[:shown]
    outcomes = snap.standings.outcomes[:shown, :shown]
    reader = request.app[ANALYTICS]
    if shown == snap.standings.size:  # the state's own analysis, which its profiles share
        analysis = await reader.state(snap, key)
    else:
        analysis = await reader.pool(
            ("map", key if key is not None else (snap.event.id if snap.event else None)),
            [e.program.full_name for e in entries],
            [e.program.code_hash for e in entries],
            outcomes,
            ~np.eye(shown, dtype=bool),
        )
    margins = outcomes.sum(axis=2, dtype=np.int64).astype(np.float64)
    data = analytics_pages.strategy(analysis, margins, [e.rank for e in entries], shown)
    data["size"] = snap.standings.size
    return data


@page("strategy", "strategy.html", routes)
async def strategy(request: web.Request) -> dict[str, Any]:
    snap = await snapshot(request)
    return {"event": pages.event(snap.event), "pool": "hill", **await state_map(request, snap)}


@page("test-strategy", "strategy.html", routes)
async def test_strategy(request: web.Request) -> dict[str, Any]:
    trial, snap = await request.app[TRIALS].trial(request.match_info["token"])
    data = await state_map(request, snap, ("test", trial.token))
    return {"event": pages.event(snap.event), "pool": "test", "trial": trial.token, **data}


@page("tournament-strategy", "strategy.html", routes)
async def tournament_strategy(request: web.Request) -> dict[str, Any]:
    number = tournament_id(request)
    names, programs, committed = await request.app[TOURNAMENTS].ranked(number)
    shown = names[: analytics_pages.MAX_MAP]
    hashes = [programs[name] for name in shown]
    key = ("tournament", number, committed)
    analysis, margins = await request.app[ANALYTICS].tournament(key, shown, hashes)
    ranks = list(range(1, len(shown) + 1))
    data = analytics_pages.strategy(analysis, margins, ranks, len(shown))
    data["size"] = len(names)
    return {"event": None, "pool": "tournament", "tournament": number, **data}


def setup(app: web.Application, db: Database) -> None:
    """Serve the analytics pages from the hill's database."""
    serve(app, ANALYTICS, AnalyticsReader(db), routes)
