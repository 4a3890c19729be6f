"""The all-time ladder's page, `/ladder`, and its JSON twin `/api/ladder`:
the ranking as an error-bar chart (server-side SVG) and a table, how many
jousts it is made of, and each program's versions.  Its data is the latest
standing (hill.store.archive), read in a thread of its own and kept until
it changes (a new standing, a new program in the ladder's pool, or a hill
change: which programs are on the hill); a program that left the hill
shows its versions' places (`ladder_versions`).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from hill.ladder.report import board_json
from hill.store.archive import board_mark, read_board
from hill.store.database import Database
from hill.web.builds import View
from hill.web.cache import StateCache
from hill.web.reader_thread import ThreadedReader


class LadderReader(ThreadedReader):
    """The ladder's page data, cached until the ladder or the hill changes."""

    def __init__(self, db: Database) -> None:
        super().__init__(1, "web-ladder")
        self.db = db
        self._cached: StateCache[str, dict[str, Any]] = StateCache(1)

    async def data(self) -> dict[str, Any]:
        """The data now (read again once the ladder or the hill changed)."""
        return (await self._current())[1]

    async def view(self) -> View:
        """The page's data, with what it depends on (builds.py)."""
        key, data = await self._current()
        return View(("ladder", key), lambda: data)

    async def _current(self) -> tuple[Any, dict[str, Any]]:
        key = await self._shared(self._version)  # (one query for requests at once)
        return key, await self._cached.get("ladder", key, lambda: self._run(self._load))

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


async def ladder_versions(app: web.Application, full_name: str) -> list[dict[str, Any]]:
    """Where each version of `full_name` stands on the ladder (oldest
    first: "version", "name", "rank", "rating", "on_hill"); [] if none."""
    data = await app[LADDER].data()
    found = [p for p in data.get("programs", []) if p["program"] == full_name]
    return found[0]["versions"] if found else []


async def ladder(request: web.Request) -> View:
    return await request.app[LADDER].view()
