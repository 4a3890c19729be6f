"""`bfjoust contest list|show|create|enter|withdraw|close` (docs/contests.md,
the tool contract), on the hill of `--config` and `--data`, beside the bot.

`enter` and `withdraw` record a request in the hill's request book, heard
now, and play it at once, as the bot plays one heard on IRC; `close` closes
a contest (at once, or at its closing time if that has passed, with the
entries heard before it), plays its tournament and publishes the results;
killed, the same command finishes it.  `list` and `show` only read;
`show --json` prints the contract's object, whose `code_hash` is null
while the contest is open.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys

from hill.cli.shared import add_shared_options, open_hill, read_file, read_hill
from hill.cli.tournament_files import add_execution_options, text_result
from hill.cli.tournaments import play_on
from hill.errors import CommandError, HillError
from hill.rules import contests as rules
from hill.rules import names
from hill.rules.contests import ContestState
from hill.rules.events import iso_utc, utcnow
from hill.rules.requests import RequestKind
from hill.scheduler.journeys import close_contest
from hill.store.contests import ContestView, contest, contests
from hill.store.requests import RequestBook
from hill.tournaments.registry import FORMATS
from hill.writers.hill import Hill

BOOK_LIMIT = 1_000_000  # the command line is the admin's: no queue limit


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`bfjoust contest list|show|create|enter|withdraw|close`."""
    actions = parser.add_subparsers(dest="contest_command", required=True, metavar="COMMAND")
    listing = actions.add_parser("list", help="the hill's contests, newest first")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=command_list)

    show = actions.add_parser("show", help="one contest (its code hashes null while open)")
    show.add_argument("name", metavar="NAME")
    show.add_argument("--json", action="store_true")
    show.set_defaults(run=command_show)

    create = actions.add_parser("create", help="announce a contest")
    create.add_argument("name", metavar="NAME", help="1 to 32 letters, digits, _ or -")
    create.add_argument(
        "--closes", required=True, metavar="ISO-TIME", help="UTC, e.g. 2026-12-01T18:00Z, or +2h"
    )
    create.add_argument("--title", default="")
    create.add_argument("--format", choices=tuple(FORMATS), default=rules.DEFAULT_FORMAT)
    create.add_argument(
        "--control",
        action="append",
        default=[],
        metavar="FILE",
        help="a control entrant (control.NAME, NAME from the file's name): plays, wins nothing",
    )
    create.add_argument("--by", default="cli", help="who announces it (shown with it)")
    create.set_defaults(run=command_create)

    enter = actions.add_parser("enter", help="enter a program (replaces the owner's entry)")
    enter.add_argument("name", metavar="NAME")
    enter.add_argument("file", metavar="FILE")
    enter.add_argument("--owner", required=True)
    enter.set_defaults(run=command_enter)

    withdraw = actions.add_parser("withdraw", help="take an owner's entry back")
    withdraw.add_argument("name", metavar="NAME")
    withdraw.add_argument("--owner", required=True)
    withdraw.set_defaults(run=command_withdraw)

    close = actions.add_parser("close", help="close a contest now (or at its time), play it")
    close.add_argument("name", metavar="NAME")
    close.add_argument("--by", default="cli", help="who closes it (shown with it)")
    add_execution_options(close)
    close.set_defaults(run=command_close)
    for command in (listing, show, create, enter, withdraw, close):
        add_shared_options(command)


def command_list(args: argparse.Namespace) -> None:
    found = read_hill(args, contests)
    if args.json:
        print(json.dumps({"contests": [view.to_json() for view in found]}))
        return
    if not found:
        print("no contests yet: `bfjoust contest create NAME --closes TIME` announces one")
    for view in found:
        print(summary_line(view))


def command_show(args: argparse.Namespace) -> None:
    view = read_hill(args, contest, args.name)
    if view is None:
        raise CommandError(f"there is no contest {args.name[:40]}: `bfjoust contest list`")
    print_view(view, args.json)


