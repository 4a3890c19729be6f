"""The page of a `-test` trial, `/test/TOKEN` (JSON `/api/test/TOKEN`): the
tested program's breakdown against the hill it met, as a program's page
shows it (its event's standings hold it), marked as a test, with each
battle a link into the viewer, and the strategy map of that hill
(`/test/TOKEN/strategy`); kept for `[hill] test_page_hours`
(hill.store.trials), then answered 410 Gone, and forgotten (the expired
ones are deleted when the web starts and as each new one is asked for).
"""

from __future__ import annotations

from typing import Any

import structlog
from aiohttp import web

from hill.errors import NotFound
from hill.rules.events import iso_utc
from hill.store.queries import HillQueries
from hill.store.trials import Trial, TrialPages
from hill.threads import LRU
from hill.web.analytics.reader import ANALYTICS
from hill.web.analytics.views import state_map
from hill.web.pages import data as pages
from hill.web.reader_thread import ThreadedReader
from hill.web.state import Snapshot, event

log = structlog.get_logger(__name__)


class TrialReader(ThreadedReader):
    """Trials' pages by token; a trial's hill is read once and kept (a
    trial never changes)."""

    def __init__(self, queries: HillQueries) -> None:
        super().__init__(1, "web-trials")
        self.queries = queries
        self.pages = TrialPages(queries.db)
        self._snapshots: LRU[str, Snapshot] = LRU(16)

    async def trial(self, token: str) -> tuple[Trial, Snapshot]:
        """The trial of `token` and the hill it met, with it (NotFound: no
        such page; 410 Gone: it expired)."""
        trial = await self._run(self.pages.find, token)
        if trial is None:
            raise NotFound("no such test page (a test's page is kept for a while, then forgotten)")
        if trial.expired:
            raise web.HTTPGone(reason=f"this test's page expired on {iso_utc(trial.expires_at)}")
        cached = self._snapshots.get(token)
        if cached is None:
            cached = self._snapshots.put(token, await self._run(self._snapshot, trial))
        return trial, cached

    async def clear_expired(self) -> None:
        """Forget the pages long expired (hill.store.trials: as the web starts;
        the writer does it too, as it opens a new one)."""
        try:
            cleared = await self._run(self.pages.clear_expired)
        except Exception as error:  # the storage failing now: cleared at the next test
            log.warning("expired test pages not cleared", error=str(error))
            return
        if cleared:
            log.info("expired test pages cleared", pages=cleared)

    def _snapshot(self, trial: Trial) -> Snapshot:
        change = self.queries.event(trial.event)
        standings = self.queries.standings_at(trial.event)
        snap = Snapshot(change, standings, {})
        snap.statistics  # noqa: B018 - computed here, in the reader's thread
        return snap


TRIALS = web.AppKey("trials", TrialReader)


async def test_page(request: web.Request) -> dict[str, Any]:
    trial, snap = await request.app[TRIALS].trial(request.match_info["token"])
    data = pages.breakdown(snap, trial.program)
    codes = {e.program.full_name: e.program.code_hash for e in snap.standings.entries}
    for opponent in data["opponents"]:
        opponent["code"] = codes[opponent["program"]]
    owner = snap.entry(trial.program).program.owner
    about = {
        "token": trial.token,
        "owner": owner,
        "code": codes[trial.program],
        "expires": iso_utc(trial.expires_at),
    }
    profile = await request.app[ANALYTICS].profile(snap, trial.program, ("test", trial.token))
    return {**data, "trial": about, "versions": [], "departed": None, "profile": profile}


async def test_strategy(request: web.Request) -> dict[str, Any]:
    trial, snap = await request.app[TRIALS].trial(request.match_info["token"])
    data = await state_map(request, snap, ("test", trial.token))
    return {"event": event(snap.event), "pool": "test", "trial": trial.token, **data}
