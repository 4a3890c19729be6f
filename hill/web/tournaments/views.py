"""The tournament pages: `/tournaments` (JSON `/api/tournaments`), each
tournament at `/tournament/ID` (JSON `/api/tournament/ID`: its summary's
fields and its result in the tool contract, unchanged), a big one's pieces
(tournament_pieces.py: `/tournament/ID/round/N?page=P`, `.../entrant/NAME`,
`.../crosstable?rows=R&columns=C`, and JSON `.../reality-show?page=P`), and
`/thumbnail`, the small picture of a battle given by its programs' code
hashes (PNG, drawn under the battle viewer's bounds: trace_store.py).

Their data is tournament_data.py's and tournament_pieces.py's, read by
tournament_reader.py; each is built once per state (builds.py).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from hill.errors import NotFound
from hill.store.database import Database
from hill.web import tournament_pieces as pieces
from hill.web.builds import IMMUTABLE, View
from hill.web.reader_thread import serve
from hill.web.tournament_reader import TOURNAMENTS, TournamentReader
from hill.web.urls import PATHS, Urls
from hill.web.views import TRACES, code_battle_params, int_param, name_param, page, serve_page

routes = web.RouteTableDef()


def tournament_id(request: web.Request) -> int:
    text = request.match_info["id"]
    if not (text.isascii() and text.isdigit()) or len(text) > 12:
        raise NotFound(f"no tournament {text[:20]!r}: tournaments are numbered 1, 2, 3 ...")
    return int(text)


@page("tournaments", "tournaments.html", routes)
async def tournaments(request: web.Request) -> View:
    return await request.app[TOURNAMENTS].listing()


@page("tournament", "tournament.html", routes)
async def tournament(request: web.Request) -> View:
    """The whole tournament, or a big one's overview (standings ?page=P)."""
    standings = int_param(request, "page")

    def overview(table: pieces.Table, summary: dict[str, Any]) -> dict[str, Any]:
        return pieces.overview(table, summary, standings, Urls().json)

    return await request.app[TOURNAMENTS].page(tournament_id(request), overview)


async def piece(request: web.Request, make: pieces.Piece) -> View:
    return await request.app[TOURNAMENTS].page(tournament_id(request), make, piece=True)


@page("tournament-round", "tournament_round.html", routes)
async def tournament_round(request: web.Request) -> View:
    number = int_param(request, "round", request.match_info["round"])
    page_number = int_param(request, "page")
    json = Urls().json
    return await piece(request, lambda t, _: pieces.round_page(t, number or 0, page_number, json))


@page("tournament-entrant", "tournament_entrant.html", routes)
async def tournament_entrant(request: web.Request) -> View:
    name = name_param(request)
    return await piece(request, lambda t, _: pieces.entrant_page(t, name))


@page("tournament-crosstable", "tournament_crosstable.html", routes)
async def tournament_crosstable(request: web.Request) -> View:
    row, column = int_param(request, "rows") or 1, int_param(request, "columns") or 1
    return await piece(request, lambda t, _: pieces.crosstable_tile(t, row, column))


@routes.get(PATHS["tournament-stages-json"], name="tournament-stages-json")
async def tournament_stages(request: web.Request) -> web.Response:
    number = int_param(request, "page")
    loaded = await piece(request, lambda t, _: pieces.stages_page(t, number))
    return await serve_page(request, loaded, None)


@routes.get(PATHS["thumbnail"], name="thumbnail")
async def thumbnail(request: web.Request) -> web.Response:
    """The battle's picture (thumbnail.py): tape across, time down."""
    hashes, _, tape, polarity = await code_battle_params(request)  # NotFound: no such code
    png = await request.app[TRACES].thumbnail(*hashes, tape, polarity)
    return web.Response(body=png, content_type="image/png", headers={"Cache-Control": IMMUTABLE})


def setup(app: web.Application, db: Database) -> None:
    """Serve the tournament pages from the hill's database."""
    serve(app, TOURNAMENTS, TournamentReader(db), routes)
