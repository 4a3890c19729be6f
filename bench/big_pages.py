"""Benchmark: 200 concurrent requests on the heaviest pages of a big archive,
against a real `bfjoust bot` with its web report.

Builds (once, then kept in bench/output/, ignored by git) a hill whose
archive holds 1024 programs (the 98 reference programs and 926 varied ones,
each submitted to the default 47-program hill, one commit each) and the
round robin of that archive, played for real by the hill's tournament
writer on every local core (523,776 matches, each joust stored), and the
all-time ladder's standing over the archive (from those jousts: every pair
has met, so the ladder plays nothing and its refit is stored).  Then,
in a copy, it starts a real ngircd and `bfjoust bot`, and while a player asks
`!bfjoust-rank` on IRC every second it sends 200 requests at once over the
heaviest pages: `/`, `/matrix`, `/ladder`, `/tournaments`, `/history`, the
feed, the tournament's page and its JSON (and their pieces), several
rounds.  It samples the memory of the bot alone and of the bot with its
web process (and any git), and prints, per page, how many were answered
(200, or 503 told to retry, retried as told), their latency, the
answers' sizes, the memory and the IRC answers.  It asserts nothing.

    .venv/bin/python bench/big_pages.py [--programs 1024] [--concurrent 200] [--rounds 3]
        [--in-process]   # the web report on the bot's own event loop, for comparison
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from pools import CACHE
from trace_load import Watch, start_bot

from hill.config import HillSettings
from hill.engine.varied import reference_pool, varied_pool
from hill.writers.hill import Hill
from hill.writers.ladder import ArchiveLadder
from hill.writers.tournaments import HillTournaments

PAGES = [
    "/tournament/1",
    "/api/tournament/1",
    "/",
    "/api/standings",
    "/matrix",
    "/ladder",
    "/api/ladder",
    "/tournaments",
    "/history",
    "/history.atom",
]


def build(folder: Path, programs: int, seed: int = 7) -> None:
    """The hill, its archive of `programs` programs and their round robin."""
    started = time.monotonic()
    hill = Hill(HillSettings(data_dir=folder))
    pool = reference_pool()
    pool = (pool + varied_pool(max(0, programs - len(pool)), seed))[:programs]
    for i, (_, code) in enumerate(pool):
        hill.challenge(f"player{i % 40}", f"p{i:04d}", code)
        if i % 100 == 99:
            print(f"  {i + 1} programs submitted ({time.monotonic() - started:.0f} s)", flush=True)
    tournaments = HillTournaments(hill)
    tournament = tournaments.create("round-robin", "archive", started_by="bench")
    print(f"  the round robin of the archive: playing ({time.monotonic() - started:.0f} s)")
    view = tournaments.run(tournament)
    hill.close()
    print(
        f"built in {time.monotonic() - started:.0f} s: {view.summary.entrants} entrants,"
        f" {view.summary.matches_committed} matches"
    )


def ladder(folder: Path) -> None:
    """The ladder's standing over the archive, refitted and stored."""
    started = time.monotonic()
    hill = Hill(HillSettings(data_dir=folder))
    played = ArchiveLadder(hill).step(0)
    hill.close()
    print(f"the ladder's standing stored in {time.monotonic() - started:.0f} s ({played} jousts)")


def archive(programs: int) -> Path:
    """The built data folder, from the cache (built if missing)."""
    folder = CACHE / f"big-archive-{programs}"
    if not (folder / "done").exists():
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        build(folder / "var", programs)
        (folder / "done").write_text("")
    if not (folder / "ladder-done").exists():  # (an archive cached before the ladder was)
        ladder(folder / "var")
        (folder / "ladder-done").write_text("")
    return folder / "var"


@dataclass
class Results:
    """Per page: statuses, seconds to the answer, bytes."""

    statuses: dict[str, list[int]] = field(default_factory=dict)
    seconds: dict[str, list[float]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


async def fetch(session: aiohttp.ClientSession, base: str, path: str, results: Results) -> None:
    """The page, waiting as told after a 503; its time includes the waits."""
    started = time.monotonic()
    for _ in range(120):
        try:
            async with session.get(base + path, headers={"Accept-Encoding": "gzip"}) as response:
                body = await response.read()
                results.statuses.setdefault(path, []).append(response.status)
                if response.status == 503:
                    await asyncio.sleep(float(response.headers.get("Retry-After", "1")))
                    continue
                results.seconds.setdefault(path, []).append(time.monotonic() - started)
                results.sizes[path] = len(body)
                if response.status != 200:
                    results.failures.append(f"{path}: {response.status}")
                return
        except (aiohttp.ClientError, TimeoutError) as error:
            results.failures.append(f"{path}: {error!r}")
            return
    results.failures.append(f"{path}: still busy after 120 tries")


async def burst(base: str, concurrent: int, pages: list[str]) -> tuple[Results, float]:
    results = Results()
    connector = aiohttp.TCPConnector(limit=0, force_close=True)
    timeout = aiohttp.ClientTimeout(total=600)
    started = time.monotonic()
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        await asyncio.gather(
            *(fetch(session, base, pages[i % len(pages)], results) for i in range(concurrent))
        )
    return results, time.monotonic() - started


def report(results: Results, took: float) -> None:
    answered = sum(len(s) for s in results.seconds.values())
    told = sum(s.count(503) for s in results.statuses.values())
    print(f"  {answered} answered in {took:.1f} s ({told} answers were 503, retried as told)")
    for path, seconds in results.seconds.items():
        print(
            f"    {path:20} {len(seconds):3} x  median {statistics.median(seconds):6.2f} s,"
            f" slowest {max(seconds):6.2f} s; {results.sizes[path] / 1024:9.1f} KB unzipped"
        )
    for failure in results.failures[:10]:
        print(f"    FAILED {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=1024)
    parser.add_argument("--concurrent", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--in-process", action="store_true", help="[web] own_process = false")
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    data = archive(args.programs)
    if args.build_only:
        return
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        shutil.copytree(data, folder / "var")
        own = f"own_process = {str(not args.in_process).lower()}\n"
        ircd, bot, irc_port, web_port = start_bot(folder, web=own)
        try:
            watch = Watch(bot.pid, irc_port, web_port, "its web process")
            base = f"http://127.0.0.1:{web_port}"
            for number in range(args.rounds):
                results, took = asyncio.run(burst(base, args.concurrent, PAGES))
                print(
                    f"round {number + 1}: {args.concurrent} requests at once"
                    + (" (the pages built before)" if number else " (nothing built yet)")
                )
                report(results, took)
            watch.report()
        finally:
            bot.terminate()
            bot.wait(timeout=60)
            ircd.stop()


if __name__ == "__main__":
    main()
