"""`bfjoust tournament ...`: `run` plays one over files (tournament_files.py);
`create|resume|cancel|list|show` are the hill's tournaments, over its
pools (hill.store.pools) in its data folder (`--config`, `--data`, as
`bfjoust hill`).

`create` stores a tournament and plays it to the end with a progress bar;
killed, `resume ID` plays it on and ends exactly as an uninterrupted run
(the bot also resumes unfinished tournaments on its start); `cancel ID`
ends one where it stands (whoever plays it, the bot or another command,
stops within a second).  They write under the hill's lock, in short
transactions, so they may run beside the bot.  `list` and `show` only
read.  Each prints a table, or with `--json` one JSON object: `show`,
`create` and `cancel` the tool contract of docs/tournaments.md with the
tournament's summary beside it.
"""

from __future__ import annotations

import argparse
import json
import sys

from hill.cli.shared import add_shared_options, open_hill, read_hill
from hill.cli.tournament_files import (
    add_execution_options,
    add_format_options,
    add_run_command,
    arena_for,
    note_unread_options,
    progress_bar,
    text_result,
)
from hill.errors import TournamentError
from hill.scheduler.journeys import play_tournament
from hill.store.pools import POOLS_HELP
from hill.store.records import TournamentSummary, TournamentView, tournament, tournaments
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments


def add_arguments(tournament: argparse.ArgumentParser) -> None:
    """`bfjoust tournament run|create|resume|list|show`."""
    actions = tournament.add_subparsers(dest="tournament_command", required=True, metavar="COMMAND")
    add_run_command(actions)
    create = actions.add_parser("create", help="a tournament over one of the hill's pools")
    create.add_argument("pool", metavar="POOL", help=POOLS_HELP)
    create.add_argument(
        "--all-versions",
        action="store_true",
        help="archive: every version of each program (owner.name@V), not only its latest",
    )
    add_format_options(create)
    add_execution_options(create)
    create.add_argument("--by", default="cli", help="who starts it (shown with it)")
    create.set_defaults(run=command_create)

    resume = actions.add_parser("resume", help="play an unfinished tournament of the hill on")
    resume.add_argument("id", type=int, metavar="ID")
    add_execution_options(resume)
    resume.set_defaults(run=command_resume)

    cancel = actions.add_parser(
        "cancel", help="end an unfinished tournament where it stands (its result so far)"
    )
    cancel.add_argument("id", type=int, metavar="ID")
    cancel.add_argument("--by", default="cli", help="who cancels it (shown with it)")
    cancel.add_argument("--json", action="store_true")
    cancel.set_defaults(run=command_cancel)

    listing = actions.add_parser("list", help="the hill's tournaments, newest first")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(run=command_list)

    show = actions.add_parser("show", help="one of the hill's tournaments")
    show.add_argument("id", type=int, metavar="ID")
    show.add_argument("--json", action="store_true")
    show.set_defaults(run=command_show)
    for parser in (create, resume, cancel, listing, show):
        add_shared_options(parser)


def command_create(args: argparse.Namespace) -> None:
    note_unread_options(args)
    hill = open_hill(args)
    try:
        service = HillTournaments(hill)
        tournament_id = service.create(
            args.format,
            args.pool,
            all_versions=args.all_versions,
            seed=args.seed,
            additional_rounds=args.additional_rounds,
            allow_repeat=args.allow_repeat,
            criteria=args.criteria,
            started_by=args.by,
        )
        print(
            f"tournament {tournament_id}: if it is stopped, "
            f"`bfjoust tournament resume {tournament_id}` plays it on",
            file=sys.stderr,
        )
        _play(args, service, tournament_id)
    finally:
        hill.close()


def command_resume(args: argparse.Namespace) -> None:
    hill = open_hill(args)
    try:
        service = HillTournaments(hill)
        if args.id not in service.unfinished():
            view = tournament(hill.db, args.id)
            if view is None:
                raise TournamentError(f"there is no tournament {args.id}")
            print(f"tournament {args.id} is over already: {view.summary.ended}", file=sys.stderr)
        _play(args, service, args.id)
    finally:
        hill.close()


def command_cancel(args: argparse.Namespace) -> None:
    hill = open_hill(args)
    try:
        HillTournaments(hill).cancel(args.id, args.by)
        view = tournament(hill.db, args.id)  # its standings as it stands
    finally:
        hill.close()
    assert view is not None
    _print_view(view, args.json)


def play_on(args: argparse.Namespace, hill: Hill, tournament_id: int) -> None:
    """Play a stored tournament of the hill from wherever it stands to its
    end (hill.scheduler.journeys), on the arena of the options, with a
    progress bar."""
    with arena_for(args) as jousts, progress_bar() as bar:
        play_tournament(hill, tournament_id, jousts, progress=bar)


def _play(args: argparse.Namespace, service: HillTournaments, tournament_id: int) -> None:
    play_on(args, service.hill, tournament_id)
    view = tournament(service.hill.db, tournament_id)
    assert view is not None
    _print_view(view, args.json)


def command_list(args: argparse.Namespace) -> None:
    rows = read_hill(args, tournaments)
    if args.json:
        print(json.dumps({"tournaments": [row.to_json() for row in rows]}))
        return
    if not rows:
        print("no tournaments yet: `bfjoust tournament create POOL --format FORMAT` starts one")
    for row in rows:
        print(summary_line(row))


def command_show(args: argparse.Namespace) -> None:
    view = read_hill(args, tournament, args.id)
    if view is None:
        raise TournamentError(f"there is no tournament {args.id}: `bfjoust tournament list`")
    _print_view(view, args.json)


def _print_view(view: TournamentView, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"tournament": view.summary.to_json(), **view.result}))
    else:
        print(summary_line(view.summary))
        print(text_result(view.result))


def summary_line(summary: TournamentSummary) -> str:
    """One tournament in a line: what, over which pool, how far, who leads."""
    s = summary
    done = f"{s.matches_committed}/{s.matches_expected} matches"
    state = s.ended or f"running, round {s.rounds_played}/{s.rounds_planned}, {done}"
    if s.cancelled:
        state = f"{s.ended} after {done}"
    who = "winner" if s.ended and not s.cancelled else "leader"
    lead = f", {who} {s.leader}" if s.leader else ""
    return (
        f"#{s.id} {s.format} over {s.pool} ({s.entrants} entrants), "
        f"{s.created_at:%Y-%m-%d %H:%M} by {s.started_by}: {state}{lead}"
    )
