"""Contests below the bot (docs/contests.md): their rules, pure; the writer
on a real SQLite file and git repository (entries heard out of order, the
close played once and exactly, a void contest); and `bfjoust contest` as
real processes: the tool contract, bad input, a Swiss contest recomputed
from a real clone, and SIGKILLs between each publication's transaction and
its commit, which the next start commits once, and a Ctrl-C mid-tournament."""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support import forks as forking
from support.botprocess import hill_busy
from support.daskcluster import DaskCluster
from support.forks import Commands, Forks
from support.ladderhill import reference
from support.webhill import git

from hill.config import HillSettings
from hill.errors import HillError
from hill.rules import contests as rules
from hill.rules.contests import News
from hill.rules.events import EventKind
from hill.rules.requests import RequestKind
from hill.store.requests import RequestBook
from hill.writers.hill import Hill, play_request
from hill.writers.tournaments import HillTournaments

NOW = dt.datetime(2026, 12, 1, 12, 0, 0)
RUSH = b"(>)*9([-]>)*21"
A, B, C = b"(>)*8([-]>)*21", b"(>)*7([+]>)*21", b">(+)*10>(-)*10(>)*6([+]>)*21"


# --- the rules -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "closes"),
    [
        ("2026-12-01T18:00Z", dt.datetime(2026, 12, 1, 18)),
        ("2026-12-01T18:00:30", dt.datetime(2026, 12, 1, 18, 0, 30)),  # UTC when it says nothing
        ("2026-12-01T20:00+02:00", dt.datetime(2026, 12, 1, 18)),
        ("+1d2h30m5s", dt.datetime(2026, 12, 2, 14, 30, 5)),
        ("+45s", dt.datetime(2026, 12, 1, 12, 0, 45)),
    ],
)
def test_closing_times(text: str, closes: dt.datetime) -> None:
    assert rules.parse_closing(text, NOW) == closes


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("2026-12-01T11:59Z", "is in the past"),
        ("+0s", "is in the past"),
        ("tomorrow", "malformed closing time 'tomorrow'"),
        ("+", "malformed closing time"),
        ("2026-13-01T00:00Z", "malformed closing time"),
        # beyond year 9999 once in UTC (was an OverflowError: "something went wrong")
        ("9999-12-31T23:59:59-14:00", "is too far off"),
        ("0001-01-01T00:00+14:00", "is in the past"),
        ("+9999d", "is too far off"),
    ],
)
def test_bad_closing_times_are_refused_clearly(text: str, says: str) -> None:
    with pytest.raises(HillError, match=says):
        rules.parse_closing(text, NOW)


@pytest.mark.parametrize("name", ["", "a" * 33, "a.b", "a b", "close", "CREATE", "é"])
def test_bad_contest_names(name: str) -> None:
    with pytest.raises(HillError):
        rules.check_name(name)


def test_reminders_24_hours_and_1_hour_before_once_each() -> None:
    closes = NOW + dt.timedelta(days=3)
    created = NOW
    at = [closes - dt.timedelta(hours=h) for h in (25, 23, 2, 0.5)]
    assert rules.reminder_due(created, closes, at[0], set()) is None
    assert rules.reminder_due(created, closes, at[1], set()) == rules.Reminder(
        News.DAY, (News.DAY,)
    )
    assert rules.reminder_due(created, closes, at[2], {News.DAY}) is None
    assert rules.reminder_due(created, closes, at[3], {News.DAY}).news == News.HOUR
    # the bot down through both marks: the hour's alone, for both
    assert rules.reminder_due(created, closes, at[3], set()) == rules.Reminder(
        News.HOUR, (News.DAY, News.HOUR)
    )
    assert rules.reminder_due(created, closes, at[3], {News.DAY, News.HOUR}) is None
    # announced with 10 hours left: no 24 hours' reminder; after the close, none
    late = closes - dt.timedelta(hours=10)
    assert rules.reminder_due(late, closes, closes - dt.timedelta(hours=5), set()) is None
    assert rules.reminder_due(created, closes, closes, set()) is None


