"""`bfjoust joust|matrix|check|trace`: the engine on program files.  They
import the engine and nothing else of the hill."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from hill import engine
from hill.cli.shared import load_program, load_programs
from hill.errors import CommandError


def parse_tape_length(text: str) -> int:
    value = int(text)
    if value not in engine.TAPE_LENGTHS:
        raise argparse.ArgumentTypeError(
            f"tape length must be within {engine.MIN_TAPE}..{engine.MAX_TAPE}"
        )
    return value


def command_joust(args: argparse.Namespace) -> None:
    left, right = load_programs([args.left, args.right])
    if args.stats:  # docs/analytics.md: one JSON line a battle
        for line in engine.stats_json_lines(engine.joust(left, right, stats=True)):
            print(line)
        return
    print(engine.joust(left, right))


def full_matrix(programs: Sequence[engine.Program], jobs: int | None) -> np.ndarray:
    """(N, N, 42): every ordered pair; each pair of programs is jousted once
    (hill.engine.arena) and a program against itself is 42 ties."""
    from hill.engine import arena  # `bfjoust matrix` alone needs it

    jousts = arena.Arena(jobs=jobs, stats=False)  # outcomes are all it prints
    hashes = [jousts.add(program) for program in programs]
    code = dict(zip(hashes, (p.source for p in programs), strict=True))
    results = arena.Results()
    jousts.complete(results, hashes, code.__getitem__)
    return results.matrix(hashes)


def command_matrix(args: argparse.Namespace) -> None:
    programs = load_programs(args.files)
    matrix = full_matrix(programs, args.jobs)
    print("\n".join(engine.classic_line(row.tolist()) for rows in matrix for row in rows))


def command_check(args: argparse.Namespace) -> None:
    problems = []
    for path in args.files:
        try:
            program = load_program(path)
        except CommandError as error:
            problems.append(str(error))
            continue
        print(f"{path}: ok, {program.native.instructions} instructions")
    if problems:
        raise CommandError("\n".join(problems))


def _hex_tape(tape: Sequence[int], left: int, right: int) -> str:
    marks = []
    for cell, value in enumerate(tape):
        mark = {(True, True): "X", (True, False): "A", (False, True): "B"}.get(
            (cell == left, cell == right), " "
        )
        marks.append(f"{mark}{value:02x}")
    return " ".join(marks)


def _instruction(source: bytes, offset: int) -> str:
    if offset < 0:
        return "(end)  "
    line, column = engine.line_column(source, offset)
    return f"{chr(source[offset])} {line}:{column}".ljust(7)


def command_trace(args: argparse.Namespace) -> None:
    left, right = load_programs([args.left, args.right])
    trace = engine.trace(left, right, args.tape, args.polarity)
    if args.json:
        json.dump(trace.to_json(), sys.stdout, separators=(",", ":"))
        print()
        return
    print(f"{args.left} vs {args.right}, tape {args.tape}, {args.polarity}")
    print("A: left pointer, B: right pointer, X: both; instructions as char line:column")
    print(f"{'cycle':>6}  {'left':7}  {'right':7}  tape")
    print(f"{0:6}  {'':7}  {'':7}  {_hex_tape(trace.tapes[0], 0, args.tape - 1)}")
    for k in range(trace.cycles):
        tape = _hex_tape(
            trace.tapes[k + 1], int(trace.left_pointer[k + 1]), int(trace.right_pointer[k + 1])
        )
        left_op = _instruction(left.source, int(trace.left_source[k]))
        right_op = _instruction(right.source, int(trace.right_source[k]))
        print(f"{k + 1:6}  {left_op}  {right_op}  {tape}")
    print(trace.summary())


# the subcommands of `bfjoust` (whose parsers are hill.cli.LazyParser)
def add_engine_commands(commands: argparse._SubParsersAction[Any]) -> None:
    joust = commands.add_parser("joust", help="joust two programs, print the classic line")
    joust.add_argument("left")
    joust.add_argument("right")
    joust.add_argument(
        "--stats",
        action="store_true",
        help="print each battle's statistics (cycles, final tape, heat, decoys) as JSON lines",
    )
    joust.set_defaults(run=command_joust)

    matrix = commands.add_parser(
        "matrix", help="joust every ordered pair, one classic line each (left-major)"
    )
    matrix.add_argument("files", nargs="+", metavar="FILE")
    matrix.add_argument("--jobs", type=int, default=None, help="threads (default: all cores)")
    matrix.set_defaults(run=command_matrix)

    check = commands.add_parser("check", help="parse programs and report errors")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.set_defaults(run=command_check)

    trace = commands.add_parser("trace", help="print one battle cycle by cycle")
    trace.add_argument("left")
    trace.add_argument("right")
    trace.add_argument("--tape", type=parse_tape_length, required=True, help="10..30")
    trace.add_argument("--polarity", choices=engine.POLARITIES, default="sieve")
    trace.add_argument("--json", action="store_true", help="print the trace as JSON")
    trace.set_defaults(run=command_trace)
