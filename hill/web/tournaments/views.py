"""The tournament pages: `/tournaments` (JSON `/api/tournaments`), each
tournament at `/tournament/ID` (JSON `/api/tournament/ID`: its summary's
fields and its result in the tool contract, unchanged), a big one's pieces
(pieces.py: `/tournament/ID/round/N?page=P`, `.../entrant/NAME`,
`.../crosstable?rows=R&columns=C`, and JSON `.../reality-show?page=P`), and
the strategy map of a tournament's entrants (`/tournament/ID/strategy`,
drawn by hill.web.analytics).

Their data is data.py's and pieces.py's, read by reader.py; each is built
once per state (builds.py).  The contests' pages are contests.py's.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from hill.web.analytics import data as analytics_pages
from hill.web.analytics.reader import ANALYTICS
from hill.web.builds import View, serve_page
from hill.web.params import int_param, name_param, tournament_id
from hill.web.tournaments import pieces
from hill.web.tournaments.reader import TOURNAMENTS
from hill.web.urls import Urls


async def tournaments(request: web.Request) -> View:
    return await request.app[TOURNAMENTS].listing()


async def tournament(request: web.Request) -> View:
    """The whole tournament, or a big one's overview (standings ?page=P)."""
    standings = int_param(request, "page")

    def overview(table: pieces.Table, summary: dict[str, Any]) -> dict[str, Any]:
        return pieces.overview(table, summary, standings, Urls().json)

    return await request.app[TOURNAMENTS].page(tournament_id(request), overview)


async def piece(request: web.Request, make: pieces.Piece) -> View:
    return await request.app[TOURNAMENTS].page(tournament_id(request), make, piece=True)


async def tournament_round(request: web.Request) -> View:
    number = int_param(request, "round", request.match_info["round"])
    page_number = int_param(request, "page")
    json = Urls().json
    return await piece(request, lambda t, _: pieces.round_page(t, number or 0, page_number, json))


async def tournament_entrant(request: web.Request) -> View:
    name = name_param(request)
    return await piece(request, lambda t, _: pieces.entrant_page(t, name))


async def tournament_crosstable(request: web.Request) -> View:
    row, column = int_param(request, "rows") or 1, int_param(request, "columns") or 1
    return await piece(request, lambda t, _: pieces.crosstable_tile(t, row, column))


async def tournament_stages(request: web.Request) -> web.Response:
    number = int_param(request, "page")
    loaded = await piece(request, lambda t, _: pieces.stages_page(t, number))
    return await serve_page(request, loaded, None)


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
