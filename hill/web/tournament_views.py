"""The tournament pages: `/tournaments` (JSON `/api/tournaments`), each
tournament at `/tournament/ID` (JSON `/api/tournament/ID`: its summary's
fields and its result in the tool contract, unchanged), and `/thumbnail`,
the small picture of a battle given by its programs' code hashes (PNG,
drawn under the battle viewer's bounds: trace_store.py).

Their data is tournament_data.py's, read by tournament_reader.py.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from hill.errors import NotFound
from hill.store.database import Database
from hill.web.reader_thread import serve
from hill.web.tournament_reader import TOURNAMENTS, TournamentReader
from hill.web.urls import PATHS
from hill.web.views import TRACES, code_battle_params, page

routes = web.RouteTableDef()
IMMUTABLE = "public, max-age=31536000, immutable"  # a battle is a pure function of its key


def tournament_id(request: web.Request) -> int:
    text = request.match_info["id"]
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise NotFound(f"no tournament {text[:20]!r}: tournaments are numbered 1, 2, 3 ...")
    return int(text)


@page("tournaments", "tournaments.html", routes)
async def tournaments(request: web.Request) -> dict[str, Any]:
    return await request.app[TOURNAMENTS].listing()


@page("tournament", "tournament.html", routes)
async def tournament(request: web.Request) -> dict[str, Any]:
    return await request.app[TOURNAMENTS].page(tournament_id(request))


@routes.get(PATHS["thumbnail"], name="thumbnail")
async def thumbnail(request: web.Request) -> web.Response:
    """The battle's picture (thumbnail.py): tape across, time down."""
    hashes, _, tape, polarity = await code_battle_params(request)  # NotFound: no such code
    png = await request.app[TRACES].thumbnail(*hashes, tape, polarity)
    return web.Response(body=png, content_type="image/png", headers={"Cache-Control": IMMUTABLE})


def setup(app: web.Application, db: Database) -> None:
    """Serve the tournament pages from the hill's database."""
    serve(app, TOURNAMENTS, TournamentReader(db), routes)