def test_standings_mark_controls_and_share_places_level_on_every_criterion() -> None:
    rows = [
        {"rank": 1, "name": "alice", "wins": 3, "score": 3.0, "points": 2.0},
        {"rank": 2, "name": "bob", "wins": 2, "score": 2.0, "points": 1.0},
        {"rank": 3, "name": "control.x", "wins": 2, "score": 2.0, "points": 1.0},
        {"rank": 4, "name": "dave", "wins": 2, "score": 2.0, "points": 1.0},
        {"rank": 5, "name": "erin", "wins": 1, "score": 2.0, "points": 0.5},
    ]
    shown = rules.standings(rows, ("score", "points"))
    assert [(r["name"], r["place"], r["control"]) for r in shown] == [
        ("alice", 1, False),
        ("bob", 2, False),
        ("control.x", None, True),
        ("dave", 2, False),  # level with bob on score and points: the same place
        ("erin", 4, False),
    ]
    assert [round(r["win_share"], 1) for r in shown] == [30.0, 20.0, 20.0, 20.0, 10.0]
    assert rules.winners(shown) == ["alice"]
    level = rules.standings([{**rows[1], "rank": 1}, rows[3]], ("score", "points"))
    assert rules.winners(level) == ["bob", "dave"]


def test_time_left_and_the_recompute_command_quote_what_needs_it() -> None:
    assert [rules.time_left(s) for s in (42, 125, 3600, 3 * 3600 + 61, 86400 * 2 + 7200)] == [
        "42 s",
        "2 min 5 s",
        "1 h",
        "3 h 1 min",
        "2 d 2 h",
    ]
    result = {"format": "swiss", "seed": 7, "entrants": ["a[b]", "bob", "control.x"]}
    assert rules.recompute_command(result) == (
        "bfjoust tournament run --names stem --format swiss --seed 7 --json "
        "'a[b].bfjoust' bob.bfjoust control.x.bfjoust"
    )
    result = {"format": "round-robin", "seed": None, "entrants": ["-dash", "bob"]}
    assert rules.recompute_command(result).endswith(" --json -- -dash.bfjoust bob.bfjoust")


# --- the writer on a real hill -------------------------------------------


@pytest.fixture
def hill(tmp_path: Path) -> Iterator[Hill]:
    hill = Hill(HillSettings(data_dir=tmp_path / "hill", size=5), jobs=1)
    hill.challenge("starter", "rush", RUSH)
    yield hill
    hill.close()


def request(hill: Hill, owner: str, code: bytes | None, heard: dt.datetime | None = None):
    kind = RequestKind.CONTEST_ENTER if code is not None else RequestKind.CONTEST_WITHDRAW
    fields = {"created_at": heard} if heard else {}
    return RequestBook(hill.db).add(
        limit=100, nick=owner, channel=None, origin="irc", command=kind, owner=owner,
        name="spring", code=code, **fields,
    )  # fmt: skip


def play(hill: Hill, asked) -> str:
    book = RequestBook(hill.db)
    try:
        return play_request(hill, book.start(asked.id)).summary
    except HillError as error:
        book.fail(asked.id, str(error))
        return f"refused: {error}"


def test_requests_played_out_of_the_order_heard_keep_the_last_heard(hill: Hill) -> None:
    view = hill.contests.create("spring", "+1h", by="carol")
    t = view.created_at
    second, first = (
        request(hill, "alice", B, t + dt.timedelta(seconds=2)),
        request(hill, "alice", A, t + dt.timedelta(seconds=1)),
    )
    assert "accepted" in play(hill, second)
    assert "a later request of yours, heard at" in play(hill, first)
    withdrawn = request(hill, "bob", None, t + dt.timedelta(seconds=5))
    entered = request(hill, "bob", C, t + dt.timedelta(seconds=4))
    assert play(hill, withdrawn) == "refused: you have no entry in contest spring"
    assert "accepted" in play(hill, entered)  # heard before the refused withdrawal: it stands
    hill.contests.close("spring", by="carol", now=t + dt.timedelta(seconds=10))
    entries = {e.entrant: e.code_hash for e in hill.contests.view("spring").players}
    assert entries == {"alice": _hash(B), "bob": _hash(C)}
    assert play(hill, request(hill, "alice", A, t + dt.timedelta(seconds=3))).startswith(
        "refused: contest spring was closed before your request was played"
    )


