"""Benchmark: browsing the hill's history.

1. The commit page of the 800 KB Lymia.lugh's update (changed in two
   places) and of its arrival (800 KB added: the diff is cut), on a hill of
   a few reference programs: the first request (git read, diff computed)
   and the next ones (a commit never changes: cached).  Goal: under 100 ms.
2. `git clone` over HTTP of a history of 1000 commits, made by 1000 hill
   changes of small programs.  Goal: under 5 s.

    .venv/bin/python bench/history.py [--commits 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import tempfile
import time
from pathlib import Path

import aiohttp

from hill.config import HillSettings, WebSettings
from hill.layout import REPOSITORY
from hill.web.server import start_web
from hill.writers.hill import Hill

WARRIORS = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference" / "warriors"
LUGH = (WARRIORS / "esohill-20241026" / "Lymia.lugh.bfjoust").read_bytes()
LUGH_2 = LUGH[:1000] + b"X" + LUGH[1000:400000] + b"ab" + LUGH[400000:]
OTHERS = ("wiki/poke.bfjoust", "wiki/wiggle_clear.bfjoust", "wiki/triplock.bfjoust")
TIMES = 20


async def time_pages(hill: Hill, paths: dict[str, str]) -> None:
    runner = await start_web(hill.queries, hill.settings, WebSettings(bind="127.0.0.1", port=0))
    host, port = runner.addresses[0][:2]
    try:
        async with aiohttp.ClientSession() as client:
            for what, path in paths.items():
                times = []
                for _ in range(TIMES):
                    started = time.perf_counter()
                    async with client.get(f"http://{host}:{port}{path}") as response:
                        assert response.status == 200, path
                        size = len(await response.read())
                    times.append(time.perf_counter() - started)
                times_ms = sorted(t * 1000 for t in times[1:])
                print(
                    f"{what}: first {times[0] * 1000:.0f} ms, then median "
                    f"{times_ms[len(times_ms) // 2]:.1f} ms ({size // 1024} KB)"
                )
    finally:
        await runner.cleanup()


def commit_pages(folder: Path) -> None:
    hill = Hill(HillSettings(data_dir=folder))
    for path in OTHERS:
        hill.challenge("wiki", Path(path).stem, (WARRIORS / path).read_bytes())
    hill.challenge("Lymia", "lugh", LUGH)
    hill.challenge("Lymia", "lugh", LUGH_2)
    arrival, update = (c.commit for c in hill.queries.changes()[-2:])
    pages = {
        "commit page of Lymia.lugh's update": f"/commit/{update}",
        "its JSON": f"/api/commit/{update}",
        "commit page of Lymia.lugh's arrival (800 KB added, cut)": f"/commit/{arrival}",
        "Lymia.lugh's page with its versions": "/program/Lymia.lugh",
    }
    asyncio.run(time_pages(hill, pages))
    hill.close()


def program(i: int) -> bytes:
    """Small programs, each a little different."""
    clear = ("[-]", "[+]", "[-.]", "[+.]")[i % 4]
    return f"(>)*{2 + i % 7}({clear}>)*{10 + i % 19}".encode()


async def time_clone(hill: Hill, into: Path) -> None:
    runner = await start_web(hill.queries, hill.settings, WebSettings(bind="127.0.0.1", port=0))
    host, port = runner.addresses[0][:2]
    url = f"http://{host}:{port}/hill.git"
    try:
        for what, options in (("clone", []), ("shallow clone (--depth 1)", ["--depth", "1"])):
            started = time.perf_counter()
            process = await asyncio.create_subprocess_exec(
                "git", "clone", "--quiet", *options, url, str(into / what.split()[0])
            )
            assert await process.wait() == 0
            print(f"{what} over HTTP: {time.perf_counter() - started:.2f} s")
    finally:
        await runner.cleanup()


def clone(folder: Path, commits: int) -> None:
    hill = Hill(HillSettings(data_dir=folder / "var", size=10))
    started = time.perf_counter()
    for i in range(commits):
        hill.challenge(f"player{i % 13}", f"p{i % 17}", program(i))
    made = len(hill.repository.log())
    print(f"made {made} commits in {time.perf_counter() - started:.0f} s")
    count = subprocess.run(
        ["git", "-C", str(folder / "var" / REPOSITORY), "count-objects", "-vH"],
        capture_output=True,
        text=True,
    ).stdout
    print("the repository:", " ".join(count.split()))
    asyncio.run(time_clone(hill, folder))
    hill.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        commit_pages(Path(folder) / "pages")
        clone(Path(folder) / "clone", args.commits)


if __name__ == "__main__":
    main()
