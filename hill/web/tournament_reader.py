"""The read side of the tournament pages: the hill's stored tournaments
(hill.store.records) and the programs they played, read in a thread
of its own (SQLite blocks) and shaped by tournament_data.py.

A tournament's page is cached while its result stays the same (the same
matches committed, the same end): a finished one is read once, a running
one again as its matches come in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
from aiohttp import web

from hill import engine
from hill.engine import arena
from hill.errors import NotFound
from hill.store import records
from hill.store.database import Database
from hill.store.jousts import read_jousts
from hill.store.queries import latest_names
from hill.threads import LRU
from hill.web import tournament_data
from hill.web.reader_thread import ThreadedReader

CODE_HASH = re.compile(r"[0-9a-f]{64}")
PAGES = 8  # tournament pages kept


class TournamentReader(ThreadedReader):
    """Tournament pages' data and the names of programs by code, from `db`."""

    def __init__(self, db: Database) -> None:
        super().__init__(1, "web-tournaments")
        self.db = db
        self._pages: LRU[tuple[Any, ...], dict[str, Any]] = LRU(PAGES)
        # each tournament's summary with the mark it was read at (tournaments
        # are never deleted; a finished one is read once)
        self._summaries: dict[int, tuple[records.Mark, records.TournamentSummary]] = {}

    async def listing(self) -> dict[str, Any]:
        """Every tournament, newest first."""
        summaries = await self._run(self._listing)
        return {"tournaments": [tournament_data.summary(s) for s in summaries]}

    def _listing(self) -> list[records.TournamentSummary]:
        summaries = []
        for tournament_id, mark in records.progress_marks(self.db).items():
            known = self._summaries.get(tournament_id)
            if known is None or known[0] != mark:
                view = records.tournament(self.db, tournament_id)
                assert view is not None  # tournaments are never deleted
                known = self._summaries[tournament_id] = (mark, view.summary)
            summaries.append(known[1])
        return summaries

    async def page(self, tournament_id: int) -> dict[str, Any]:
        """Tournament `tournament_id`'s page; NotFound if there is none."""
        return await self._run(self._page, tournament_id)

    def _page(self, tournament_id: int) -> dict[str, Any]:
        mark = records.progress_mark(self.db, tournament_id)
        if mark is None:
            raise NotFound(f"there is no tournament {tournament_id}")
        key = (tournament_id, *mark)
        cached = self._pages.get(key)
        if cached is None:
            view = records.tournament(self.db, tournament_id)
            assert view is not None  # tournaments are never deleted
            outcomes = self._outcomes(list(view.programs.values()))
            cached = self._pages.put(key, tournament_data.detail(view, outcomes))
        return cached

    def _outcomes(self, hashes: Sequence[str]) -> tournament_data.Outcomes:
        """The stored jousts among `hashes`, read from either side."""
        results = read_jousts(self.db, hashes)

        def between(a: str, b: str) -> np.ndarray | None:
            return results.between(a, b) if arena.oriented(a, b)[0] in results else None

        return between

    async def names(self, hashes: Sequence[str]) -> list[str]:
        """The name of the latest program with each code (hill.engine.arena.code_hash);
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