def test_an_owner_has_no_case_one_player_one_entry(hill: Hill) -> None:
    view = hill.contests.create("spring", "+1h", by="carol")
    t = view.created_at
    assert "accepted;" in play(hill, request(hill, "Alice", A, t))
    assert "(it replaces your earlier one)" in play(hill, request(hill, "ALICE", B, t))
    assert "is withdrawn" in play(hill, request(hill, "alice", None, t))
    assert "accepted;" in play(hill, request(hill, "alice", C, t))  # withdrawn: a new entry
    view = hill.contests.close("spring", by="carol")
    assert [(e.entrant, e.code_hash) for e in view.players] == [("Alice", _hash(C))]


def test_the_close_plays_what_was_heard_before_it_refuses_what_came_after_and_happens_once(
    hill: Hill,
) -> None:
    view = hill.contests.create("spring", "+1h", by="carol")
    closing = view.created_at + dt.timedelta(seconds=10)
    request(hill, "alice", A, closing - dt.timedelta(seconds=3))  # heard, never played
    request(hill, "bob", B, closing - dt.timedelta(seconds=1))
    late = request(hill, "carol", C, closing)  # at the closing time: late
    closers = [
        threading.Thread(target=hill.contests.close, args=("spring",), kwargs={"by": by, "now": at})
        for by, at in (("one", closing), ("two", closing), ("three", closing))
    ]
    for thread in closers:
        thread.start()
    for thread in closers:
        thread.join()
    view = hill.contests.view("spring")
    assert view.state == rules.ContestState.CLOSED and view.closes == closing
    assert [e.entrant for e in view.players] == ["alice", "bob"]
    book = RequestBook(hill.db)
    assert [book.get(r).state for r in (1, 2)] == ["done", "done"]
    assert play(hill, book.get(late.id)) == f"refused: {rules.late('spring', closing)}"
    kinds = [e.kind for e in hill.queries.changes()]
    assert kinds.count(EventKind.CONTEST_ENTRIES) == 1
    HillTournaments(hill).run(view.tournament_id)
    hill.contests.finish("spring")
    hill.contests.finish("spring")
    assert [e.kind for e in hill.queries.changes()].count(EventKind.CONTEST_RESULTS) == 1
    assert hill.queries.standings().size == 1  # the hill as it was


def test_fewer_than_two_entries_make_a_void_contest_that_says_why(hill: Hill) -> None:
    hill.contests.create("lonely", "+1h", by="carol", controls={"floor": b">+"})
    book = RequestBook(hill.db)
    kind = RequestKind.CONTEST_ENTER
    asked = book.add(limit=9, nick="al", channel=None, origin="irc", command=kind, owner="al",
                     name="lonely", code=A)  # fmt: skip
    play(hill, asked)
    view = hill.contests.close("lonely", by="carol")
    assert view.state == rules.ContestState.VOID and view.tournament_id is None
    assert view.void_reason == "no tournament: a contest needs 2 entries or more, it had 1"
    assert (
        hill.queries.changes()[-1].summary
        == f"contest lonely closed with 1 entry (al): {view.void_reason}"
    )


# --- the command line ----------------------------------------------------
# Each command is a process of its own: forked from a Python that imported the
# hill already (support.forks), or, for the contract's first command,
# its recomputation and the Ctrl-C's close, `python -m hill` from its start-up.


Run = Callable[..., subprocess.CompletedProcess[str]]


def environment(crash_at: str = "") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "BFJOUST_CRASH_AT"}
    if crash_at:
        env["BFJOUST_CRASH_AT"] = crash_at
    return env


