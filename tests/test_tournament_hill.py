"""The hill's own tournaments: stored in its database (migration 0006), over
its pools (the hill now, the hill at an event, the archive), reusing every
stored joust, resumed after a SIGKILL with exactly the uninterrupted result."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import func, select
from support import bighill
from support.ladderhill import archive_hill, reference
from support.tournament_watch import MatchCounts, wait_mid_round

import hill.store.archive
import hill.store.requests  # noqa: F401  (and the request book's)
from hill.config import HillSettings
from hill.engine.arena import Arena
from hill.errors import TournamentError
from hill.play.tournament import Tournament
from hill.store.database import schema_revision
from hill.store.pools import archive_entrants, hill_pool, join_pools
from hill.store.records import progress_mark, progress_marks, tournament, tournaments
from hill.store.tables import Base, Joust
from hill.tournaments.ledger import MemoryStore
from hill.tournaments.plan import TournamentPlan
from hill.web.tournaments import data as tournament_data
from hill.web.tournaments.reader import TournamentReader
from hill.writers.hill import Hill
from hill.writers.tournaments import HillTournaments


@pytest.fixture(scope="module")
def archive_of_eight(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hill of 8 that has seen 8 reference programs (support.ladderhill),
    built once for the module: each test plays in a copy of it."""
    folder = tmp_path_factory.mktemp("archive-of-eight")
    archive_hill(folder, count=8, size=8).close()
    return folder


