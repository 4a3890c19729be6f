"""The hill service on a real SQLite file and a real git repository."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import git
import pytest
from sqlalchemy import select
from support.reference import REFERENCE, warrior_path

from hill.config import HillSettings
from hill.errors import HillError
from hill.rules.names import from_file
from hill.rules.reports import breakdown, json_report, text_report
from hill.store.database import Database, schema_revision
from hill.store.tables import Event, ProgramRow
from hill.writers.hill import Hill

RUSH = b"(>)*9([-]>)*21"
SLOW_RUSH = b"(>)*9(.)*40([-]>)*21"
IDLE = b"[]"
DECOY = b">(+)*30>(-)*30(>)*7([-]>)*21"


def make_hill(tmp_path: Path, **settings: object) -> Hill:
    return Hill(HillSettings(data_dir=tmp_path / "var", **settings), jobs=2)  # type: ignore[arg-type]


def commits(hill: Hill) -> list[str]:
    return [str(c.message).splitlines()[0] for c in reversed(hill.repository.log())]


def test_the_2013_hill_scores_like_the_established_one(tmp_path: Path) -> None:
    fixture = json.loads((REFERENCE / "scores-esohill-20131008.json").read_text())
    hill = make_hill(tmp_path)
    for path in fixture["programs"]:
        hill.challenge("esohill", from_file(path), warrior_path(path).read_bytes())
    report = json_report(hill.queries.standings(), hill.repository.head())
    assert report["size"] == 47
    scores = {p["name"]: p["scores"] for p in report["programs"]}
    expected = fixture
    for method in ("markov", "points", "trad", "tradtwist", "iter", "itertwist"):
        for i, path in enumerate(fixture["programs"]):
            name = from_file(path)
            assert scores[name][method] == pytest.approx(expected[method][i], abs=1e-6), (
                method,
                name,
            )
    log = commits(hill)
    assert len(log) == 47
    assert log[0].startswith("Adding esohill.")
    # the established report's own fields, for tools written for it
    assert report["progs"] == [p["full_name"] for p in report["programs"]]
    assert report["scoringMethod"] == "markov"
    assert report["scores"]["points"]["max"] == 92
    assert report["scores"]["markov"]["score"] == [
        p["scores"]["markov"] for p in report["programs"]
    ]
    last = report["programs"][-1]
    assert report["prevrank"][-1] == (
        None if last["previous_rank"] is None else last["previous_rank"] - 1
    )


def test_replacement_rules(tmp_path: Path) -> None:
    hill = make_hill(tmp_path, size=3)
    hill.challenge("alice", "rush", RUSH)
    hill.challenge("bob", "idle", IDLE)
    joined = hill.challenge("carol", "decoy", DECOY)
    assert joined.standings.size == 3
    assert "pushed off" not in joined.summary
    # full: the last-ranked program leaves, even if the newcomer ranks last
    last = hill.queries.standings().entries[-1].program.full_name
    report = hill.challenge("dave", "idle2", IDLE)
    assert f"pushed off {last} (it was last; the hill keeps 3 programs)" in report.summary
    assert report.summary.count("pushed off") == 1  # said once
    assert hill.queries.standings().size == 3
    assert hill.queries.standings().find(last) is None
    assert hill.queries.standings().find("dave.idle2") is not None
    # the same name replaces the old version, wherever it ranks
    update = hill.challenge("alice", "rush", SLOW_RUSH)
    assert "battles changed" in update.summary
    assert hill.queries.standings().size == 3
    assert commits(hill)[-1] == "Updating alice.rush"
    assert commits(hill)[-2] == f"Replacing {last} by dave.idle2"


def test_summary_line_has_the_established_form(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    hill.challenge("alice", "idle", IDLE)
    first = hill.challenge("bob", "rush", RUSH).summary
    assert first == "bob.rush: points 1.00, score 1000.00, rank 1/2"  # markov: all its
    update = hill.challenge("alice", "idle", IDLE).summary
    assert update.startswith("alice.idle: points -1.00, score ")
    assert "rank 2/2 (--); 0 of 42 battles changed" in update


def test_ties_are_broken_by_points_then_age(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    for name in ("first", "second", "third"):
        hill.challenge("alice", name, IDLE)  # all ties: equal scores and points
    ranks = [e.program.name for e in hill.queries.standings().entries]
    assert ranks == ["first", "second", "third"]


def test_test_only_changes_nothing(tmp_path: Path) -> None:
    hill = make_hill(tmp_path, size=2)
    hill.challenge("alice", "idle", IDLE)
    hill.challenge("bob", "idle", IDLE)
    before = text_report(hill.queries.standings())
    report = hill.challenge("carol", "rush", RUSH, test_only=True)
    assert "rank 1/2" in report.summary and "test only" in report.summary
    assert "would push off" in report.summary
    assert text_report(hill.queries.standings()) == before
    assert len(commits(hill)) == 2


def test_withdraw_and_remove(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    hill.challenge("alice", "rush", RUSH)
    hill.challenge("bob", "idle", IDLE)
    with pytest.raises(HillError, match=r"there is no mallory\.rush"):
        hill.withdraw("mallory", "rush")  # only the owner's own name
    hill.withdraw("alice", "rush")
    assert [e.program.full_name for e in hill.queries.standings().entries] == ["bob.idle"]
    hill.remove("bob.idle", "admin")
    assert hill.queries.standings().size == 0
    assert commits(hill)[-2:] == ["Withdrawing alice.rush", "Removing bob.idle"]
    with Database(tmp_path / "var" / "hill.sqlite3").session() as session:
        rush = session.scalars(select(ProgramRow).where(ProgramRow.name == "rush")).one()
        assert (rush.status, rush.left_reason) == ("left", "withdrawn")


@pytest.mark.parametrize(
    ("owner", "name", "code", "message"),
    [
        ("alice", "bad name", RUSH, "bad program name"),
        ("alice", "x" * 49, RUSH, "bad program name"),
        ("alice", "../../etc", RUSH, "bad program name"),
        ("al ice", "ok", RUSH, "bad owner"),
        ("alice", "ok", b"+\n  (]", "parse error at line 2, column 3: unmatched"),
        ("alice", "ok", b"+" * 2000, "program too large: 2000 bytes"),
        # no instruction at all: comments, repeats of comments, a repeat done 0 times
        ("alice", "rank", b"allegro", "the program has no instruction"),
        ("alice", "ok", b"(words)*5 and (more{words}here)%3", "the program has no instruction"),
        ("alice", "ok", b"(+)*0", "the program has no instruction"),
    ],
)
def test_refused_submissions(
    tmp_path: Path, owner: str, name: str, code: bytes, message: str
) -> None:
    hill = make_hill(tmp_path, max_program_bytes=1000)
    with pytest.raises(HillError, match=message.replace("(", r"\(")):
        hill.challenge(owner, name, code)
    assert hill.queries.standings().size == 0
    assert commits(hill) == []


def test_breakdown_and_text_report(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    hill.challenge("alice", "rush", RUSH)
    hill.challenge("bob", "idle", IDLE)
    text = text_report(hill.queries.standings())
    assert text.splitlines()[0] == "Rank/chg   Score  Points  Program"
    assert text.splitlines()[1].endswith("  alice.rush")
    assert " 1 |   + |" in text
    assert breakdown(hill.queries.standings(), "bob.idle") == (
        "bob.idle vs alice.rush\n"
        ">>>>>>>>>>>>>>>>>>>>> >>>>>>>>>>>>>>>>>>>>> -42\n"
        "alice.rush wins.\n"
    )


def test_a_missing_or_corrupted_repository_is_rebuilt(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    for name, code in (("rush", RUSH), ("idle", IDLE), ("decoy", DECOY)):
        hill.challenge("alice", name, code)
    expected = commits(hill)
    tree = {b.path for b in hill.repository.repo.head.commit.tree.blobs}
    hill.close()
    repo_dir = tmp_path / "var" / "hill-repo"
    shutil.rmtree(repo_dir)
    assert commits(make_hill(tmp_path)) == expected
    # corrupt it: the objects are gone
    shutil.rmtree(repo_dir / ".git" / "objects")
    rebuilt = make_hill(tmp_path)
    assert commits(rebuilt) == expected
    assert {b.path for b in rebuilt.repository.repo.head.commit.tree.blobs} == tree
    assert list(tmp_path.joinpath("var").glob("hill-repo.broken-*"))


def test_missing_commits_are_made_on_start(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    hill.challenge("alice", "rush", RUSH)
    hill.challenge("bob", "idle", IDLE)
    # as if the process died after the database commit, before the git one
    repo = git.Repo(tmp_path / "var" / "hill-repo")
    repo.git.reset("--hard", "HEAD~1")
    hill.close()
    assert commits(make_hill(tmp_path))[-1] == "Adding bob.idle"


def test_a_database_of_the_previous_schema_is_upgraded(tmp_path: Path) -> None:
    data = tmp_path / "var"
    old = Database(data / "hill.sqlite3")
    old.upgrade("0001")
    assert old.revision() == "0001"
    old.close()
    hill = make_hill(tmp_path)
    assert hill.db.revision() == schema_revision()
    hill.challenge("alice", "rush", RUSH)
    assert hill.queries.standings().size == 1


def test_rescore_and_rejoust_keep_the_standings(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    for name, code in (("rush", RUSH), ("idle", IDLE), ("decoy", DECOY)):
        hill.challenge("alice", name, code)
    before = hill.queries.standings()
    hill.rescore("admin", rejoust=True)
    after = hill.queries.standings()
    assert [e.program.id for e in after.entries] == [e.program.id for e in before.entries]
    for old, new in zip(before.entries, after.entries, strict=True):
        assert new.scores == pytest.approx(old.scores)
    assert (after.outcomes == before.outcomes).all()
    assert commits(hill)[-1] == "Rescoring the hill"


def test_ranking_method_is_configurable(tmp_path: Path) -> None:
    hill = make_hill(tmp_path, ranking="points")
    hill.challenge("alice", "rush", RUSH)
    assert hill.queries.standings().method == "points"
    settings = dataclasses.replace(hill.settings, ranking="trad")
    assert Hill(settings).queries.standings().method == "points"  # stored with the event


def test_events_keep_every_past_state(tmp_path: Path) -> None:
    hill = make_hill(tmp_path)
    hill.challenge("alice", "rush", RUSH)
    hill.challenge("bob", "idle", IDLE)
    with Database(tmp_path / "var" / "hill.sqlite3").session() as session:
        first = session.scalars(select(Event).order_by(Event.id)).first()
        assert first is not None
    past = hill.queries.standings_at(first.id)
    assert [e.program.full_name for e in past.entries] == ["alice.rush"]
