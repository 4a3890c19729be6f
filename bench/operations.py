"""Benchmark: the operator's kit on a hill with a long history.

A hill of 47 programs made by `--changes` submissions of short random
programs (each a commit), then, as real `bfjoust` processes:

1. `bfjoust hill backup` while a probe takes SQLite's write lock every
   20 ms (as the request book's inserts do): how long the backup took, its
   steps, and the longest the probe waited;
2. `bfjoust hill restore` of it into a new folder;
3. `bfjoust hill rebuild` from a `git clone` of the history: how long, how
   many jousts were replayed, and whether the events and commits came out
   the same.

    .venv/bin/python bench/operations.py [--changes 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from support.bighill import WriteLockProbe

from hill.config import HillSettings
from hill.engine.varied import varied_pool
from hill.writers.hill import Hill


def bfjoust(*args: str | Path) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "hill", *map(str, args)], capture_output=True, text=True, check=True
    )
    return time.monotonic() - started, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--changes", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        data = root / "hill"
        started = time.monotonic()
        hill = Hill(HillSettings(data_dir=data))
        for i, (name, code) in enumerate(varied_pool(args.changes, 5, shares={"noise": 1.0})):
            hill.challenge(f"p{i % 37}", name.replace("-", "_")[:40], code)
        hill.close()
        print(f"built a hill of {args.changes} changes in {time.monotonic() - started:.1f} s")
        size = (data / "hill.sqlite3").stat().st_size
        print(f"database {size / 1e6:.1f} MB")

        with WriteLockProbe(data / "hill.sqlite3") as probe:
            took, out = bfjoust("hill", "--data", data, "backup", root / "backup")
        print(f"backup: {took:.2f} s (the process)\n  {out.strip()}")
        print(f"  the request book's write lock waited at most {probe.longest * 1000:.1f} ms")
        print(f"  ({probe.tries} tries during the backup)")
        bundle = (root / "backup" / "hill.bundle").stat().st_size
        print(f"  bundle {bundle / 1e6:.2f} MB")

        took, _ = bfjoust("hill", "--data", root / "restored", "restore", root / "backup")
        print(f"restore: {took:.2f} s")

        subprocess.run(["git", "clone", "--quiet", data / "hill-repo", root / "clone"], check=True)
        rebuilt = root / "rebuilt"
        took, out = bfjoust("hill", "--data", rebuilt, "rebuild", root / "clone", "--quiet")
        print(f"rebuild: {took:.2f} s\n  {out.strip()}")
        same = [
            bfjoust("hill", "--data", folder, "history")[1]
            for folder in (data, root / "restored", root / "rebuilt")
        ]
        print(f"the same history (events, commits): restored {same[0] == same[1]}, "
              f"rebuilt {same[0] == same[2]}")  # fmt: skip


if __name__ == "__main__":
    main()
