"""Benchmark: the hill service on the 47 programs of the 2013 hill.

Builds the hill one submission at a time (as `bfjoust hill submit` would) in
a temporary folder, then times what players wait for: a challenge against
the full hill, a test-only run, an update, and reading the standings.

    .venv/bin/python bench/submit.py
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from hill.config import HillSettings
from hill.rules.names import from_file
from hill.rules.reports import json_report, text_report
from hill.writers.hill import Hill

T = TypeVar("T")
WARRIORS = Path(__file__).resolve().parents[1] / "tests/data/reference/warriors"


def timed(label: str, action: Callable[[], T]) -> T:
    started = time.perf_counter()
    result = action()
    print(f"{label}: {time.perf_counter() - started:.2f} s")
    return result


def main() -> None:
    programs = sorted((WARRIORS / "esohill-20131008").glob("*.bfjoust"))
    newcomer = (WARRIORS / "esohill-20241026/Lymia.lugh.bfjoust").read_bytes()
    with tempfile.TemporaryDirectory() as folder:
        hill = Hill(HillSettings(data_dir=Path(folder)))

        def build() -> None:
            for path in programs:
                hill.challenge("esohill", from_file(path), path.read_bytes())

        timed(f"build the hill, {len(programs)} submissions", build)
        report = timed("challenge the full hill", lambda: hill.challenge("bench", "a", newcomer))
        print(f"  {report.summary}")
        timed(
            "test only against the full hill",
            lambda: hill.challenge("t", "b", newcomer, test_only=True),
        )
        timed(
            "update a program on the full hill", lambda: hill.challenge("bench", "a", newcomer[:-1])
        )
        standings = timed("read the standings", hill.queries.standings)
        timed(
            "text and JSON reports", lambda: (text_report(standings), json_report(standings, None))
        )
        hill.close()


if __name__ == "__main__":
    main()
