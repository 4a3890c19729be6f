"""The `bfjoust` command line (also `python -m hill`)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

import numpy as np

from hill import engine
from hill.cli.hill import (
    SHARED_OPTIONS,
    add_hill_commands,
    add_shared_options,
    read_file,
    settings_of,
)
from hill.cli.hill_tournaments import add_hill_tournament_commands
from hill.cli.ladder import add_archive_commands
from hill.cli.tournaments import add_tournament_commands
from hill.engine import Program, arena
from hill.errors import CommandError, HillError, ParseError, TournamentError


def load_program(path: str) -> Program:
    try:
        return engine.compile_program(read_file(path))
    except ParseError as error:
        raise CommandError(error.located(path)) from None


def load_programs(paths: Sequence[str]) -> list[Program]:
    """Compile every file; report every bad one before giving up."""
    programs, problems = [], []
    for path in paths:
        try:
            programs.append(load_program(path))
        except CommandError as error:
            problems.append(str(error))
    if problems:
        raise CommandError("\n".join(problems))
    return programs


def parse_tape_length(text: str) -> int:
    value = int(text)
    if value not in engine.TAPE_LENGTHS:
        raise argparse.ArgumentTypeError(
            f"tape length must be within {engine.MIN_TAPE}..{engine.MAX_TAPE}"
        )
    return value


def command_joust(args: argparse.Namespace) -> None:
    left, right = load_programs([args.left, args.right])
    print(engine.joust(left, right))


def full_matrix(programs: Sequence[Program], jobs: int | None) -> np.ndarray:
    """(N, N, 42): every ordered pair; each pair of programs is jousted once
    (hill.arena) and a program against itself is 42 ties."""
    jousts = arena.Arena(jobs=jobs)
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


def parse_budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be within (0, 1], not {text}")
    return value


def command_ladder_run(args: argparse.Namespace) -> None:
    from hill.ladder import ladder, report

    if len(set(args.files)) < len(args.files):
        raise CommandError("bfjoust ladder run: a file is given twice")
    if len(args.files) < 2:
        what = "is empty" if not args.files else "has one program: there is nothing to joust"
        raise CommandError(f"bfjoust ladder run: the pool {what}; give two files or more")
    programs = load_programs(args.files)
    pool = ladder.Ladder(len(programs))
    budget = ladder.budget_jousts(pool.size, args.budget)
    play = ladder.arena_player(arena.Arena(jobs=args.jobs), programs)
    result = ladder.run(pool, play, budget, args.seed, args.rule, args.by_cost)
    stats = ladder.ladder_statistics(pool, result)
    data = report.ladder_json(args.files, pool, result, stats)
    if args.json:
        json.dump(data, sys.stdout, separators=(",", ":"))
        print()
    else:
        print(report.ladder_text(data), end="")


def add_ladder_commands(commands: argparse._SubParsersAction) -> None:
    ladder = commands.add_parser("ladder", help="rank programs from a fraction of their jousts")
    actions = ladder.add_subparsers(dest="ladder_command", required=True, metavar="ACTION")
    run = actions.add_parser("run", help="play a ladder over program files and print the ranking")
    run.add_argument("files", nargs="*", metavar="FILE")
    run.add_argument(
        "--budget", type=parse_budget, default=0.2, help="fraction of the pairs to joust, (0, 1]"
    )
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--json", action="store_true", help="print the result as JSON")
    run.add_argument(
        "--rule", choices=("markov", "paulson", "random"), default="markov", help="pairing rule"
    )
    run.add_argument("--by-cost", action="store_true", help="buy bits per cycle, not per joust")
    run.add_argument("--jobs", type=int, default=None, help="threads (default: all cores)")
    run.set_defaults(run=command_ladder_run)
    add_archive_commands(actions)


def command_bot(args: argparse.Namespace) -> None:
    from bot.app import run_bot  # the IRC stack is only loaded when needed
    from hill.errors import IrcdError

    try:
        run_bot(settings_of(args), local_ircd=args.local_ircd)
    except IrcdError as error:
        raise CommandError(f"bfjoust bot: {error}") from None
    except OSError as error:  # e.g. the web report's port is taken
        raise CommandError(f"bfjoust bot: {error}") from None


def command_web(args: argparse.Namespace) -> None:
    from hill.web.server import run_web

    try:
        run_web(settings_of(args))
    except (OSError, HillError) as error:
        raise CommandError(f"bfjoust web: {error}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bfjoust", description="BF Joust engine and hill tools.")
    add_shared_options(parser)
    parser.set_defaults(takes_shared_options=False)  # until a command that takes them
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    joust = commands.add_parser("joust", help="joust two programs, print the classic line")
    joust.add_argument("left")
    joust.add_argument("right")
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

    add_hill_commands(commands)
    add_ladder_commands(commands)
    add_hill_tournament_commands(add_tournament_commands(commands))

    bot = commands.add_parser("bot", help="run the IRC bot (and the web report)")
    add_shared_options(bot)
    bot.add_argument(
        "--local-ircd",
        action="store_true",
        help="start a local IRC server when the configured one is on loopback and not running",
    )
    bot.set_defaults(run=command_bot)

    web = commands.add_parser("web", help="serve the web report alone (no IRC)")
    add_shared_options(web)
    web.set_defaults(run=command_web)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    given = [flag for flag in SHARED_OPTIONS if hasattr(args, flag.lstrip("-"))]
    if given and not args.takes_shared_options:
        parser.error(f"{args.command} takes no {' or '.join(given)}")
    try:
        args.run(args)
    except (CommandError, HillError, TournamentError) as error:  # a refusal, said in a line
        print(error, file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `bfjoust matrix ... | head` is fine
        sys.stderr.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