def command_create(args: argparse.Namespace) -> None:
    controls = {names.from_file(path): read_file(path) for path in args.control}
    if len(controls) != len(args.control):
        raise CommandError("two controls of the same name: name their files apart")
    hill = open_hill(args, create=True)  # a contest may open a new hill
    try:
        view = hill.contests.create(
            args.name,
            args.closes,
            by=args.by,
            title=args.title,
            format=args.format,
            controls=controls,
        )
    finally:
        hill.close()
    print(summary_line(view))


def command_enter(args: argparse.Namespace) -> None:
    print(_play(args, RequestKind.CONTEST_ENTER, read_file(args.file)))


def command_withdraw(args: argparse.Namespace) -> None:
    print(_play(args, RequestKind.CONTEST_WITHDRAW, None))


def _play(args: argparse.Namespace, kind: RequestKind, code: bytes | None) -> str:
    """Record the request, heard now, and play it: its answer."""
    names.check(args.owner, "entry")  # BadName for a bad owner
    hill = open_hill(args)
    try:
        name = hill.contests.view(args.name).name
        book = RequestBook(hill.db)
        fields = {"nick": args.owner, "channel": None, "origin": "cli", "command": kind}
        request = book.add(limit=BOOK_LIMIT, **fields, owner=args.owner, name=name, code=code)
        request = book.start(request.id)
        try:
            play = (
                hill.contests.enter if kind == RequestKind.CONTEST_ENTER else hill.contests.withdraw
            )
            summary = play(request).summary
        except HillError as error:
            book.fail(request.id, str(error))
            raise
        finally:
            book.mark_delivered(request.id)  # said here, not on IRC
    finally:
        hill.close()
    return summary


def command_close(args: argparse.Namespace) -> None:
    """The contest's journey (hill.scheduler.journeys), as the bot takes it."""
    hill = open_hill(args)
    try:
        play = functools.partial(_play_tournament, args, hill)
        view = close_contest(hill, args.name, play, by=args.by)
    finally:
        hill.close()
    print_view(view, args.json)


def _play_tournament(args: argparse.Namespace, hill: Hill, tournament_id: int) -> None:
    """Play a closed contest's tournament (from wherever it stands)."""
    print(
        f"the contest is closed; playing its tournament #{tournament_id} "
        "(stopped, the same command plays it on)",
        file=sys.stderr,
    )
    play_on(args, hill, tournament_id)


def print_view(view: ContestView, as_json: bool) -> None:
    if as_json:
        print(json.dumps(view.to_json()))
        return
    print(summary_line(view))
    for entry in view.players:
        print(f"  {entry.entrant:32} entered {iso_utc(entry.heard)}")
    for entry in view.controls:
        print(f"  {entry.entrant:32} control")
    if view.result is not None:
        print(standings_table(view))
        print(f"recompute in {rules.folder(view.name)} of a clone of the hill's history:")
        print(f"  {rules.recompute_command(view.result)}")


def summary_line(view: ContestView) -> str:
    """A contest in one line: name, title, format, where it stands."""
    state = {
        ContestState.OPEN: f"open, closes {iso_utc(view.closes)} "
        f"(in {rules.time_left(view.seconds_left(utcnow()))})",
        ContestState.CLOSED: f"closed at {iso_utc(view.closes)}, its tournament being played",
        ContestState.PLAYED: f"played, winner {view.winner or 'shared'}",
        ContestState.VOID: f"void: {view.void_reason}",
    }[view.state]
    entries = f"{len(view.players)} entr{'y' if len(view.players) == 1 else 'ies'}"
    controls = f", {len(view.controls)} controls" if view.controls else ""
    return f"{view.name}: {view.title} ({view.format}, {entries}{controls}): {state}"


def standings_table(view: ContestView) -> str:
    """The tournament's table with each row's place among the players (- for a control)."""
    shown = view.standings() or []
    rows = [{k: v for k, v in row.items() if k not in ("place", "control")} for row in shown]
    table = text_result({**(view.result or {}), "standings": rows}).splitlines()
    places = ["place"] + ["-" if row["place"] is None else str(row["place"]) for row in shown]
    return "\n".join(f"{p:>5} {line}" for p, line in zip(places, table, strict=False))
