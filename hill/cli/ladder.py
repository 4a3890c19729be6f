"""`bfjoust ladder run|step|show`: `run` ranks program files from a fraction
of their jousts (hill.ladder); `step` and `show` are the hill's all-time
ladder from the command line, over the hill's data folder (`--config`,
`--data`, as `bfjoust hill`).

`step` plays jousts of the ladder over every program the hill has seen
(one round by default) and stores them and the refitted standing, as the
bot does while the hill is idle (it takes the hill's lock to write, so it
may run beside the bot); `show` prints the stored standing.  Both print it
as a table, or with `--json` in the contract of `bfjoust ladder run`.
"""

from __future__ import annotations

import argparse
import json
import sys

from hill.cli.hill import add_shared_options, open_hill, open_queries
from hill.cli.shared import load_programs
from hill.engine import arena
from hill.errors import CommandError
from hill.ladder import ladder, report
from hill.ladder.ladder import joust_list
from hill.ladder.report import board_json, ladder_text
from hill.play.ladder import arena_player
from hill.store import archive
from hill.store.database import Database
from hill.writers.ladder import ArchiveLadder


def parse_budget(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be within (0, 1], not {text}")
    return value


def command_ladder_run(args: argparse.Namespace) -> None:
    if len(set(args.files)) < len(args.files):
        raise CommandError("bfjoust ladder run: a file is given twice")
    if len(args.files) < 2:
        what = "is empty" if not args.files else "has one program: there is nothing to joust"
        raise CommandError(f"bfjoust ladder run: the pool {what}; give two files or more")
    programs = load_programs(args.files)
    pool = ladder.Ladder(len(programs))
    budget = ladder.budget_jousts(pool.size, args.budget)
    play = arena_player(arena.Arena(jobs=args.jobs, stats=False), programs)
    result = ladder.run(pool, play, budget, args.seed, args.rule, args.by_cost)
    stats = ladder.ladder_statistics(pool, result)
    data = report.ladder_json(args.files, pool, result, stats)
    if args.json:
        json.dump(data, sys.stdout, separators=(",", ":"))
        print()
    else:
        print(report.ladder_text(data), end="")


def add_arguments(ladder: argparse.ArgumentParser) -> None:
    """`bfjoust ladder run|step|show`."""
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


NO_STANDING = (
    "the all-time ladder has no standing yet: it needs two programs in the archive, "
    "then `bfjoust ladder step` (or the bot, with [ladder] enabled) computes it"
)


def _print(db: Database, as_json: bool) -> None:
    with db.session() as session:
        board = archive.board(session)
        if board is None:
            raise CommandError(NO_STANDING)
        ranked = [row.version for row in board.rows]
        ladder = archive.load_ladder(session, ranked)
    data = board_json(board, joust_list(ladder, [v.label for v in ranked]))
    if as_json:
        json.dump(data, sys.stdout, separators=(",", ":"))
        print()
        return
    print(ladder_text(data), end="")
    print(f"computed {data['computed_at']}; {board.ladder_jousts} jousts played by the ladder")
    if board.waiting:
        print(f"{len(board.waiting)} newer programs join at the next step")


def command_step(args: argparse.Namespace) -> None:
    if args.jousts is not None and args.jousts < 1:
        raise CommandError("bfjoust ladder step: --jousts must be at least 1")
    hill = open_hill(args)
    try:
        played = ArchiveLadder(hill).step(args.jousts)
        if not args.json:
            print(f"played {played} jousts")
        _print(hill.db, args.json)
    finally:
        hill.close()


def command_show(args: argparse.Namespace) -> None:
    queries = open_queries(args)
    try:
        _print(queries.db, args.json)
    finally:
        queries.close()


def add_archive_commands(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`step` and `show` beside `bfjoust ladder run`."""
    step = actions.add_parser(
        "step", help="play jousts of the hill's all-time ladder and store its standing"
    )
    step.add_argument(
        "--jousts", type=int, default=None, help="jousts to play (default: one round)"
    )
    show = actions.add_parser("show", help="print the hill's all-time ladder as stored")
    for parser, run in ((step, command_step), (show, command_show)):
        add_shared_options(parser)
        parser.add_argument("--json", action="store_true", help="print the ladder as JSON")
        parser.set_defaults(run=run)
