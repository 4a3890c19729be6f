"""`bfjoust tournament run`: a tournament over program files, printed as JSON
(docs/tournaments.md "Tool contract") or as a table."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from tqdm import tqdm

from hill.cli.shared import settings_of
from hill.engine.arena import Arena
from hill.play.cluster import executor_for
from hill.play.pools import NAMINGS, file_pool
from hill.play.tournament import Progress, Tournament
from hill.store.state_file import StateFile
from hill.tournaments.criteria import CRITERIA, parse_criteria
from hill.tournaments.ledger import MemoryStore
from hill.tournaments.plan import OPTIONS, TournamentPlan
from hill.tournaments.registry import FORMATS, rules_of, seed_for, unread_options


def add_run_command(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`bfjoust tournament run`."""
    run = actions.add_parser("run", help="a tournament over program files")
    run.add_argument("files", nargs="*", metavar="FILE", help="the entrants (names as given)")
    run.add_argument(
        "--names",
        choices=NAMINGS,
        default="path",
        help="name the entrants by their files' paths as given (default), or by their stems: "
        "contests/spring/alice.bfjoust is alice, as the hill's contests name them",
    )
    add_format_options(run)
    add_execution_options(run)
    run.add_argument(
        "--state",
        metavar="FILE",
        help="keep the tournament in this SQLite file; run again to resume after a crash",
    )
    run.add_argument("--config", default=argparse.SUPPRESS, help="the TOML configuration "
                     "(its [cluster] scheduler)")  # fmt: skip
    run.set_defaults(run=command_run)


def add_format_options(parser: argparse.ArgumentParser) -> None:
    """What decides a tournament: its format and the Swiss settings."""
    parser.add_argument("--format", choices=tuple(FORMATS), required=True)
    parser.add_argument("--seed", type=int, help="Swiss round 1 (default: a random seed, printed)")
    parser.add_argument(
        "--additional-rounds",
        type=_count,
        default=0,
        metavar="K",
        help="Swiss: play ceil(log2 N) + K rounds (default 0)",
    )
    parser.add_argument(
        "--allow-repeat",
        action="store_true",
        help="Swiss: in a deadlock, let a pair meet once more instead of ending",
    )
    parser.add_argument(
        "--criteria",
        type=_criteria,
        default=CRITERIA,
        metavar="A,B,...",
        help=f"Swiss: the order of the criteria (default {','.join(CRITERIA)})",
    )


def add_execution_options(parser: argparse.ArgumentParser) -> None:
    """Where the jousts are played, and how the result is printed."""
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument(
        "--scheduler",
        metavar="tcp://HOST:PORT",
        help="play on this Dask cluster (default: [cluster] scheduler, else every local core)",
    )
    parser.add_argument("--jobs", type=_count, help="local threads (default: every core)")


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _criteria(text: str) -> tuple[str, ...]:
    try:
        return parse_criteria(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def note_unread_options(args: argparse.Namespace) -> None:
    """Say which options given the format does not read (they change nothing)."""
    for note in unread_options(args.format, {option: getattr(args, option) for option in OPTIONS}):
        print(f"note: {note}", file=sys.stderr)


def command_run(args: argparse.Namespace) -> None:
    programs = file_pool(args.files, args.names)
    note_unread_options(args)
    store = MemoryStore() if args.state is None else StateFile(Path(args.state))
    seed = args.seed
    stored = store.stored_plan() if isinstance(store, StateFile) else None
    if seed is None and stored is not None:
        seed = stored["seed"]  # a resumed run keeps its first seed
    seed = seed_for(args.format, seed)
    plan = TournamentPlan(
        format=args.format,
        entrants=tuple(programs),
        seed=seed,
        additional_rounds=args.additional_rounds,
        allow_repeat=args.allow_repeat,
        criteria=args.criteria,
    )
    if isinstance(store, StateFile):
        store.claim(plan.to_json(programs))
    with arena_for(args, stats=False) as jousts, progress_bar(plan) as progress:
        tournament = Tournament(plan, programs, store, jousts)
        tournament.run(progress)
    result = tournament.to_json()
    print_result(result, args.json)


def print_result(result: dict, as_json: bool) -> None:
    print(json.dumps(result) if as_json else text_result(result))


@contextlib.contextmanager
def arena_for(args: argparse.Namespace, *, stats: bool = True) -> Iterator[Arena]:
    """The arena on every local core, or on the Dask cluster of `--scheduler`
    (or of the configuration's [cluster] scheduler); jousts with their
    battle statistics if `stats` (a tournament of the hill keeps them)."""
    scheduler = args.scheduler or settings_of(args).cluster.scheduler
    with executor_for(scheduler, None, stats=stats) as executor:
        yield Arena(executor, jobs=args.jobs, stats=stats)


@contextlib.contextmanager
def progress_bar(plan: TournamentPlan | None = None) -> Iterator[Progress]:
    """A bar on stderr (a terminal) for runs longer than a second (its
    total from `plan`, or from the progress told)."""
    with tqdm(
        total=rules_of(plan).expected_matches(plan) if plan is not None else None,
        unit="match",
        file=sys.stderr,
        delay=1,
        disable=None,
    ) as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done - bar.n)

        yield progress


def text_result(result: dict) -> str:
    """The standings as a table, and how it ended."""
    rows = result["standings"]
    if not rows:
        return "no standings yet"
    columns = [key for key in rows[0] if key not in ("rank", "name")]
    width = max(len(row["name"]) for row in rows)
    lines = [f"{'#':>4}  {'name':{width}}  " + "  ".join(f"{c:>9}" for c in columns)]
    for row in rows:
        cells = "  ".join(_cell(row[c]) for c in columns)
        lines.append(f"{row['rank']:>4}  {row['name']:{width}}  {cells}")
    rounds = len(result["rounds"])
    ended = result["ended"] or "running"
    lines.append(f"{result['format']}, {rounds} round{'s' * (rounds != 1)}: {ended}")
    if result.get("seed") is not None:
        lines[-1] += f" (seed {result['seed']})"
    return "\n".join(lines)


def _cell(value: object) -> str:
    return f"{value:>9.2f}" if isinstance(value, float) else f"{value!s:>9}"
