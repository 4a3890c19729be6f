"""The hill's own pages, each an HTML view and a JSON twin of the same data
(builds.page; routes.py binds them): the standings (`/`), the matrix, a
program's page (its breakdown, versions, profile, and for one that left,
its last state), a pair, the history chart and a program's series, a
program's source, and the static files.  Their data is data.py's.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from aiohttp import web

from hill.errors import NotFound
from hill.web.analytics.reader import ANALYTICS
from hill.web.builds import View, json_response
from hill.web.history.commits import HISTORY
from hill.web.pages import data as pages
from hill.web.pages.ladder import ladder_versions
from hill.web.params import last_state, name_param, reader, snapshot, state_key

STATIC = Path(__file__).parents[1] / "static"
# the files shipped, by their path under static/ (the Lab's in static/lab/)
STATIC_FILES = frozenset(p.relative_to(STATIC).as_posix() for p in STATIC.rglob("*") if p.is_file())


async def standings(request: web.Request) -> View:
    snap = await snapshot(request)
    return View(state_key(snap), partial(pages.standings, snap))


async def matrix(request: web.Request) -> View:
    snap = await snapshot(request)
    return View(state_key(snap), partial(pages.matrix, snap))


async def breakdown(request: web.Request) -> dict[str, Any]:
    """A program in the state asked for; one that has left the hill (asked
    for in no state) as it stood last, with when and why it left."""
    name = name_param(request)
    snap = await snapshot(request)
    versions = await request.app[HISTORY].versions(name)
    if snap.standings.index(name) is None and "event" not in request.query and versions:
        return await departed(request, name, versions)
    data = pages.breakdown(snap, name)
    profile = await request.app[ANALYTICS].profile(snap, name)
    return {**data, "versions": versions, "departed": None, "profile": profile}


async def departed(
    request: web.Request, name: str, versions: list[dict[str, Any]]
) -> dict[str, Any]:
    """The page of a program no longer on the hill: its last state there."""
    history = await reader(request).history()
    last = await last_state(request, name)
    ladder = await ladder_versions(request.app, name)
    left = pages.departure(history, name, versions, ladder)
    profile = await request.app[ANALYTICS].profile(last, name)
    data = pages.breakdown(last, name)
    return {**data, "versions": versions, "departed": left, "profile": profile}


async def pair(request: web.Request) -> View:
    snap = await snapshot(request)
    left, right = name_param(request), name_param(request, "other")
    return View(state_key(snap), partial(pages.pair, snap, left, right))


async def history(request: web.Request) -> View:
    hist = await reader(request).history()
    return View(hist.key, lambda: {**pages.history(hist), "names": hist.names})


async def series(request: web.Request) -> View:
    name = name_param(request)
    hist = await reader(request).history()

    def build() -> dict[str, Any]:
        data = pages.series(hist, name)
        if not data["points"]:
            raise NotFound(f"{name} has never been on the hill")
        return data

    return View(hist.key, build)


async def source_text(request: web.Request) -> web.Response:
    """The program's code exactly as submitted; text/plain, never rendered as HTML."""
    snap = await snapshot(request)
    code = await reader(request).code(snap, name_param(request))
    response = web.Response(body=code, content_type="text/plain", charset="utf-8")
    response.enable_compression()
    return response


async def source_json(request: web.Request) -> web.Response:
    snap = await snapshot(request)
    name = name_param(request)
    return json_response(pages.source(snap, name, await reader(request).code(snap, name)))


async def static(request: web.Request) -> web.StreamResponse:
    """The stylesheet, scripts and icon: only the files shipped, by exact name."""
    file = request.match_info["file"]
    if file not in STATIC_FILES:
        raise NotFound(f"no static file {file[:60]!r}")
    return web.FileResponse(STATIC / file, headers={"Cache-Control": "public, max-age=600"})
