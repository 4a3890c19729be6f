"""The read side of the tournament pages: the hill's stored tournaments
(hill.store.records) and the programs they played, read in a thread
of its own (SQLite blocks) and shaped by data.py.

A small tournament's page is kept while its result stays the same (the
same matches committed, the same end: cache.StateCache): a finished one
is read once, a running one again as its matches come in.  A big one
(pieces.py) is read into a compact Table once per settled result (its
complete rounds and its end), whatever comes in meanwhile, and its pages
are pieces of it.  A tournament's progress (`progress`: what a contest's
page follows while it plays) is a few counts, read at each request and
never the tournament whole.  Pages are built in the web's build threads
(builds.py), where these reads run too.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import threading
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from aiohttp import web

from hill import engine
from hill.engine import arena
from hill.errors import NotFound
from hill.store import records
from hill.store.database import Database
from hill.store.jousts import read_jousts, stream_jousts
from hill.store.queries import latest_names
from hill.web.builds import View
from hill.web.cache import StateCache
from hill.web.reader_thread import ThreadedReader
from hill.web.tournaments import data as tournament_data
from hill.web.tournaments import pieces as tournament_pieces
from hill.web.tournaments.pieces import Piece, Table

CODE_HASH = re.compile(r"[0-9a-f]{64}")
PAGES = 8  # tournament pages kept
TABLES = 2  # big tournaments' tables kept (tens of MB each for 500,000 matches)
SUMMARIES = 4096  # tournaments' summaries kept (for the list: every tournament's)


class TournamentReader(ThreadedReader):
    """Tournament pages' data and the names of programs by code, from `db`."""

    def __init__(self, db: Database) -> None:
        super().__init__(1, "web-tournaments")
        self.db = db
        # by tournament, with the mark (progress, or settled result) they were read at
        self._pages: StateCache[int, dict[str, Any]] = StateCache(PAGES)
        self._tables: StateCache[int, Table] = StateCache(TABLES)
        self._summaries: StateCache[int, records.TournamentSummary] = StateCache(SUMMARIES)
        self._building = threading.Lock()  # one big read at a time
        self._sizes: dict[int, tuple[int, int]] = {}  # entrants, matches expected (never change)

    async def listing(self) -> View:
        """Every tournament, newest first (a View: what it depends on, the data)."""
        marks, summaries = await self._shared(self._listing)
        data = {"tournaments": [tournament_data.summary(s) for s in summaries]}
        return View(("tournaments", tuple(marks.items())), lambda: data)

    def _listing(self) -> tuple[dict[int, records.Mark], list[records.TournamentSummary]]:
        marks = records.progress_marks(self.db)
        summaries = []
        for tournament_id, mark in marks.items():
            make = partial(self._summary, tournament_id, mark)
            summaries.append(self._summaries.get_or_make(tournament_id, mark, make))
        return marks, summaries

    def _summary(self, tournament_id: int, mark: records.Mark) -> records.TournamentSummary:
        """A tournament's summary; a big one's from its Table and `mark`."""
        if self._big(tournament_id):
            return self._progressed(self._table(tournament_id), mark)
        view = records.tournament(self.db, tournament_id)
        assert view is not None  # tournaments are never deleted
        return view.summary

    async def page(self, tournament_id: int, big_page: Piece, *, piece: bool = False) -> View:
        """Tournament `tournament_id`'s page (NotFound if there is none): a
        small one whole (tournament_data.detail), a big one as
        `big_page(table, summary)` of its Table (pieces.py) with
        its progress now; `piece`: a piece of a big one only (NotFound for
        a small one, shown whole), kept while its result stays settled."""
        mark = await self._shared(self._mark, tournament_id)
        if not await self._shared(self._big, tournament_id):
            if piece:
                raise NotFound(f"tournament {tournament_id} is shown whole, on its page")
            whole = ("tournament", tournament_id, *mark)
            return View(whole, lambda: self._page(tournament_id, mark))
        if piece:
            settled = await self._shared(self._settled, tournament_id)

            def build_piece() -> dict[str, Any]:
                table = self._table(tournament_id)
                return big_page(table, table.summary)

            return View(("piece", *settled), build_piece)

        def build() -> dict[str, Any]:
            table = self._table(tournament_id)
            return big_page(table, tournament_data.summary(self._progressed(table, mark)))

        return View(("big", tournament_id, *mark), build)

    async def whole(self, tournament_id: int) -> dict[str, Any]:
        """The tournament's page data whole (tournament_data.detail), whatever
        its size, as a contest's page shows it; NotFound if there is none."""
        mark = await self._shared(self._mark, tournament_id)
        return await self._run(self._page, tournament_id, mark)

    async def progress(self, tournament_id: int) -> dict[str, Any]:
        """How far the tournament has come ("matches_committed",
        "matches_expected", "percent"), from a few counts: NotFound if
        there is none."""
        committed, _, _ = await self._shared(self._mark, tournament_id)
        _, expected = await self._shared(self._size, tournament_id)
        return {
            "matches_committed": committed,
            "matches_expected": expected,
            "percent": tournament_data.progress_percent(committed, expected),
        }

    async def played(self, tournament_id: int) -> dict[str, Any]:
        """What a played contest's page shows of its tournament: a small one's
        page whole (tournament_data.detail), a big one's from its Table
        (pieces.played: its crosstable and samples on its own pages)."""
        if await self._shared(self._big, tournament_id):
            return await self._run(lambda: tournament_pieces.played(self._table(tournament_id)))
        return await self.whole(tournament_id)

    async def ranked(self, tournament_id: int) -> tuple[list[str], dict[str, str], int]:
        """The entrants best first (as entered before any result), each one's
        code hash, and the matches committed; a big tournament's from its
        Table.  NotFound if there is none."""
        mark = await self._shared(self._mark, tournament_id)
        return await self._run(self._ranked, tournament_id, mark)

    def _ranked(
        self, tournament_id: int, mark: records.Mark
    ) -> tuple[list[str], dict[str, str], int]:
        if self._big(tournament_id):
            table = self._table(tournament_id)
            standings, entrants, programs = table.standings, table.names, table.programs
        else:
            detail = self._page(tournament_id, mark)
            result, programs = detail["result"], detail["programs"]
            standings, entrants = result.get("standings", []), result["entrants"]
        return [row["name"] for row in standings] or list(entrants), programs, mark[0]

    def _mark(self, tournament_id: int) -> records.Mark:
        mark = records.progress_mark(self.db, tournament_id)
        if mark is None:
            raise NotFound(f"there is no tournament {tournament_id}")
        return mark

    def _size(self, tournament_id: int) -> tuple[int, int]:
        """The tournament's entrants and the matches it expects (they never change)."""
        size = self._sizes.get(tournament_id)
        if size is None:
            size = records.tournament_size(self.db, tournament_id)
            if size is None:
                raise NotFound(f"there is no tournament {tournament_id}")
            self._sizes[tournament_id] = size
        return size

    def _big(self, tournament_id: int) -> bool:
        """Whether the tournament is served in pieces."""
        return tournament_pieces.is_big(*self._size(tournament_id))

    def _settled(self, tournament_id: int) -> tuple[int, int, str | None]:
        """What a big tournament's result depends on: its settled rounds, its end."""
        mark = self._mark(tournament_id)
        return (tournament_id, records.settled_rounds(self.db, tournament_id), mark[2])

    def _table(self, tournament_id: int) -> Table:
        """The Table of the tournament's settled result (read once)."""
        settled = self._settled(tournament_id)
        with self._building:
            read = partial(self._read, tournament_id)
            return self._tables.get_or_make(tournament_id, settled, read)

    def _read(self, tournament_id: int) -> Table:
        settled = records.settled_result(self.db, tournament_id)
        assert settled is not None  # tournaments are never deleted
        return tournament_pieces.table(settled, self._samples)

    @staticmethod
    def _progressed(table: Table, mark: records.Mark) -> records.TournamentSummary:
        """The table's summary with the progress of `mark`."""
        committed, opened, _ = mark
        summary: records.TournamentSummary = table.record
        return dataclasses.replace(summary, matches_committed=committed, rounds_played=opened)

    def _page(self, tournament_id: int, mark: records.Mark) -> dict[str, Any]:
        return self._pages.get_or_make(tournament_id, mark, partial(self._detail, tournament_id))

    def _detail(self, tournament_id: int) -> dict[str, Any]:
        view = records.tournament(self.db, tournament_id)
        assert view is not None  # tournaments are never deleted
        return tournament_data.detail(view, self._outcomes(list(view.programs.values())))

    def _samples(self, a: Sequence[str], b: Sequence[str], margins: np.ndarray) -> np.ndarray:
        """The sample battles of many matches (tournament_data.sample_battles),
        their jousts read one at a time (each into the rows of its matches)."""
        codes = sorted({*a, *b})
        index = {code: i for i, code in enumerate(codes)}
        left = np.array([index[code] for code in a], dtype=np.int64)
        right = np.array([index[code] for code in b], dtype=np.int64)
        pairs = np.minimum(left, right) * len(codes) + np.maximum(left, right)
        order = np.argsort(pairs, kind="stable")
        pairs = pairs[order]
        rows = np.full((len(margins), engine.BATTLES), 2, dtype=np.int8)  # 2: not stored
        jousts = stream_jousts(self.db, codes)
        while chunk := list(itertools.islice(jousts, 8192)):
            # the kept side: the left's code sorts first
            i = np.array([index[kept[0]] for kept in chunk], dtype=np.int64)
            j = np.array([index[kept[1]] for kept in chunk], dtype=np.int64)
            outcomes = arena.decode(b"".join(kept[2] for kept in chunk)).reshape(len(chunk), -1)
            wanted = np.minimum(i, j) * len(codes) + np.maximum(i, j)
            first = np.searchsorted(pairs, wanted, "left")
            last = np.searchsorted(pairs, wanted, "right")
            for repeat in range(int((last - first).max(initial=0))):  # a pair met n times
                meets = first + repeat < last
                k = order[first[meets] + repeat]
                sign = np.where(left[k] == i[meets], 1, -1).astype(np.int8)
                rows[k] = outcomes[meets] * sign[:, None]
        return tournament_data.sample_battles(rows, margins)

    def _outcomes(self, hashes: Sequence[str]) -> tournament_data.Outcomes:
        """The stored jousts among `hashes`, read from either side."""
        results = read_jousts(self.db, hashes)

        def between(a: str, b: str) -> np.ndarray | None:
            return results.between(a, b) if arena.oriented(a, b)[0] in results else None

        return between

    async def names(self, hashes: Sequence[str]) -> list[str]:
        """The name of the latest program with each code (hill.engine.code_hash);
        NotFound if a hash is malformed or no program has that code."""
        for code_hash in hashes:
            if not CODE_HASH.fullmatch(code_hash):
                raise NotFound(f"{code_hash[:70]!r} is no code hash: 64 hexadecimal digits")
        return await self._run(self._names, hashes)

    def _names(self, hashes: Sequence[str]) -> list[str]:
        found = latest_names(self.db, hashes)
        for code_hash, name in zip(hashes, found, strict=True):
            if name is None:
                raise NotFound(f"no program with code {code_hash}")
        return [name for name in found if name is not None]

    async def outcome(self, left: str, right: str, tape: int, polarity: str) -> int | None:
        """How the stored joust of the two programs scored this battle, from
        the left's side (None: not stored)."""
        outcomes = await self._run(lambda: self._outcomes([left, right])(left, right))
        return None if outcomes is None else int(outcomes[engine.battle_index(tape, polarity)])


TOURNAMENTS = web.AppKey("tournaments", TournamentReader)