def python_m_hill(data: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    """`bfjoust ARGS --data DATA` as a process of its own, Python's start-up included."""
    return subprocess.run(
        [sys.executable, "-m", "hill", *map(str, args), "--data", str(data)],
        capture_output=True, text=True, timeout=300, env=environment(),
    )  # fmt: skip


forks = forking.forks  # the fixture


@pytest.fixture(scope="module")
def server(forks: Forks) -> Commands:
    return Commands(forks)


@pytest.fixture
def bfjoust(server: Commands) -> Run:
    """`bfjoust ARGS --data DATA` as a process of its own, forked from a
    Python that imported the hill already (support.forks): the
    command and its exit as `python -m hill`'s, without a second of imports."""

    def run(data: Path, *args: str | Path, crash_at: str = "") -> subprocess.CompletedProcess[str]:
        return server(*args, "--data", data, env=environment(crash_at))

    return run


def test_the_command_line_contract_and_its_refusals(
    tmp_path: Path, bfjoust: Run, server: Commands
) -> None:
    data = tmp_path / "hill"
    for name, code in (("a", A), ("b", B), ("c", C), ("bad", b"+[")):
        (tmp_path / f"{name}.bfjoust").write_bytes(code)
    # the first, as a process of its own, Python's start-up and imports included
    made = python_m_hill(data, "contest", "create", "fall", "--closes", "+1h", "--format",
                         "swiss", "--title", "Fall", "--control",
                         tmp_path / "c.bfjoust")  # fmt: skip
    assert made.returncode == 0, made.stderr
    refusals = [
        (("contest", "create", "fall", "--closes", "+1h"), "there is a contest fall already"),
        (("contest", "create", "x", "--closes", "2000-01-01T00:00Z"), "is in the past"),
        (("contest", "create", "x", "--closes", "+1h", "--control", tmp_path / "bad.bfjoust"),
         "control bad: parse error at line 1, column 2"),
        (("contest", "enter", "nope", tmp_path / "a.bfjoust", "--owner", "al"),
         "there is no contest nope"),
        (("contest", "enter", "fall", tmp_path / "bad.bfjoust", "--owner", "al"),
         "parse error at line 1, column 2"),
        (("contest", "enter", "fall", tmp_path / "a.bfjoust", "--owner", "a.l"), "bad owner"),
        (("contest", "withdraw", "fall", "--owner", "al"), "you have no entry in contest fall"),
        (("contest", "show", "nope"), "there is no contest nope"),
    ]  # fmt: skip
    for args, says in refusals:
        refused = bfjoust(data, *args)
        assert refused.returncode == 1 and says in refused.stderr, (args, refused.stderr)
    for owner, name in (("al", "a"), ("bo", "b"), ("cy", "a")):
        entered = bfjoust(data, "contest", "enter", "fall", tmp_path / f"{name}.bfjoust",
                          "--owner", owner)  # fmt: skip
        assert entered.stdout.startswith("entry to contest fall accepted"), entered.stderr
    again = bfjoust(data, "contest", "enter", "fall", tmp_path / "a.bfjoust", "--owner", "AL")
    assert "accepted (it replaces your earlier one)" in again.stdout, again.stderr
    shown = json.loads(bfjoust(data, "contest", "show", "fall", "--json").stdout)
    assert list(shown) == ["name", "title", "format", "closes", "state", "entries",
                           "controls", "tournament", "winner"]  # fmt: skip
    assert (shown["name"], shown["title"], shown["format"], shown["state"]) == (
        "fall",
        "Fall",
        "swiss",
        "open",
    )
    assert [(e["owner"], e["code_hash"]) for e in shown["entries"]] == [
        ("al", None), ("bo", None), ("cy", None)
    ]  # fmt: skip
    assert shown["controls"] == ["c"] and shown["tournament"] is None

    closed = bfjoust(data, "contest", "close", "fall", "--json", "--jobs", "1")
    assert closed.returncode == 0, closed.stderr
    played = json.loads(closed.stdout)
    assert played["state"] == "played" and played["tournament"]["seed"] is not None
    assert [e["code_hash"] for e in played["entries"]] == [_hash(A), _hash(B), _hash(A)]
    assert played["tournament"]["entrants"] == ["al", "bo", "cy", "control.c"]
    listed = json.loads(bfjoust(data, "contest", "list", "--json").stdout)["contests"]
    assert listed == [played]
    for args in (("enter", "fall", tmp_path / "b.bfjoust", "--owner", "dee"),
                 ("withdraw", "fall", "--owner", "al")):  # fmt: skip
        late = bfjoust(data, "contest", *args)
        assert late.returncode == 1, late.stdout
        assert late.stderr.startswith(f"contest fall closed at {played['closes']}"), late.stderr
    assert json.loads(bfjoust(data, "contest", "show", "fall", "--json").stdout) == played

    clone = tmp_path / "clone"
    git("clone", "--quiet", data / "hill-repo", clone)
    command = rules.recompute_command(played["tournament"]).split()
    assert "--seed" in command
    again = subprocess.run([sys.executable, "-m", "hill", *command[1:]], capture_output=True,
                           text=True, cwd=clone / "contests" / "fall", timeout=300)  # fmt: skip
    assert again.stdout == (clone / "contests/fall/results.json").read_text()
    assert json.loads(again.stdout) == played["tournament"]
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "al.bfjoust").write_bytes(B)
    twice = server("tournament", "run", "--names", "stem", "--format", "round-robin",
                   "contests/fall/al.bfjoust", tmp_path / "other" / "al.bfjoust",
                   cwd=clone, timeout=60)  # fmt: skip
    assert twice.returncode == 1
    assert f"{tmp_path}/other/al.bfjoust: named al, as contests/fall/al.bfjoust is" in twice.stderr


