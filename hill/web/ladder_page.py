"""The all-time ladder's page, `/ladder`, and its JSON twin `/api/ladder`.

The ladder's latest standing (hill.store.archive) is read in a thread of
its own and kept until it changes: a new standing, a new program in the
ladder's pool, or a hill change (which programs are on the hill).  The page
shows the ranking as an error-bar chart (server-side SVG) and a table, how
many jousts it is made of, and each program's versions.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from hill.ladder.report import board_json
from hill.store.archive import board_mark, read_board
from hill.store.database import Database
from hill.web.builds import View
from hill.web.reader_thread import ThreadedReader, serve
from hill.web.views import page

routes = web.RouteTableDef()


class LadderReader(ThreadedReader):
    """The ladder's page data, cached until the ladder or the hill changes."""

    def __init__(self, db: Database) -> None:
        super().__init__(1, "web-ladder")
        self.db = db
        self._cached: tuple[Any, dict[str, Any]] | None = None

    async def view(self) -> View:
        """The page's data, with what it depends on (builds.py)."""
        key = await self._shared(self._version)
        if self._cached is None or self._cached[0] != key:
            self._cached = (key, await self._run(self._load))
        data = self._cached[1]
        return View(("ladder", key), lambda: data)

    def _version(self) -> tuple[int | None, ...]:
        """What the page depends on, cheaply: the standing, the pool, the hill."""
        return board_mark(self.db)

    def _load(self) -> dict[str, Any]:
        board = read_board(self.db)
        if board is None:
            return {"ladder": None}
        data = board_json(board)
        return {"ladder": data, "programs": versions(data["ranking"])}


def versions(ranking: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each program (owner.name) with its versions in the order they came,
    the programs in the order of their best version."""
    programs: dict[str, list[dict[str, Any]]] = {}
    for row in ranking:
        programs.setdefault(row["program"], []).append(
            {key: row[key] for key in ("version", "name", "rank", "rating", "on_hill")}
        )
    return [
        {"program": name, "versions": sorted(rows, key=lambda v: v["version"])}
        for name, rows in programs.items()
    ]


LADDER = web.AppKey("ladder", LadderReader)


@page("ladder", "ladder.html", table=routes)
async def ladder(request: web.Request) -> View:
    return await request.app[LADDER].view()


def setup(app: web.Application, db: Database) -> None:
    """Serve the ladder's pages from the hill's database."""
    serve(app, LADDER, LadderReader(db), routes)
