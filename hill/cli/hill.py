"""`bfjoust hill ...`: run the hill from the command line (init, submit,
test, withdraw, remove, report, breakdown, history, import, rescore,
stats; backup, restore and rebuild in hill.cli.operations)."""

from __future__ import annotations

import argparse
import json
from importlib import resources
from pathlib import Path

from tqdm import tqdm

from hill.cli.shared import add_shared_options, open_hill, open_queries, read_file, settings_of
from hill.errors import CommandError, HillError
from hill.rules import names
from hill.rules.reports import breakdown, json_report, text_report


def run(args: argparse.Namespace) -> None:
    args.hill_run(args)  # a HillError is said by bfjoust's main, as any refusal


STARTERS = resources.files("hill") / "starters"


def command_init(args: argparse.Namespace) -> None:
    hill = open_hill(args, create=True)
    if args.seed and hill.queries.standings().size == 0:
        for starter in sorted(STARTERS.iterdir(), key=lambda p: p.name):
            if starter.name.endswith(names.SUFFIX):
                name = names.from_file(starter.name)
                report = hill.challenge("starter", name, starter.read_bytes())
                print(report.summary)
    print(f"hill ready in {hill.settings.data_dir} ({hill.queries.standings().size} programs)")


def command_submit(args: argparse.Namespace) -> None:
    hill = open_hill(args, create=True)
    name = args.name or names.from_file(args.file, args.owner)
    print(hill.challenge(args.owner, name, read_file(args.file)).summary)


def command_test(args: argparse.Namespace) -> None:
    hill = open_hill(args)
    name = args.name or names.from_file(args.file, args.owner)
    report = hill.challenge(args.owner, name, read_file(args.file), test_only=True)
    print(report.summary)
    if report.page:  # its full result, as the bot links it
        from hill.web.urls import Urls

        print(f"full result: {Urls(site=settings_of(args).web.url).test(report.page)}")


def command_withdraw(args: argparse.Namespace) -> None:
    print(open_hill(args).withdraw(args.owner, args.name).summary)


def command_remove(args: argparse.Namespace) -> None:
    print(open_hill(args).remove(args.program, args.actor).summary)


def command_report(args: argparse.Namespace) -> None:
    queries = open_queries(args)
    standings = queries.standings()
    if args.format == "json":
        state = queries.latest_state()
        print(json.dumps(json_report(standings, state[1] if state else None), indent=1))
    else:
        print(text_report(standings), end="")


def command_breakdown(args: argparse.Namespace) -> None:
    standings = open_queries(args).standings()
    if standings.find(args.program) is None:
        raise CommandError(f"there is no {args.program} on the hill")
    print(breakdown(standings, args.program), end="")


def command_history(args: argparse.Namespace) -> None:
    for event in open_queries(args).events(args.program):
        commit = f" [{event.commit[:10]}]" if event.commit else ""
        print(
            f"#{event.id} {event.time:%Y-%m-%d %H:%M:%S} {event.kind} by {event.actor}: "
            f"{event.summary}{commit}"
        )


def command_import(args: argparse.Namespace) -> None:
    folder = Path(args.folder)
    files = sorted(folder.glob(f"*{names.SUFFIX}"))
    if not files:
        raise CommandError(f"{folder}: no {names.SUFFIX} files")
    hill = open_hill(args, create=True)
    failures = 0
    with tqdm(files, unit="program", disable=args.quiet) as progress:
        for path in progress:
            stem = path.name.removesuffix(names.SUFFIX)
            owner, given = names.split(stem) if "." in stem else (args.owner, stem)
            name = names.from_file(given)
            if name != given:  # said, not done quietly: the hill knows it by the new name
                progress.write(f"{path.name}: the name {given!r} is taken as {name!r} "
                               f"(1 to 48 letters, digits, '_' or '-')")  # fmt: skip
            try:
                summary = hill.challenge(owner, name, path.read_bytes()).summary
            except HillError as error:
                failures += 1
                summary = f"{path.name}: {error}"
            progress.write(summary)
    if failures:
        raise CommandError(f"{failures} of {len(files)} programs were refused")