def test_killed_between_each_publication_and_its_commit(tmp_path: Path, bfjoust: Run) -> None:
    """The close's transaction, then a SIGKILL before its commit; the same
    command again: the commit is made once (by the recorder's catch-up), the
    tournament plays, then a SIGKILL before the results' commit; again: the
    results are committed once, and nothing else happens."""
    data = tmp_path / "hill"
    for name, code in (("a", A), ("b", B)):
        (tmp_path / f"{name}.bfjoust").write_bytes(code)
    assert bfjoust(data, "contest", "create", "ice", "--closes", "+1h").returncode == 0
    for owner in ("a", "b"):
        bfjoust(data, "contest", "enter", "ice", tmp_path / f"{owner}.bfjoust", "--owner", owner)
    for point in ("contest-closed", "contest-played"):
        killed = bfjoust(data, "contest", "close", "ice", crash_at=point)
        assert killed.returncode == -signal.SIGKILL, killed.stderr
    done = bfjoust(data, "contest", "close", "ice", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["state"] == "played"
    repository = data / "hill-repo"
    messages = git("log", "--format=%B%x00", cwd=repository).split("\0")
    published = [m.strip() for m in messages if "\nContest: ice\n" in m]
    assert len(published) == 2
    assert published[0].startswith("Publishing the results of contest ice")
    assert published[1].startswith("Publishing the entries of contest ice")
    files = git("ls-tree", "--name-only", "HEAD", "contests/ice/", cwd=repository)
    assert sorted(files.split()) == [
        "contests/ice/a.bfjoust", "contests/ice/b.bfjoust", "contests/ice/results.json"
    ]  # fmt: skip
    before = git("log", "--format=%H", cwd=repository)
    again = bfjoust(data, "contest", "close", "ice")
    assert again.returncode == 0 and again.stdout.startswith("ice: ice (round-robin, 2 entries)")
    assert git("log", "--format=%H", cwd=repository) == before


def test_a_ctrl_c_mid_tournament_loses_nothing(
    tmp_path: Path, bfjoust: Run, server: Commands
) -> None:
    """`bfjoust contest close` playing a tournament of 60 entrants (two
    players, 58 controls) gets SIGINT, to its whole process group as a
    terminal's Ctrl-C: it says it stopped, the contest stays closed with its
    tournament part played, and the same command plays it on to exactly
    the result a clone recomputes."""
    data = tmp_path / "hill"
    controls = []
    for name, code in reference(58):
        (tmp_path / f"{name}.bfjoust").write_bytes(code)
        controls += ["--control", tmp_path / f"{name}.bfjoust"]
    for name, code in (("a", A), ("b", B)):
        (tmp_path / f"{name}.entry").write_bytes(code)
    assert bfjoust(data, "contest", "create", "frost", "--closes", "+1h", *controls).returncode == 0
    for owner in ("a", "b"):
        bfjoust(data, "contest", "enter", "frost", tmp_path / f"{owner}.entry", "--owner", owner)
    command = [sys.executable, "-m", "hill", "contest", "close", "frost", "--jobs", "1",
               "--data", str(data)]  # fmt: skip
    closing = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)  # fmt: skip
    try:
        while matches(data) < 1 and closing.poll() is None:
            time.sleep(0.002)
        # the hill's lock holds the tournament (it writes nothing without it), so
        # the Ctrl-C comes mid-way on any machine
        with hill_busy(data):
            before = matches(data)
            os.killpg(closing.pid, signal.SIGINT)
            time.sleep(0.2)
        out, err = closing.communicate(timeout=60)
    finally:
        closing.kill()
    played = matches(data)
    assert 1 <= before <= played < 1770, (
        f"the tournament ended before the Ctrl-C: {before} then {played} committed, "
        f"exit {closing.returncode}, SIGINT here {signal.getsignal(signal.SIGINT)}: {err[-500:]}"
    )
    assert closing.returncode == 130 and err.rstrip().endswith("stopped (Ctrl-C)"), err
    assert "Traceback" not in err and out == ""
    shown = json.loads(bfjoust(data, "contest", "show", "frost", "--json").stdout)
    assert shown["state"] == "closed" and shown["tournament"] is None
    done = bfjoust(data, "contest", "close", "frost", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)["tournament"]
    assert matches(data) == 1770
    clone = tmp_path / "clone"
    git("clone", "--quiet", data / "hill-repo", clone)
    recompute = shlex.split(rules.recompute_command(result))[1:]
    again = server(*recompute, cwd=clone / "contests" / "frost")
    assert again.stdout == (clone / "contests/frost/results.json").read_text()
    assert json.loads(again.stdout) == result


