"""The all-time ladder over a real hill's archive (hill/ladder/archive.py,
hill/ladder_service.py, `bfjoust ladder step|show`): its versions and
seeding, the hill's jousts reused, every joust it plays stored, and a
ladder killed mid-run (SIGKILL of a real process) that resumes and loses
nothing."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from contextlib import closing
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from scipy.special import logit
from support.ladderhill import archive_hill, reference

from bot.commands.ladder import top_text, version_text
from bot.ladder import rest_after
from hill import engine
from hill.config import HillSettings
from hill.engine import arena
from hill.errors import HillError
from hill.ladder import seeding
from hill.ladder.board import Row
from hill.ladder.ladder import rate
from hill.rules.statistics import STATS_FIELDS
from hill.store import archive
from hill.store.database import schema_revision
from hill.store.tables import Base
from hill.writers.hill import Hill
from hill.writers.ladder import ArchiveLadder, refit_due


def stored_jousts(database: Path) -> dict[tuple[str, str], bytes]:
    """Every stored joust, read as another process would."""
    with closing(sqlite3.connect(database, timeout=30)) as db:
        rows = db.execute("SELECT left_hash, right_hash, outcomes FROM jousts")
        return {(left, right): outcomes for left, right, outcomes in rows}


def ladder_jousts(database: Path) -> int:
    with closing(sqlite3.connect(database, timeout=30)) as db:
        row = db.execute("SELECT ladder_jousts FROM ladder_state").fetchone()
        return row[0] if row else 0


def bfjoust(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "hill", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def finished(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=300)
    return process.returncode, out, err


def test_the_models_match_the_migrations(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path), jobs=1)
    with hill.db.engine.connect() as connection:
        assert compare_metadata(MigrationContext.configure(connection), Base.metadata) == []
    assert hill.db.revision() == schema_revision()
    hill.db.downgrade("0004")  # the ladder's tables go, and come back
    assert hill.db.revision() == "0004"
    hill.db.upgrade()
    assert hill.db.revision() == schema_revision()
    hill.close()


def test_every_program_ever_submitted_is_a_version(tmp_path: Path) -> None:
    """Versions of owner.name are its distinct codes, numbered as the program
    page numbers its submissions; the same code again is the version it was;
    a test is a trial, no submission; each version after the first names
    the one before it."""
    hill = Hill(HillSettings(data_dir=tmp_path, size=2), jobs=1)
    (_, a), (_, b), (_, c) = reference(3)
    hill.challenge("alice", "rush", a)
    hill.challenge("bob", "wall", b)
    hill.challenge("bob", "copy", a)  # another name, the same code: a program of its own
    hill.challenge("alice", "rush", b, test_only=True)  # a trial
    hill.challenge("alice", "rush", a)  # the same code again: version 2 is version 1
    hill.challenge("alice", "rush", c)  # version 3
    ladder = ArchiveLadder(hill)
    ladder.step(0)
    labels = [v.label for v in ladder.pool]
    assert labels == ["alice.rush@1", "bob.wall@1", "bob.copy@1", "alice.rush@3"]
    numbers = [v.number for v in hill.queries.versions("alice.rush")]
    assert numbers == [1, 2, 3]  # the program page's
    by_label = {v.label: v for v in ladder.pool}
    assert by_label["alice.rush@3"].previous_id == by_label["alice.rush@1"].id
    assert by_label["bob.copy@1"].previous_id is None
    # programs of one code share its jousts: bob.copy starts where alice.rush@1 stands
    at = {v.label: i for i, v in enumerate(ladder.pool)}
    met = ladder.ladder.met
    assert met[at["bob.copy@1"], at["bob.wall@1"]] and met[at["alice.rush@1"], at["bob.wall@1"]]
    # a second look finds nothing new, a test neither
    hill.challenge("carol", "x", c, test_only=True)
    with hill.db.transaction() as session:
        assert not archive.unread_programs(session)
        assert archive.sync_versions(session) == 0
    hill.close()


def test_the_hill_record_is_reused_and_each_joust_played_is_stored(tmp_path: Path) -> None:
    """A program that was on the hill starts from its hill record: the ladder
    plays only pairs never jousted, stores each, and counts them."""
    hill = archive_hill(tmp_path, count=24, size=6)
    before = stored_jousts(tmp_path / "hill.sqlite3")
    ladder = ArchiveLadder(hill)
    ladder.step(0)
    hashes = [v.code_hash for v in ladder.pool]
    known = sum(
        arena.oriented(a, b)[0] in before for i, a in enumerate(hashes) for b in hashes[i + 1 :]
    )
    assert ladder.ladder.played == known > 0
    played = ladder.step(40)
    assert played == 40
    after = stored_jousts(tmp_path / "hill.sqlite3")
    assert {k: after[k] for k in before} == before  # nothing replaced or lost
    assert len(after) == len(before) + 40
    assert ladder_jousts(tmp_path / "hill.sqlite3") == 40
    assert ladder.ladder.played == known + 40
    # what it stored is what the engine plays
    left, right = next(iter(set(after) - set(before)))
    codes = {v.code_hash: c for v, (_, c) in zip(ladder.pool, reference(24), strict=True)}
    board = archive.read_board(hill.db)
    assert board is not None and board.jousts == known + 40 and board.ladder_jousts == 40
    result = engine.joust(engine.compile_program(codes[left]), engine.compile_program(codes[right]))
    assert after[left, right] == arena.encode(result.outcomes)
    hill.close()


def test_a_new_version_starts_just_above_its_previous_one_in_the_hill(tmp_path: Path) -> None:
    """alice.rush@2 arrives on an empty hill, so it has no joust at all: its
    virtual 2 wins and 1 loss against alice.rush@1 put its rating above
    @1's by less than the log-odds of 2/3 (the prior, centred on @1, pulls
    it back); once @2 plays, they count 3 / (3 + its jousts) each, and go
    when the two versions have met."""
    hill = Hill(HillSettings(data_dir=tmp_path, size=10), jobs=2)
    programs = reference(12)
    (_, first), (_, second) = programs[3], programs[5]
    for name, code in programs:
        if code not in (first, second):
            hill.challenge("ref", name, code)
    hill.challenge("alice", "rush", first)
    hill.withdraw("alice", "rush")
    for entry in hill.queries.standings().entries:
        hill.withdraw(entry.program.owner, entry.program.name)
    hill.challenge("alice", "rush", second)  # alone on the hill
    ladder = ArchiveLadder(hill)
    ladder.step(0)
    at = {v.label: i for i, v in enumerate(ladder.pool)}
    new, old = at["alice.rush@2"], at["alice.rush@1"]
    assert ladder.ladder.virtual == [seeding.Virtual(new, old, 2 / 3, 3.0)]
    assert ladder.ladder.jousts()[new] == 0
    ratings = rate(ladder.ladder)
    gap = ratings.rating[new] - ratings.rating[old]
    assert 0 < gap < logit(2 / 3)
    assert ratings.stderr[new] > ratings.stderr[old]  # and it is least certain
    board = archive.read_board(hill.db)
    assert board is not None
    rank = {r.version.label: r.rank for r in board.rows}
    assert rank["alice.rush@2"] < rank["alice.rush@1"]
    # real jousts come: the virtual ones fade, and go once the versions meet
    while not ladder.ladder.met[new, old]:
        ladder.work(4)
        g = ladder.ladder.jousts()[new]
        weight = seeding.weights(ladder.ladder.virtual, ladder.ladder.jousts(), ladder.ladder.met)
        expected = 0.0 if ladder.ladder.met[new, old] else 3.0 * 3 / (3 + g)
        assert weight == pytest.approx([expected])
    hill.close()


def test_bfjoust_ladder_step_and_show(tmp_path: Path) -> None:
    hill = archive_hill(tmp_path / "var", count=16, size=5)
    hill.close()
    code, out, err = finished(bfjoust("ladder", "show", "--data", tmp_path / "var"))
    assert code == 1 and "no standing yet" in err
    code, out, err = finished(
        bfjoust("ladder", "step", "--jousts", "0", "--data", tmp_path / "var")
    )
    assert code == 1 and "--jousts must be at least 1" in err
    code, out, err = finished(bfjoust("ladder", "step", "--data", tmp_path / "var"))
    assert code == 0, err
    assert out.startswith("played 8 jousts\n")  # a round: a quarter of the pool, at least 8
    code, out, err = finished(bfjoust("ladder", "show", "--json", "--data", tmp_path / "var"))
    data = json.loads(out)
    assert data["pool"] == 16 and data["pairs"] == 120
    assert data["jousts_played"] == len(data["played"]) == data["standing_jousts"]
    assert data["ladder_jousts"] == 8
    names = [row["name"] for row in data["ranking"]]
    assert len(set(names)) == 16 and all(
        name.startswith("ref.") and name.endswith("@1") for name in names
    )
    assert {a for a, b, _ in data["played"]} | {b for a, b, _ in data["played"]} <= set(names)
    assert [row["rank"] for row in data["ranking"]] == list(range(1, 17))
    ratings = [row["rating"] for row in data["ranking"]]
    assert ratings == sorted(ratings, reverse=True)
    for row in data["ranking"]:
        assert row["rating_low"] <= row["rating"] <= row["rating_high"]
        assert tuple(row["stats"]) == STATS_FIELDS
        assert (
            row["jousts"]
            == row["stats"]["jousts"]
            == sum(row["name"] in (a, b) for a, b, _ in data["played"])
        )
        assert row["stats"]["rank_low"] <= row["rank"] <= row["stats"]["rank_high"]
    # the text table
    code, out, err = finished(bfjoust("ladder", "show", "--data", tmp_path / "var"))
    assert f"{data['jousts_played']} of 120 jousts played (16 programs)" in out
    assert f"1-{data['ranking'][0]['stats']['rank_high']}" in out


def test_a_ladder_killed_mid_run_resumes_and_loses_no_joust(tmp_path: Path) -> None:
    """`bfjoust ladder step` killed with SIGKILL while it plays: every joust
    it had stored is still there, the database is sound, and the next run
    plays only pairs never jousted."""
    data = tmp_path / "var"
    archive_hill(data, count=60, size=8).close()
    database = data / "hill.sqlite3"
    hill_jousts = stored_jousts(database)
    running = bfjoust("ladder", "step", "--jousts", "100000", "--data", data)
    deadline = time.monotonic() + 120
    while ladder_jousts(database) < 30 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.poll() is None, "the ladder ended before it could be killed"
    running.send_signal(signal.SIGKILL)
    running.wait(30)
    assert running.returncode == -signal.SIGKILL
    killed = stored_jousts(database)
    counted = ladder_jousts(database)
    print(f"killed after {counted} ladder jousts ({len(killed) - len(hill_jousts)} stored)")
    assert len(killed) == len(hill_jousts) + counted  # each batch stored with its count
    assert all(killed[pair] == outcome for pair, outcome in hill_jousts.items())
    with closing(sqlite3.connect(database)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    # resumed: it goes on from what is stored
    code, out, err = finished(bfjoust("ladder", "step", "--jousts", "60", "--data", data))
    assert code == 0, err
    assert out.startswith("played 60 jousts")
    resumed = stored_jousts(database)
    assert {pair: resumed[pair] for pair in killed} == killed
    assert len(resumed) == len(killed) + 60  # none played twice
    assert ladder_jousts(database) == counted + 60


def test_a_ladder_killed_between_playing_and_storing_loses_only_that_batch(
    tmp_path: Path,
) -> None:
    data = tmp_path / "var"
    archive_hill(data, count=20, size=6).close()
    database = data / "hill.sqlite3"
    before = stored_jousts(database)
    env = {**os.environ, "BFJOUST_CRASH_AT": "ladder-jousted"}
    code, _, _ = finished(bfjoust("ladder", "step", "--data", data, env=env))
    assert code == -signal.SIGKILL
    assert stored_jousts(database) == before and ladder_jousts(database) == 0
    env["BFJOUST_CRASH_AT"] = "ladder-stored"  # killed right after its first batch is stored
    code, _, _ = finished(bfjoust("ladder", "step", "--data", data, env=env))
    assert code == -signal.SIGKILL
    first = stored_jousts(database)
    assert len(first) == len(before) + ladder_jousts(database) > len(before)
    code, out, err = finished(bfjoust("ladder", "step", "--data", data))
    assert code == 0, err
    assert len(stored_jousts(database)) == len(first) + int(out.split()[1])


def test_irc_answers_from_a_board(tmp_path: Path) -> None:
    hill = archive_hill(tmp_path, count=10, size=4)
    assert (
        top_text(None, "https://h/") == "The all-time ladder has no standing yet. https://h/ladder"
    )
    ArchiveLadder(hill).step(10)
    board = archive.read_board(hill.db)
    assert board is not None
    top = top_text(board, "https://h/")
    first = board.rows[0]
    assert top.startswith(
        f"All-time ladder (10 programs, {board.jousts} of 45 pairs jousted): "
        f"1. {first.version.label} {first.rating:.2f} ({first.rating_low:.2f}-"
    )
    assert top.endswith("Full ladder: https://h/ladder")
    row = board.rows[4]
    text = version_text(board, row.version.name, "someone")
    assert text == (
        f"{row.version.label}: ladder rank 5/10 (95%: {row.stats['rank_low']}-"
        f"{row.stats['rank_high']}), rating {row.rating:.2f} ({row.rating_low:.2f}-"
        f"{row.rating_high:.2f}), {row.jousts} jousts" + (", on the hill" if row.on_hill else "")
    )
    assert version_text(board, row.version.label, "x") == text  # owner.name@version
    with pytest.raises(HillError, match=r"there is no nobody\.nothing in the all-time ladder"):
        version_text(board, "nobody.nothing", "x")
    hill.close()


def test_rest_keeps_the_rate() -> None:
    # 8 jousts at 3600 an hour take 8 s: played in 1 s, rest 7 s
    assert rest_after(100.0, 101.0, 8, 3600) == pytest.approx(7.0)
    assert rest_after(100.0, 120.0, 8, 3600) == 0.0  # slower than the rate: no rest
    assert rest_after(100.0, 100.0, 0, 10) == 0.0


def test_versions_are_found_by_name(tmp_path: Path) -> None:
    hill = Hill(HillSettings(data_dir=tmp_path, size=4), jobs=1)
    codes = [code for _, code in reference(4)]
    hill.challenge("alice", "rush", codes[0])
    hill.challenge("bob", "rush", codes[1])
    hill.challenge("alice", "rush", codes[2])
    hill.challenge("bob", "wall", codes[3])
    ArchiveLadder(hill).step(0)
    board = archive.read_board(hill.db)
    assert board is not None

    def labels(rows: list[Row]) -> list[str]:
        return [r.version.label for r in rows]

    assert labels(board.find("rush", "alice")) == ["alice.rush@2", "alice.rush@1"]
    assert labels(board.find("rush", "carol")) == ["alice.rush@2", "alice.rush@1", "bob.rush@1"]
    assert labels(board.find("ALICE.RUSH@1", "bob")) == ["alice.rush@1"]
    assert labels(board.find("bob.rush@2", "bob")) == []
    on_hill = {r.version.label: r.on_hill for r in board.rows}
    assert on_hill == {
        "alice.rush@1": False,
        "bob.rush@1": True,
        "alice.rush@2": True,
        "bob.wall@1": True,
    }
    hill.close()


def test_refits_wait_a_minimum_and_ten_times_their_own_time() -> None:
    assert refit_due(60.0, 60.0, 0.8)  # a quick refit: the minimum decides
    assert not refit_due(59.0, 60.0, 0.8)
    assert not refit_due(100.0, 60.0, 30.0)  # a 30 s refit waits 300 s
    assert refit_due(300.0, 60.0, 30.0)
    assert refit_due(0.0, 0.0, 0.0)  # `bfjoust ladder step`: no wait
