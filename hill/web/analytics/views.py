"""The analytics pages: a program's profile as `/api/profile/NAME` (its
page, /program/NAME, shows it: pages/views.py), the hill's strategy map
`/strategy` (JSON `/api/strategy`), and `state_map`, the same map for any
hill state (a test's hill: hill.web.trials; a tournament's entrants are
hill.web.tournaments').  Their data is data.py's, read by reader.py; the
pictures are hill.web.charts.analytics'.

A strategy map shows at most analytics_pages.MAX_MAP programs, the first
by rank: beyond, a matrix stops being a picture anyone reads.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from aiohttp import web

from hill.web.analytics import data as analytics_pages
from hill.web.analytics.reader import ANALYTICS
from hill.web.builds import json_response
from hill.web.params import last_state, name_param, snapshot
from hill.web.state import Snapshot, event


async def profile(request: web.Request) -> web.Response:
    """A program's profile in the state asked for (its page shows the same)."""
    snap = await snapshot(request)
    name = name_param(request)
    if snap.standings.index(name) is None and "event" not in request.query:
        snap = await last_state(request, name)  # a program that left: as it stood last
    data = await request.app[ANALYTICS].profile(snap, name)  # NotFound: not in this state
    return json_response({"event": event(snap.event), **data})


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


async def strategy(request: web.Request) -> dict[str, Any]:
    snap = await snapshot(request)
    return {"event": event(snap.event), "pool": "hill", **await state_map(request, snap)}
