"""Benchmark: the 98 x 98 reference matrix, as `bfjoust matrix` plays it.

`bfjoust matrix` jousts each pair of programs once (4753 jousts; a joust
seen from the other side is the same joust negated, and a program against
itself is 42 ties), so that is what is timed here: compiling the 98
programs and playing the 4753 jousts, in this process (the engine alone:
only `hill.engine` is imported).  Every result is checked against
results.txt.  Prints the wall time single-threaded and on every core, the
battle-cycles the games lasted and those the engine simulated.

With `--gearlance PATH` (a genelance binary you built yourself from
fis/chainlance, the established hill's batch interpreter) it is timed in
the same run on the same 98 programs, interleaved with ours (genelance
plays all 9604 ordered pairs: it has no notion of pairs played once), and
the ratio of the minima is printed; its scores are checked too.  With
`--stats` the engine is timed with the battle statistics counted as well
(`joust(..., stats=True)`: the same battles, each one's records kept).  With
`--cli` the whole `python -m hill matrix --jobs 1` command is timed too.

    .venv/bin/python bench/matrix.py [--repeat 5] [--jobs N] [--gearlance PATH] [--stats] [--cli]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from hill import engine
from hill.engine import arena

REFERENCE = Path(__file__).resolve().parents[1] / "tests" / "data" / "reference"


def reference() -> tuple[list[Path], list[str]]:
    names = (REFERENCE / "index.txt").read_text().split()
    paths = [REFERENCE / "warriors" / name for name in names]
    return paths, (REFERENCE / "results.txt").read_text().splitlines()


def play_matrix(paths: list[Path], expected: list[str], jobs: int, stats: bool = False) -> str:
    """Compile the programs and joust each pair once; a line of figures."""
    sources = [path.read_bytes() for path in paths]
    programs = [engine.compile_program(source) for source in sources]
    n = len(programs)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    jousts = [(programs[i], programs[j]) for i, j in pairs]
    results = arena.joust_pairs(jousts, jobs=jobs, stats=stats)
    wrong = sum(str(r) != expected[i * n + j] for (i, j), r in zip(pairs, results, strict=True))
    games = sum(r.game_cycles for r in results)
    simulated = sum(r.cycles for r in results)
    return (
        f"{len(pairs)} jousts, {'all results match' if not wrong else f'{wrong} DIFFER'}, "
        f"{games / 1e9:.2f} G battle-cycles played, {simulated / 1e9:.3f} G simulated"
    )


def genelance_input(paths: list[Path], folder: Path) -> tuple[list[str], bytes]:
    """genelance reads each challenger up to a newline: the programs on one
    line each (a newline is a comment, a space reads the same)."""
    files, lines = [], []
    for k, path in enumerate(paths):
        code = path.read_bytes().replace(b"\r", b" ").replace(b"\n", b" ")
        one_line = folder / f"{k:03}.bfjoust"
        one_line.write_bytes(code)
        files.append(str(one_line))
        lines.append(code + b"\n")
    return files, b"".join(lines)


def run_genelance(binary: str, files: list[str], stdin: bytes, expected: list[str]) -> str:
    output = subprocess.run(
        [binary, *files], input=stdin, capture_output=True, check=True
    ).stdout.decode()
    n, wrong = len(files), 0
    for right, line in enumerate(output.splitlines()):
        # one line per challenger (on the right): its total, then its score against each
        scores = [int(s) for s in line.split()[1].split(",")]
        wrong += sum(
            -scores[left] != int(expected[left * n + right].split()[2]) for left in range(n)
        )
    return f"{n * n} jousts, {'all scores match' if not wrong else f'{wrong} SCORES DIFFER'}"


def timed(run: Callable[[], str]) -> tuple[float, str]:
    started = time.perf_counter()
    figures = run()
    return time.perf_counter() - started, figures


def summary(label: str, times: list[float], figures: str) -> str:
    return (
        f"{label:<28} min {min(times):6.2f} s, median {statistics.median(times):6.2f} s "
        f"({len(times)} runs): {figures}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=arena.default_jobs(), help="all cores")
    parser.add_argument("--repeat", type=int, default=5, help="interleaved runs of each")
    parser.add_argument("--gearlance", metavar="PATH", help="a genelance binary to time as well")
    parser.add_argument("--stats", action="store_true", help="time the statistics on as well")
    parser.add_argument("--cli", action="store_true", help="time `python -m hill matrix` too")
    args = parser.parse_args()
    paths, expected = reference()
    runs: dict[str, Callable[[], str]] = {
        "engine, 1 thread": lambda: play_matrix(paths, expected, 1)
    }
    if args.stats:
        runs["engine + stats, 1 thread"] = lambda: play_matrix(paths, expected, 1, stats=True)
    if args.jobs > 1:
        runs[f"engine, {args.jobs} threads"] = lambda: play_matrix(paths, expected, args.jobs)
    if args.cli:
        command = [sys.executable, "-m", "hill", "matrix", "--jobs", "1", *map(str, paths)]

        def cli() -> str:
            out = subprocess.run(command, capture_output=True, check=True).stdout.decode()
            wrong = sum(a != b for a, b in zip(out.splitlines(), expected, strict=True))
            return f"9604 lines, {'all match' if not wrong else f'{wrong} DIFFER'}"

        runs["python -m hill matrix -j1"] = cli
    with tempfile.TemporaryDirectory() as folder:
        if args.gearlance:
            files, stdin = genelance_input(paths, Path(folder))
            binary = args.gearlance
            runs["genelance (gearlance)"] = lambda: run_genelance(binary, files, stdin, expected)
        times: dict[str, list[float]] = {label: [] for label in runs}
        figures: dict[str, str] = {}
        for _ in range(args.repeat):
            for label, run in runs.items():
                elapsed, figures[label] = timed(run)
                times[label].append(elapsed)
    for label in runs:
        print(summary(label, times[label], figures[label]))
    base = min(times["engine, 1 thread"])
    if args.stats:
        with_stats = min(times["engine + stats, 1 thread"])
        print(f"statistics on: x {with_stats / base:.2f} the time (minima)")
    if args.gearlance:
        gear = min(times["genelance (gearlance)"])
        print(f"ratio to gearlance (minima): engine alone {base / gear:.3f}", end="")
        if args.cli:
            print(
                f", the whole command {min(times['python -m hill matrix -j1']) / gear:.3f}", end=""
            )
        print()


if __name__ == "__main__":
    main()
