"""Benchmark: what the web reads of a big tournament while it plays, as a
contest's page follows it.

Builds (once, then kept in bench/output/, ignored by git) a hill whose
archive holds `--entrants` quick programs (their jousts take microseconds)
and the round robin of that archive, played by the hill's tournament writer
to `--share` of its matches and stopped there (as the bot leaves one when it
stops): a running tournament of N(N-1)/2 matches.  Then, in this process,
it times each way of reading it, with the peak of the memory it allocated
(tracemalloc, a second run), each on a fresh reader (nothing kept):

- the tournament whole (`TournamentReader.whole`: hill.store.records
  replays its ledger, every match gets its sample battle): what a contest's
  page read at each request once a match had come in, before;
- its progress (`TournamentReader.progress`: a few counts): what the
  contest's page reads now;
- the tournament's own page (a big one's overview, from its table of
  settled rounds, read once per settled result), for comparison.

    .venv/bin/python bench/tournament_progress.py [--entrants 1000] [--share 0.5]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pools import CACHE
from sqlalchemy import insert

from hill.config import HillSettings
from hill.engine import code_hash
from hill.engine.varied import varied_pool
from hill.layout import DataFolder
from hill.rules.events import LeaveReason, ProgramStatus
from hill.store.database import Database
from hill.store.tables import ProgramRow
from hill.web.tournaments import pieces
from hill.web.tournaments.reader import TournamentReader
from hill.web.urls import Urls
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments


class Stop(Exception):
    """The tournament stopped where it stands."""


def build(data: Path, entrants: int, share: float) -> None:
    """The archive of `entrants` quick programs and its round robin, played
    to `share` of its matches."""
    started = time.monotonic()
    hill = Hill(HillSettings(data_dir=data), jobs=1)
    rows = [
        {
            "owner": "old",
            "name": name,
            "code": code,
            "code_hash": code_hash(code),
            "status": ProgramStatus.LEFT,
            "left_reason": LeaveReason.PUSHED_OFF,
        }
        for name, code in varied_pool(entrants, 3, shares={"noise": 1})
    ]
    with hill.lock.transaction() as session:
        session.execute(insert(ProgramRow), rows)
    service = HillTournaments(hill)
    tournament = service.create("round-robin", "archive", seed=1)
    committed = [0, 1]

    def progress(done: int, expected: int) -> None:
        committed[:] = [done, expected]

    def checkpoint() -> None:
        if committed[0] >= share * committed[1]:
            raise Stop

    with contextlib.suppress(Stop):
        service.prepare(tournament, checkpoint=checkpoint).run(progress)
    hill.close()
    took = time.monotonic() - started
    print(f"built in {took:.0f} s: {committed[0]:,} of {committed[1]:,} matches committed")


def archive(entrants: int, share: float) -> Path:
    folder = CACHE / f"tournament-progress-{entrants}-{share}"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        build(folder / "var", entrants, share)
        (folder / "done").write_text("")
    return folder / "var"


def measure(what: str, db: Database, read: Callable[[TournamentReader], Awaitable[Any]]) -> None:
    """`read` on a fresh reader: its time, then (again, fresh) its peak allocation."""

    async def once() -> float:
        reader = TournamentReader(db)
        try:
            started = time.perf_counter()
            await read(reader)
            return time.perf_counter() - started
        finally:
            reader.close()

    seconds = asyncio.run(once())
    tracemalloc.start()
    asyncio.run(once())
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"  {what:58} {seconds:8.3f} s, peak {peak / 2**20:7.1f} MB allocated")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--share", type=float, default=0.5)
    args = parser.parse_args()
    data = archive(args.entrants, args.share)
    db = Database.existing(DataFolder(data).database)
    try:
        print(f"a round robin of {args.entrants} entrants, {args.share:.0%} played:")
        measure("whole (the contest page's read before, each request)", db, lambda r: r.whole(1))
        measure("progress (the contest page's read now)", db, lambda r: r.progress(1))

        def overview(table: pieces.Table, summary: dict[str, Any]) -> dict[str, Any]:
            return pieces.overview(table, summary, None, Urls().json)

        async def page(reader: TournamentReader) -> Any:
            return (await reader.page(1, overview)).build()

        measure("the tournament's own page (its table, once per settled)", db, page)
    finally:
        db.close()


if __name__ == "__main__":
    main()
