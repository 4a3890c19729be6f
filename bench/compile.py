"""Benchmark: compiling the largest hill program and an astronomically long
expansion, in time and memory.

Prints the compile time and the growth of the peak resident memory of this
process for each (figures, never assertions).

    .venv/bin/python bench/compile.py
"""

from __future__ import annotations

import resource
import time
from pathlib import Path

from hill import engine

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference"

CASES = {
    "Lymia.lugh (800 KB)": (
        REFERENCE / "warriors/esohill-20241026/Lymia.lugh.bfjoust"
    ).read_bytes(),
    "((((+)*100000)*100000)*100000)*100000": b"((((+)*100000)*100000)*100000)*100000",
    "4096 nested (": b"(" * 4096 + b"+" + b")*2" * 4096,
}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def main() -> None:
    for label, source in CASES.items():
        before = peak_rss_mb()
        started = time.perf_counter()
        program = engine.compile_program(source)
        elapsed = time.perf_counter() - started
        print(
            f"{label}: {len(source):,} bytes -> {program.native.instructions:,} instructions "
            f"in {elapsed * 1000:.1f} ms, peak memory +{peak_rss_mb() - before:.1f} MB"
        )


if __name__ == "__main__":
    main()
