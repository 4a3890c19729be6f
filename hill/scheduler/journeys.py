"""The hill's journeys, written once for the bot and the command line.

A contest's life after its deadline: closed (the entries heard before the
close that still wait are played first), its tournament played from
wherever it stands, its results published; killed at any step, the same
journey taken again finishes it.  A tournament's life: prepared from what
is stored, played to its end.  The bot plays them in its turns
(hill.scheduler.turns: a player's request goes first), the command line at
once; each passes how the jousts are played and what is done between two
pieces of work.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from hill.engine.arena import Arena
from hill.play.tournament import Checkpoint, Progress
from hill.rules.contests import ContestState
from hill.store.contests import ContestView
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments

# plays stored tournament ID to its end (how, and on what, is the caller's)
TournamentPlayer = Callable[[int], None]


def play_tournament(
    hill: Hill,
    tournament_id: int,
    jousts: Arena,
    checkpoint: Checkpoint | None = None,
    progress: Progress | None = None,
) -> None:
    """Play tournament `tournament_id` from wherever it stands to its end (or
    until it is cancelled: Cancelled), its jousts on `jousts`,
    `checkpoint()` between two pieces of its work."""
    HillTournaments(hill).prepare(tournament_id, jousts, checkpoint).run(progress)


def close_contest(
    hill: Hill,
    name: str,
    play: TournamentPlayer,
    *,
    by: str,
    now: dt.datetime | None = None,
) -> ContestView:
    """Close contest `name` (at its closing time, or at `now` if earlier),
    play its tournament and publish its results; its view.  A contest
    closed already is taken on from where it stands."""
    view = hill.contests.close(name, by=by, now=now)
    return publish_contest(hill, view, play)


def publish_contest(hill: Hill, view: ContestView, play: TournamentPlayer) -> ContestView:
    """A closed contest's tournament played to its end, then its results
    published; its view (a contest not closed is left as it is)."""
    if view.state != ContestState.CLOSED or view.tournament_id is None:
        return view
    play(view.tournament_id)
    return hill.contests.finish(view.name)
