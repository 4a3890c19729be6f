"""Benchmark: a contest of 40 entries on the 47-program hill of 2013.

Builds the hill in a temporary folder, then times a contest's life through
its writer (hill.writers.contests): each entry played from the request book
(tried on the hill as a `-test`), the close (its transaction and the commit
of every entry), the round robin of its 40 entries and 1 control on every
local core, the results' publication; then its page and JSON twin on a
fresh web server (first request, then cached).

    .venv/bin/python bench/contest.py
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from web import measure  # bench/web.py: a fresh server, each page timed five times

from hill.config import HillSettings
from hill.rules.names import from_file
from hill.rules.requests import RequestKind
from hill.store.requests import RequestBook
from hill.writers.hill import Hill, play_request
from hill.writers.tournaments import HillTournaments

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference"
ENTRIES = 40


def timed(what: str, started: float) -> None:
    print(f"{what}: {time.perf_counter() - started:.2f} s")


def main() -> None:
    fixture = json.loads((REFERENCE / "scores-esohill-20131008.json").read_text())
    on_hill = set(fixture["programs"])
    others = [p for p in (REFERENCE / "index.txt").read_text().split() if p not in on_hill]
    with tempfile.TemporaryDirectory() as folder:
        hill = Hill(HillSettings(data_dir=Path(folder)))
        started = time.perf_counter()
        for path in fixture["programs"]:
            hill.challenge("esohill", from_file(path), (REFERENCE / "warriors" / path).read_bytes())
        timed(f"the {len(on_hill)}-program hill built", started)
        view = hill.contests.create("bench", "+1h", by="bench", controls={"floor": b">+[-]"})
        book = RequestBook(hill.db)
        each = []
        for i, path in enumerate(others[:ENTRIES]):
            code = (REFERENCE / "warriors" / path).read_bytes()
            kind = RequestKind.CONTEST_ENTER
            asked = book.add(limit=99, nick=f"p{i}", channel=None, origin="bench", owner=f"p{i}",
                             command=kind, name="bench", code=code)  # fmt: skip
            started = time.perf_counter()
            play_request(hill, book.start(asked.id))
            each.append(time.perf_counter() - started)
        print(
            f"{ENTRIES} entries, each tried on the hill: median {statistics.median(each):.3f} s, "
            f"slowest {max(each):.3f} s"
        )
        started = time.perf_counter()
        view = hill.contests.close("bench", by="bench")
        timed("the close (its transaction and the entries' commit)", started)
        started = time.perf_counter()
        HillTournaments(hill).run(view.tournament_id)
        timed(f"the round robin of {ENTRIES + 1} entrants on every local core", started)
        started = time.perf_counter()
        hill.contests.finish("bench")
        timed("the results' publication", started)
        asyncio.run(measure(hill, ("/contest/bench", "/api/contest/bench", "/contests")))
        hill.close()


if __name__ == "__main__":
    main()
