"""Check: the engine's battle statistics against the established hill's own.

The established hill's interpreter, built with its statistics
(fis/chainlance, `make build/cranklance`: build it yourself, outside this
repository), prints for every battle of a joust its CYCLES, TAPEABS (the
final tape), TAPEMAX (each program's decoys) and TAPEHEAT (each program's
pointer heat).  This script plays the same jousts with
`engine.joust(..., stats=True)` and compares them field by field, with the
outcomes: every pair of the 98 reference programs (4753 jousts) and pairs of
varied programs (mutated and crossed hill programs, wiki strategies, random
noise: hill/engine/varied.py) and of random programs made to lock and spin.

Prints how many jousts, battles and values were compared and every
disagreement (the first few of each kind in full).  A check, not a test:
it needs the binary.

    .venv/bin/python bench/cranklance.py --cranklance PATH [--varied 300] [--random 1000]
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hill import engine
from hill.engine import arena
from hill.engine.varied import reference_pool, varied_pool

FIELDS = ("outcome", "cycles", "tape_end", "heat", "decoy")
LINE = re.compile(r"^(CYCLES|TAPEABS|TAPEMAX|TAPEHEAT)\[(\d),(\d+)\] =(.*)$")
SUMMARY = re.compile(r"^SUMMARY: (\S{21}) (\S{21}) ")


def random_program(rng: random.Random) -> bytes:
    """A program of one-op loops, short locks and moves, as the tests make
    them: they meet on a cell, sit on flags, run counters near their ends."""

    def spin() -> str:
        op = rng.choice("+-.")
        return rng.choice(
            [
                f"({op})*{rng.randint(1, 300)}",
                f"[{op}]",
                "[]",
                f"({op}+-.{op})*{rng.randint(1, 90)}",
            ]
        )

    def part() -> str:
        roll = rng.random()
        if roll < 0.45:
            return spin()
        if roll < 0.65:
            body = "".join(
                rng.choice(["+", "-", ".", "+-", "><", "[-]", "(+)*3"]) for _ in range(3)
            )
            return f"({body})*{rng.randint(1, 2000)}"
        if roll < 0.8:
            return rng.choice(["[-]", "[+]", "[-.]", "(-[{.}])%5", "(+{[-]}>)%3"])
        return rng.choice([">", "<", ">>", "+", "-", "(>)*3"])

    lead = f"(>)*{rng.randint(0, 28)}" if rng.random() < 0.7 else rng.choice(["", ">(+)*9>(-)*9"])
    return (lead + "".join(part() for _ in range(rng.randint(1, 9)))).encode()


def cranklance_battles(binary: str, left: Path, right: Path) -> list[dict[str, object]]:
    """The 42 battles as cranklance prints them, in the engine's order."""
    output = subprocess.run(
        [binary, str(left), str(right)], capture_output=True, check=True, text=True
    ).stdout
    battles: dict[tuple[int, int], dict[str, object]] = {}
    outcomes: list[int] = []
    for line in output.splitlines():
        if match := SUMMARY.match(line):
            outcomes = [{"<": 1, ">": -1, "X": 0}[c] for c in match[1] + match[2]]
            continue
        if not (match := LINE.match(line)):
            continue
        kind, polarity, length, values = match[1], int(match[2]), int(match[3]), match[4].split()
        battle = battles.setdefault((polarity, length), {})
        if kind == "CYCLES":
            battle["cycles"] = int(values[0])
        elif kind == "TAPEABS":
            battle["tape_end"] = [int(v) for v in values]
        else:
            pairs = [[int(x) for x in v.split("/")] for v in values]
            battle["decoy" if kind == "TAPEMAX" else "heat"] = [
                [p[0] for p in pairs],
                [p[1] for p in pairs],
            ]
    ordered = [battles[(p, n)] for p in (0, 1) for n in engine.TAPE_LENGTHS]
    for battle, outcome in zip(ordered, outcomes, strict=True):
        battle["outcome"] = outcome
    return ordered


def engine_battles(left: bytes, right: bytes) -> list[dict[str, object]]:
    result = engine.joust(engine.compile_program(left), engine.compile_program(right), stats=True)
    assert result.battles is not None
    return [battle.to_json() for battle in result.battles]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cranklance", required=True, metavar="PATH", help="the binary")
    parser.add_argument(
        "--varied", type=int, default=300, help="varied programs (paired at random)"
    )
    parser.add_argument("--random", type=int, default=1000, help="random lock-and-spin pairs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=arena.default_jobs())
    parser.add_argument("--show", type=int, default=3, help="disagreements shown in full per kind")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    reference = reference_pool()
    pairs: list[tuple[str, bytes, str, bytes]] = [
        (a, code_a, b, code_b)
        for i, (a, code_a) in enumerate(reference)
        for b, code_b in reference[i + 1 :]
    ]
    varied = varied_pool(args.varied, seed=args.seed) if args.varied else []
    mixed = reference + varied
    for _ in range(args.varied * 5):
        (a, code_a), (b, code_b) = rng.sample(mixed, 2)
        pairs.append((a, code_a, b, code_b))
    for k in range(args.random):
        left, right = random_program(rng), random_program(rng)
        try:
            engine.compile_program(left)
            engine.compile_program(right)
        except engine.ParseError:
            continue
        pairs.append((f"random-{k}L", left, f"random-{k}R", right))

    compared: Counter[str] = Counter()
    disagreements: list[tuple[str, str, str, str, object, object]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:

        def check(pair: tuple[str, bytes, str, bytes]) -> None:
            a, code_a, b, code_b = pair
            left, right = Path(folder) / f"{id(pair)}-L", Path(folder) / f"{id(pair)}-R"
            left.write_bytes(code_a)
            right.write_bytes(code_b)
            theirs = cranklance_battles(args.cranklance, left, right)
            ours = engine_battles(code_a, code_b)
            compared["jousts"] += 1
            for index, (mine, established) in enumerate(zip(ours, theirs, strict=True)):
                compared["battles"] += 1
                for name in FIELDS:
                    value = established[name]
                    compared["values"] += (
                        len(value[0]) * 2
                        if name in ("heat", "decoy")
                        else (len(value) if isinstance(value, list) else 1)
                    )
                    if mine[name] != value:
                        where = "{} {}".format(*engine.battle_config(index))
                        disagreements.append((name, a, b, where, mine[name], value))

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            for done, _ in enumerate(pool.map(check, pairs), start=1):
                if done % 500 == 0:
                    print(f"  {done}/{len(pairs)} jousts", file=sys.stderr)
    elapsed = time.perf_counter() - started
    print(
        f"compared {compared['jousts']} jousts, {compared['battles']} battles, "
        f"{compared['values']} values ({', '.join(FIELDS)}) in {elapsed:.0f} s: "
        f"{len(disagreements)} disagreements"
    )
    by_field = Counter(d[0] for d in disagreements)
    for name, count in by_field.items():
        print(f"  {name}: {count}")
        for _, a, b, where, mine, theirs in [d for d in disagreements if d[0] == name][: args.show]:
            print(f"    {a} vs {b}, {where}:\n      engine     {mine}\n      cranklance {theirs}")


if __name__ == "__main__":
    main()
