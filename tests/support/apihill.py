"""A small real hill with something behind every JSON twin, for the API's
tests (tests/test_web_openapi.py): reference programs, a round robin, a
Swiss and a Swiss stopped mid-way, a played and an open contest, a `-test`
trial and the all-time ladder; served by a real `bfjoust web` process
(webhill.WebProcess)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from hill.rules.requests import RequestKind
from hill.store.requests import RequestBook
from hill.writers.hill import Hill, play_request
from hill.writers.ladder import ArchiveLadder
from hill.writers.tournaments import HillTournaments
from support.webhill import build_hill, reference_programs


@dataclass
class ApiHill:
    hill: Hill
    round_robin: int
    swiss: int
    trial: str  # a `-test` trial's token
    contests: tuple[str, ...]  # played, then open


def enter(hill: Hill, contest: str, owner: str, code: bytes) -> None:
    """A contest entry, as the bot plays it."""
    book = RequestBook(hill.db)
    heard = hill.contests.view(contest).created_at
    kind = RequestKind.CONTEST_ENTER
    asked = book.add(limit=99, nick=owner, channel=None, origin="irc", created_at=heard,
                     command=kind, owner=owner, name=contest, code=code)  # fmt: skip
    play_request(hill, book.start(asked.id))


class Stop(Exception):
    """Stops a tournament mid-way, as a crash would."""


def stop_after_four(done: int, _total: int) -> None:
    if done >= 4:
        raise Stop


def build(data_dir: Path) -> ApiHill:
    programs = reference_programs()
    hill = build_hill(data_dir, programs[:6])
    service = HillTournaments(hill)
    round_robin = service.create("round-robin", "hill", started_by="alice")
    service.run(round_robin)
    swiss = service.create("swiss", "hill", seed=3)
    service.run(swiss)
    running = service.create("swiss", "hill", seed=5)
    with contextlib.suppress(Stop):
        service.run(running, stop_after_four)  # as a crash leaves it: running
    trial = hill.challenge("erin", "probe", programs[7][1], test_only=True).page
    assert trial
    played = hill.contests.create("summer", "+1h", by="carol", title="Summer")
    for i, (_, code) in enumerate(programs[8:11]):
        enter(hill, "summer", f"p{i}", code)
    played = hill.contests.close("summer", by="carol")
    service.run(played.tournament_id)
    hill.contests.finish("summer")
    hill.contests.create("spring", "+1h", by="carol", title="Spring")
    enter(hill, "spring", "alice", programs[12][1])
    ArchiveLadder(hill).step(40)  # the all-time ladder, fitted
    return ApiHill(hill, round_robin, swiss, trial, ("summer", "spring"))
