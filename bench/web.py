"""Benchmark: the web report on the 47 programs of the 2013 hill.

Builds the hill in a temporary folder, serves it (as `bfjoust web` does, on
a fresh server: empty caches) and times each page five times: the first
request builds the state's cache, the others read it.

    .venv/bin/python bench/web.py
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

import aiohttp

from hill.config import HillSettings, WebSettings
from hill.rules.names import from_file
from hill.web.server import start_web
from hill.writers.hill import Hill

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference"
PAGES = ("/", "/matrix", "/history", "/api/standings", "/api/matrix")


async def measure(hill: Hill, pages: tuple[str, ...] = PAGES) -> None:
    """Serve the hill on a fresh server and time each page five times."""
    runner = await start_web(hill.queries, hill.settings, WebSettings(bind="127.0.0.1", port=0))
    host, port = runner.addresses[0][:2]
    try:
        async with aiohttp.ClientSession() as client:
            for path in pages:
                times = []
                for _ in range(5):
                    started = time.perf_counter()
                    async with client.get(f"http://{host}:{port}{path}") as response:
                        assert response.status == 200, path
                        await response.read()
                    times.append(time.perf_counter() - started)
                print(
                    f"{path}: first {times[0] * 1000:.0f} ms, then {min(times[1:]) * 1000:.1f} ms"
                )
    finally:
        await runner.cleanup()


def main() -> None:
    fixture = json.loads((REFERENCE / "scores-esohill-20131008.json").read_text())
    with tempfile.TemporaryDirectory() as folder:
        hill = Hill(HillSettings(data_dir=Path(folder)))
        started = time.perf_counter()
        for path in fixture["programs"]:
            code = (REFERENCE / "warriors" / path).read_bytes()
            hill.challenge("esohill", from_file(path), code)
        print(f"built the {len(fixture['programs'])}-program hill in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
        asyncio.run(measure(hill))
        hill.close()


if __name__ == "__main__":
    main()