def matches(data: Path) -> int:
    """The matches of the hill's tournaments committed so far."""
    try:
        with contextlib.closing(sqlite3.connect(data / "hill.sqlite3", timeout=30)) as db:
            query = "SELECT count(*) FROM tournament_matches WHERE status = 'committed'"
            return db.execute(query).fetchone()[0]
    except sqlite3.OperationalError:  # no table yet
        return 0


def _hash(code: bytes) -> str:
    return hashlib.sha256(code).hexdigest()


def test_a_lost_history_is_rebuilt_with_the_contests_commits_as_they_were(
    hill: Hill, tmp_path: Path
) -> None:
    """The repository is derived from the database: rebuilt, a contest's
    commits come back with the very shas they had (same files, message,
    trailers, author and time), between the hill's own."""
    view = hill.contests.create("spring", "+1h", by="carol", controls={"floor": b">+"})
    for owner, code in (("alice", A), ("bob", B)):
        play(hill, request(hill, owner, code, view.created_at))
    view = hill.contests.close("spring", by="carol")
    hill.challenge("starter", "second", C)  # a hill change between the two publications
    HillTournaments(hill).run(view.tournament_id)
    hill.contests.finish("spring")
    hill.challenge("starter", "third", B)
    repository = tmp_path / "hill" / "hill-repo"
    before = git("log", "--format=%H %s", cwd=repository).splitlines()
    assert len(before) == 5
    hill.close()
    shutil.rmtree(repository)
    rebuilt = Hill(HillSettings(data_dir=tmp_path / "hill", size=5), jobs=1)
    try:
        assert git("log", "--format=%H %s", cwd=repository).splitlines() == before
        tree = git("ls-tree", "-r", "--name-only", "HEAD", cwd=repository).split()
        assert sorted(f for f in tree if f.startswith("contests/")) == [
            "contests/spring/alice.bfjoust",
            "contests/spring/bob.bfjoust",
            "contests/spring/control.floor.bfjoust",
            "contests/spring/results.json",
        ]
    finally:
        rebuilt.close()


@pytest.mark.cluster
def test_a_contest_played_on_a_dask_cluster_gives_the_local_result(
    tmp_path: Path, bfjoust: Run, server: Commands
) -> None:
    cluster = DaskCluster(tmp_path).start(workers=1)
    try:
        data = tmp_path / "hill"
        for name, code in (("a", A), ("b", B), ("c", C)):
            (tmp_path / f"{name}.bfjoust").write_bytes(code)
        bfjoust(data, "contest", "create", "dusk", "--closes", "+1h")
        for owner in ("a", "b", "c"):
            bfjoust(
                data, "contest", "enter", "dusk", tmp_path / f"{owner}.bfjoust", "--owner", owner
            )
        played = bfjoust(data, "contest", "close", "dusk", "--json", "--scheduler", cluster.address)
        assert played.returncode == 0, played.stderr
        result = json.loads(played.stdout)["tournament"]
    finally:
        cluster.stop()
    local = server("tournament", "run", "--names", "stem", "--format", "round-robin", "--json",
                   *(f"{n}.bfjoust" for n in "abc"), cwd=tmp_path, timeout=120)  # fmt: skip
    assert json.loads(local.stdout) == result