def command_rescore(args: argparse.Namespace) -> None:
    print(open_hill(args).rescore(args.actor, rejoust=args.rejoust).summary)


def command_stats(args: argparse.Namespace) -> None:
    """Play again the stored jousts that lack their battle statistics (the
    hill's first), with a progress bar; safe beside a running bot (each
    batch is stored under the hill's lock) and to stop at any moment."""
    from hill.writers.backfill import StatsBackfill

    backfill = StatsBackfill(open_hill(args), jobs=args.jobs)
    kept, stored = backfill.progress()
    disagreed = 0
    with tqdm(
        total=stored, initial=kept, unit="joust", disable=args.quiet, desc="statistics"
    ) as progress:
        while True:
            work = backfill.work(args.batch)
            progress.update(work.played)
            disagreed += work.disagreed
            if work.done:
                break
    kept, stored = backfill.progress()
    print(f"{kept} of {stored} jousts have their battle statistics")
    if disagreed:
        raise CommandError(
            f"{disagreed} replayed jousts disagree with their stored outcomes: "
            "`bfjoust hill rescore --rejoust` plays the hill again"
        )


def add_arguments(hill: argparse.ArgumentParser) -> None:
    """`bfjoust hill ...`."""
    add_shared_options(hill)
    hill.set_defaults(run=run)
    sub = hill.add_subparsers(dest="hill_command", required=True, metavar="COMMAND")

    def add(name: str, function: object, help: str) -> argparse.ArgumentParser:
        parser = sub.add_parser(name, help=help)
        add_shared_options(parser)
        parser.set_defaults(hill_run=function)
        return parser

    init = add("init", command_init, "create the database and the git repository")
    init.add_argument("--seed", action="store_true", help="start an empty hill with starters")
    submit = add("submit", command_submit, "challenge the hill with a program")
    submit.add_argument("file")
    submit.add_argument("--owner", required=True)
    submit.add_argument("--name", help="program name (default: the file name)")
    test = add("test", command_test, "see where a program would rank; the hill is unchanged")
    test.add_argument("file")
    test.add_argument("--owner", default="tester")
    test.add_argument("--name")
    withdraw = add("withdraw", command_withdraw, "take your own program off the hill")
    withdraw.add_argument("name")
    withdraw.add_argument("--owner", required=True)
    remove = add("remove", command_remove, "admin: take any program off the hill")
    remove.add_argument("program", metavar="OWNER.NAME")
    remove.add_argument("--actor", default="admin")
    report = add("report", command_report, "the standings and the result matrix")
    report.add_argument("--format", choices=("text", "json"), default="text")
    detail = add("breakdown", command_breakdown, "one program against each opponent")
    detail.add_argument("program", metavar="OWNER.NAME")
    history = add("history", command_history, "every hill event, or one program's")
    history.add_argument("program", nargs="?", metavar="OWNER.NAME")
    load = add("import", command_import, f"submit every {names.SUFFIX} file of a folder")
    load.add_argument("folder")
    load.add_argument("--owner", default="import", help="owner of files not named owner.name")
    load.add_argument("--quiet", action="store_true", help="no progress bar")
    rescore = add("rescore", command_rescore, "recompute the standings")
    rescore.add_argument("--rejoust", action="store_true", help="replay every joust first")
    rescore.add_argument("--actor", default="admin")
    stats = add("stats", command_stats, "replay the jousts stored without battle statistics")
    stats.add_argument("--jobs", type=int, help="threads (default: every core)")
    stats.add_argument("--batch", type=int, default=64, help="jousts stored at a time")
    stats.add_argument("--quiet", action="store_true", help="no progress bar")
    from hill.cli.operations import add_operation_commands

    add_operation_commands(add)
