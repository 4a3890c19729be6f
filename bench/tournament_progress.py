"""Benchmark: what the web reads of a big tournament while it plays, as a
contest's page follows it.

Builds (once, then kept in bench/output/, ignored by git) a hill whose
archive holds `--entrants` quick programs (their jousts take microseconds)
and the round robin of that archive, played by the hill's tournament writer
to `--share` of its matches and stopped there (as the bot leaves one when it
stops): a running tournament of N(N-1)/2 matches.  Then it times each way
of reading it, each in a fresh process (nothing kept, nothing shared), with
how much that process's peak memory (its maximum resident set) grew:

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
import resource
import shutil
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
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


def overview(table: pieces.Table, summary: dict[str, Any]) -> dict[str, Any]:
    return pieces.overview(table, summary, None, Urls().json)


async def read(reader: TournamentReader, what: str) -> Any:
    if what == "whole":
        return await reader.whole(1)
    if what == "progress":
        return await reader.progress(1)
    return (await reader.page(1, overview)).build()


def timed(data: Path, what: str) -> tuple[float, float]:
    """(In a process of its own.)  Seconds to read `what` on a fresh reader,
    and the growth of the process's peak memory, MB."""
    db = Database.existing(DataFolder(data).database)
    reader = TournamentReader(db)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    try:
        started = time.perf_counter()
        asyncio.run(read(reader, what))
        seconds = time.perf_counter() - started
    finally:
        reader.close()
        db.close()
    return seconds, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024


def measure(data: Path, label: str, what: str) -> None:
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as fresh:
        seconds, grown = fresh.submit(timed, data, what).result()
    print(f"  {label:58} {seconds:8.3f} s, peak memory +{grown:6.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entrants", type=int, default=1000)
    parser.add_argument("--share", type=float, default=0.5)
    args = parser.parse_args()
    data = archive(args.entrants, args.share)
    print(f"a round robin of {args.entrants} entrants, {args.share:.0%} played:")
    measure(data, "whole (the contest page's read before, each request)", "whole")
    measure(data, "progress (the contest page's read now)", "progress")
    measure(data, "the tournament's own page (its table, once per settled)", "page")


if __name__ == "__main__":
    main()
