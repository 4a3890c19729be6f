"""The all-time ladder's page, `/ladder`, and its JSON twin `/api/ladder`:
the ranking as an error-bar chart (server-side SVG) and a table, how many
jousts it is made of, and each program's versions (the data: ladder_reader.py).
"""

from __future__ import annotations

from aiohttp import web

from hill.store.database import Database
from hill.web.builds import View
from hill.web.ladder_reader import LADDER, LadderReader
from hill.web.reader_thread import serve
from hill.web.views import page

routes = web.RouteTableDef()


@page("ladder", "ladder.html", table=routes)
async def ladder(request: web.Request) -> View:
    return await request.app[LADDER].view()


def setup(app: web.Application, db: Database) -> None:
    """Serve the ladder's pages from the hill's database."""
    serve(app, LADDER, LadderReader(db), routes)