@pytest.fixture(scope="module")
def hill_of_two(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hill of the default size holding two reference programs, built once
    for the module: each test gets a copy of it."""
    folder = tmp_path_factory.mktemp("hill-of-two")
    hill = Hill(HillSettings(data_dir=folder), jobs=1)
    for name, code in reference(2):
        hill.challenge("ref", name, code)
    hill.close()
    return folder


def copy_of_archive_of_eight(built: Path, tmp_path: Path) -> Hill:
    """The hill `archive_hill(tmp_path, count=8, size=8)` makes, copied."""
    shutil.copytree(built, tmp_path, dirs_exist_ok=True)
    return Hill(HillSettings(data_dir=tmp_path, size=8), jobs=2)


def stored_jousts(hill: Hill) -> int:
    with hill.db.session() as session:
        return session.scalar(select(func.count()).select_from(Joust))


def test_the_models_match_the_migrations(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path), jobs=1)
    with hill.db.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
    hill.db.downgrade("0005")  # the tournaments' tables go, and come back
    assert hill.db.revision() == "0005"
    hill.db.upgrade()
    assert hill.db.revision() == schema_revision()
    hill.close()


def test_a_round_robin_of_the_hill_plays_no_joust_and_matches_a_standalone_run(
    tmp_path: Path, archive_of_eight: Path
) -> None:
    hill = copy_of_archive_of_eight(archive_of_eight, tmp_path)
    before = stored_jousts(hill)
    service = HillTournaments(hill)
    tournament_id = service.create("round-robin", "hill", started_by="alice")
    view = service.run(tournament_id, jousts=Arena(jobs=1))
    assert stored_jousts(hill) == before  # every joust was known
    programs = dict(reference(8))
    names = view.result["entrants"]
    assert sorted(names) == sorted(f"ref.{n}" for n in programs)
    # the same programs played from scratch, outside the hill
    plan = TournamentPlan("round-robin", tuple(names))
    code = {name: programs[name.removeprefix("ref.")] for name in names}
    alone = Tournament(plan, code, MemoryStore(), Arena(jobs=1))
    alone.run()
    assert view.result == alone.to_json()
    summary = view.summary
    assert (summary.ended, summary.pool, summary.started_by, summary.entrants) == (
        "complete", "hill", "alice", 8)  # fmt: skip
    assert (summary.matches_committed, summary.matches_expected) == (28, 28)
    assert summary.leader == view.result["standings"][0]["name"]
    assert [t.id for t in tournaments(hill.db)] == [tournament_id]
    hill.close()


def test_the_archive_pool_plays_and_stores_the_jousts_never_played(tmp_path: Path) -> None:
    hill = archive_hill(tmp_path, count=12, size=4)  # 8 programs left: many pairs never met
    before = stored_jousts(hill)
    service = HillTournaments(hill)
    tournament_id = service.create("round-robin", "archive")
    view = service.run(tournament_id, jousts=Arena(jobs=1))
    assert len(view.result["entrants"]) == 12
    assert stored_jousts(hill) == 12 * 11 // 2 > before  # all stored, once
    again = service.run(service.create("round-robin", "archive"), jousts=Arena(jobs=1))
    assert again.result == view.result
    hill.close()


def test_the_hill_at_an_event_is_the_hill_as_it_stood(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path, size=10), jobs=1)
    programs = reference(4)
    for name, code in programs[:3]:
        hill.challenge("ref", name, code)
    hill.challenge("bob", "trial", programs[3][1], test_only=True)  # a test event changes nothing
    hill.challenge("ref", *programs[3])
    with hill.db.session() as session:
        assert list(hill_pool(session, "hill@2").programs) != []
        at_two = hill_pool(session, "hill@2").programs
        at_test = hill_pool(session, "hill@4").programs
        now = hill_pool(session, "HILL").programs
    assert set(at_two) == {f"ref.{n}" for n, _ in programs[:2]}
    assert set(at_test) == {f"ref.{n}" for n, _ in programs[:3]}
    assert set(now) == {f"ref.{n}" for n, _ in programs}
    hill.close()


@pytest.mark.parametrize(
    ("spec", "all_versions", "message"),
    [
        ("hil", False, "unknown pool 'hil': the pools are hill, hill@EVENT"),
        ("archive@3", False, "unknown pool"),
        ("hill@77", False, "there is no event 77"),
        ("hill", True, "every version (--all-versions) is a choice of the archive pool"),
        ("hill@1", False, "the pool hill@1 has 1 program: a tournament needs two or more"),
    ],
)
def test_bad_pools_are_refused_clearly(
    tmp_path: Path, hill_of_two: Path, spec: str, all_versions: bool, message: str
) -> None:
    shutil.copytree(hill_of_two, tmp_path, dirs_exist_ok=True)
    hill = Hill(HillSettings(data_dir=tmp_path), jobs=1)
    with pytest.raises(TournamentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        HillTournaments(hill).create("swiss", spec, all_versions=all_versions)
    assert tournaments(hill.db) == []  # nothing stored
    hill.close()


def test_an_empty_hill_is_no_pool(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path), jobs=1)
    with pytest.raises(TournamentError, match="the pool hill has 0 programs"):
        HillTournaments(hill).create("round-robin", "hill")
    hill.close()


def test_archive_entrants_latest_or_every_version() -> None:
    """alice.x submitted as A, B, A again, C; bob.y once: the latest codes
    are C and bob's; the versions are A@1, B@2, C@4 (A again is version 1)."""
    rows = [("alice", "x", "ha", b"A"), ("bob", "y", "hy", b"Y"), ("alice", "x", "hb", b"B"),
            ("alice", "x", "ha", b"A"), ("alice", "x", "hc", b"C")]  # fmt: skip
    assert archive_entrants(rows, all_versions=False) == {"bob.y": b"Y", "alice.x": b"C"}
    assert archive_entrants(rows, all_versions=True) == {
        "alice.x@1": b"A", "bob.y@1": b"Y", "alice.x@2": b"B", "alice.x@4": b"C"}  # fmt: skip


def bfjoust(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hill", "tournament", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def test_a_killed_tournament_resumes_with_the_uninterrupted_result(tmp_path: Path) -> None:
    """Kill `create` twice mid-round (results committed, matches checked
    out); `resume` ends exactly as an uninterrupted run in a copy of the
    same hill, and the jousts it stored are kept.  A Swiss tournament of
    the 32 programs of the archive over 21 rounds (336 matches)."""
    archive_hill(tmp_path / "a", count=32, size=8).close()
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    options = ["--format", "swiss", "--seed", "11", "--additional-rounds", "16", "--jobs", "1",
               "--json"]  # fmt: skip
    whole = bfjoust("create", "archive", *options, "--data", str(tmp_path / "b"))
    out, err = whole.communicate(timeout=600)
    assert whole.returncode == 0, err
    expected = json.loads(out)
    process = bfjoust("create", "archive", *options, "--data", str(tmp_path / "a"))
    with MatchCounts(tmp_path / "a" / "hill.sqlite3", "tournament_matches") as counts:
        for kill_at in (60, 180):
            wait_mid_round(process, counts, kill_at)
            process.kill()
            assert process.wait() == -signal.SIGKILL
            process = bfjoust("resume", "1", "--jobs", "1", "--json", "--data", str(tmp_path / "a"))
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    resumed = json.loads(out)
    for key in ("created_at", "finished_at"):
        resumed["tournament"].pop(key), expected["tournament"].pop(key)
    assert resumed == expected
    assert expected["tournament"]["matches_committed"] == 21 * 16
    hill = Hill(HillSettings(data_dir=tmp_path / "a"), jobs=1)
    view = tournament(hill.db, 1)
    assert view is not None and view.summary.ended == "complete"
    hill.close()


def test_list_and_show_and_their_errors(tmp_path: Path) -> None:
    data = ["--data", str(tmp_path)]

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hill", "tournament", *args, *data],
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    none = command("list")  # no hill yet: said, and nothing created
    assert none.returncode == 1
    assert none.stderr.startswith(f"there is no hill at {tmp_path}: `bfjoust hill init")
    Hill(HillSettings(data_dir=tmp_path), jobs=1).close()
    empty = command("list")
    assert empty.stdout.startswith("no tournaments yet: `bfjoust tournament create POOL")
    assert json.loads(command("list", "--json").stdout) == {"tournaments": []}
    assert command("show", "4").stderr == "there is no tournament 4: `bfjoust tournament list`\n"
    assert command("resume", "4").stderr == "there is no tournament 4\n"
    refused = command("create", "hill", "--format", "swiss")
    assert (refused.returncode, refused.stderr) == (
        1, "the pool hill has 0 programs: a tournament needs two or more\n")  # fmt: skip
    hill = Hill(HillSettings(data_dir=tmp_path), jobs=1)
    for name, code in reference(5):
        hill.challenge("ref", name, code)
    hill.close()
    created = command("create", "hill", "--format", "round-robin", "--by", "zoe")
    assert created.returncode == 0, created.stderr
    assert "tournament 1: if it is stopped, `bfjoust tournament resume 1` plays it on" in (
        created.stderr
    )
    shown = command("show", "1")
    assert shown.stdout == created.stdout
    first = shown.stdout.splitlines()[0]
    assert first.startswith("#1 round-robin over hill (5 entrants), ")
    assert first.endswith("by zoe: complete, winner " + shown.stdout.splitlines()[2].split()[1])
    listed = json.loads(command("list", "--json").stdout)["tournaments"]
    assert [(t["id"], t["ended"], t["matches_committed"]) for t in listed] == [(1, "complete", 10)]
    again = command("resume", "1", "--json")
    assert again.stderr == "tournament 1 is over already: complete\n"
    assert json.loads(again.stdout) == json.loads(command("show", "1", "--json").stdout)


def test_pools_join_the_hill_then_and_now() -> None:
    """The same program and code once; the same name with other code is two
    entrants, the later one named after its pool."""
    then = {"alice.x": b"A", "bob.y": b"Y"}
    now = {"bob.y": b"Y", "alice.x": b"A2", "carol.z": b"Z"}
    assert join_pools([("hill@3", then), ("hill", now)]) == {
        "alice.x": b"A", "bob.y": b"Y", "alice.x@hill": b"A2", "carol.z": b"Z"}  # fmt: skip


def test_the_hill_at_an_event_against_the_hill_now(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path, size=10), jobs=1)
    programs = reference(4)
    for name, code in programs[:3]:
        hill.challenge("ref", name, code)
    hill.challenge("ref", programs[0][0], programs[3][1])  # ref's first program, updated
    service = HillTournaments(hill)
    view = service.run(service.create("round-robin", "hill@3+hill"), jousts=Arena(jobs=1))
    first = f"ref.{programs[0][0]}"
    assert view.summary.pool == "hill@3+hill"
    assert sorted(view.result["entrants"]) == sorted(
        [first, f"{first}@hill", *(f"ref.{n}" for n, _ in programs[1:3])])  # fmt: skip
    with pytest.raises(TournamentError, match="at most 4 pools joined by"):
        service.create("swiss", "hill+hill+hill+hill+hill")
    hill.close()


def test_the_listing_follows_each_tournament_by_its_progress_mark(
    tmp_path: Path, archive_of_eight: Path
) -> None:
    """The web listing keeps each tournament's summary until its mark
    (matches committed, rounds opened, end) changes."""
    hill = copy_of_archive_of_eight(archive_of_eight, tmp_path)
    service = HillTournaments(hill)
    first = service.create("round-robin", "hill", started_by="alice")
    second = service.create("swiss", "hill", started_by="bob")
    assert list(progress_marks(hill.db)) == [second, first]  # newest first
    assert progress_mark(hill.db, first) == (0, 0, None)
    assert progress_mark(hill.db, 999) is None
    reader = TournamentReader(hill.db)
    listed = asyncio.run(reader.listing())  # a View: the marks it depends on, its data
    before = listed.build()["tournaments"]
    assert [t["matches_committed"] for t in before] == [0, 0]
    service.run(first, jousts=Arena(jobs=1))
    assert progress_mark(hill.db, first) == (28, 1, "complete")
    changed = asyncio.run(reader.listing())
    assert changed.key != listed.key  # so the page is built again
    after = changed.build()
    assert after == {"tournaments": [tournament_data.summary(s) for s in tournaments(hill.db)]}
    assert [t["matches_committed"] for t in after["tournaments"]] == [0, 28]
    reader.close()
    hill.close()


def test_a_cancel_from_another_process_stops_the_run_where_it_stands(tmp_path: Path) -> None:
    """`bfjoust tournament cancel ID` beside the `create` that plays it: the
    player stops within a second or so, and the tournament shows as
    cancelled with the matches committed by then as its result.  A round robin
    of 300 quick programs (44,850 matches: seconds of bookkeeping even on a
    fast machine, while the cancel's own process starts)."""
    entrants = 300
    matches = entrants * (entrants - 1) // 2
    bighill.archive_hill(tmp_path, bighill.quick_programs(entrants))
    data = ["--data", str(tmp_path)]

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "hill", "tournament", *args, *data],
                              capture_output=True, text=True, timeout=300)  # fmt: skip

    running = subprocess.Popen(
        [sys.executable, "-m", "hill", "tournament", "create", "archive", "--format",
         "round-robin", "--jobs", "1", *data],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not bighill.committed_matches(tmp_path) and time.monotonic() < deadline:
            assert running.poll() is None, running.communicate()
            time.sleep(0.05)
        cancelled = command("cancel", "1", "--by", "zoe")
        asked = time.monotonic()
        _, err = running.communicate(timeout=60)
        took = time.monotonic() - asked
    finally:
        running.kill()
    assert cancelled.returncode == 0, cancelled.stderr
    first = cancelled.stdout.splitlines()[0]
    assert first.startswith(f"#1 round-robin over archive ({entrants} entrants), ")
    assert "by cli: cancelled by zoe after " in first and f"/{matches} matches, leader " in first
    assert running.returncode == 1 and "tournament 1 was cancelled by zoe" in err, err
    print(f"the run stopped {took:.2f} s after the cancel")  # stopped: `done < matches` below

    shown = json.loads(command("show", "1", "--json").stdout)
    assert shown["tournament"]["ended"] == shown["ended"] == "cancelled by zoe"
    done = shown["tournament"]["matches_committed"]
    assert 0 < done < matches and done == bighill.committed_matches(tmp_path)
    assert len(shown["rounds"][0]["matches"]) == done  # the partial result: what was committed
    assert sum(row["wins"] + row["draws"] + row["losses"] for row in shown["standings"]) == 2 * done
    again = command("cancel", "1")
    assert (again.returncode, again.stderr) == (
        1, "tournament 1 is over already: cancelled by zoe\n")  # fmt: skip
    resumed = command("resume", "1")
    assert "tournament 1 is over already: cancelled by zoe" in resumed.stderr
    assert bighill.committed_matches(tmp_path) == done


@pytest.mark.parametrize("format", ["round-robin", "swiss"])
def test_stopped_between_any_two_short_transactions_it_ends_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, format: str
) -> None:
    """A big write goes in short transactions: whatever prefix of them was
    committed when the work stops (opening a round, checking matches out,
    committing results) is a state the tournament resumes from, to exactly
    the uninterrupted result.  Here every piece is a transaction of its own
    and the work stops again and again, at random."""
    import random

    from hill.errors import Stopped
    from hill.writers import lock

    monkeypatch.setattr(lock, "TRANSACTION_SECONDS", 0.0)
    programs = bighill.quick_programs(70, seed=11)
    bighill.archive_hill(tmp_path, programs)
    hill = Hill(HillSettings(data_dir=tmp_path), jobs=1)
    service = HillTournaments(hill)
    tournament_id = service.create(format, "archive", seed=5)
    rng = random.Random(format)
    stops = 0
    while True:
        calls = iter(range(10**9))

        def checkpoint(calls: Iterator[int] = calls, stop_at: int = rng.randint(1, 6)) -> None:
            if next(calls) >= stop_at:  # and every time after: even the last flush is cut
                raise Stopped

        try:
            view = service.run(tournament_id, checkpoint=checkpoint)
            break
        except Stopped:
            stops += 1
    hill.close()
    print(f"{format}: stopped {stops} times")
    assert stops >= 8
    code = {f"old.{name}": source for name, source in programs}
    plan = TournamentPlan(format, tuple(view.result["entrants"]), view.result["seed"])
    uninterrupted = Tournament(plan, code, MemoryStore())
    uninterrupted.run()
    assert view.result == uninterrupted.to_json()
    assert view.summary.ended == uninterrupted.ended
