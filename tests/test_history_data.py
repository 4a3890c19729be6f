"""The history pages' parts: resolving a SHA among the hill's commits, who
moved in a change (hand-worked examples), and reading commits with git
under a time limit."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest

from hill.config import HillSettings
from hill.errors import GitUnavailable, NotFound
from hill.rules.events import EventKind
from hill.store.queries import HillEvent
from hill.web.history.commits import resolve, standings_moves
from hill.web.history.git_reader import GitReader
from hill.writers.hill import Hill


def change(event_id: int, commit: str | None) -> HillEvent:
    return HillEvent(
        id=event_id,
        time=dt.datetime(2026, 1, 1),
        kind=EventKind.JOIN,
        actor="a",
        summary="",
        commit=commit,
        program=None,
        displaced=None,
        program_id=None,
        displaced_id=None,
        method="markov",
        entries=(),
    )


CHANGES = [
    change(1, "abcdef1" + "0" * 33),
    change(2, "abcdef2" + "1" * 33),
    change(3, "abcdef2" + "2" * 33),
    change(4, None),  # not committed yet
]


def test_a_sha_names_one_commit_of_the_hill() -> None:
    assert resolve(CHANGES, "abcdef1").id == 1
    assert resolve(CHANGES, "ABCDEF1000").id == 1
    assert resolve(CHANGES, "abcdef2" + "2" * 33).id == 3
    assert resolve(CHANGES, "abcdef21").id == 2
    with pytest.raises(NotFound, match="abcdef2 is ambiguous: 2 commits begin with it"):
        resolve(CHANGES, "abcdef2")
    with pytest.raises(NotFound, match="no commit 1234567 in the hill's history"):
        resolve(CHANGES, "1234567")
    for bad in ("abcdef", "abcdef1" + "0" * 34, "HEAD~1", "main", "../x", "", "abcdefg"):
        with pytest.raises(NotFound, match="no commit id"):
            resolve(CHANGES, bad)


def record(program_id: int, name: str, rank: int, points: float = 0.0) -> dict:
    return {"id": program_id, "name": name, "rank": rank, "points": points}


def test_who_moved_arrived_left_and_was_updated() -> None:
    before = [record(1, "a.x", 1, 2.0), record(2, "b.y", 2), record(3, "c.z", 3, -2.0)]
    # b.y updated (a new program id) to the top, d.new arrived, c.z pushed off
    after = [record(4, "b.y", 1, 1.5), record(1, "a.x", 2, 1.0), record(5, "d.new", 3, -2.5)]
    rows = standings_moves(before, after)
    assert [(r["program"], r["before"], r["after"], r["move"], r["places"]) for r in rows] == [
        ("b.y", 2, 1, "up", 1),
        ("a.x", 1, 2, "down", -1),
        ("d.new", None, 3, "new", 0),
        ("c.z", 3, None, "left", 0),
    ]
    assert [r["updated"] for r in rows] == [True, False, False, False]
    assert (rows[1]["points_before"], rows[1]["points_after"]) == (2.0, 1.0)
    assert standings_moves([], [record(1, "a.x", 1)])[0]["move"] == "new"
    assert standings_moves(before, before)[2]["move"] == "same"


@pytest.fixture(scope="module")
def hill(tmp_path_factory: pytest.TempPathFactory):
    hill = Hill(HillSettings(data_dir=tmp_path_factory.mktemp("hill")), jobs=1)
    hill.challenge("ann", "rush", b"(>)*9([-]>)*21")
    hill.challenge("ann", "rush", b"(>)*9([+]>)*21")
    yield hill
    hill.close()


def test_git_reads_a_commit_and_its_files(hill: Hill) -> None:
    first, second = (c.commit for c in hill.queries.changes())
    reader = GitReader(hill.settings.data_dir / "hill-repo")
    commit = asyncio.run(reader.commit(second))
    assert commit is not None and commit.parents == (first,)
    assert commit.author == "ann" and commit.message.startswith("Updating ann.rush\n\n")
    files = {f.path: f for f in commit.files}
    assert set(files) == {"ann.rush.bfjoust", "report.txt"}
    rush = files["ann.rush.bfjoust"]
    assert (rush.old, rush.new, rush.status) == (b"(>)*9([-]>)*21", b"(>)*9([+]>)*21", "modified")
    root = asyncio.run(reader.commit(first))
    assert root is not None and root.parents == ()
    assert {f.status for f in root.files} == {"added"}
    assert asyncio.run(reader.commit("0" * 40)) is None


def test_git_past_its_time_limit_is_stopped(hill: Hill) -> None:
    sha = hill.queries.changes()[0].commit
    reader = GitReader(hill.settings.data_dir / "hill-repo", time_limit=1e-4)
    with pytest.raises(GitUnavailable, match="took over"):
        asyncio.run(reader.commit(sha))


def test_no_repository_has_no_commits(tmp_path: Path) -> None:
    assert asyncio.run(GitReader(tmp_path / "nothing").commit("0" * 40)) is None
